#include "traces/site.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <unordered_set>

#include "traces/node_order.hpp"
#include "traces/plugins.hpp"
#include "traces/site_events.hpp"
#include "traces/site_settings.hpp"
#include "traces/slurm_version.hpp"
#include "traces/text.hpp"
#include "traces/topology.hpp"

namespace slurmtwin {
namespace {

template <class T>
const T* find_by_name(const std::vector<T>& items, std::string_view name) {
  auto it = std::find_if(items.begin(), items.end(), [&](const T& x) { return x.name == name; });
  return it == items.end() ? nullptr : &*it;
}

}  // namespace

const char* to_string(PreemptMode mode) {
  switch (mode) {
    case PreemptMode::kOff:
      return "OFF";
    case PreemptMode::kCancel:
      return "CANCEL";
    case PreemptMode::kRequeue:
      return "REQUEUE";
    case PreemptMode::kSuspend:
      return "SUSPEND";
    case PreemptMode::kGang:
      return "GANG";
    case PreemptMode::kSuspendGang:
      return "SUSPEND,GANG";
    case PreemptMode::kWithin:
      return "WITHIN";
    case PreemptMode::kUnset:
      return "";
  }
  return "";
}

PreemptMode parse_preempt_mode(std::string_view text) {
  const auto t = text::trim(text);
  bool suspend = false, gang = false;
  PreemptMode mode = PreemptMode::kOff;
  for (auto part : text::split(t, ',')) {
    part = text::trim(part);
    if (text::iequals(part, "OFF"))
      mode = PreemptMode::kOff;
    else if (text::iequals(part, "CANCEL"))
      mode = PreemptMode::kCancel;
    else if (text::iequals(part, "REQUEUE"))
      mode = PreemptMode::kRequeue;
    else if (text::iequals(part, "SUSPEND"))
      suspend = true;
    else if (text::iequals(part, "GANG"))
      gang = true;
    else if (text::iequals(part, "WITHIN"))
      mode = PreemptMode::kWithin;
    else if (text::iequals(part, "PRIORITY")) {  // PreemptMode=PRIORITY is an old alias of OFF-with-GANG
    } else {
      throw std::invalid_argument(fmt::format("unknown PreemptMode '{}'", part));
    }
  }
  if (suspend && gang) return PreemptMode::kSuspendGang;
  if (suspend) return PreemptMode::kSuspend;
  if (gang && mode == PreemptMode::kOff) return PreemptMode::kGang;
  return mode;
}

const Node* Site::find_node(std::string_view name) const {
  return find_by_name(nodes, name);
}
const Partition* Site::find_partition(std::string_view name) const {
  return find_by_name(partitions, name);
}
const Qos* Site::find_qos(std::string_view name) const {
  return find_by_name(qos, name);
}
const LicenseCount* Site::find_license(std::string_view name) const {
  return find_by_name(licenses, name);
}
const Account* Site::find_account(std::string_view name) const {
  return find_by_name(accounts, name);
}
const User* Site::find_user(std::string_view name) const {
  return find_by_name(users, name);
}

const Partition& Site::partition(std::string_view name) const {
  if (const auto* p = find_partition(name)) return *p;
  throw std::invalid_argument(fmt::format("unknown partition '{}'", name));
}

const Qos& Site::qos_named(std::string_view name) const {
  if (const auto* q = find_qos(name)) return *q;
  throw std::invalid_argument(fmt::format("unknown QOS '{}'", name));
}

const Partition* Site::default_partition() const {
  for (const auto& p : partitions)
    if (p.is_default) return &p;
  return partitions.empty() ? nullptr : &partitions.front();
}

bool Site::places_by_switch() const {
  return scheduler.topology_plugin == "topology/tree" && !switches.empty() &&
         scheduler.topology_param.count("TopoOptional") == 0;
}

void validate(const Site& site) {
  check_site_settings(site.scheduler);
  check_plugins(site.scheduler);
  std::unordered_set<std::string> node_names;
  for (const auto& n : site.nodes) {
    if (!node_names.insert(n.name).second)
      throw std::invalid_argument(fmt::format("node '{}' defined twice", n.name));
    if (n.cpus == 0) throw std::invalid_argument(fmt::format("node '{}': CPUs must be > 0", n.name));
    if (n.real_memory_mb <= 0)
      throw std::invalid_argument(fmt::format("node '{}': RealMemory must be > 0", n.name));
  }
  if (!nodes_in_slurmctld_order(site))
    throw std::invalid_argument(
        "nodes are not in slurmctld's order (by name, natural order): order_nodes_as_slurmctld");
  for (const auto& p : site.partitions) {
    for (const auto& n : p.nodes)
      if (!node_names.count(n))
        throw std::invalid_argument(fmt::format("partition '{}': unknown node '{}'", p.name, n));
    for (const auto& q : p.allow_qos)
      if (!text::iequals(q, "ALL") && !site.find_qos(q))
        throw std::invalid_argument(
            fmt::format("partition '{}': AllowQOS names unknown QOS '{}'", p.name, q));
    if (!p.qos.empty() && !site.find_qos(p.qos))
      throw std::invalid_argument(fmt::format("partition '{}': unknown partition QOS '{}'", p.name, p.qos));
  }
  for (const auto& q : site.qos)
    for (const auto& v : q.preempt)
      if (!site.find_qos(v))
        throw std::invalid_argument(fmt::format("QOS '{}': Preempt names unknown QOS '{}'", q.name, v));
  for (const auto& a : site.accounts) {
    if (a.name == "root") continue;
    if (!site.find_account(a.parent))
      throw std::invalid_argument(fmt::format("account '{}': unknown parent account '{}'", a.name, a.parent));
  }
  for (const auto& u : site.associations)
    if (!site.find_account(u.account))
      throw std::invalid_argument(fmt::format("user '{}': unknown account '{}'", u.user, u.account));
  for (const auto& u : site.users)
    if (!u.default_account.empty() && !site.find_account(u.default_account))
      throw std::invalid_argument(
          fmt::format("user '{}': unknown default account '{}'", u.name, u.default_account));
  validate_site_events(site);
  validate_topology(site);
}

std::vector<std::string> unenforced_limits(const Site& site) {
  std::vector<std::string> out;
  const auto& enforce = site.scheduler.accounting_storage_enforce;
  // Every holder of limits, named as an admin would ("QOS x", "account y"); user associations counted.
  std::vector<std::pair<std::string, const Limits*>> holders;
  for (const auto& q : site.qos) holders.emplace_back("QOS " + q.name, &q.limits);
  for (const auto& a : site.accounts) holders.emplace_back("account " + a.name, &a.limits);
  const auto users = [&](auto pred) {
    return std::count_if(site.associations.begin(), site.associations.end(),
                         [&](const UserAssoc& a) { return pred(a.limits); });
  };
  const auto where = [&](auto pred) {
    std::vector<std::string> w;
    for (const auto& [name, l] : holders)
      if (pred(*l)) w.push_back(name);
    if (const auto n = users(pred); n > 0) w.push_back(fmt::format("{} user association(s)", n));
    return w;
  };
  // Slurm checks no QOS or association limit unless AccountingStorageEnforce has limits (or safe,
  // which implies it): the limits of the accounting files are then only stored.
  if (enforce.count("limits") == 0 && enforce.count("safe") == 0) {
    if (const auto w = where([](const Limits& l) { return l != Limits{}; }); !w.empty())
      out.push_back(
          fmt::format("limits are set ({}) but AccountingStorageEnforce lacks 'limits': Slurm "
                      "enforces none of them, and neither does the replay",
                      fmt::join(w, ", ")));
    return out;
  }
  // TRES the limits do not count (billing, licenses, other GRES): kept, not enforced.
  std::set<std::string> other;
  const auto odd = [&](const Limits& l) {
    bool any = false;
    for (const auto& f : kTresLimitFields)
      for (const auto& [tres, count] : l.*f.field)
        if (std::find(kLimitTres.begin(), kLimitTres.end(), tres) == kLimitTres.end()) {
          other.insert(tres);
          any = true;
        }
    return any;
  };
  if (const auto w = where(odd); !w.empty())
    out.push_back(fmt::format("limits on TRES {} ({}) are read but not enforced: the replay counts {} only",
                              fmt::join(other, ", "), fmt::join(w, ", "), fmt::join(kLimitTres, ", ")));
  if (site.scheduler.slurm_version < 2405)
    for (const auto& q : site.qos)
      if (!q.limits.max_tres_run_mins_per_user.empty() || !q.limits.max_tres_run_mins_per_account.empty())
        out.push_back(fmt::format(
            "QOS '{}': MaxTRESRunMinsPU/PA are read but not enforced: Slurm {} does not (24.05 does)", q.name,
            slurm_version_text(site.scheduler.slurm_version)));
  return out;
}

Seconds over_time_limit(const Site& site, std::size_t partition) {
  const Seconds own = site.partitions[partition].over_time_limit;
  return own > 0 ? own : site.scheduler.over_time_limit;
}

TresMap parse_tres_counts(std::string_view text_in) {
  TresMap out;
  const auto t = text::trim(text_in);
  if (t.empty()) return out;
  for (auto item : text::split(t, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string_view::npos) throw std::invalid_argument(fmt::format("TRES '{}' lacks '='", item));
    const auto key = text::to_lower(text::trim(item.substr(0, eq)));
    const auto val = text::trim(item.substr(eq + 1));
    std::optional<std::int64_t> v;
    if (key == "mem" || key == "vmem") {
      v = text::parse_memory_mb(val);
    } else if (!val.empty() && std::isalpha(static_cast<unsigned char>(val.back()))) {
      // counts like "billing=2K" are rare but legal (K = 1024)
      const auto mb = text::parse_memory_mb(val, 'M');
      if (mb) v = *mb;  // unit-converted through the same binary multipliers
    } else {
      v = text::parse_int(val);
    }
    if (!v || *v < 0) throw std::invalid_argument(fmt::format("TRES '{}' has a bad count '{}'", key, val));
    out[key] = *v;
  }
  return out;
}

TresWeights parse_tres_weights(std::string_view text_in) {
  TresWeights out;
  const auto t = text::trim(text_in);
  if (t.empty()) return out;
  for (auto item : text::split(t, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string_view::npos)
      throw std::invalid_argument(fmt::format("TRES weight '{}' lacks '='", item));
    const auto key = text::to_lower(text::trim(item.substr(0, eq)));
    auto val = text::trim(item.substr(eq + 1));
    double scale = 1.0;
    if (!val.empty() && std::isalpha(static_cast<unsigned char>(val.back()))) {
      switch (std::toupper(static_cast<unsigned char>(val.back()))) {
        case 'K':
          scale = 1024.0;
          break;  // weight per KB -> per MB multiply by 1024
        case 'M':
          scale = 1.0;
          break;
        case 'G':
          scale = 1.0 / 1024.0;
          break;
        case 'T':
          scale = 1.0 / (1024.0 * 1024.0);
          break;
        default:
          throw std::invalid_argument(fmt::format("TRES weight '{}' has a bad unit", item));
      }
      val.remove_suffix(1);
    }
    const auto v = text::parse_double(val);
    if (!v) throw std::invalid_argument(fmt::format("TRES weight '{}' has a bad value", item));
    out[key] = *v * scale;
  }
  return out;
}

}  // namespace slurmtwin
