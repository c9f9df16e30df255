#include "traces/site_yaml.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>

#include "traces/file_io.hpp"
#include "traces/hostlist.hpp"
#include "traces/input_limits.hpp"
#include "traces/node_order.hpp"
#include "traces/read_report.hpp"
#include "traces/site_settings.hpp"
#include "traces/slurm_version.hpp"
#include "traces/text.hpp"
#include "traces/time_format.hpp"

namespace slurmtwin {
namespace {

// ---------------------------------------------------------------------------------------------------
// writing

std::string format_double(double v) {
  return fmt::format("{}", v);
}

void emit_duration(YAML::Emitter& out, const char* key, Seconds s) {
  out << YAML::Key << key << YAML::Value;
  if (s == kUnlimited)
    out << "UNLIMITED";
  else
    out << static_cast<long long>(s);
}

void emit_list(YAML::Emitter& out, const char* key, const auto& items) {
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const auto& s : items) out << s;
  out << YAML::EndSeq;
}

void emit_counts(YAML::Emitter& out, const char* key, const TresMap& m) {
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
  for (const auto& [k, v] : m) out << YAML::Key << k << YAML::Value << static_cast<long long>(v);
  out << YAML::EndMap;
}

void emit_weights(YAML::Emitter& out, const char* key, const TresWeights& m) {
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
  for (const auto& [k, v] : m) out << YAML::Key << k << YAML::Value << format_double(v);
  out << YAML::EndMap;
}

/// An absolute time as UTC "YYYY-MM-DDTHH:MM:SS" (UNLIMITED for kUnlimited).
void emit_time(YAML::Emitter& out, const char* key, Seconds t) {
  out << YAML::Key << key << YAML::Value
      << (t == kUnlimited ? std::string("UNLIMITED") : format_timestamp(t));
}

/// Reservations and node outages (absent from the text when the site has neither).
void emit_events(YAML::Emitter& out, const Site& site) {
  if (!site.reservations.empty()) {
    out << YAML::Key << "reservations" << YAML::Value << YAML::BeginSeq;
    for (const auto& r : site.reservations) {
      out << YAML::BeginMap;
      out << YAML::Key << "name" << YAML::Value << r.name;
      if (r.id != 0) out << YAML::Key << "id" << YAML::Value << r.id;
      emit_time(out, "start", r.start);
      emit_time(out, "end", r.end);
      emit_list(out, "nodes", r.nodes);
      emit_list(out, "users", r.users);
      emit_list(out, "accounts", r.accounts);
      emit_list(out, "flags", r.flags);
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  if (!site.outages.empty()) {
    out << YAML::Key << "outages" << YAML::Value << YAML::BeginSeq;
    for (const auto& o : site.outages) {
      out << YAML::Flow << YAML::BeginMap;
      out << YAML::Key << "node" << YAML::Value << o.node;
      emit_time(out, "start", o.start);
      emit_time(out, "end", o.end);
      out << YAML::Key << "state" << YAML::Value << o.state;
      out << YAML::Key << "reason" << YAML::Value << o.reason;
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
}

/// The hostlist that expands back to `names` in their order, if there is one.
std::optional<std::string> exact_hostlist(const std::vector<std::string>& names) {
  auto compressed = compress_hostlist(names);
  try {
    if (expand_hostlist(compressed) == names) return compressed;
  } catch (const std::invalid_argument&) {
  }
  return std::nullopt;
}

/// Node or switch names as one hostlist when it gives them back in order, else as a list.
void emit_names(YAML::Emitter& out, const char* key, const std::vector<std::string>& names) {
  if (const auto hostlist = exact_hostlist(names))
    out << YAML::Key << key << YAML::Value << *hostlist;
  else
    emit_list(out, key, names);
}

/// topology: plugin, param and the switches of topology.conf in file order.
void emit_topology(YAML::Emitter& out, const Site& site) {
  out << YAML::Key << "topology" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "plugin" << YAML::Value << site.scheduler.topology_plugin;
  emit_list(out, "param", site.scheduler.topology_param);
  out << YAML::Key << "switches" << YAML::Value << YAML::BeginSeq;
  for (const auto& sw : site.switches) {
    out << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << sw.name;
    if (sw.children.empty())
      emit_names(out, "nodes", sw.nodes);
    else
      emit_names(out, "switches", sw.children);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::EndMap;
}

std::string oversubscribe_text(const Partition& p) {
  std::string kind;
  switch (p.oversubscribe) {
    case OverSubscribe::kNo:
      kind = "NO";
      break;
    case OverSubscribe::kYes:
      kind = "YES";
      break;
    case OverSubscribe::kForce:
      kind = "FORCE";
      break;
    case OverSubscribe::kExclusive:
      kind = "EXCLUSIVE";
      break;
  }
  const bool count_implied =
      (p.oversubscribe == OverSubscribe::kNo || p.oversubscribe == OverSubscribe::kExclusive) &&
      p.oversubscribe_count == 1;
  return count_implied ? kind : fmt::format("{}:{}", kind, p.oversubscribe_count);
}

void emit_limits(YAML::Emitter& out, const Limits& l) {
  if (l == Limits{}) return;
  out << YAML::Key << "limits" << YAML::Value << YAML::BeginMap;
  const auto opt = [&](const char* key, const std::optional<std::int64_t>& v) {
    if (v) out << YAML::Key << key << YAML::Value << static_cast<long long>(*v);
  };
  for (const auto& f : kTresLimitFields)
    if (!(l.*f.field).empty()) emit_counts(out, f.key, l.*f.field);
  for (const auto& f : kCountLimitFields) opt(f.key, l.*f.field);
  if (l.max_wall) emit_duration(out, "max_wall_s", *l.max_wall);
  out << YAML::EndMap;
}

void emit_shares(YAML::Emitter& out, const Shares& s) {
  out << YAML::Key << "fairshare" << YAML::Value;
  if (s.parent)
    out << "parent";
  else
    out << s.value;
}

void emit_node_group(YAML::Emitter& out, const Node& n, const std::string& names) {
  out << YAML::BeginMap;
  out << YAML::Key << "names" << YAML::Value << names;
  out << YAML::Key << "cpus" << YAML::Value << n.cpus;
  out << YAML::Key << "boards" << YAML::Value << n.boards;
  out << YAML::Key << "sockets" << YAML::Value << n.sockets;
  out << YAML::Key << "cores_per_socket" << YAML::Value << n.cores_per_socket;
  out << YAML::Key << "threads_per_core" << YAML::Value << n.threads_per_core;
  out << YAML::Key << "real_memory_mb" << YAML::Value << static_cast<long long>(n.real_memory_mb);
  out << YAML::Key << "mem_spec_limit_mb" << YAML::Value << static_cast<long long>(n.mem_spec_limit_mb);
  std::vector<std::string> gres;
  for (const auto& g : n.gres)
    gres.push_back(g.type.empty() ? fmt::format("{}:{}", g.name, g.count)
                                  : fmt::format("{}:{}:{}", g.name, g.type, g.count));
  emit_list(out, "gres", gres);
  out << YAML::Key << "weight" << YAML::Value << n.weight;
  emit_list(out, "features", n.features);
  out << YAML::Key << "state" << YAML::Value << n.state;
  out << YAML::EndMap;
}

void emit_nodes(YAML::Emitter& out, const std::vector<Node>& nodes) {
  out << YAML::Key << "nodes" << YAML::Value << YAML::BeginSeq;
  std::size_t i = 0;
  while (i < nodes.size()) {
    Node proto = nodes[i];
    proto.name.clear();
    std::vector<std::string> names = {nodes[i].name};
    std::size_t j = i + 1;
    for (; j < nodes.size(); ++j) {
      Node other = nodes[j];
      other.name.clear();
      if (!(other == proto)) break;
      names.push_back(nodes[j].name);
    }
    if (const auto hostlist = exact_hostlist(names)) {
      emit_node_group(out, nodes[i], *hostlist);
    } else {  // names that a hostlist cannot reproduce in order (or at all): one entry each
      for (std::size_t k = i; k < j; ++k) emit_node_group(out, nodes[k], nodes[k].name);
    }
    i = j;
  }
  out << YAML::EndSeq;
}

void emit_partitions(YAML::Emitter& out, const std::vector<Partition>& parts) {
  out << YAML::Key << "partitions" << YAML::Value << YAML::BeginSeq;
  for (const auto& p : parts) {
    out << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << p.name;
    out << YAML::Key << "nodes" << YAML::Value << compress_hostlist(p.nodes);
    out << YAML::Key << "default" << YAML::Value << p.is_default;
    out << YAML::Key << "state" << YAML::Value << p.state;
    emit_duration(out, "max_time_s", p.max_time);
    if (p.default_time != kUnsetTime) emit_duration(out, "default_time_s", p.default_time);
    out << YAML::Key << "def_mem_per_cpu_mb" << YAML::Value << static_cast<long long>(p.def_mem_per_cpu_mb);
    out << YAML::Key << "def_mem_per_node_mb" << YAML::Value << static_cast<long long>(p.def_mem_per_node_mb);
    out << YAML::Key << "max_mem_per_cpu_mb" << YAML::Value << static_cast<long long>(p.max_mem_per_cpu_mb);
    out << YAML::Key << "max_mem_per_node_mb" << YAML::Value << static_cast<long long>(p.max_mem_per_node_mb);
    if (p.def_cpu_per_gpu)
      out << YAML::Key << "def_cpu_per_gpu" << YAML::Value << static_cast<long long>(*p.def_cpu_per_gpu);
    if (p.def_mem_per_gpu_mb)
      out << YAML::Key << "def_mem_per_gpu_mb" << YAML::Value
          << static_cast<long long>(*p.def_mem_per_gpu_mb);
    out << YAML::Key << "min_nodes" << YAML::Value << p.min_nodes;
    out << YAML::Key << "max_nodes" << YAML::Value << p.max_nodes;
    out << YAML::Key << "priority_job_factor" << YAML::Value << p.priority_job_factor;
    out << YAML::Key << "priority_tier" << YAML::Value << p.priority_tier;
    out << YAML::Key << "oversubscribe" << YAML::Value << oversubscribe_text(p);
    out << YAML::Key << "exclusive_user" << YAML::Value << p.exclusive_user;
    emit_list(out, "allow_qos", p.allow_qos);
    emit_list(out, "allow_accounts", p.allow_accounts);
    emit_list(out, "deny_accounts", p.deny_accounts);
    out << YAML::Key << "qos" << YAML::Value << p.qos;
    if (p.preempt_mode != PreemptMode::kUnset)
      out << YAML::Key << "preempt_mode" << YAML::Value << to_string(p.preempt_mode);
    emit_duration(out, "grace_time_s", p.grace_time);
    emit_duration(out, "over_time_limit_s", p.over_time_limit);
    emit_weights(out, "tres_billing_weights", p.tres_billing_weights);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void emit_qos(YAML::Emitter& out, const std::vector<Qos>& all) {
  out << YAML::Key << "qos" << YAML::Value << YAML::BeginSeq;
  for (const auto& q : all) {
    out << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << q.name;
    out << YAML::Key << "priority" << YAML::Value << q.priority;
    out << YAML::Key << "usage_factor" << YAML::Value << format_double(q.usage_factor);
    emit_list(out, "preempt", q.preempt);
    if (q.preempt_mode != PreemptMode::kUnset)
      out << YAML::Key << "preempt_mode" << YAML::Value << to_string(q.preempt_mode);
    if (q.preempt_exempt_time) emit_duration(out, "preempt_exempt_time_s", *q.preempt_exempt_time);
    emit_duration(out, "grace_time_s", q.grace_time);
    emit_list(out, "flags", q.flags);
    emit_limits(out, q.limits);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

template <class Assoc>
void emit_assoc_common(YAML::Emitter& out, const Assoc& a) {
  emit_shares(out, a.shares);
  out << YAML::Key << "priority" << YAML::Value << a.priority;
  emit_list(out, "qos", a.qos);
  out << YAML::Key << "default_qos" << YAML::Value << a.default_qos;
  emit_limits(out, a.limits);
}

void emit_scheduler(YAML::Emitter& out, const SchedulerSettings& s) {
  out << YAML::Key << "scheduler" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "slurm_version" << YAML::Value << YAML::DoubleQuoted
      << slurm_version_text(s.slurm_version);
  out << YAML::Key << "scheduler_type" << YAML::Value << s.scheduler_type;
  out << YAML::Key << "priority_type" << YAML::Value << s.priority_type;
  out << YAML::Key << "priority_weight_age" << YAML::Value << s.weight_age;
  out << YAML::Key << "priority_weight_assoc" << YAML::Value << s.weight_assoc;
  out << YAML::Key << "priority_weight_fairshare" << YAML::Value << s.weight_fairshare;
  out << YAML::Key << "priority_weight_job_size" << YAML::Value << s.weight_job_size;
  out << YAML::Key << "priority_weight_partition" << YAML::Value << s.weight_partition;
  out << YAML::Key << "priority_weight_qos" << YAML::Value << s.weight_qos;
  emit_weights(out, "priority_weight_tres", s.weight_tres);
  emit_duration(out, "priority_decay_half_life_s", s.decay_half_life);
  emit_duration(out, "priority_calc_period_s", s.calc_period);
  emit_duration(out, "priority_max_age_s", s.max_age);
  out << YAML::Key << "priority_favor_small" << YAML::Value << s.favor_small;
  emit_list(out, "priority_flags", s.priority_flags);
  out << YAML::Key << "priority_usage_reset_period" << YAML::Value << s.usage_reset_period;
  out << YAML::Key << "fairshare_dampening_factor" << YAML::Value << s.fairshare_dampening_factor;

  const auto& p = s.params;
  out << YAML::Key << "scheduler_parameters" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "default_queue_depth" << YAML::Value << p.default_queue_depth;
  emit_duration(out, "sched_interval_s", p.sched_interval);
  emit_duration(out, "batch_sched_delay_s", p.batch_sched_delay);
  out << YAML::Key << "sched_min_interval_us" << YAML::Value
      << static_cast<long long>(p.sched_min_interval_us);
  out << YAML::Key << "max_sched_time_s" << YAML::Value << static_cast<long long>(p.max_sched_time_s);
  out << YAML::Key << "partition_job_depth" << YAML::Value << p.partition_job_depth;
  out << YAML::Key << "defer" << YAML::Value << p.defer;
  out << YAML::Key << "defer_batch" << YAML::Value << p.defer_batch;
  out << YAML::Key << "allow_zero_lic" << YAML::Value << p.allow_zero_lic;
  emit_duration(out, "bf_interval_s", p.bf_interval);
  emit_duration(out, "bf_window_s", p.bf_window);
  emit_duration(out, "bf_resolution_s", p.bf_resolution);
  out << YAML::Key << "bf_max_job_test" << YAML::Value << p.bf_max_job_test;
  out << YAML::Key << "bf_max_job_user" << YAML::Value << p.bf_max_job_user;
  out << YAML::Key << "bf_max_job_part" << YAML::Value << p.bf_max_job_part;
  out << YAML::Key << "bf_max_job_user_part" << YAML::Value << p.bf_max_job_user_part;
  out << YAML::Key << "bf_max_job_start" << YAML::Value << p.bf_max_job_start;
  out << YAML::Key << "bf_max_job_array_resv" << YAML::Value << p.bf_max_job_array_resv;
  out << YAML::Key << "bf_min_prio_reserve" << YAML::Value << static_cast<long long>(p.bf_min_prio_reserve);
  emit_duration(out, "bf_min_age_reserve_s", p.bf_min_age_reserve);
  out << YAML::Key << "bf_continue" << YAML::Value << p.bf_continue;
  out << YAML::Key << "bf_busy_nodes" << YAML::Value << p.bf_busy_nodes;
  out << YAML::Key << "bf_one_resv_per_job" << YAML::Value << p.bf_one_resv_per_job;
  emit_duration(out, "bf_max_time_s", p.bf_max_time);
  out << YAML::Key << "bf_yield_interval_us" << YAML::Value << static_cast<long long>(p.bf_yield_interval_us);
  out << YAML::Key << "bf_yield_sleep_us" << YAML::Value << static_cast<long long>(p.bf_yield_sleep_us);
  out << YAML::Key << "other" << YAML::Value << YAML::Flow << YAML::BeginMap;
  for (const auto& [k, v] : p.other) out << YAML::Key << k << YAML::Value << v;
  out << YAML::EndMap;
  out << YAML::EndMap;

  out << YAML::Key << "preempt_type" << YAML::Value << s.preempt_type;
  out << YAML::Key << "preempt_mode" << YAML::Value << to_string(s.preempt_mode);
  emit_duration(out, "preempt_exempt_time_s", s.preempt_exempt_time);
  out << YAML::Key << "select_type" << YAML::Value << s.select_type;
  emit_list(out, "select_type_parameters", s.select_type_parameters);
  emit_duration(out, "kill_wait_s", s.kill_wait);
  emit_duration(out, "over_time_limit_s", s.over_time_limit);
  emit_duration(out, "min_job_age_s", s.min_job_age);
  out << YAML::Key << "enforce_part_limits" << YAML::Value << s.enforce_part_limits;
  emit_list(out, "accounting_storage_enforce", s.accounting_storage_enforce);
  emit_list(out, "accounting_storage_tres", s.accounting_storage_tres);
  out << YAML::Key << "first_job_id" << YAML::Value << s.first_job_id;
  out << YAML::Key << "job_requeue" << YAML::Value << s.job_requeue;
  out << YAML::EndMap;
}

// ---------------------------------------------------------------------------------------------------
// reading: every accessor checks type and range and throws InputError with the YAML line

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& n, std::string_view key, const std::string& what,
                         int fallback = 0) const {
    const auto m = n.Mark();
    const auto line = m.is_null() ? fallback : m.line + 1;
    throw InputError(file_, static_cast<std::uint64_t>(std::max(line, 0)), std::string(key), what);
  }

  /// Checks that `n` is a map whose keys are all in `allowed`.
  void check_map(const YAML::Node& n, std::string_view what, const std::set<std::string>& allowed) const {
    if (!n.IsMap()) fail(n, what, "expected a map");
    for (const auto& kv : n) {
      const auto k = key(kv.first, what);
      if (!allowed.count(k)) fail(kv.first, k, fmt::format("unknown key in {}", what));
    }
  }

  /// A map key: a plain name (YAML also allows a list or a map as a key, "? - a").
  std::string key(const YAML::Node& n, std::string_view what) const {
    if (!n.IsScalar()) fail(n, what, "a key must be a plain name");
    return n.Scalar();
  }

  std::string scalar(const YAML::Node& n, std::string_view key) const {
    if (!n.IsScalar()) fail(n, key, "expected a scalar");
    return n.Scalar();
  }

  std::int64_t integer(const YAML::Node& n, std::string_view key, std::int64_t lo, std::int64_t hi) const {
    const auto s = scalar(n, key);
    const auto v = text::parse_int(s);
    if (!v) fail(n, key, fmt::format("'{}' is not an integer", s));
    if (*v < lo || *v > hi) fail(n, key, fmt::format("{} is outside [{}, {}]", *v, lo, hi));
    return *v;
  }

  double real(const YAML::Node& n, std::string_view key) const {
    const auto s = scalar(n, key);
    const auto v = text::parse_double(s);
    if (!v) fail(n, key, fmt::format("'{}' is not a number", s));
    return *v;
  }

  bool boolean(const YAML::Node& n, std::string_view key) const {
    const auto s = text::to_lower(scalar(n, key));
    if (s == "true" || s == "yes") return true;
    if (s == "false" || s == "no") return false;
    fail(n, key, fmt::format("'{}' is not true or false", s));
  }

  /// Seconds, or UNLIMITED.
  Seconds duration(const YAML::Node& n, std::string_view key) const {
    if (n.IsScalar() && text::iequals(n.Scalar(), "UNLIMITED")) return kUnlimited;
    return integer(n, key, -1, std::numeric_limits<Seconds>::max() - 1);
  }

  /// A hostlist scalar ("n[1-4],m2") expanded to its names, at most a site's worth.
  std::vector<std::string> hostlist(const YAML::Node& n, std::string_view key) const {
    const auto text = scalar(n, key);
    try {
      return expand_hostlist(text, kMaxSiteNodes);
    } catch (const std::invalid_argument& e) {
      fail(n, key, e.what());
    }
  }

  std::vector<std::string> strings(const YAML::Node& n, std::string_view key) const {
    if (!n.IsSequence()) fail(n, key, "expected a list");
    std::vector<std::string> out;
    for (const auto& item : n) out.push_back(scalar(item, key));
    return out;
  }

  TresMap counts(const YAML::Node& n, std::string_view key) const {
    if (!n.IsMap()) fail(n, key, "expected a map of TRES counts");
    TresMap out;
    for (const auto& kv : n)
      out[text::to_lower(scalar(kv.first, key))] =
          integer(kv.second, key, 0, std::numeric_limits<std::int64_t>::max());
    return out;
  }

  TresWeights weights(const YAML::Node& n, std::string_view key) const {
    if (!n.IsMap()) fail(n, key, "expected a map of TRES weights");
    TresWeights out;
    for (const auto& kv : n) out[text::to_lower(scalar(kv.first, key))] = real(kv.second, key);
    return out;
  }

  PreemptMode preempt_mode(const YAML::Node& n, std::string_view key) const {
    try {
      return parse_preempt_mode(scalar(n, key));
    } catch (const std::invalid_argument& e) {
      fail(n, key, e.what());
    }
  }

  Shares shares(const YAML::Node& n, std::string_view key) const {
    if (n.IsScalar() && text::iequals(n.Scalar(), "parent")) return {1, true};
    return {static_cast<std::uint32_t>(integer(n, key, 0, std::numeric_limits<std::uint32_t>::max())), false};
  }

  Limits limits(const YAML::Node& n) const {
    std::set<std::string> keys = {"max_wall_s"};
    for (const auto& f : kTresLimitFields) keys.emplace(f.key);
    for (const auto& f : kCountLimitFields) keys.emplace(f.key);
    check_map(n, "limits", keys);
    Limits l;
    constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
    for (const auto& kv : n) {
      const auto key = kv.first.Scalar();
      const auto& v = kv.second;
      const auto tres = std::find_if(kTresLimitFields.begin(), kTresLimitFields.end(),
                                     [&](const TresLimitField& f) { return key == f.key; });
      const auto count = std::find_if(kCountLimitFields.begin(), kCountLimitFields.end(),
                                      [&](const CountLimitField& f) { return key == f.key; });
      if (tres != kTresLimitFields.end())
        l.*tres->field = counts(v, key);
      else if (count != kCountLimitFields.end())
        l.*count->field = integer(v, key, 0, kMax);
      else if (key == "max_wall_s")
        l.max_wall = duration(v, key);
    }
    return l;
  }

 private:
  std::string file_;
};

constexpr std::int64_t kU32 = std::numeric_limits<std::uint32_t>::max();
constexpr std::int64_t kU16 = std::numeric_limits<std::uint16_t>::max();
constexpr std::int64_t kI64 = std::numeric_limits<std::int64_t>::max();

YAML::Node required(const Reader& r, const YAML::Node& map, const char* key) {
  YAML::Node v = map[key];
  if (!v.IsDefined()) r.fail(map, key, "missing required key");
  return v;
}

std::vector<Node> read_nodes(const Reader& r, const YAML::Node& seq) {
  if (!seq.IsSequence()) r.fail(seq, "nodes", "expected a list");
  std::vector<Node> out;
  for (const auto& m : seq) {
    r.check_map(m, "nodes",
                {"names", "cpus", "boards", "sockets", "cores_per_socket", "threads_per_core",
                 "real_memory_mb", "mem_spec_limit_mb", "gres", "weight", "features", "state"});
    const auto names_node = required(r, m, "names");
    Node n;
    for (const auto& kv : m) {
      const auto key = kv.first.Scalar();
      const auto& v = kv.second;
      if (key == "cpus")
        n.cpus = static_cast<std::uint32_t>(r.integer(v, key, 1, kU32));
      else if (key == "boards")
        n.boards = static_cast<std::uint32_t>(r.integer(v, key, 1, kU32));
      else if (key == "sockets")
        n.sockets = static_cast<std::uint32_t>(r.integer(v, key, 1, kU32));
      else if (key == "cores_per_socket")
        n.cores_per_socket = static_cast<std::uint32_t>(r.integer(v, key, 1, kU32));
      else if (key == "threads_per_core")
        n.threads_per_core = static_cast<std::uint32_t>(r.integer(v, key, 1, kU32));
      else if (key == "real_memory_mb")
        n.real_memory_mb = r.integer(v, key, 1, kI64);
      else if (key == "mem_spec_limit_mb")
        n.mem_spec_limit_mb = r.integer(v, key, 0, kI64);
      else if (key == "weight")
        n.weight = static_cast<std::uint32_t>(r.integer(v, key, 0, kU32));
      else if (key == "features")
        n.features = r.strings(v, key);
      else if (key == "state")
        n.state = r.scalar(v, key);
      else if (key == "gres") {
        for (const auto& g : r.strings(v, key)) {
          const auto parts = text::split(g, ':');
          const auto count = text::parse_int(parts.back());
          if (parts.size() < 2 || parts.size() > 3 || !count || *count < 0 || parts.front().empty())
            r.fail(v, key, fmt::format("'{}' is not name[:type]:count", g));
          n.gres.push_back(
              {std::string(parts.front()), parts.size() == 3 ? std::string(parts[1]) : "", *count});
        }
      }
    }
    const auto names = r.hostlist(names_node, "names");
    if (names.empty()) r.fail(names_node, "names", "no node names");
    if (out.size() + names.size() > kMaxSiteNodes)
      r.fail(names_node, "names", fmt::format("more than {} nodes in the site", kMaxSiteNodes));
    for (const auto& name : names) {
      n.name = name;
      out.push_back(n);
    }
  }
  return out;
}

void parse_oversubscribe(const Reader& r, const YAML::Node& v, Partition& p) {
  const auto s = text::to_lower(r.scalar(v, "oversubscribe"));
  const auto colon = s.find(':');
  const auto kind = s.substr(0, colon);
  if (kind == "no")
    p.oversubscribe = OverSubscribe::kNo;
  else if (kind == "yes")
    p.oversubscribe = OverSubscribe::kYes;
  else if (kind == "force")
    p.oversubscribe = OverSubscribe::kForce;
  else if (kind == "exclusive")
    p.oversubscribe = OverSubscribe::kExclusive;
  else
    r.fail(v, "oversubscribe", fmt::format("'{}' is not NO, YES:N, FORCE:N or EXCLUSIVE", s));
  p.oversubscribe_count = 1;
  if (colon != std::string::npos) {
    const auto n = text::parse_int(s.substr(colon + 1));
    if (!n || *n < 1 || *n > kU16) r.fail(v, "oversubscribe", fmt::format("bad job count in '{}'", s));
    p.oversubscribe_count = static_cast<std::uint16_t>(*n);
  }
}

std::vector<Partition> read_partitions(const Reader& r, const YAML::Node& seq) {
  if (!seq.IsSequence()) r.fail(seq, "partitions", "expected a list");
  std::vector<Partition> out;
  for (const auto& m : seq) {
    r.check_map(m, "partitions",
                {"name",
                 "nodes",
                 "default",
                 "state",
                 "max_time_s",
                 "default_time_s",
                 "def_mem_per_cpu_mb",
                 "def_mem_per_node_mb",
                 "max_mem_per_cpu_mb",
                 "max_mem_per_node_mb",
                 "def_cpu_per_gpu",
                 "def_mem_per_gpu_mb",
                 "min_nodes",
                 "max_nodes",
                 "priority_job_factor",
                 "priority_tier",
                 "oversubscribe",
                 "exclusive_user",
                 "allow_qos",
                 "allow_accounts",
                 "deny_accounts",
                 "qos",
                 "preempt_mode",
                 "grace_time_s",
                 "over_time_limit_s",
                 "tres_billing_weights"});
    Partition p;
    p.name = r.scalar(required(r, m, "name"), "name");
    for (const auto& kv : m) {
      const auto key = kv.first.Scalar();
      const auto& v = kv.second;
      if (key == "nodes")
        p.nodes = r.hostlist(v, key);
      else if (key == "default")
        p.is_default = r.boolean(v, key);
      else if (key == "state")
        p.state = r.scalar(v, key);
      else if (key == "max_time_s")
        p.max_time = r.duration(v, key);
      else if (key == "default_time_s")
        p.default_time = r.duration(v, key);
      else if (key == "def_mem_per_cpu_mb")
        p.def_mem_per_cpu_mb = r.integer(v, key, 0, kI64);
      else if (key == "def_mem_per_node_mb")
        p.def_mem_per_node_mb = r.integer(v, key, 0, kI64);
      else if (key == "max_mem_per_cpu_mb")
        p.max_mem_per_cpu_mb = r.integer(v, key, 0, kI64);
      else if (key == "max_mem_per_node_mb")
        p.max_mem_per_node_mb = r.integer(v, key, 0, kI64);
      else if (key == "def_cpu_per_gpu")
        p.def_cpu_per_gpu = r.integer(v, key, 0, kU16);
      else if (key == "def_mem_per_gpu_mb")
        p.def_mem_per_gpu_mb = r.integer(v, key, 0, kI64);
      else if (key == "min_nodes")
        p.min_nodes = static_cast<std::uint32_t>(r.integer(v, key, 0, kU32));
      else if (key == "max_nodes")
        p.max_nodes = static_cast<std::uint32_t>(r.integer(v, key, 0, kU32));
      else if (key == "priority_job_factor")
        p.priority_job_factor = static_cast<std::uint16_t>(r.integer(v, key, 0, kU16));
      else if (key == "priority_tier")
        p.priority_tier = static_cast<std::uint16_t>(r.integer(v, key, 0, kU16));
      else if (key == "oversubscribe")
        parse_oversubscribe(r, v, p);
      else if (key == "exclusive_user")
        p.exclusive_user = r.boolean(v, key);
      else if (key == "allow_qos")
        p.allow_qos = r.strings(v, key);
      else if (key == "allow_accounts")
        p.allow_accounts = r.strings(v, key);
      else if (key == "deny_accounts")
        p.deny_accounts = r.strings(v, key);
      else if (key == "qos")
        p.qos = r.scalar(v, key);
      else if (key == "preempt_mode")
        p.preempt_mode = r.preempt_mode(v, key);
      else if (key == "grace_time_s")
        p.grace_time = r.duration(v, key);
      else if (key == "over_time_limit_s")
        p.over_time_limit = r.duration(v, key);
      else if (key == "tres_billing_weights")
        p.tres_billing_weights = r.weights(v, key);
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<Qos> read_qos(const Reader& r, const YAML::Node& seq) {
  if (!seq.IsSequence()) r.fail(seq, "qos", "expected a list");
  std::vector<Qos> out;
  for (const auto& m : seq) {
    r.check_map(m, "qos",
                {"name", "priority", "usage_factor", "preempt", "preempt_mode", "preempt_exempt_time_s",
                 "grace_time_s", "flags", "limits"});
    Qos q;
    q.name = r.scalar(required(r, m, "name"), "name");
    for (const auto& kv : m) {
      const auto key = kv.first.Scalar();
      const auto& v = kv.second;
      if (key == "priority")
        q.priority = static_cast<std::uint32_t>(r.integer(v, key, 0, kU32));
      else if (key == "usage_factor")
        q.usage_factor = r.real(v, key);
      else if (key == "preempt")
        q.preempt = r.strings(v, key);
      else if (key == "preempt_mode")
        q.preempt_mode = r.preempt_mode(v, key);
      else if (key == "preempt_exempt_time_s")
        q.preempt_exempt_time = r.duration(v, key);
      else if (key == "grace_time_s")
        q.grace_time = r.duration(v, key);
      else if (key == "flags") {
        const auto flags = r.strings(v, key);
        q.flags = {flags.begin(), flags.end()};
      } else if (key == "limits")
        q.limits = r.limits(v);
    }
    out.push_back(std::move(q));
  }
  return out;
}

template <class Assoc>
bool read_assoc_key(const Reader& r, const std::string& key, const YAML::Node& v, Assoc& a) {
  if (key == "fairshare")
    a.shares = r.shares(v, key);
  else if (key == "priority")
    a.priority = static_cast<std::uint32_t>(r.integer(v, key, 0, kU32));
  else if (key == "qos")
    a.qos = r.strings(v, key);
  else if (key == "default_qos")
    a.default_qos = r.scalar(v, key);
  else if (key == "limits")
    a.limits = r.limits(v);
  else
    return false;
  return true;
}

std::vector<Account> read_accounts(const Reader& r, const YAML::Node& seq) {
  if (!seq.IsSequence()) r.fail(seq, "accounts", "expected a list");
  std::vector<Account> out;
  for (const auto& m : seq) {
    r.check_map(m, "accounts", {"name", "parent", "fairshare", "priority", "qos", "default_qos", "limits"});
    Account a;
    a.name = r.scalar(required(r, m, "name"), "name");
    if (a.name == "root") a.parent = "";
    for (const auto& kv : m) {
      const auto key = kv.first.Scalar();
      if (key == "parent")
        a.parent = r.scalar(kv.second, key);
      else
        read_assoc_key(r, key, kv.second, a);
    }
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<UserAssoc> read_associations(const Reader& r, const YAML::Node& seq) {
  if (!seq.IsSequence()) r.fail(seq, "associations", "expected a list");
  std::vector<UserAssoc> out;
  for (const auto& m : seq) {
    r.check_map(m, "associations",
                {"user", "account", "partition", "fairshare", "priority", "qos", "default_qos", "limits"});
    UserAssoc a;
    a.user = r.scalar(required(r, m, "user"), "user");
    a.account = r.scalar(required(r, m, "account"), "account");
    for (const auto& kv : m) {
      const auto key = kv.first.Scalar();
      if (key == "partition")
        a.partition = r.scalar(kv.second, key);
      else
        read_assoc_key(r, key, kv.second, a);
    }
    out.push_back(std::move(a));
  }
  return out;
}

/// A UTC "YYYY-MM-DDTHH:MM:SS", or UNLIMITED.
Seconds read_time(const Reader& r, const YAML::Node& n, std::string_view key) {
  const auto v = r.scalar(n, key);
  if (text::iequals(v, "UNLIMITED")) return kUnlimited;
  const auto t = parse_timestamp(v);
  if (!t || *t == kUnsetTime) r.fail(n, key, fmt::format("'{}' is not a UTC time YYYY-MM-DDTHH:MM:SS", v));
  return *t;
}

std::vector<Reservation> read_reservations(const Reader& r, const YAML::Node& seq) {
  if (!seq.IsSequence()) r.fail(seq, "reservations", "expected a list");
  std::vector<Reservation> out;
  for (const auto& m : seq) {
    r.check_map(m, "reservations", {"name", "id", "start", "end", "nodes", "users", "accounts", "flags"});
    Reservation res;
    res.name = r.scalar(required(r, m, "name"), "name");
    if (m["id"]) res.id = static_cast<std::uint32_t>(r.integer(m["id"], "id", 1, kU32));
    res.start = read_time(r, required(r, m, "start"), "start");
    res.end = read_time(r, required(r, m, "end"), "end");
    res.nodes = r.strings(required(r, m, "nodes"), "nodes");
    if (m["users"]) res.users = r.strings(m["users"], "users");
    if (m["accounts"]) res.accounts = r.strings(m["accounts"], "accounts");
    if (m["flags"])
      for (auto& f : r.strings(m["flags"], "flags")) res.flags.insert(text::to_upper(f));
    out.push_back(std::move(res));
  }
  return out;
}

std::vector<NodeOutage> read_outages(const Reader& r, const YAML::Node& seq) {
  if (!seq.IsSequence()) r.fail(seq, "outages", "expected a list");
  std::vector<NodeOutage> out;
  for (const auto& m : seq) {
    r.check_map(m, "outages", {"node", "start", "end", "state", "reason"});
    NodeOutage o;
    o.node = r.scalar(required(r, m, "node"), "node");
    o.start = read_time(r, required(r, m, "start"), "start");
    o.end = read_time(r, required(r, m, "end"), "end");
    o.state = text::to_upper(r.scalar(required(r, m, "state"), "state"));
    if (o.state != "DOWN" && o.state != "DRAIN" && o.state != "FAIL")
      r.fail(m["state"], "state", fmt::format("'{}' is not DOWN, DRAIN or FAIL", o.state));
    if (m["reason"]) o.reason = r.scalar(m["reason"], "reason");
    out.push_back(std::move(o));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  return out;
}

/// A list of names, or one hostlist ("n[1-4]").
std::vector<std::string> read_names(const Reader& r, const YAML::Node& n, const char* key) {
  return n.IsSequence() ? r.strings(n, key) : r.hostlist(n, key);
}

void read_topology(const Reader& r, const YAML::Node& m, Site& site) {
  r.check_map(m, "topology", {"plugin", "param", "switches"});
  auto& s = site.scheduler;
  if (m["plugin"]) {
    s.topology_plugin = text::to_lower(r.scalar(m["plugin"], "plugin"));
    if (s.topology_plugin != "topology/flat" && s.topology_plugin != "topology/tree")
      r.fail(m["plugin"], "plugin",
             fmt::format("'{}' is not topology/flat or topology/tree", s.topology_plugin));
  }
  if (m["param"])
    for (auto& p : r.strings(m["param"], "param")) s.topology_param.insert(std::move(p));
  if (!m["switches"]) return;
  if (!m["switches"].IsSequence()) r.fail(m["switches"], "switches", "expected a list");
  for (const auto& e : m["switches"]) {
    r.check_map(e, "switches", {"name", "nodes", "switches"});
    Switch sw;
    sw.name = r.scalar(required(r, e, "name"), "name");
    if (e["nodes"].IsDefined() == e["switches"].IsDefined())
      r.fail(e, "switches", fmt::format("switch '{}': give nodes or switches (one of them)", sw.name));
    if (e["nodes"])
      sw.nodes = read_names(r, e["nodes"], "nodes");
    else
      sw.children = read_names(r, e["switches"], "switches");
    site.switches.push_back(std::move(sw));
  }
}

std::vector<LicenseCount> read_licenses(const Reader& r, const YAML::Node& n) {
  try {
    return parse_licenses(r.scalar(n, "licenses"));
  } catch (const std::invalid_argument& e) {
    r.fail(n, "licenses", e.what());
  }
}

std::vector<User> read_users(const Reader& r, const YAML::Node& seq) {
  if (!seq.IsSequence()) r.fail(seq, "users", "expected a list");
  std::vector<User> out;
  for (const auto& m : seq) {
    r.check_map(m, "users", {"name", "default_account", "admin_level"});
    User u;
    u.name = r.scalar(required(r, m, "name"), "name");
    if (m["default_account"]) u.default_account = r.scalar(m["default_account"], "default_account");
    if (m["admin_level"]) u.admin_level = r.scalar(m["admin_level"], "admin_level");
    out.push_back(std::move(u));
  }
  return out;
}

/// Keys of the one settings table (traces/site_settings.hpp) under scheduler: or scheduler_parameters:.
std::set<std::string> setting_keys(bool scheduler_parameter) {
  std::set<std::string> keys;
  for (const auto& st : site_settings())
    if (st.scheduler_parameter == scheduler_parameter) keys.emplace(st.yaml_key);
  return keys;
}

/// Reads `v` as setting `st` (seconds for times) into `s`, within the setting's bounds.
void read_setting(const Reader& r, const YAML::Node& v, const std::string& key, const SiteSetting& st,
                  SchedulerSettings& s) {
  const std::int64_t value = st.kind == SettingKind::kFlag       ? r.boolean(v, key)
                             : st.kind == SettingKind::kDuration ? r.duration(v, key)
                                                                 : r.integer(v, key, INT64_MIN, INT64_MAX);
  try {
    set_site_setting(s, st, value);
  } catch (const std::invalid_argument& e) {
    r.fail(v, key, e.what());
  }
}

void read_params(const Reader& r, const YAML::Node& m, SchedulerSettings& s) {
  auto keys = setting_keys(true);
  keys.emplace("other");
  r.check_map(m, "scheduler_parameters", keys);
  for (const auto& kv : m) {
    const auto key = kv.first.Scalar();
    const auto& v = kv.second;
    if (const auto* st = find_site_setting_yaml(key, true)) {
      read_setting(r, v, key, *st, s);
    } else if (key == "other") {
      if (!v.IsMap()) r.fail(v, key, "expected a map of option -> value");
      for (const auto& o : v)
        s.params.other[r.scalar(o.first, key)] = o.second.IsNull() ? "" : r.scalar(o.second, key);
    }
  }
}

SchedulerSettings read_scheduler(const Reader& r, const YAML::Node& m) {
  auto keys = setting_keys(false);
  keys.insert({"slurm_version",
               "scheduler_type",
               "priority_type",
               "priority_weight_tres",
               "priority_flags",
               "priority_usage_reset_period",
               "fairshare_dampening_factor",
               "scheduler_parameters",
               "preempt_type",
               "preempt_mode",
               "preempt_exempt_time_s",
               "select_type",
               "select_type_parameters",
               "kill_wait_s",
               "over_time_limit_s",
               "min_job_age_s",
               "enforce_part_limits",
               "accounting_storage_enforce",
               "accounting_storage_tres",
               "first_job_id",
               "job_requeue"});
  r.check_map(m, "scheduler", keys);
  SchedulerSettings s;
  for (const auto& kv : m) {
    const auto key = kv.first.Scalar();
    const auto& v = kv.second;
    const auto u32 = [&] { return static_cast<std::uint32_t>(r.integer(v, key, 0, kU32)); };
    const auto set_of = [&] {
      const auto l = r.strings(v, key);
      return std::set<std::string>(l.begin(), l.end());
    };
    if (const auto* st = find_site_setting_yaml(key, false))
      read_setting(r, v, key, *st, s);
    else if (key == "slurm_version") {
      try {
        s.slurm_version = parse_slurm_version(r.scalar(v, key));
      } catch (const std::invalid_argument& e) {
        r.fail(v, key, e.what());
      }
    } else if (key == "scheduler_type")
      s.scheduler_type = r.scalar(v, key);
    else if (key == "priority_type")
      s.priority_type = r.scalar(v, key);
    else if (key == "priority_weight_tres")
      s.weight_tres = r.weights(v, key);
    else if (key == "priority_flags")
      s.priority_flags = set_of();
    else if (key == "priority_usage_reset_period")
      s.usage_reset_period = r.scalar(v, key);
    else if (key == "fairshare_dampening_factor")
      s.fairshare_dampening_factor = u32();
    else if (key == "scheduler_parameters")
      read_params(r, v, s);
    else if (key == "preempt_type")
      s.preempt_type = r.scalar(v, key);
    else if (key == "preempt_mode")
      s.preempt_mode = r.preempt_mode(v, key);
    else if (key == "preempt_exempt_time_s")
      s.preempt_exempt_time = r.duration(v, key);
    else if (key == "select_type")
      s.select_type = r.scalar(v, key);
    else if (key == "select_type_parameters")
      s.select_type_parameters = set_of();
    else if (key == "kill_wait_s")
      s.kill_wait = r.duration(v, key);
    else if (key == "over_time_limit_s")
      s.over_time_limit = r.duration(v, key);
    else if (key == "min_job_age_s")
      s.min_job_age = r.duration(v, key);
    else if (key == "enforce_part_limits")
      s.enforce_part_limits = r.scalar(v, key);
    else if (key == "accounting_storage_enforce")
      s.accounting_storage_enforce = set_of();
    else if (key == "accounting_storage_tres")
      s.accounting_storage_tres = r.strings(v, key);
    else if (key == "first_job_id")
      s.first_job_id = u32();
    else if (key == "job_requeue")
      s.job_requeue = r.boolean(v, key);
  }
  return s;
}

}  // namespace

std::string site_yaml_section(const Site& site, SiteSection section) {
  // Each section is a top-level map of its own: yaml-cpp writes a block map's entries one after
  // another at indent 0, so the sections joined by newlines are the text of the whole map.
  YAML::Emitter out;
  if (section == SiteSection::kHeader)
    out << YAML::Comment("SlurmTwin site (schema: docs/site-schema.md; durations in seconds, memory in MB)");
  out << YAML::BeginMap;
  switch (section) {
    case SiteSection::kHeader:
      out << YAML::Key << "cluster_name" << YAML::Value << site.cluster_name;
      // slurm.conf's Licenses= as slurmctld lists it ("name:count" joined by ',').
      if (!site.licenses.empty())
        out << YAML::Key << "licenses" << YAML::Value << format_licenses(site.licenses);
      break;
    case SiteSection::kNodes:
      emit_nodes(out, site.nodes);
      break;
    case SiteSection::kPartitions:
      emit_partitions(out, site.partitions);
      break;
    case SiteSection::kQos:
      emit_qos(out, site.qos);
      break;
    case SiteSection::kAccounts:
      out << YAML::Key << "accounts" << YAML::Value << YAML::BeginSeq;
      for (const auto& a : site.accounts) {
        out << YAML::BeginMap;
        out << YAML::Key << "name" << YAML::Value << a.name;
        out << YAML::Key << "parent" << YAML::Value << a.parent;
        emit_assoc_common(out, a);
        out << YAML::EndMap;
      }
      out << YAML::EndSeq;
      break;
    case SiteSection::kAssociations:
      out << YAML::Key << "associations" << YAML::Value << YAML::BeginSeq;
      for (const auto& a : site.associations) {
        out << YAML::BeginMap;
        out << YAML::Key << "user" << YAML::Value << a.user;
        out << YAML::Key << "account" << YAML::Value << a.account;
        out << YAML::Key << "partition" << YAML::Value << a.partition;
        emit_assoc_common(out, a);
        out << YAML::EndMap;
      }
      out << YAML::EndSeq;
      break;
    case SiteSection::kUsers:
      out << YAML::Key << "users" << YAML::Value << YAML::BeginSeq;
      for (const auto& u : site.users) {
        out << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "name" << YAML::Value << u.name;
        out << YAML::Key << "default_account" << YAML::Value << u.default_account;
        out << YAML::Key << "admin_level" << YAML::Value << u.admin_level;
        out << YAML::EndMap;
      }
      out << YAML::EndSeq;
      break;
    case SiteSection::kScheduler:
      emit_scheduler(out, site.scheduler);
      break;
    case SiteSection::kEvents:
      if (site.reservations.empty() && site.outages.empty()) return {};
      emit_events(out, site);
      break;
    case SiteSection::kTopology:
      if (site.scheduler.topology_plugin == "topology/flat" && site.scheduler.topology_param.empty() &&
          site.switches.empty())
        return {};
      emit_topology(out, site);
      break;
  }
  out << YAML::EndMap;
  if (!out.good()) throw std::logic_error(fmt::format("YAML emitter failed: {}", out.GetLastError()));
  return out.c_str();
}

bool same_site_section(const Site& a, const Site& b, SiteSection section) {
  switch (section) {
    case SiteSection::kHeader:
      return a.cluster_name == b.cluster_name && a.licenses == b.licenses;
    case SiteSection::kNodes:
      return a.nodes == b.nodes;
    case SiteSection::kPartitions:
      return a.partitions == b.partitions;
    case SiteSection::kQos:
      return a.qos == b.qos;
    case SiteSection::kAccounts:
      return a.accounts == b.accounts;
    case SiteSection::kAssociations:
      return a.associations == b.associations;
    case SiteSection::kUsers:
      return a.users == b.users;
    case SiteSection::kScheduler: {  // its topology fields are the topology section's
      auto x = a.scheduler;
      x.topology_plugin = b.scheduler.topology_plugin;
      x.topology_param = b.scheduler.topology_param;
      return x == b.scheduler;
    }
    case SiteSection::kEvents:
      return a.reservations == b.reservations && a.outages == b.outages;
    case SiteSection::kTopology:
      return a.scheduler.topology_plugin == b.scheduler.topology_plugin &&
             a.scheduler.topology_param == b.scheduler.topology_param && a.switches == b.switches;
  }
  return false;
}

std::string site_to_yaml(const Site& site) {
  std::string out;
  for (std::size_t i = 0; i < kSiteSections; ++i)
    if (auto text = site_yaml_section(site, static_cast<SiteSection>(i)); !text.empty()) out += text + "\n";
  return out;
}

void save_site_yaml(const Site& site, const std::string& path) {
  write_file_atomic(path, site_to_yaml(site));
}

Site parse_site_yaml(std::string_view content, const std::string& file_name) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(content));
  } catch (const YAML::Exception& e) {
    throw InputError(file_name, static_cast<std::uint64_t>(std::max(e.mark.line + 1, 0)), "", e.msg);
  }
  const Reader r(file_name);
  if (!root.IsMap()) r.fail(root, "", "a site YAML is a map (cluster_name, nodes, partitions, ...)", 1);
  r.check_map(root, "site",
              {"cluster_name", "licenses", "nodes", "partitions", "qos", "accounts", "associations", "users",
               "scheduler", "reservations", "outages", "topology"});
  Site site;
  std::optional<YAML::Node> topology;  // read after the scheduler, whose topology fields it sets
  try {
    for (const auto& kv : root) {
      const auto key = kv.first.Scalar();
      const auto& v = kv.second;
      if (key == "cluster_name")
        site.cluster_name = r.scalar(v, key);
      else if (key == "licenses")
        site.licenses = read_licenses(r, v);
      else if (key == "nodes")
        site.nodes = read_nodes(r, v);
      else if (key == "partitions")
        site.partitions = read_partitions(r, v);
      else if (key == "qos")
        site.qos = read_qos(r, v);
      else if (key == "accounts")
        site.accounts = read_accounts(r, v);
      else if (key == "associations")
        site.associations = read_associations(r, v);
      else if (key == "users")
        site.users = read_users(r, v);
      else if (key == "scheduler")
        site.scheduler = read_scheduler(r, v);
      else if (key == "reservations")
        site.reservations = read_reservations(r, v);
      else if (key == "outages")
        site.outages = read_outages(r, v);
      else if (key == "topology")
        topology = v;
    }
    if (topology) read_topology(r, *topology, site);
  } catch (const YAML::Exception& e) {  // e.g. a key that is not a scalar
    throw InputError(file_name, static_cast<std::uint64_t>(std::max(e.mark.line + 1, 0)), "", e.msg);
  }
  order_nodes_as_slurmctld(site);  // slurmctld's order, whatever order the file lists them in
  try {
    validate(site);
  } catch (const std::invalid_argument& e) {
    throw InputError(file_name, 0, "", fmt::format("invalid site: {}", e.what()));
  }
  return site;
}

Site load_site_yaml(const std::string& path) {
  return parse_site_yaml(read_input_file(path), path);
}

}  // namespace slurmtwin
