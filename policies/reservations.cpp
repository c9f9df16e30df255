#include "policies/reservations.hpp"

#include <algorithm>
#include <unordered_map>

#include "traces/site_events.hpp"

namespace slurmtwin::policies {
namespace {

constexpr Seconds kYear = 365 * 86400;  // the run an unlimited time limit stands for (YEAR_SECONDS)

/// A Users= or Accounts= list admits `name`: empty admits all; "-a,-b" denies those named.
bool list_admits(const std::vector<std::string>& list, const std::string& name) {
  if (list.empty()) return true;
  const bool deny = list.front().starts_with('-');
  const bool named = std::any_of(list.begin(), list.end(), [&](const std::string& e) {
    return std::string_view(e).substr(deny ? 1 : 0) == name;
  });
  return deny ? !named : named;
}

}  // namespace

Reservations::Reservations(const Site& site) {
  // Node indices are the site's node order (ClusterState's).
  std::unordered_map<std::string, std::uint32_t> node_index;
  for (std::uint32_t n = 0; n < site.nodes.size(); ++n) node_index.emplace(site.nodes[n].name, n);
  for (std::uint32_t i = 0; i < site.reservations.size(); ++i) {
    const auto& r = site.reservations[i];
    Period p{r.start, r.end, {}, r.has("MAINT"), r.has("FLEX"), r.has("OVERLAP"), i};
    for (const auto& name : r.nodes) p.nodes.push_back(node_index.at(name));  // validated with the site
    std::sort(p.nodes.begin(), p.nodes.end());
    periods_.push_back(std::move(p));
  }
  for (const auto& part : site.partitions) {
    auto& nodes = partition_nodes_.emplace_back();
    for (const auto& name : part.nodes) nodes.push_back(node_index.at(name));
    std::sort(nodes.begin(), nodes.end());
  }
}

bool Reservations::admits(const sim::SimState& s, const sim::SimJob& j) const {
  const auto& r = s.site.reservations[static_cast<std::size_t>(j.reservation)];
  if (r.users.empty() && r.accounts.empty()) return true;  // accounting history: admitted when it ran there
  const auto& assoc = s.site.associations[static_cast<std::size_t>(j.assoc)];
  if (!list_admits(r.users, assoc.user)) return false;
  if (r.accounts.empty()) return true;
  // The job's account or an account above it (AccountingStorageEnforce=associations walks parents).
  const bool deny = r.accounts.front().starts_with('-');
  for (const auto* a = s.site.find_account(assoc.account); a != nullptr;
       a = a->name == "root" ? nullptr : s.site.find_account(a->parent))
    if (!list_admits(r.accounts, a->name))
      return false;
    else if (!deny)
      return true;
  return deny;
}

const Reservations::Period* Reservations::active(const sim::SimState& s, std::int32_t index,
                                                 Seconds now) const {
  const auto* r = active_period(s.site, static_cast<std::size_t>(index), now);
  return r != nullptr ? &periods_[static_cast<std::size_t>(r - s.site.reservations.data())] : nullptr;
}

bool Reservations::may_run_now(const sim::SimState& s, const sim::SimJob& j, Seconds now) const {
  if (j.reservation < 0) return true;
  // Access was checked at submit (SlurmPolicy::admit); periods of one name share their lists.
  return s.site.reservations[static_cast<std::size_t>(j.reservation)].has("FLEX") ||
         active(s, j.reservation, now) != nullptr;
}

Reservations::Test Reservations::test(const sim::SimState& s, const sim::SimJob& j, std::uint16_t partition,
                                      Seconds start, Seconds time_limit) const {
  const Seconds limit = time_limit == kUnlimited ? kYear : time_limit;
  Test t;
  t.start = start;
  const auto& part = partition_nodes_[partition];
  const auto block = [&](const Period& p) {
    if (t.blocked.empty()) t.blocked.assign(s.cluster.nodes().size(), false);
    for (auto n : p.nodes) t.blocked[n] = true;
  };
  const auto in_partition = [&](const Period& p) {
    return std::any_of(p.nodes.begin(), p.nodes.end(),
                       [&](std::uint32_t n) { return std::binary_search(part.begin(), part.end(), n); });
  };
  if (j.reservation >= 0) {
    const auto& own = s.site.reservations[static_cast<std::size_t>(j.reservation)];
    const Period* mine = own.has("FLEX") ? nullptr : active(s, j.reservation, start);
    if (!own.has("FLEX")) {  // only its nodes; none outside its periods (a later start is not planned)
      t.blocked.assign(s.cluster.nodes().size(), true);
      if (!mine) return t;
      for (auto n : mine->nodes) t.blocked[n] = false;
      if (mine->maint) return t;  // a MAINT reservation's jobs ignore the others
    }
    for (const auto& p : periods_) {
      if (s.site.reservations[p.site_index].name == own.name) continue;
      if (mine && mine->overlap && !p.maint) continue;
      if (p.start < t.start + limit && p.end > t.start) {
        block(p);
        t.overlap = t.overlap || in_partition(p);
      }
    }
    return t;
  }
  // Without a reservation: a MAINT one holding every node of the partition moves the start to its end
  // (job_test_resv with move_time, at most 10 moves); then every overlapping one's nodes are blocked.
  for (int moves = 0; moves < 10; ++moves) {
    const auto covering = std::find_if(periods_.begin(), periods_.end(), [&](const Period& p) {
      return p.maint && p.start < t.start + limit && p.end > t.start &&
             std::includes(p.nodes.begin(), p.nodes.end(), part.begin(), part.end());
    });
    if (covering == periods_.end()) break;
    t.start = covering->end;
  }
  for (const auto& p : periods_)
    if (p.start < t.start + limit && p.end > t.start) {
      block(p);
      t.overlap = t.overlap || in_partition(p);
    }
  return t;
}

Seconds Reservations::next_end(Seconds t, Seconds resolution) const {
  Seconds end = 0;
  for (const auto& p : periods_)
    if (p.end >= t && p.end != kUnlimited && (end == 0 || p.end < end)) end = p.end;
  if (end != 0 && resolution > 0) end = (end + resolution - 1) / resolution * resolution;
  return end;
}

}  // namespace slurmtwin::policies
