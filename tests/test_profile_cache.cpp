// Backfill's usable-CPU profiles kept across cycles (policies/profile_cache.hpp) against
// recomputation: random clusters and workloads are replayed with check_backfill_profiles, which
// computes every kept value again where it is reused and throws on a difference. A key that misses
// something usable_cpus depends on, or a node not invalidated when a job starts on it, fails here; so
// does a planned-release order kept from the last cycle that differs from sorting all releases.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <random>

#include "policies/slurm_policy.hpp"
#include "scenario_support.hpp"
#include "sim/conservation.hpp"
#include "sim/controller.hpp"
#include "sim/job_resolver.hpp"

using namespace slurmtwin;

namespace {

// A cluster of 5-9 nodes of mixed sizes (4-16 CPUs, 1 or 2 threads per core, 2-8 GB, 2 GPUs and a
// "fast" feature on some, two node weights) with one partition over all of them; half of them with a
// main pass that looks at one job between full passes.
Site random_site(std::mt19937_64& rng) {
  auto pick = [&](std::uint32_t lo, std::uint32_t hi) {
    return std::uniform_int_distribution<std::uint32_t>(lo, hi)(rng);
  };
  const std::uint32_t nodes = pick(5, 9);
  Site s = testing::small_site(nodes, 4);
  for (auto& n : s.nodes) {
    n.threads_per_core = pick(1, 2);
    n.cpus = std::uint32_t{4} << pick(0, 2);
    n.cores_per_socket = n.cpus / n.threads_per_core;
    n.real_memory_mb = 2000 * std::int64_t{1} << pick(0, 2);
    if (pick(0, 2) == 0) n.gres.push_back({"gpu", "", 2});
    if (pick(0, 2) == 0) n.features.push_back("fast");
    n.weight = pick(1, 2);
  }
  s.scheduler.params.bf_interval = 30;
  if (pick(0, 1) == 0) {  // a shallow main pass: backfill's first tests then often start jobs now
    s.scheduler.params.default_queue_depth = 1;
    s.scheduler.params.sched_interval = 3600;
  }
  return s;
}

// 250 jobs over ~6 hours: mostly one node, some two or three; memory per node, per CPU or none;
// some exclusive, some asking for GPUs or the "fast" feature; runtimes under and over the limit.
Trace random_trace(std::mt19937_64& rng) {
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  std::vector<testing::JobSpec> specs;
  for (int i = 0; i < 250; ++i) {
    testing::JobSpec j;
    j.submit = pick(0, 20000);
    j.nodes = pick(0, 5) == 0 ? static_cast<std::uint32_t>(pick(2, 3)) : 1;
    j.cpus = static_cast<std::uint32_t>(pick(j.nodes, 6 * j.nodes));
    j.limit = pick(1, 40) * 60;
    j.runtime = pick(0, 3) == 0 ? j.limit + 60 : pick(30, j.limit);
    j.user = pick(0, 1) == 0 ? "alice" : "bob";
    specs.push_back(j);
  }
  std::sort(specs.begin(), specs.end(), [](const auto& a, const auto& b) { return a.submit < b.submit; });
  Trace t = testing::make_trace(specs);
  for (auto& j : t.jobs) {
    switch (pick(0, 3)) {
      case 0:
        j.mem_mb = pick(1, 30) * 200;  // per node
        break;
      case 1:
        j.mem_mb = pick(1, 8) * 100;
        j.mem_per_cpu = true;
        break;
      default:
        break;  // DefMemPerCPU
    }
    if (pick(0, 4) == 0) {
      j.cpus_per_task = 2;
      j.req_cpus = j.tasks * 2;
    }
    j.exclusive = pick(0, 9) == 0;
    if (pick(0, 6) == 0) j.gres.push_back({"gpu", "", pick(1, 2), true});
    if (pick(0, 9) == 0) j.constraints = t.strings.intern("fast");
  }
  return t;
}

// A replay whose backfill computes every kept profile value again and throws on a difference
// (check_backfill_profiles), and whose controller checks its invariants after every event.
struct CheckedReplay {
  CheckedReplay(const Site& site, const Trace& trace) : state(site, true), policy(site, checked_policy()) {
    state.jobs = sim::resolve_jobs(trace, site, state.cluster, {}, state.users);
    sim::ControllerOptions o;
    o.check_invariants = true;
    controller.emplace(state, policy, o);
  }
  static policies::SlurmPolicyOptions checked_policy() {
    policies::SlurmPolicyOptions o;
    o.check_backfill_profiles = true;
    return o;
  }
  sim::SimState state;
  policies::SlurmPolicy policy;
  std::optional<sim::Controller> controller;
};

}  // namespace

TEST_CASE("backfill profiles kept across cycles equal recomputation on random clusters and workloads") {
  std::uint64_t checked = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    Site site = random_site(rng);
    const Trace trace = random_trace(rng);
    validate(site);
    CheckedReplay r(site, trace);
    REQUIRE_NOTHROW(r.controller->run());
    sim::check_job_conservation(r.state, trace.jobs.size());
    checked += r.policy.backfill_profiles().checked();
  }
  MESSAGE(fmt::format("{} kept values reused and checked", checked));
  CHECK(checked > 10000);  // the cache was used, not bypassed
}

// Backfill's node-space walk visits only the words of a slot's bitset with a reserved node once the
// cluster has more than 512 nodes (eight bitset words), and every word below that. A partition the
// jobs never use changes nothing in Slurm's choice, so the same workload on the same 130 nodes (three
// words, so that reservations and losses fall in different words) plus 600 nodes of an idle partition
// (indices after theirs: the first run takes the dense walk, the second the sparse one) must start
// every job at the same time on the same nodes.
TEST_CASE("an idle partition of 600 more nodes leaves the backfill schedule as it is") {
  std::uint32_t waited = 0, by_backfill = 0;
  for (std::uint64_t seed = 21; seed <= 23; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    const auto pick = [&](std::int64_t lo, std::int64_t hi) {
      return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
    };
    Site site = testing::small_site(130, 4);
    site.scheduler.params.bf_interval = 30;
    std::vector<testing::JobSpec> specs;
    for (int i = 0; i < 700; ++i) {  // ~3x what 520 CPUs can run over the submit span
      testing::JobSpec j;
      j.submit = pick(0, 2000);
      j.nodes = pick(0, 4) == 0 ? static_cast<std::uint32_t>(pick(2, 6)) : 1;
      j.cpus = static_cast<std::uint32_t>(pick(j.nodes, 4 * j.nodes));
      j.limit = pick(5, 40) * 60;
      j.runtime = pick(60, j.limit);
      j.user = pick(0, 1) == 0 ? "alice" : "bob";
      specs.push_back(j);
    }
    std::sort(specs.begin(), specs.end(), [](const auto& a, const auto& b) { return a.submit < b.submit; });
    const Trace trace = testing::make_trace(specs);
    Site padded = site;
    Partition spare;
    spare.name = "spare";
    for (std::uint32_t i = 0; i < 600; ++i) {
      Node n = site.nodes.front();
      n.name = fmt::format("pad{:03}", i);
      spare.nodes.push_back(n.name);
      padded.nodes.push_back(n);
    }
    padded.partitions.push_back(spare);
    const auto replay = [&](const Site& s) {
      validate(s);
      auto state = std::make_unique<sim::SimState>(s, true);
      state->jobs = sim::resolve_jobs(trace, s, state->cluster, {}, state->users);
      policies::SlurmPolicy policy(s, {});
      sim::ControllerOptions o;
      o.check_invariants = true;
      sim::Controller controller(*state, policy, o);
      controller.run();
      sim::check_job_conservation(*state, trace.jobs.size());
      return state;
    };
    const auto small = replay(site);
    const auto large = replay(padded);
    REQUIRE(small->cluster.node_words() <= 8);
    REQUIRE(large->cluster.node_words() > 8);
    for (std::size_t k = 0; k < trace.jobs.size(); ++k) {
      const auto& a = small->jobs[k];
      const auto& b = large->jobs[k];
      CAPTURE(k);
      CHECK(a.start == b.start);
      CHECK(a.end == b.end);
      REQUIRE(a.alloc.size() == b.alloc.size());
      for (std::size_t i = 0; i < a.alloc.size(); ++i) CHECK(a.alloc[i].node == b.alloc[i].node);
      waited += a.start > a.submit + 600 ? 1 : 0;
      by_backfill += a.started_by == SchedulerPass::kBackfill ? 1 : 0;
    }
  }
  MESSAGE(fmt::format("{} jobs waited over 10 min, {} started by backfill", waited, by_backfill));
  CHECK(waited > 300);       // queues deep enough for backfill reservations, hence slots
  CHECK(by_backfill > 100);  // and backfill started jobs
}

// A cycle's first test starts a job on a node that was idle when the cycle began, before any profile
// of the cycle is built: the next test's profile must hold that node's states after the new job's
// release too (every entry is checked against states recorded afresh). 2 nodes x 4 CPUs; limited main
// passes look at one job (default_queue_depth 0), full ones come hourly. J1 (4 CPUs, limit 1000)
// takes n1 at t=3. At 29: X (3 nodes: more than the partition has, pending for ever, blocking nothing),
// J2 (1 CPU, limit 600) and J3 (both nodes). The main passes look at X only, so the backfill cycle at
// 30 passes X (its limits) and tests J2, which fits now on n2 and starts, then J3, which needs the
// future: n1 free at J1's planned end 3 + 1000 = 1003, n2 at J2's 30 + 600 = 630, so J3 is planned
// at 1003.
TEST_CASE("a job started on an idle node before the cycle's first profile is in that profile") {
  Site site = testing::small_site(2, 4);
  site.scheduler.params.bf_interval = 30;
  site.scheduler.params.default_queue_depth = 0;
  site.scheduler.params.sched_interval = 3600;
  validate(site);
  const Trace trace = testing::make_trace(
      {{0, 1, 4, 1000, 1000}, {29, 3, 3, 100, 600}, {29, 1, 1, 600, 600}, {29, 2, 8, 100, 3600}});
  CheckedReplay r(site, trace);
  const auto& state = r.state;
  struct FirstCycle final : sim::ReplayObserver {
    const policies::SlurmPolicy& policy;
    std::optional<policies::BackfillStats> stats;
    Seconds at = 0;
    explicit FirstCycle(const policies::SlurmPolicy& p) : policy(p) {}
    void on_pass(const sim::SimState& s, SchedulerPass pass, bool /*full*/) override {
      if (pass != SchedulerPass::kBackfill || stats) return;
      stats = policy.last_backfill();
      at = s.now - testing::kT0;
    }
  } first(r.policy);
  r.controller->add_observer(first);
  REQUIRE_NOTHROW(r.controller->run());
  CHECK(state.jobs[0].start - testing::kT0 == 3);
  REQUIRE(first.stats);
  CHECK(first.at == 30);
  CHECK(state.jobs[2].start - testing::kT0 == 30);
  CHECK(state.jobs[2].started_by == SchedulerPass::kBackfill);
  CHECK(state.jobs[2].alloc.at(0).node == 1);  // n2
  REQUIRE(first.stats->planned.size() == 1);
  CHECK(first.stats->planned[0].job == 3);
  CHECK(first.stats->planned[0].start - testing::kT0 == 1003);
}
