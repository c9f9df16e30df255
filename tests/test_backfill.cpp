// Golden scenarios for sched/backfill (spec §6) on hand-made clusters, plus the ub_medium week.
// Every expected time is computed by hand from Slurm's rules and explained next to its check.
//
// Common facts used below (all times are offsets from kT0, the first submit = controller start):
//  * kT0 is a multiple of 60, so bf_resolution (60 s) and the will-run 30 s windows align with offsets.
//  * Main scheduler: the first limited pass runs at t=3 (batch_sched_delay after the submits at 0), a
//    full pass every 60 s, and a limited pass right after each job end.
//  * Backfill: first cycle at bf_interval (30 s); the next one bf_interval after the previous ended,
//    only if something changed (a submit, start or end); re-checked every second otherwise.
//  * A running job's planned end is start + time limit; backfill reserves whole nodes from
//    floor(start/60)*60 to ceil((start + limit)/60)*60.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "experiments/cli/site_options.hpp"
#include "experiments/replay/replay.hpp"
#include "policies/slurm_policy.hpp"
#include "replay_support.hpp"
#include "scenario_support.hpp"
#include "sim/controller.hpp"
#include "sim/job_resolver.hpp"
#include "test_support.hpp"
#include "traces/hostlist.hpp"
#include "traces/trace_io.hpp"

using namespace slurmtwin;

namespace {

using testing::JobSpec;
using testing::kT0;
using testing::make_trace;
using testing::small_site;

// Records every backfill cycle: when it ran (offset from kT0) and what it did.
class CycleLog final : public sim::ReplayObserver {
 public:
  explicit CycleLog(const policies::SlurmPolicy& policy) : policy_(policy) {}
  void on_pass(const sim::SimState& s, SchedulerPass pass, bool /*full*/) override {
    if (pass != SchedulerPass::kBackfill) return;
    at.push_back(s.now - kT0);
    stats.push_back(policy_.last_backfill());
  }
  std::vector<Seconds> at;
  std::vector<policies::BackfillStats> stats;

 private:
  const policies::SlurmPolicy& policy_;
};

struct Run {
  Site site;
  std::unique_ptr<sim::SimState> state;
  std::vector<Seconds> cycles;
  std::vector<policies::BackfillStats> stats;

  Seconds start(std::size_t i) const { return state->jobs[i].start - kT0; }
  SchedulerPass by(std::size_t i) const { return state->jobs[i].started_by; }
  /// Expected start (offset) cycle `c` gave job `i`, or -1.
  Seconds planned(std::size_t c, std::size_t i) const {
    for (const auto& p : stats.at(c).planned)
      if (p.job == i) return p.start - kT0;
    return -1;
  }
};

Run replay(Site site, const Trace& trace, const policies::SlurmPolicyOptions& popt = {}) {
  Run r;
  r.site = std::move(site);
  validate(r.site);
  r.state = std::make_unique<sim::SimState>(r.site, true);
  r.state->jobs = sim::resolve_jobs(trace, r.site, r.state->cluster, {}, r.state->users);
  policies::SlurmPolicy policy(r.site, popt);
  sim::ControllerOptions o;
  o.check_invariants = true;
  sim::Controller controller(*r.state, policy, o);
  CycleLog log(policy);
  controller.add_observer(log);
  controller.run();
  sim::check_job_conservation(*r.state, trace.jobs.size());
  r.cycles = log.at;
  r.stats = log.stats;
  return r;
}

// 2 nodes x 4 CPUs. J1 (4 CPUs, limit 1000) takes n1 at t=3 (main pass); J2 wants both nodes and is
// blocked, which blocks the partition for the main pass; J3 (1 CPU, limit 600, runs 500) and J4
// (1 CPU, limit 1200, runs 100) wait behind it.
std::vector<JobSpec> wide_job_scenario(Seconds j1_runtime) {
  return {{0, 1, 4, j1_runtime, 1000}, {0, 2, 8, 100, 3600}, {0, 1, 1, 500, 600}, {0, 1, 1, 100, 1200}};
}

}  // namespace

TEST_CASE(
    "the policy's invariant check: a replay keeps it, a job queued behind the policy's back breaks it") {
  // A whole replay with checks after every event keeps it (replay() above checks); then the same
  // state with a job put into the queue without the policy's submit: it has no priority entries.
  const auto r = replay(small_site(2, 4), make_trace(wide_job_scenario(1000)));
  CHECK(r.state->pending.empty());
  Site site = small_site(2, 4);
  validate(site);
  sim::SimState state(site, true);
  state.jobs = sim::resolve_jobs(make_trace(wide_job_scenario(1000)), site, state.cluster, {}, state.users);
  policies::SlurmPolicy policy(site, {});
  policy.init(state);
  CHECK_NOTHROW(policy.check_invariants(state));
  state.jobs[1].state = sim::SimJobState::kPending;
  state.jobs[1].slot = 0;
  state.pending.push_back(1);
  CHECK_THROWS_WITH_AS(policy.check_invariants(state), doctest::Contains("has no priority entries"),
                       std::logic_error);
}

TEST_CASE("backfill starts narrow jobs around a blocked wide job without delaying its reservation") {
  // First cycle, t=30. Queue: J2, J3, J4.
  //  J2: cannot start now; J1's planned end is 3 + 1000 = 1003 (the 30 s window from 1003 rounded up to
  //      1020 holds only J1), so J2 is planned at 1003 and reserves n1+n2 over [960, 4560)
  //      (floor(1003/60)*60 = 960, floor(4603/60)*60 = 4560: Slurm 22.05 rounds both ends down).
  //  J3: limit 600 -> it would end by 630 < 960: the reservation is not touched; it starts now on n2,
  //      the only node with free CPUs (kBackfill).
  //  J4: limit 1200 -> 1230 > 960: no node is free of reservations over [30, 1230]; the next time more
  //      nodes are free is 4560 (end of J2's reservation), where it fits: planned at 4560, reserved.
  SUBCASE("J1 runs to its limit: the wide job starts exactly at its planned time") {
    const auto r = replay(small_site(2, 4), make_trace(wide_job_scenario(1000)));
    REQUIRE(!r.cycles.empty());
    CHECK(r.cycles.front() == 30);
    CHECK(r.planned(0, 1) == 1003);
    CHECK(r.planned(0, 3) == 4560);
    CHECK(r.stats[0].started == 1);
    CHECK(r.stats[0].tested == 3);    // J2, J3 and J4 each reached the will-run test
    CHECK(r.stats[0].reserved == 2);  // J2 and J4
    CHECK(r.start(0) == 3);
    CHECK(r.by(0) == SchedulerPass::kMain);
    CHECK(r.start(2) == 30);
    CHECK(r.by(2) == SchedulerPass::kBackfill);
    CHECK(r.state->jobs[2].alloc.at(0).node == 1);  // n2
    // J1 completes at 3 + 1000 = 1003 (runtime = limit) -> end-triggered pass starts J2 then: exactly
    // its planned start, not delayed by J3 (which ended at 30 + 500 = 530).
    CHECK(r.start(1) == 1003);
    CHECK(r.by(1) == SchedulerPass::kMain);
    // J2 ends at 1103 -> J4 starts in that end-triggered pass.
    CHECK(r.start(3) == 1103);
    CHECK(r.by(3) == SchedulerPass::kMain);
  }
  SUBCASE("J1 ends before its limit: the wide job starts earlier than planned, never later") {
    const auto r = replay(small_site(2, 4), make_trace(wide_job_scenario(700)));
    CHECK(r.planned(0, 1) == 1003);  // planned with J1's limit, not its runtime
    CHECK(r.start(2) == 30);
    CHECK(r.by(2) == SchedulerPass::kBackfill);
    // J1 ends at 703, J3 already ended at 530: J2 starts at 703 (<= 1003), J4 when J2 ends at 803.
    CHECK(r.start(1) == 703);
    CHECK(r.start(1) <= r.planned(0, 1));
    CHECK(r.start(3) == 803);
    CHECK(r.by(3) == SchedulerPass::kMain);
  }
}

// Cycles every `step` s from `first` to `last` (offsets), as the expected timer of a busy thread.
std::vector<Seconds> every(Seconds first, Seconds step, Seconds last) {
  std::vector<Seconds> out;
  for (Seconds t = first; t <= last; t += step) out.push_back(t);
  return out;
}

TEST_CASE("backfill cycle timing: first at bf_interval, then bf_interval after the last, only on change") {
  // J4 (limit 1200) overlaps J2's reservation [960, 4560) on both nodes, so each cycle retries it at
  // 4560 (TRY_LATER), where its will-run test finds room on n2 now: earlier than 4560, so slurmctld
  // moves J4's expected start and marks the jobs changed (backfill.c: start_res > start_time ->
  // last_job_update), and the next cycle has work although nothing was submitted, started or ended.
  // That lasts while J2 holds its reservation: J1 ends at 703 and J2 starts; the next cycle finds J4
  // alone, planned at J2's end (no retry), and after it the thread idles; J2 ends at 803 and J4 starts
  // in that end's main pass.
  SUBCASE("bf_interval = 30") {
    // 30: J3 backfilled; then every 30 s to 690 (J4 retried each time) and 720 (J1's end and J2's start).
    const auto r = replay(small_site(2, 4), make_trace(wide_job_scenario(700)));
    CHECK(r.cycles == every(30, 30, 720));
    CHECK(r.stats.at(0).updated_jobs);
    CHECK_FALSE(r.stats.back().updated_jobs);
    CHECK(r.start(3) == 803);
  }
  SUBCASE("bf_interval = 100") {
    // First cycle at 100: J3 backfilled then (ends 600). Every 100 s to 700 (J4 retried), and 800.
    auto site = small_site(2, 4);
    site.scheduler.params.bf_interval = 100;
    const auto r = replay(site, make_trace(wide_job_scenario(700)));
    CHECK(r.cycles == every(100, 100, 800));
    CHECK(r.start(2) == 100);
    CHECK(r.by(2) == SchedulerPass::kBackfill);
  }
  SUBCASE("nothing retried: the thread idles until something changes") {
    // Without J4 no job is retried after a reservation: 30 (J3 backfilled), 60 (after that start),
    // then only changes wake it: the decay runs at 300 and 600 (PriorityCalcPeriod 5 min; each
    // recalculates J2's priority, which marks the jobs changed, after that second's check: the cycle
    // runs a second later) and J3's end at 530. J1 ends at 703 and J2 starts in its main pass:
    // nothing is left pending.
    auto jobs = wide_job_scenario(700);
    jobs.pop_back();
    const auto r = replay(small_site(2, 4), make_trace(jobs));
    CHECK(r.cycles == std::vector<Seconds>{30, 60, 301, 530, 601});
  }
  SUBCASE("with the cycle cost model, the next cycle counts bf_interval from the cycle's end") {
    // 0.5 tests/s. Cycle at 30 tests J2, J3 and J4 (3 will-run tests): 6 s of testing plus
    // floor(6/2) = 3 lock yields of 0.5 s = 7.5 s -> 8 s; so the next cycle is at 30 + 8 + 30 = 68.
    policies::SlurmPolicyOptions popt;
    popt.backfill_cost.tests_per_second = 0.5;
    const auto r = replay(small_site(2, 4), make_trace(wide_job_scenario(700)), popt);
    REQUIRE(r.cycles.size() >= 2);
    CHECK(r.cycles[0] == 30);
    CHECK(r.stats.at(0).tested == 3);
    CHECK(r.cycles[1] == 68);
    CHECK(r.start(2) == 30);  // J3 is still backfilled in the first cycle
  }
  SUBCASE("sched/builtin: no backfill at all, J3 and J4 wait behind J2") {
    // J1 ends at 703 -> J2 starts; J2 ends at 803 -> J3 and J4 start.
    auto site = small_site(2, 4);
    site.scheduler.scheduler_type = "sched/builtin";
    const auto r = replay(site, make_trace(wide_job_scenario(700)));
    CHECK(r.cycles.empty());
    CHECK(r.start(1) == 703);
    CHECK(r.start(2) == 803);
    CHECK(r.start(3) == 803);
    CHECK(r.by(2) == SchedulerPass::kMain);
  }
}

TEST_CASE("Slurm versions: the reservation's end rounding and the backfill thread's idle check") {
  // Slurm 24.11's _set_slot_time rounds a reservation's end up: J2 of the scenario above reserves
  // [960, ceil(4603/60)*60 = 4620), so J4 is planned at 4620 rather than 4560.
  auto site = small_site(2, 4);
  site.scheduler.slurm_version = 2411;
  CHECK(replay(site, make_trace(wide_job_scenario(1000))).planned(0, 3) == 4620);

  // J1 holds n1 to 1003, J2 (both nodes) blocks the main pass; J3 (4 CPUs, limit 60 s) comes at 100.
  // 22.05: after the cycle at 30 nothing changes, so the thread idles (re-checking each second) until
  // J3's submission, and the cycle of that second starts it: 100. 20.02: every job queue build marked
  // the jobs changed while a pending job had a reason, so the cycles never stop: 30, 60, 90, 120; J3
  // waits for the one at 120.
  const auto trace = make_trace({{0, 1, 4, 1000, 1000}, {0, 2, 8, 100, 3600}, {100, 1, 4, 10, 60}});
  const auto now = replay(small_site(2, 4), trace);
  CHECK(now.cycles.at(0) == 30);
  CHECK(now.cycles.at(1) == 100);
  CHECK(now.start(2) == 100);
  CHECK(now.by(2) == SchedulerPass::kBackfill);
  site = small_site(2, 4);
  site.scheduler.slurm_version = 2002;
  const auto old = replay(site, trace);
  CHECK(std::vector<Seconds>(old.cycles.begin(), old.cycles.begin() + 4) ==
        std::vector<Seconds>{30, 60, 90, 120});
  CHECK(old.start(2) == 120);
  CHECK(old.by(2) == SchedulerPass::kBackfill);
}

TEST_CASE("a job whose time limit would overlap the reservation is not backfilled, even if short") {
  SUBCASE("all nodes reserved") {
    // J1 (n1, limit 1000, runs 1000) and the wide J2 as before: J2 reserves n1+n2 over [960, 4560).
    // J3 would run only 50 s, but its limit 2000 -> 2030 > 960: not started at 30 (planned at 4560,
    // after J2's reservation). J1 ends 1003 -> J2 starts; J2 ends 1103 -> J3 starts (main pass).
    const auto r = replay(small_site(2, 4),
                          make_trace({{0, 1, 4, 1000, 1000}, {0, 2, 8, 100, 3600}, {0, 1, 1, 50, 2000}}));
    CHECK(r.planned(0, 1) == 1003);
    CHECK(r.planned(0, 2) == 4560);
    CHECK(r.stats[0].started == 0);
    CHECK(r.start(1) == 1003);
    CHECK(r.start(2) == 1103);
    CHECK(r.by(2) == SchedulerPass::kMain);
  }
  SUBCASE("a node no reservation needs is used") {
    // 4 nodes x 4 CPUs. J1 (2 nodes, 8 CPUs, limit 1000) takes n1+n2 at t=3; J2 wants 3 nodes and is
    // blocked (only n3, n4 free). At 30, J2 is planned at 1003 on n1-n3 (first three of the one run of
    // free nodes), leaving n4 unreserved: J3 (limit 2000) starts now on n4.
    const auto r = replay(small_site(4, 4),
                          make_trace({{0, 2, 8, 1000, 1000}, {0, 3, 12, 100, 3600}, {0, 1, 1, 50, 2000}}));
    CHECK(r.planned(0, 1) == 1003);
    CHECK(r.start(2) == 30);
    CHECK(r.by(2) == SchedulerPass::kBackfill);
    CHECK(r.state->jobs[2].alloc.at(0).node == 3);  // n4
    CHECK(r.start(1) == 1003);
  }
}

TEST_CASE("a wide job's plan takes the lowest-indexed nodes, so which node is left free decides a backfill") {
  // Oracle scenario 21, run 3 against runs 1-2 (docs/fidelity.md): 4 nodes x 8 CPUs, X1-X4 one whole node
  // each from t=3 (n1-n4 in that order). X4 is planned to end at 3 + 246 = 249, the two others still
  // running at 3 + 283 = 286. W (2 nodes, limit 120) waits above S (one node, limit 120, runs 60). One of
  // n1 and n3 frees at 153; the main pass cannot start W, which blocks the partition for it, and the
  // backfill cycle of that second tests W, then S. In the will-run test the running jobs leave in 30-s
  // batches: 249's window runs to 270 + 30 = 300 and takes 286 with it, so W is planned at 286 on the
  // lowest-indexed free nodes, n1 and n2 (cons_tres `_will_run_test`, `_eval_nodes`), whichever node is
  // free now. S (153 + 120 > 286) may then use a free n3 but not a free n1.
  const auto run = [](Seconds x1_runtime, Seconds x3_runtime) {
    return replay(small_site(4, 8), make_trace({{0, 1, 8, x1_runtime, 283},
                                                {0, 1, 8, 283, 283},
                                                {0, 1, 8, x3_runtime, 283},
                                                {0, 1, 8, 246, 246},
                                                {10, 2, 16, 30, 120},
                                                {11, 1, 8, 60, 120}}));
  };
  const auto cycle_at = [](const Run& r, Seconds t) {
    const auto it = std::find(r.cycles.begin(), r.cycles.end(), t);
    REQUIRE(it != r.cycles.end());
    return static_cast<std::size_t>(it - r.cycles.begin());
  };
  SUBCASE("n3 left free: S is backfilled there at once") {
    const auto r = run(283, 150);
    CHECK(r.planned(cycle_at(r, 153), 4) == 286);
    CHECK(r.start(5) == 153);
    CHECK(r.by(5) == SchedulerPass::kBackfill);
    CHECK(r.state->jobs[5].alloc.at(0).node == 2);  // n3
    CHECK(r.start(4) == 249);                       // X4 ends at its limit; S has left n3 by 213
  }
  SUBCASE("n1 left free: W's plan holds it, S waits until W has run") {
    const auto r = run(150, 283);
    CHECK(r.planned(cycle_at(r, 153), 4) == 286);
    CHECK(r.start(4) == 249);  // n1 and n4
    CHECK(r.start(5) == 279);  // when W ends
    CHECK(r.by(5) == SchedulerPass::kMain);
  }
}

TEST_CASE("bf_max_job_test stops the cycle after that many jobs reached the will-run test") {
  // wide_job_scenario(1000): J2 is tested first at every cycle, J3 second.
  SUBCASE("bf_max_job_test = 1: only J2 is tested; J3 waits for the main pass") {
    // J1 ends 1003 -> J2 starts (both nodes); J2 ends 1103 -> J3 and J4 start.
    auto site = small_site(2, 4);
    site.scheduler.params.bf_max_job_test = 1;
    const auto r = replay(site, make_trace(wide_job_scenario(1000)));
    CHECK(r.stats.at(0).tested == 1);
    CHECK(r.stats.at(0).started == 0);
    CHECK(r.start(2) == 1103);
    CHECK(r.by(2) == SchedulerPass::kMain);
  }
  SUBCASE("bf_max_job_test = 2: J3 is tested and backfilled, then the cycle stops before J4") {
    auto site = small_site(2, 4);
    site.scheduler.params.bf_max_job_test = 2;
    const auto r = replay(site, make_trace(wide_job_scenario(1000)));
    CHECK(r.stats.at(0).tested == 2);
    CHECK(r.stats.at(0).started == 1);
    CHECK(r.planned(0, 3) == -1);  // J4 never looked at in that cycle
    CHECK(r.start(2) == 30);
    CHECK(r.by(2) == SchedulerPass::kBackfill);
  }
}

TEST_CASE("bf_max_job_user: a user's records beyond the limit are skipped in the cycle") {
  // J1 (alice, n1, limit 1000), J2 (alice, both nodes), J3 (alice, 1 CPU, limit 600), J4 (bob, 1 CPU,
  // limit 600, runs 500).
  std::vector<JobSpec> jobs = {
      {0, 1, 4, 1000, 1000}, {0, 2, 8, 100, 3600}, {0, 1, 1, 500, 600}, {0, 1, 1, 500, 600}};
  jobs[3].user = "bob";
  SUBCASE("bf_max_job_user = 1: alice's J2 uses her one record; J3 is skipped, bob's J4 backfills") {
    // J3 is skipped at every cycle (J2 comes first) and starts when J2 ends: J1 ends 1003 -> J2 starts
    // (J4 ended at 530); J2 ends 1103 -> J3 starts.
    auto site = small_site(2, 4);
    site.scheduler.params.bf_max_job_user = 1;
    const auto r = replay(site, make_trace(jobs));
    CHECK(r.stats.at(0).examined == 2);  // J2 and J4
    CHECK(r.start(3) == 30);
    CHECK(r.by(3) == SchedulerPass::kBackfill);
    CHECK(r.start(2) == 1103);
    CHECK(r.by(2) == SchedulerPass::kMain);
  }
  SUBCASE("no limit: J3 and J4 both backfill at 30 on n2") {
    const auto r = replay(small_site(2, 4), make_trace(jobs));
    CHECK(r.stats.at(0).examined == 3);
    CHECK(r.start(2) == 30);
    CHECK(r.start(3) == 30);
    CHECK(r.by(2) == SchedulerPass::kBackfill);
  }
}

TEST_CASE("bf_window too short to reserve: a later small job leap-frogs and delays the wide job") {
  // bf_window = 600 s. J2's planned start 1003 > 30 + 600: no reservation. J3 (limit 2000, runs 1500)
  // then finds n2 free of reservations and starts at 30, running until 1530. J1 ends at 1003 but J2
  // needs n2 too: it starts only when J3 ends, at 1530 - later than the 1003 a reservation would give.
  auto site = small_site(2, 4);
  site.scheduler.params.bf_window = 600;
  const auto r =
      replay(site, make_trace({{0, 1, 4, 1000, 1000}, {0, 2, 8, 100, 3600}, {0, 1, 1, 1500, 2000}}));
  CHECK(r.planned(0, 1) == 1003);
  CHECK(r.stats.at(0).reserved == 0);
  CHECK(r.start(2) == 30);
  CHECK(r.by(2) == SchedulerPass::kBackfill);
  CHECK(r.start(1) == 1530);
  SUBCASE("with the default 1-day window J3 is held back and J2 starts at 1003") {
    const auto d = replay(small_site(2, 4),
                          make_trace({{0, 1, 4, 1000, 1000}, {0, 2, 8, 100, 3600}, {0, 1, 1, 1500, 2000}}));
    CHECK(d.start(1) == 1003);
    CHECK(d.start(2) == 1103);
  }
}

TEST_CASE("bf_min_prio_reserve: a job under the threshold reserves nothing, so a later job leap-frogs") {
  // All priorities are 1; bf_min_prio_reserve = 2 puts every job under it: J2 is only tested for a
  // start now (no reservation; the main pass is not blocked by it either), so J3 (limit 2000, runs
  // 1500) starts on n2 at the first pass (t=3) already - the main pass no longer blocks the partition
  // behind J2 - and J2 waits until J3 ends at 1503.
  auto site = small_site(2, 4);
  site.scheduler.params.bf_min_prio_reserve = 2;
  const auto r =
      replay(site, make_trace({{0, 1, 4, 1000, 1000}, {0, 2, 8, 100, 3600}, {0, 1, 1, 1500, 2000}}));
  CHECK(r.start(2) == 3);
  CHECK(r.by(2) == SchedulerPass::kMain);
  CHECK(r.start(1) == 1503);
  for (const auto& s : r.stats) CHECK(s.reserved == 0);
}

TEST_CASE("ub_medium week with backfill: invariants hold, every job starts, backfill starts many") {
  const auto week = testing::ub_medium_week();
  if (!week) return;
  const auto& [site, trace] = *week;
  REQUIRE(trace.jobs.size() == 19579);
  experiments::ReplayOptions o;
  o.check_invariants = true;
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = testing::checked_replay(site, trace, o);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::size_t backfilled = 0;
  for (const auto& j : r.state->jobs) backfilled += j.started_by == SchedulerPass::kBackfill ? 1 : 0;
  const double fraction = static_cast<double>(backfilled) / static_cast<double>(r.state->jobs.size());
  MESSAGE(
      fmt::format("ub_medium week: mean wait {:.0f} s, median {:.0f} s, started by backfill {:.1f}%, "
                  "{:.1f} s",
                  r.metrics.overall.mean, r.metrics.overall.median, 100 * fraction, secs));
  CHECK(r.metrics.started == 19579);
  CHECK(r.metrics.never_started == 0);
  CHECK(fraction > 0.05);
  // Without backfill the mean wait is 395745 s (strict priority per partition): backfill must cut it.
  CHECK(r.metrics.overall.mean < 100000);
}

TEST_CASE("backfill cost model: bf_max_time caps the jobs tested and a cycle's length delays the next") {
  SchedulerParameters p;  // bf_interval 30 s (bf_max_time defaults to it), yields of 0.5 s every 2 s
  policies::BackfillCostModel off;
  CHECK_FALSE(off.enabled());
  CHECK(off.duration(p, 500) == 0);
  policies::BackfillCostModel cost{10.0};  // 10 will-run tests per second
  // Testing time within bf_max_time: 30 s x 2 / (2 + 0.5) = 24 s -> 240 tests.
  CHECK(cost.test_budget(p) == 240);
  // 50 tests take 5 s plus floor(5 / 2) = 2 yields of 0.5 s: 6 s.
  CHECK(cost.duration(p, 50) == 6);
  CHECK(cost.duration(p, 0) == 1);  // a cycle takes at least a second
  p.bf_max_time = 60;
  CHECK(cost.test_budget(p) == 480);
}

TEST_CASE(
    "a job with a constraint is planned on its feature's nodes only: other jobs' ends do not delay its "
    "estimate") {
  // 3 nodes x 8 CPUs, n3 with feature big; bf_interval 1 (the first pass at 1). At 1: X (big, 4 CPUs,
  // limit 100) on n3, Y (8 CPUs, limit 130) on n1, Z (8 CPUs, limit 1000) on n2. B (big, 8 CPUs) waits
  // for n3. Slurm's will-run test sees only B's feature nodes (_try_sched: job_req_node_filter), so
  // Y's end on n1 is skipped: B's estimate is X's end, 101 (not 131, which the 30-s window from 101
  // would reach), and its reservation of n3 from 101 keeps C (4 CPUs, limit 110: it would end at
  // ~112) off n3's free half. C starts when Y ends, on n1. (Real Slurm, oracle scenario 19: the same
  // for j004 and j007.)
  auto site = small_site(3, 8);
  site.nodes[2].features = {"big"};
  site.scheduler.params.bf_interval = 1;
  auto trace = make_trace({{0, 1, 4, 100, 100},
                           {0, 1, 8, 130, 130},
                           {0, 1, 8, 1000, 1000},
                           {1, 1, 8, 100, 200},
                           {2, 1, 4, 110, 110}});
  for (const std::size_t i : {0, 3}) trace.jobs[i].constraints = trace.strings.intern("big");
  const auto r = replay(site, trace);
  CHECK(r.state->jobs[0].alloc.at(0).node == 2);
  CHECK(r.start(3) == 101);
  CHECK(r.state->jobs[3].alloc.at(0).node == 2);
  CHECK(r.start(4) == 131);
  CHECK(r.state->jobs[4].alloc.at(0).node == 0);
  CHECK(r.planned(0, 3) == 101);
}

TEST_CASE(
    "a constraint job with --ntasks-per-node and -c is filtered by the CPUs it asks of a node, not more") {
  // 2 nodes x 4 CPUs, n2 with feature big; bf_interval 1. J0 holds n1; J1 wants both nodes and reserves
  // them from J0's end. J2 (big, 2 tasks x 2 CPUs, --ntasks-per-node=2: 4 CPUs on one node, limit 100)
  // fits n2 before that reservation and is backfilled at once. The constraint filter counted -c twice
  // (8 CPUs per node), left n2 out, and J2 waited for J1.
  auto site = small_site(2, 4);
  site.nodes[1].features = {"big"};
  site.scheduler.params.bf_interval = 1;
  auto trace = make_trace({{0, 1, 4, 200, 200}, {1, 2, 8, 100, 100}, {2, 1, 2, 50, 100}});
  auto& j2 = trace.jobs[2];
  j2.constraints = trace.strings.intern("big");
  j2.cpus_per_task = 2;
  j2.tasks_per_node = 2;
  j2.req_cpus = 4;
  const auto r = replay(site, trace);
  CHECK(r.state->jobs[2].alloc.at(0).node == 1);
  CHECK(r.start(2) < 10);
  CHECK(r.by(2) == SchedulerPass::kBackfill);
}
