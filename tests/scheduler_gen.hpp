#pragma once
// Random small sites and workloads for the scheduler's property test (test_scheduler_property.cpp)
// and fuzz target (tests/fuzz/fuzz_scheduler.cpp): nodes with features, partitions with tiers and
// preemption modes, QOS with preempt lists and limits, a two-level account tree, every scheduler
// setting within the bounds of traces/site_settings.hpp, topology/tree now and then (add_random_topology),
// per-GPU defaults and TRES-minute limits with a partition QOS (add_random_gpu_defaults, _selected_limits);
// jobs with arrays, dependencies, begin times, cancellations, time limits hit, impossible requests and names
// the site lacks, many in one second. Every draw comes from a Draw: a seeded generator, or the fuzzer's bytes
// (0 once they run out).
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "experiments/replay/replay.hpp"
#include "traces/read_report.hpp"
#include "traces/site.hpp"
#include "traces/site_settings.hpp"
#include "traces/trace.hpp"

namespace slurmtwin::testing {

class Draw {
 public:
  explicit Draw(std::function<std::uint64_t()> next) : next_(std::move(next)) {}
  /// Uniform-ish in [0, n) (n > 0).
  std::uint64_t below(std::uint64_t n) { return next_() % n; }
  std::int64_t between(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo) + 1));
  }
  bool chance(unsigned percent) { return below(100) < percent; }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }

 private:
  std::function<std::uint64_t()> next_;
};

/// Draws from a fuzzer's bytes: two a draw, zeros once they run out (`data` must outlive the Draw).
inline Draw bytes_draw(const std::uint8_t* data, std::size_t size) {
  return Draw([data, size, at = std::size_t{0}]() mutable -> std::uint64_t {
    std::uint64_t v = 0;
    for (std::size_t k = 0; k < 2 && at + k < size; ++k) v |= std::uint64_t{data[at + k]} << (8 * k);
    at += 2;
    return v;
  });
}

/// A site of 1-6 nodes; may be invalid only where Slurm itself refuses the combination (the caller
/// validates and counts those).
inline Site random_site(Draw& d) {
  Site s;
  s.cluster_name = "gen";
  const auto nodes = d.between(1, 6);
  for (std::int64_t i = 1; i <= nodes; ++i) {
    Node n;
    n.name = fmt::format("n{}", i);
    n.cpus = static_cast<std::uint32_t>(d.pick(std::vector<int>{1, 2, 4, 8, 16}));
    n.cores_per_socket = n.cpus;
    n.real_memory_mb = d.pick(std::vector<std::int64_t>{500, 4000, 16000});
    n.weight = static_cast<std::uint32_t>(d.between(1, 3));
    if (d.chance(40)) n.features.push_back("a");
    if (d.chance(30)) n.features.push_back("b");
    if (d.chance(20)) n.gres.push_back({"gpu", "", d.between(1, 2)});
    s.nodes.push_back(n);
  }
  const auto partitions = d.between(1, 3);
  for (std::int64_t k = 0; k < partitions; ++k) {
    Partition p;
    p.name = fmt::format("p{}", k);
    p.is_default = k == 0;
    for (const auto& n : s.nodes)
      if (k == 0 || d.chance(60)) p.nodes.push_back(n.name);
    if (p.nodes.empty()) p.nodes.push_back(s.nodes.front().name);
    p.priority_tier = static_cast<std::uint16_t>(d.between(1, 2));
    p.priority_job_factor = static_cast<std::uint16_t>(d.between(1, 3));
    p.max_time = d.pick(std::vector<Seconds>{kUnlimited, 600, 3600});
    if (d.chance(30)) p.default_time = 300;
    p.def_mem_per_cpu_mb = d.chance(50) ? 100 : 0;
    p.preempt_mode = d.pick(std::vector<PreemptMode>{PreemptMode::kUnset, PreemptMode::kOff,
                                                     PreemptMode::kCancel, PreemptMode::kRequeue});
    if (d.chance(20)) p.grace_time = d.between(1, 60);
    if (d.chance(15)) p.max_nodes = static_cast<std::uint32_t>(d.between(1, 2));
    if (d.chance(15)) p.oversubscribe = OverSubscribe::kExclusive;
    s.partitions.push_back(p);
  }
  for (const char* name : {"normal", "high", "low"}) {
    Qos q;
    q.name = name;
    q.priority = static_cast<std::uint32_t>(d.between(0, 100));
    if (q.name == "high" && d.chance(60)) q.preempt = {"low"};
    if (q.name == "high" && d.chance(30)) q.preempt.push_back("normal");
    if (d.chance(25)) q.limits.max_wall = d.between(60, 1800);
    if (d.chance(25)) q.limits.max_jobs_per_user = d.between(1, 3);
    if (d.chance(15)) q.limits.grp_jobs = d.between(1, 4);
    if (d.chance(15)) q.limits.max_submit_jobs_per_user = d.between(1, 6);
    if (d.chance(15)) q.limits.grp_tres["cpu"] = d.between(1, 16);
    if (d.chance(10)) q.flags.insert("DenyOnLimit");
    if (d.chance(10)) q.usage_factor = 0;
    if (d.chance(20)) q.preempt_mode = PreemptMode::kRequeue;
    s.qos.push_back(q);
  }
  s.accounts.push_back({"root", "", {1, false}, 0, {}, "", {}});
  s.accounts.push_back({"a1", "root", {static_cast<std::uint32_t>(d.between(1, 10)), false}, 0, {}, "", {}});
  s.accounts.push_back({"a2",
                        d.chance(50) ? "a1" : "root",
                        {static_cast<std::uint32_t>(d.between(1, 10)), false},
                        0,
                        {},
                        "",
                        {}});
  if (d.chance(20)) s.accounts.back().limits.grp_jobs = d.between(1, 3);
  for (const char* u : {"u1", "u2", "u3"}) {
    const std::string account = d.chance(50) ? "a1" : "a2";
    s.users.push_back({u, account, "None"});
    UserAssoc a{u, account, "", {static_cast<std::uint32_t>(d.between(1, 5)), false}, 0, {}, "", {}};
    if (d.chance(15)) a.limits.max_jobs_per_user = d.between(1, 2);
    s.associations.push_back(a);
  }

  auto& sc = s.scheduler;
  sc.scheduler_type = d.chance(85) ? "sched/backfill" : "sched/builtin";
  sc.preempt_type = d.pick(std::vector<std::string>{"preempt/none", "preempt/partition_prio", "preempt/qos"});
  sc.preempt_mode = sc.preempt_type == "preempt/none"
                        ? PreemptMode::kOff
                        : d.pick(std::vector<PreemptMode>{PreemptMode::kCancel, PreemptMode::kRequeue,
                                                          PreemptMode::kSuspendGang});
  // Most sites enforce their limits; the others show that Slurm then checks none.
  if (d.chance(80)) sc.accounting_storage_enforce = {"associations", "limits", "qos"};
  if (d.chance(20)) sc.priority_flags.insert("SMALL_RELATIVE_TO_TIME");
  // Every table setting: mostly Slurm's default, else a value within its bounds, kept small enough
  // that timers fire within the workload (counts up to 1,000, times up to an hour).
  for (const auto& st : site_settings()) {
    // Generated sites have no licences, so allow_zero_lic changes nothing; skipping it keeps the
    // draws (and so the committed fuzz findings) of the sites made before it existed.
    if (st.name == "allow_zero_lic") continue;
    if (!d.chance(35)) continue;
    if (st.kind == SettingKind::kFlag) {
      set_site_setting(sc, st, d.chance(50) ? 1 : 0);
      continue;
    }
    const std::int64_t cap = st.kind == SettingKind::kDuration || st.scale > 1 ? 3600 : 1000;
    const std::int64_t lo = st.min, hi = std::max(lo, std::min(st.max, lo + cap));
    set_site_setting(sc, st, d.between(lo, hi) / st.scale * st.scale);
  }
  return s;
}

/// 1-30 jobs over 15 minutes from `t0` (some in the same second) on `site`'s names, some the site lacks.
inline Trace random_trace(Draw& d, const Site& site, Seconds t0 = 1'700'000'040) {
  Trace t;
  const auto jobs = d.between(1, 30);
  std::uint64_t id = 1;
  std::vector<std::string> partitions;
  for (const auto& p : site.partitions) partitions.push_back(p.name);
  partitions.push_back("p0,p1");  // a list (p1 may not exist)
  partitions.push_back("nosuch");
  for (std::int64_t i = 0; i < jobs; ++i) {
    JobRecord j;
    j.job_id = id++;
    if (d.chance(10) && i > 0) {  // an array task of the previous job's id
      j.job_id = t.jobs.back().job_id;
      j.array_task = t.jobs.back().array_task + 1;
      --id;
    }
    // Mostly the user's own association; now and then a name the site lacks.
    const auto& user = site.users[d.below(site.users.size())];
    j.user = t.users.intern(d.chance(3) ? std::string("u9") : user.name);
    j.account = t.accounts.intern(d.chance(80) ? user.default_account : d.chance(90) ? "a1" : "zz");
    j.partition = t.partitions.intern(d.chance(90) ? site.partitions[d.below(site.partitions.size())].name
                                                   : d.pick(partitions));
    if (d.chance(60))
      j.qos =
          t.qos.intern(d.chance(95) ? d.pick(std::vector<std::string>{"normal", "high", "low"}) : "nosuch");
    j.submit = t0 + (d.chance(30) && i > 0 ? t.jobs.back().submit - t0 : d.between(0, 900));
    j.eligible = d.chance(15) ? j.submit + d.between(1, 300) : j.submit;
    j.nodes = static_cast<std::uint32_t>(d.between(0, 2));
    j.tasks = static_cast<std::uint32_t>(d.chance(70) ? d.between(1, 4) : d.between(1, 20));
    j.cpus_per_task = static_cast<std::uint32_t>(d.chance(20) ? 2 : 1);
    if (d.chance(15)) j.tasks_per_node = static_cast<std::uint32_t>(d.between(1, 4));
    j.req_cpus = j.tasks * j.cpus_per_task;
    if (d.chance(40)) {
      j.mem_per_cpu = d.chance(50);
      j.mem_mb = j.mem_per_cpu ? d.between(10, 500) : d.between(0, 5000);
    }
    j.time_limit = d.pick(std::vector<Seconds>{kUnsetTime, 60, 300, 1800, kUnlimited});
    j.runtime = d.between(0, 2400);
    if (d.chance(10)) j.cancel = j.submit + d.between(0, 600);
    if (d.chance(10)) j.exclusive = true;
    if (d.chance(10))
      j.constraints = t.strings.intern(d.pick(std::vector<std::string>{"a", "a&b", "a|b", "c"}));
    if (d.chance(8)) j.gres.push_back({"gpu", "", d.between(1, 3), true});
    if (d.chance(12) && j.job_id > 1)
      j.dependency = t.strings.intern(
          fmt::format("{}:{}", d.pick(std::vector<std::string>{"afterok", "afterany", "afternotok", "after"}),
                      d.between(1, static_cast<std::int64_t>(j.job_id) - 1)));
    else if (d.chance(4))
      j.dependency = t.strings.intern("singleton");
    t.jobs.push_back(j);
  }
  return t;
}

/// Now and then topology/tree on `s`: leaf switches of 1-3 consecutive nodes (a node now and then on
/// none), mostly under one top switch, else separate trees. Drawn after the trace, and never once the
/// bytes run out (a draw of 0), so that the saved fuzz inputs keep making the cases they made.
inline void add_random_topology(Draw& d, Site& s) {
  if (d.chance(75)) return;
  s.scheduler.topology_plugin = "topology/tree";
  std::vector<std::string> leaves;
  for (std::size_t i = 0; i < s.nodes.size();) {
    Switch leaf;
    leaf.name = fmt::format("s{}", leaves.size() + 1);
    for (auto k = d.between(1, 3); k > 0 && i < s.nodes.size(); --k, ++i)
      if (!d.chance(10)) leaf.nodes.push_back(s.nodes[i].name);
    if (leaf.nodes.empty()) continue;
    leaves.push_back(leaf.name);
    s.switches.push_back(leaf);
  }
  if (leaves.size() > 1 && d.chance(70)) s.switches.push_back({"top", {}, leaves});
}

/// Now and then per-GPU defaults (DefMemPerGPU, DefCpuPerGPU) on some partitions; drawn like
/// add_random_topology, after it, and never once the bytes run out.
inline void add_random_gpu_defaults(Draw& d, Site& s) {
  if (d.chance(75)) return;
  for (auto& p : s.partitions) {
    if (d.chance(50)) p.def_mem_per_gpu_mb = d.pick(std::vector<std::int64_t>{0, 300, 3000});
    if (d.chance(50)) p.def_cpu_per_gpu = d.between(0, 3);
  }
}

/// Now and then the limits checked once nodes are chosen (TRES-minutes, per node, MinTRESPerJob) on the
/// QOS and accounts, and a partition QOS; drawn like add_random_topology, after it, never once the bytes
/// run out.
inline void add_random_selected_limits(Draw& d, Site& s) {
  if (d.chance(75)) return;
  const auto cpus = [&](std::int64_t lo, std::int64_t hi) { return TresMap{{"cpu", d.between(lo, hi)}}; };
  for (auto& q : s.qos) {
    if (d.chance(25)) q.limits.grp_tres_run_mins = cpus(1, 400);
    if (d.chance(20)) q.limits.grp_tres_mins = cpus(1, 400);
    if (d.chance(15)) q.limits.max_tres_mins_per_job = cpus(1, 200);
    if (d.chance(15)) q.limits.max_tres_per_node = cpus(1, 4);
    if (d.chance(10)) q.limits.min_tres_per_job = cpus(1, 3);
    if (d.chance(15)) q.limits.max_tres_run_mins_per_user = cpus(1, 300);
    if (d.chance(10)) q.flags.insert(d.chance(50) ? "OverPartQOS" : "NoDecay");
  }
  for (auto& a : s.accounts) {
    if (d.chance(20)) a.limits.grp_tres_run_mins = cpus(1, 400);
    if (d.chance(15)) a.limits.grp_tres_mins = cpus(1, 400);
    if (d.chance(10)) a.limits.max_tres_per_node = cpus(1, 4);
  }
  if (d.chance(30)) s.scheduler.slurm_version = 2405;
  if (d.chance(20)) s.scheduler.accounting_storage_enforce.insert("safe");
  if (!s.partitions.empty() && !s.qos.empty() && d.chance(50))
    s.partitions[d.below(s.partitions.size())].qos = s.qos[d.below(s.qos.size())].name;
}

/// Now and then accrue limits (GrpJobsAccrue, MaxJobsAccruePU/PA, an association's MaxJobsAccrue) on
/// the QOS, accounts and associations, with a weight on age; drawn like add_random_topology, after the
/// others, never once the bytes run out.
inline void add_random_accrue_limits(Draw& d, Site& s) {
  if (d.chance(75)) return;
  for (auto& q : s.qos) {
    if (d.chance(25)) q.limits.grp_jobs_accrue = d.between(0, 3);
    if (d.chance(25)) q.limits.max_jobs_accrue_per_user = d.between(1, 2);
    if (d.chance(15)) q.limits.max_jobs_accrue_per_account = d.between(1, 3);
  }
  for (auto& a : s.accounts) {
    if (d.chance(20)) a.limits.grp_jobs_accrue = d.between(1, 3);
    if (d.chance(15)) a.limits.max_jobs_accrue_per_user = d.between(1, 2);
  }
  for (auto& a : s.associations)
    if (d.chance(15)) a.limits.max_jobs_accrue_per_user = d.between(0, 2);
  if (s.scheduler.weight_age == 0) s.scheduler.weight_age = static_cast<std::uint32_t>(d.between(1, 10000));
  if (d.chance(20)) s.scheduler.priority_flags.insert("ACCRUE_ALWAYS");
}

/// Now and then a QOS's per-account limits (MaxJobsPA, MaxSubmitJobsPA, MaxTRESPA); drawn like
/// add_random_topology, after the others, never once the bytes run out.
inline void add_random_account_limits(Draw& d, Site& s) {
  if (d.chance(75)) return;
  for (auto& q : s.qos) {
    if (d.chance(30)) q.limits.max_jobs_per_account = d.between(0, 3);
    if (d.chance(20)) q.limits.max_submit_jobs_per_account = d.between(1, 6);
    if (d.chance(25)) q.limits.max_tres_per_account = TresMap{{"cpu", d.between(1, 12)}};
  }
}

/// Now and then an array with a task cap (--array=...%N, N 1-2): a job and the 1-5 after it become
/// its tasks 0.., the same request submitted together. Drawn last, and never once the bytes run out.
inline void add_random_array_caps(Draw& d, Trace& t) {
  if (t.jobs.size() < 2 || d.chance(50)) return;
  const auto first = static_cast<std::size_t>(d.below(t.jobs.size() - 1));
  const auto tasks = std::min<std::size_t>(t.jobs.size() - first, static_cast<std::size_t>(d.between(2, 6)));
  const auto cap = static_cast<std::uint32_t>(d.between(1, 2));
  for (std::size_t n = 0; n < tasks; ++n) {
    auto& j = t.jobs[first + n];
    if (n > 0) j = t.jobs[first];
    j.array_task = static_cast<std::int32_t>(n);
    j.array_max_running = cap;
  }
}

/// Replays a generated case with the invariants checked after every event; nullopt when Slurm would
/// refuse the site (validate), the replay refuses the trace as a whole (InputError) or stops a
/// preemption cycle without end (sim::PreemptionCycle): the only acceptable failures. Any other exception
/// propagates.
inline std::optional<experiments::ReplayResult> replay_generated(const Site& site, const Trace& trace) {
  try {
    validate(site);
    experiments::ReplayOptions o;
    o.check_invariants = true;
    return experiments::run_replay(site, trace, o);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  } catch (const InputError&) {
    return std::nullopt;
  } catch (const sim::PreemptionCycle&) {  // a schedule Slurm too would repeat for ever: stopped, said
    return std::nullopt;
  }
}

/// What must hold of every schedule whatever the settings, beyond the engine's own invariants: every
/// input job accounted for once, none started before its submit or begin time, none ending before it
/// started. "" when all hold, else the first that does not.
inline std::string schedule_violation(const experiments::ReplayResult& r, const Trace& trace) {
  const auto& m = r.metrics;
  if (m.input_jobs != trace.jobs.size() ||
      m.started + m.never_started + m.cancelled_before_start + m.rejected != trace.jobs.size())
    return "a job is not accounted for";
  for (const auto& j : r.state->jobs) {
    if (j.start == kUnsetTime) continue;
    const auto& rec = trace.jobs[j.trace_index];
    if (j.start < rec.submit || j.start < rec.eligible)
      return fmt::format("job {} started before it was submitted or eligible", j.id);
    if (j.end != kUnsetTime && j.end < j.start) return fmt::format("job {} ended before it started", j.id);
  }
  // A capped array never has more tasks started and not ended than its cap (runs before a requeue too).
  std::map<std::uint64_t, std::vector<std::pair<Seconds, int>>> edges;  // array id -> (time, +1 / -1)
  std::map<std::uint64_t, std::uint32_t> cap;
  for (const auto& j : r.state->jobs) {
    const auto& rec = trace.jobs[j.trace_index];
    if (rec.array_task < 0 || rec.array_max_running == 0) continue;
    cap[rec.job_id] = rec.array_max_running;
    auto& e = edges[rec.job_id];
    for (const auto& p : j.past_runs) e.insert(e.end(), {{p.start, 1}, {p.end, -1}});
    if (j.start != kUnsetTime)
      e.insert(e.end(), {{j.start, 1}, {j.end == kUnsetTime ? kUnlimited : j.end, -1}});
  }
  for (auto& [id, e] : edges) {
    std::sort(e.begin(), e.end());  // at one instant ends (-1) before starts
    int running = 0;
    for (const auto& [t, step] : e)
      if ((running += step) > static_cast<int>(cap[id]))
        return fmt::format("array {} ran {} tasks at once, over its cap {}", id, running, cap[id]);
  }
  return "";
}

}  // namespace slurmtwin::testing
