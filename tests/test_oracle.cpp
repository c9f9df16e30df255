// The oracle comparison (experiments/oracle_compare) and the fidelity fixes it led to. The last test
// replays every run of real Slurm 22.05 recorded in tests/oracle/recorded/ and checks the measured
// agreement against the acceptance rule of docs/fidelity.md.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "experiments/fidelity/oracle_compare.hpp"
#include "experiments/replay/replay.hpp"
#include "policies/node_select.hpp"
#include "scenario_support.hpp"
#include "sim/cluster_state.hpp"
#include "test_support.hpp"
#include "traces/read_report.hpp"
#include "traces/sacctmgr.hpp"

using namespace slurmtwin;
using testing::kT0;
using testing::make_trace;
using testing::small_site;

TEST_CASE("Kendall tau-b on hand-computed orders") {
  CHECK(experiments::kendall_tau_b({1, 2, 3, 4}, {10, 20, 30, 40}) == doctest::Approx(1.0));
  CHECK(experiments::kendall_tau_b({1, 2, 3, 4}, {4, 3, 2, 1}) == doctest::Approx(-1.0));
  // One swapped neighbour pair among 4: 5 concordant, 1 discordant of 6 -> 4/6.
  CHECK(experiments::kendall_tau_b({1, 2, 3, 4}, {1, 3, 2, 4}) == doctest::Approx(4.0 / 6.0));
  // A tie in a: pairs (1,2) tied in a only, (1,3) and (2,3) concordant: 2 / sqrt(3 * 2).
  CHECK(experiments::kendall_tau_b({1, 1, 2}, {1, 2, 3}) == doctest::Approx(2.0 / std::sqrt(6.0)));
  CHECK(experiments::kendall_tau_b({5}, {7}) == doctest::Approx(1.0));
}

TEST_CASE("compare_schedules: start and end differences, order, pass and end states") {
  using experiments::RunOutcome;
  experiments::Schedule a, b;
  a["j001"] = {{0, 0, 70, "COMPLETED", SchedulerPass::kBackfill, "n1"}};
  a["j002"] = {{3, 71, 106, "COMPLETED", SchedulerPass::kMain, "n[1-2]"}};
  a["j003"] = {{5, 80, 100, "PREEMPTED", SchedulerPass::kMain, "n3"},
               {100, 140, 160, "COMPLETED", SchedulerPass::kMain, "n4"}};
  b["j001"] = {{0, 0, 70, "COMPLETED", SchedulerPass::kMain, "n1"}};
  b["j002"] = {{3, 70, 105, "COMPLETED", SchedulerPass::kMain, "n[2-3]"}};
  b["j003"] = {{5, 90, 150, "COMPLETED", SchedulerPass::kMain, ""}};  // no node list: not compared
  const auto d = experiments::compare_schedules(a, b);
  CHECK(d.jobs == 3);
  CHECK(d.mean_abs_start == doctest::Approx((0 + 1 + 10) / 3.0));
  CHECK(d.max_abs_start == 10);
  CHECK(d.mean_abs_end == doctest::Approx((0 + 1 + 10) / 3.0));  // final runs' ends: 70/70, 106/105, 160/150
  CHECK(d.tau == doctest::Approx(1.0));                          // same order 0 < 70/71 < 80/90
  CHECK(d.pass_known == 3);
  CHECK(d.pass_equal == 2);
  CHECK(d.nodes_known == 2);  // first runs with a node list on both sides: j001, j002
  CHECK(d.nodes_equal == 1);  // j001
  CHECK(d.state_jobs == 3);
  CHECK(d.state_equal == 2);  // j003 was requeued in a only
  REQUIRE(!d.worst.empty());
  CHECK(d.worst.front() == "j003 +10 s");
}

TEST_CASE("near_tie: sshare samples whose Fair Tree order hinges on a LevelFS near-tie") {
  // root / a1 {u1, u2}: LevelFS 4.34 and 4.31 (0.7% apart, a near-tie) vs 4.34 and 2.0 (clear).
  const auto sample = [](double u1, double u2) {
    std::vector<experiments::RealSshareRow> rows(4);
    rows[0].account = "root";
    rows[1].account = "a1";
    rows[1].depth = 1;
    rows[1].level_fs = 1.0;
    for (std::size_t k = 2; k < 4; ++k) {
      rows[k].account = "a1";
      rows[k].user = k == 2 ? "u1" : "u2";
      rows[k].depth = 2;
      rows[k].level_fs = k == 2 ? u1 : u2;
    }
    return rows;
  };
  CHECK(experiments::near_tie(sample(4.34, 4.31)));
  CHECK_FALSE(experiments::near_tie(sample(4.34, 2.0)));
  CHECK_FALSE(experiments::near_tie(sample(4.34, 4.34)));  // an exact tie is a tie on both sides
  CHECK_FALSE(experiments::near_tie(sample(std::numeric_limits<double>::infinity(), 4.31)));
}

TEST_CASE("sshare rows whose FairShare differs between the real runs are counted, not judged") {
  // Real Slurm 22.05 (scenario 15): at +298 s run 1 ranked u2 above u3 (FairShare 0.6 / 0.4) and run 2
  // the other way round (0.4 / 0.6), their schedules having parted on a sub-second race. No replay
  // can match both; a row on which the runs agree is still judged.
  const auto row = [](const char* user, double fairshare) {
    experiments::RealSshareRow r;
    r.account = "a1";
    r.user = user;
    r.depth = 2;
    r.norm_shares = 0.5;
    r.fairshare = fairshare;
    return r;
  };
  const auto run = [&](Seconds trace_start, double offset, double u2, double u3) {
    experiments::RecordedRun r;
    r.trace_start = trace_start;
    r.sshare.push_back(
        {static_cast<double>(trace_start) + offset, {row("u2", u2), row("u3", u3), row("u4", 0.8)}});
    return r;
  };
  // Run 2's sample is 0.6 s later in offset (within the 1 s window); run 3's is 2 s away.
  const std::vector<experiments::RecordedRun> runs = {run(1000, 298.5, 0.6, 0.4), run(5000, 299.1, 0.4, 0.6),
                                                      run(9000, 300.5, 0.4, 0.6)};
  const auto differ = experiments::real_runs_differ(runs, 0);
  CHECK(differ == experiments::RealRunsDiffer{{0, "a1", "u2"}, {0, "a1", "u3"}});
  // Run 3 differs from run 1 too, but its sample is too far away to say so, and agrees with run 2.
  CHECK(experiments::real_runs_differ(runs, 2).empty());
  // The simulator's sample of run 1 at the same instant: u2 and u3 not judged, u4 judged (and off).
  experiments::SimulatedRun sim;
  sim.samples.push_back({1298, {}, {}});
  for (const auto& [user, fs] : {std::pair{"u2", 0.4}, std::pair{"u3", 0.6}, std::pair{"u4", 0.6}})
    sim.samples.back().shares.push_back({"a1", user, 0.5, 0, 0, 0, fs});
  const auto judged = experiments::compare_factors(runs[0], sim, 1e-3, 1.5, differ);
  CHECK(judged.share_rows_runs_differ == 2);
  CHECK(judged.share_rows == 1);
  CHECK(judged.share_rows_bad == 1);
  const auto all = experiments::compare_factors(runs[0], sim);
  CHECK(all.share_rows == 3);
  CHECK(all.share_rows_bad == 3);
}

TEST_CASE("cons_tres passes over a node whose few free CPUs would leave a bounded job short") {
  // Seen on real Slurm 22.05 (scenario 01): 4 nodes x 8 CPUs, n1 has 6 free; -N 2 -n 16 starts on
  // n[2-3]. A greedy fill taking n1 first would be left 2 CPUs short with no node to spare.
  auto site = small_site(4, 8);
  sim::ClusterState cluster(site, true);
  sim::NodeRequest busy;
  busy.total_cpus = 2;
  busy.mem_per_node_mb = 100;
  cluster.allocate(busy, {{0, 2, 100}});
  sim::NodeRequest r;
  r.min_nodes = r.max_nodes = 2;
  r.total_cpus = 16;
  r.mem_per_node_mb = 100;
  const auto alloc = policies::select_nodes(cluster, r, {0, 1, 2, 3}, std::vector<bool>{});
  REQUIRE(alloc);
  REQUIRE(alloc->size() == 2);
  CHECK((*alloc)[0].node == 1);
  CHECK((*alloc)[1].node == 2);
  CHECK((*alloc)[0].cpus == 8);
  // Unbounded node count: n1's 6 CPUs are still used first (nothing is left short).
  r.min_nodes = 1;
  r.max_nodes = 4;
  r.total_cpus = 14;
  const auto spread = policies::select_nodes(cluster, r, {0, 1, 2, 3}, std::vector<bool>{});
  REQUIRE(spread);
  CHECK(spread->front().node == 0);
}

TEST_CASE("sacctmgr add cluster creates root's own user association (Fair Tree ranks it)") {
  Site s;
  std::vector<std::string> w;
  import_sacctmgr_script_text("add cluster c1\nadd account a1\nadd user u1 Account=a1\n", "script", s, w);
  REQUIRE(s.find_user("root"));
  int root_assocs = 0;
  for (const auto& a : s.associations) root_assocs += a.user == "root" && a.account == "root" ? 1 : 0;
  CHECK(root_assocs == 1);
  // Without `add cluster` (a database dump applied to an existing cluster) nothing is invented.
  Site t;
  import_sacctmgr_script_text("add account a1\nadd user u1 Account=a1\n", "script", t, w);
  CHECK_FALSE(t.find_user("root"));
}

TEST_CASE("a job whose work ends past its limit but before the limit check ends then, as TIMEOUT") {
  // Real Slurm 22.05 (scenario 10): limit 60 s, work 65 s -> ends at 65 s as TIMEOUT; the check at 90
  // s would have killed it later. Started at t=3: limit reached at 63, work done at 68, check at 90.
  experiments::ReplayOptions o;
  o.check_invariants = true;
  const auto r = experiments::run_replay(small_site(1, 4), make_trace({{0, 1, 1, 65, 60}}), o);
  const auto& j = r.state->jobs[0];
  CHECK(j.start - kT0 == 3);
  CHECK(j.end - kT0 == 68);
  CHECK(j.end_state == JobState::kTimeout);
  // Within the limit: COMPLETED as before.
  const auto ok = experiments::run_replay(small_site(1, 4), make_trace({{0, 1, 1, 60, 60}}), o);
  CHECK(ok.state->jobs[0].end_state == JobState::kCompleted);
}

TEST_CASE("timer phases and the requeue delay align a replay with a recorded slurmctld") {
  // A job over its 60 s limit: started at t=3, limit reached at t=63. Limit checks every 30 s from
  // controller start + timeout_phase: phase 0 -> t=90; phase 7 -> 67 (7, 37, 67).
  const auto trace = make_trace({{0, 1, 1, 100, 60}});
  experiments::ReplayOptions o;
  o.check_invariants = true;
  CHECK(experiments::run_replay(small_site(1, 4), trace, o).state->jobs[0].end - kT0 == 90);
  o.timeout_phase = 7;
  CHECK(experiments::run_replay(small_site(1, 4), trace, o).state->jobs[0].end - kT0 == 67);
  // sched_phase/backfill_phase: the first full pass at t=1 instead of sched_interval (60) and the
  // first backfill cycle at t=2 instead of bf_interval (30). Submitted at 0, batch_sched_delay 3 would
  // start it at 3; with sched/builtin and the first full pass at 1 it starts at 1.
  auto site = small_site(1, 4);
  site.scheduler.scheduler_type = "sched/builtin";
  experiments::ReplayOptions p;
  p.sched_phase = 1;
  CHECK(experiments::run_replay(site, trace, p).state->jobs[0].start - kT0 == 1);
}

TEST_CASE("a requeued job keeps the priority of its last recalculation until the next decay run") {
  // Real Slurm 22.05 (scenario 06, run 2): job 1, requeued at +70 and eligible at +101, showed in sprio
  // the age of the decay run at +56 (5 s after its previous eligible time +51) until the decay run at
  // +116, which gave it 15 s. Here: one 4-CPU node, partitions low (tier 1) and high (tier 2),
  // REQUEUE, requeue delay 30 (eligible 31 s after), PriorityWeightAge=600 with PriorityMaxAge=600 s
  // (weighted age = seconds), decay runs at 0, 60, 120, 180 (calc period 60 s).
  auto site = small_site(1, 4);
  site.partitions[0].name = "low";
  site.partitions[0].priority_tier = 1;
  auto high = site.partitions[0];
  high.name = "high";
  high.priority_tier = 2;
  high.is_default = false;
  site.partitions.push_back(high);
  site.scheduler.preempt_type = "preempt/partition_prio";
  site.scheduler.preempt_mode = PreemptMode::kRequeue;
  site.scheduler.weight_age = 600;
  site.scheduler.max_age = 600;
  site.scheduler.calc_period = 60;
  // J1 low at 0 (runtime 1000) starts at 3. J2 high at 10 (runtime 100) requeues it at once: J1 is
  // eligible at 41, pends over the decay run at 60 (age 60-41 = 19 s), starts when J2 ends at 110.
  // J3 high at 125 (runtime 100) requeues it again: eligible at 156, pending until J3 ends at 225.
  auto trace = make_trace({{0, 1, 4, 1000}, {10, 1, 4, 100}, {125, 1, 4, 100}});
  for (auto& j : trace.jobs) j.partition = trace.partitions.intern(j.job_id == 1 ? "low" : "high");
  experiments::ReplayOptions o;
  o.check_invariants = true;
  o.requeue_delay = 30;
  // Samples between recalculations (like sprio, of eligible pending jobs): 70 (after the run at 60),
  // 170 (eligible again, no decay run since the requeue) and 185 (after the run at 180).
  o.sample_at = {kT0 + 70, kT0 + 170, kT0 + 185};
  const auto r = experiments::run_replay(site, trace, o);
  const auto& j1 = r.state->jobs[0];
  REQUIRE(j1.past_runs.size() == 2);
  CHECK(j1.past_runs[0].end - kT0 == 10);
  CHECK(j1.past_runs[1].eligible - kT0 == 41);
  CHECK(j1.past_runs[1].start - kT0 == 110);
  CHECK(j1.past_runs[1].end - kT0 == 125);
  CHECK(j1.eligible - kT0 == 156);
  CHECK(j1.start - kT0 == 225);
  REQUIRE(r.samples.size() == 3);
  const auto age_of_j1 = [&](std::size_t i) {
    for (const auto& row : r.samples[i].jobs)
      if (row.job_id == 1) return std::optional<std::pair<double, std::uint32_t>>({row.age, row.priority});
    return std::optional<std::pair<double, std::uint32_t>>();
  };
  for (std::size_t i = 0; i < 3; ++i) REQUIRE(age_of_j1(i));
  CHECK(age_of_j1(0)->first == doctest::Approx(19.0 / 600));  // decay run at 60: 60 - 41
  CHECK(age_of_j1(0)->second == 19);
  CHECK(age_of_j1(1)->first == doctest::Approx(19.0 / 600));  // kept over the requeue at 125
  CHECK(age_of_j1(1)->second == 19);                          // and so is the priority it is sorted by
  CHECK(age_of_j1(2)->first == doctest::Approx(24.0 / 600));  // decay run at 180: 180 - 156
  CHECK(age_of_j1(2)->second == 24);
  // The other model (computed anew at the requeue): no age until the decay run at 180.
  o.requeue_keeps_priority = false;
  const auto f = experiments::run_replay(site, trace, o);
  for (const auto& row : f.samples[1].jobs)
    if (row.job_id == 1) CHECK(row.age == 0.0);
}

TEST_CASE("the job size factor of a pending --exclusive job counts whole nodes after the next decay run") {
  // Real Slurm 22.05 (scenario 37): slurmctld computes a job's priority at submit from its request's
  // CPUs, then tests it on idle nodes (select_nodes, test_only), which sets job_ptr->total_cpus to the
  // CPUs of that allocation: whole nodes for --exclusive. The job size factor counts total_cpus from
  // the next recalculation on (sprio: 0.25 for -n2 --exclusive on 4 nodes x 8 CPUs, where the request
  // gives 0.15625). 4 x 8 CPUs; J1 takes all 32 CPUs for 200 s; J2 (-N1 -n2 --exclusive) and J3
  // (-N1 -n2) are submitted at 10 and pend; decay runs every 60 s. PriorityFavorSmall=NO:
  // factor = (min_nodes / 4 + cpus / 32) / 2.
  auto site = small_site(4, 8);
  site.scheduler.calc_period = 60;
  site.scheduler.weight_job_size = 1000;
  auto trace = make_trace({{0, 4, 32, 200}, {10, 1, 2, 50}, {10, 1, 2, 50}});
  trace.jobs[1].exclusive = true;
  experiments::ReplayOptions o;
  o.check_invariants = true;
  o.sample_at = {kT0 + 30, kT0 + 70};  // before and after the decay run at 60
  const auto r = experiments::run_replay(site, trace, o);
  REQUIRE(r.samples.size() == 2);
  const auto size_of = [&](std::size_t i, std::uint64_t id) {
    for (const auto& row : r.samples[i].jobs)
      if (row.job_id == id)
        return std::optional<std::pair<double, std::uint32_t>>({row.job_size, row.priority});
    return std::optional<std::pair<double, std::uint32_t>>();
  };
  for (std::size_t i = 0; i < 2; ++i) REQUIRE((size_of(i, 2) && size_of(i, 3)));
  CHECK(size_of(0, 2)->first == doctest::Approx((1.0 / 4 + 2.0 / 32) / 2));  // as computed at submit
  CHECK(size_of(0, 2)->second == 156);
  CHECK(size_of(1, 2)->first == doctest::Approx((1.0 / 4 + 8.0 / 32) / 2));  // the whole node's 8 CPUs
  CHECK(size_of(1, 2)->second == 250);
  CHECK(size_of(1, 3)->first == doctest::Approx((1.0 / 4 + 2.0 / 32) / 2));  // shares its node: 2 CPUs
  CHECK(size_of(1, 3)->second == 156);
  CHECK(r.state->jobs[1].start - kT0 == 203);  // J2 first (higher priority), J3 beside it on another node
  CHECK(r.state->jobs[1].alloc_cpus == 8);
}

TEST_CASE("the job size factor counts the nodes -N asked, not those --ntasks-per-node makes it need") {
  // Real Slurm 22.05 (scenario 41, the micro cluster's `-n 96 --ntasks-per-node=12`): the job size
  // factor counts details->min_nodes, which stays -N's minimum (1 without -N); node selection alone
  // raises the count to tasks / ntasks-per-node (sprio 0.45 = (1/10 + 96/120) / 2 on 10 x 12 CPUs).
  // Here 4 x 8 CPUs; J1 takes all 32 for 200 s; J2 `-n16 --ntasks-per-node=8` and J3 `-N2 -n16` pend.
  auto site = small_site(4, 8);
  site.scheduler.calc_period = 60;
  site.scheduler.weight_job_size = 1000;
  auto trace = make_trace({{0, 4, 32, 200}, {10, 0, 16, 50}, {10, 2, 16, 50}});
  trace.jobs[1].tasks_per_node = 8;
  experiments::ReplayOptions o;
  o.check_invariants = true;
  o.sample_at = {kT0 + 30};
  const auto r = experiments::run_replay(site, trace, o);
  REQUIRE(r.samples.size() == 1);
  std::map<std::uint64_t, double> size;
  for (const auto& row : r.samples[0].jobs) size[row.job_id] = row.job_size;
  CHECK(size.at(2) == doctest::Approx((1.0 / 4 + 16.0 / 32) / 2));  // not (2/4 + 16/32) / 2
  CHECK(size.at(3) == doctest::Approx((2.0 / 4 + 16.0 / 32) / 2));
  CHECK(r.state->jobs[1].alloc.size() == 2);  // it still runs on two nodes
}

TEST_CASE("classic fair share: accounts from the usage before a decay run, a user's when its job needs it") {
  // Real Slurm 22.05 (scenario 39, PriorityFlags=NO_FAIR_TREE): a decay run first computes every
  // account's usage_norm and usage_efctv from the usage as it is (_set_children_usage_efctv), then
  // decays and charges the running jobs in job-list order, and a user's usage is computed when the list
  // reaches its first pending job, against its account's value from the start of the run.
  // Tree: root -> acct (1) -> alice (1), bob (1); root -> other (1) -> carol (1). shares_norm: alice
  // 1/2 x 1/2 = 0.25. No decay. One node of 4 CPUs; J1 alice 4 CPUs 30 s ends before 40 (charged
  // 120 CPU-s at its end); J2 carol 4 CPUs from about 41; J3 alice at 45 pends. The run at 60: acct
  // usage_norm = efctv = 120/120 = 1 (before J2's charge c = 4 x (60 - J2's start)); J2 charged, then
  // J3: alice usage_norm n = 120 / (120 + c), efctv = n + (1 - n) x 1/2, fs = 2^(-efctv / 0.25).
  // (Computing everything after the charges, as Fair Tree does, gives efctv = n.) carol's usage has
  // no job to need it before the run ends: against other's efctv of 0, hers is 0 and fs 1.
  auto site = testing::every_second_site(1, 4);
  site.scheduler.priority_flags = {"NO_FAIR_TREE"};
  site.scheduler.decay_half_life = 0;
  site.scheduler.weight_fairshare = 1000;
  site.accounts.push_back({"other", "root", {1, false}, 0, {}, "", {}});
  site.users.push_back({"carol", "other", "None"});
  site.associations.push_back({"carol", "other", "", {1, false}, 0, {}, "", {}});
  auto trace = make_trace({{0, 1, 4, 30}, {40, 1, 4, 100}, {45, 1, 4, 10}});
  trace.jobs[1].user = trace.users.intern("carol");
  trace.jobs[1].account = trace.accounts.intern("other");
  experiments::ReplayOptions o;
  o.check_invariants = true;
  o.sample_at = {kT0 + 70};
  const auto r = experiments::run_replay(site, trace, o);
  REQUIRE(r.state->jobs[0].end - kT0 < 40);
  const Seconds s2 = r.state->jobs[1].start - kT0;
  REQUIRE((s2 >= 40 && s2 < 60));
  REQUIRE(r.state->jobs[2].start - kT0 > 70);
  const double c = 4.0 * static_cast<double>(60 - s2);
  const double n = 120.0 / (120.0 + c);
  const double efctv = n + (1.0 - n) / 2;
  REQUIRE(r.samples.size() == 1);
  const auto& sample = r.samples[0];
  bool found = false;
  for (const auto& row : sample.jobs)
    if (row.job_id == 3) {
      found = true;
      CHECK(row.fairshare == doctest::Approx(std::pow(2.0, -efctv / 0.25)).epsilon(1e-9));
    }
  CHECK(found);
  for (const auto& a : sample.shares) {
    if (a.user == "alice") CHECK(a.effectv_usage == doctest::Approx(efctv).epsilon(1e-12));
    if (a.account == "acct" && a.user.empty()) CHECK(a.effectv_usage == doctest::Approx(1.0));
    if (a.user == "carol") {
      CHECK(a.effectv_usage == 0.0);
      CHECK(a.fairshare == 1.0);
    }
  }
}

TEST_CASE("a time-limit check after the decay run of the same second: the last slice is not decayed") {
  // Real Slurm 22.05 (scenario 10): a decay run and a time-limit check fell in the same second; their
  // threads' sub-second phases drift, so either may come first, and the timed-out job's last usage
  // slice is decayed once more or not. One 4-CPU job, limit 100 s, work 200 s, started at 3: limit at
  // 103, checks every 30 s -> TIMEOUT at 120, the second of a decay run (runs at 0, 60, 120; half-life
  // 600 s: Slurm's per-second factor df = 1 - 0.693/600). The run at 60 charges [3, 60]:
  // U1 = 57 df^57 * 4 CPUs; the slice [60, 120] is S = 60 df^60 * 4.
  auto site = small_site(1, 4);
  site.scheduler.calc_period = 60;
  site.scheduler.decay_half_life = 600;
  const auto trace = make_trace({{0, 1, 4, 200, 100}});
  const double df = 1.0 - 0.693 / 600.0;
  const double u1 = 57 * std::pow(df, 57) * 4, slice = 60 * std::pow(df, 60) * 4;
  const auto usage_after = [&](bool after_decay) {
    experiments::ReplayOptions o;
    o.check_invariants = true;
    o.limit_check_after_decay = after_decay;
    o.sample_at = {kT0 + 121};
    const auto r = experiments::run_replay(site, trace, o);
    const auto& j = r.state->jobs[0];
    CHECK(j.end - kT0 == 120);
    CHECK(j.end_state == JobState::kTimeout);
    REQUIRE(r.samples.size() == 1);
    for (const auto& a : r.samples[0].shares)
      if (a.user == "alice") return a.raw_usage;
    FAIL("no association of alice");
    return 0.0;
  };
  // Job end first (the default): it is charged [60, 120], then the run decays everything by df^60.
  CHECK(usage_after(false) == doctest::Approx((u1 + slice) * std::pow(df, 60)).epsilon(1e-12));
  // Decay run first: it decays U1 and charges the still-running job [60, 120]; the end adds nothing.
  CHECK(usage_after(true) == doctest::Approx(u1 * std::pow(df, 60) + slice).epsilon(1e-12));
}

TEST_CASE("a short job started by backfill frees its nodes for the backfill pass a second after its end") {
  // Real Slurm 22.05 (scenarios 02, 04, 05, 06): a job started by a backfill cycle ends a few tens of
  // ms past that cycle's sub-second phase, N s later; the cycle's phase drifts later by ~1-1.5 ms/s
  // only, so for N of 20-40 s (14 recorded hand-overs) the cycle of the job's last second ran before
  // its end and the next job on its nodes was backfilled a second later; for N of 75-150 s (9) in the
  // same second.
  // Two 4-CPU nodes, bf_interval = sched_interval = 1 s, bf_resolution 1 s. Job 1 (4 CPUs, limit
  // 200 s) starts on n1 at 1; job 2 (both nodes) is next in line, so the main pass stops there and
  // backfill reserves both nodes for it at 201 (job 1's planned end). Job 3 (4 CPUs, work N s, limit
  // 100 s), submitted at 2, is backfilled on n2 by the cycle of that second (after the submit) and
  // ends at 2 + N; job 4 (4 CPUs, work 10 s, limit 60 s) waits for n2 and is backfilled when the
  // backfill pass sees it free (the main pass stops at job 2).
  auto site = small_site(2, 4);
  auto& sp = site.scheduler.params;
  sp.bf_interval = sp.sched_interval = sp.bf_resolution = 1;
  sp.batch_sched_delay = 1;
  const auto start_of_job4 = [&](Seconds work3, Seconds lag_below) {
    experiments::ReplayOptions o;
    o.check_invariants = true;
    o.backfill_end_lag_below = lag_below;
    const auto r = experiments::run_replay(
        site, make_trace({{0, 1, 4, 150, 200}, {1, 2, 8, 10, 100}, {2, 1, 4, work3, 100}, {3, 1, 4, 10, 60}}),
        o);
    const auto& j = r.state->jobs;
    CHECK(j[0].start - kT0 == 1);
    CHECK(j[2].start - kT0 == 2);
    CHECK(j[2].started_by == SchedulerPass::kBackfill);
    CHECK(j[3].started_by == SchedulerPass::kBackfill);
    return j[3].start - kT0;
  };
  // Off (the default): job 3's end at 22 frees n2 for the backfill cycle of that second.
  CHECK(start_of_job4(20, 0) == 22);
  // On: job 3 ran 20 s < 60 s, so the cycle at 22 still sees n2 busy; the one at 23 starts job 4.
  CHECK(start_of_job4(20, 60) == 23);
  // Job 3 ran 70 s >= 60 s: the cycle's drift has overtaken its end; job 4 starts in that second (72).
  CHECK(start_of_job4(70, 60) == 72);
}

namespace {

/// Job 2's start (s after kT0) and the pass that started it, replayed with its submission in `order`.
std::pair<Seconds, SchedulerPass> job2_start(const Site& site, const Trace& trace,
                                             std::optional<sim::SubmitOrder> order) {
  experiments::ReplayOptions o;
  o.check_invariants = true;
  if (order) o.submit_order[2] = *order;
  const auto r = experiments::run_replay(site, trace, o);
  const auto& j = r.state->jobs[1];
  return {j.start - kT0, j.started_by};
}

}  // namespace

TEST_CASE(
    "a job submitted after its second's main pass is first seen by the backfill cycle or the next pass") {
  // Real Slurm 22.05 (scenario 17, run3): the background loop's full main pass and the backfill cycle
  // each run once a second, at sub-second phases of their own. Four jobs were submitted 0.1 s apart
  // in one second; the main pass at .358 allocated the first three (sbatch returned at .118, .222,
  // .334) and the fourth (returned at .672) was started by the next second's backfill cycle, on the
  // node the others left (run1, all four submitted by .385, had them all in one cycle).
  // One 4-CPU node, bf_interval = sched_interval = batch_sched_delay = 1 s; job 1 at 0 keeps the
  // passes running every second, job 2 (1 CPU) is submitted at 5.
  auto site = small_site(1, 4);
  auto& sp = site.scheduler.params;
  sp.bf_interval = sp.sched_interval = sp.batch_sched_delay = 1;
  const auto trace = make_trace({{0, 1, 1, 100, 200}, {5, 1, 1, 100, 200}});
  const auto job2 = [&](std::optional<sim::SubmitOrder> order) { return job2_start(site, trace, order); };
  // Before both passes (the default): that second's main pass starts it.
  CHECK(job2(std::nullopt) == std::pair{Seconds{5}, SchedulerPass::kMain});
  CHECK(job2(sim::SubmitOrder::kBeforePasses) == std::pair{Seconds{5}, SchedulerPass::kMain});
  // After the main pass: the backfill cycle of the same second starts it.
  CHECK(job2(sim::SubmitOrder::kAfterMain) == std::pair{Seconds{5}, SchedulerPass::kBackfill});
  // After both: the next second's main pass.
  CHECK(job2(sim::SubmitOrder::kAfterPasses) == std::pair{Seconds{6}, SchedulerPass::kMain});
}

TEST_CASE("a job that ends by itself queues a pass (22.05), a killed one runs a pass at once") {
  // Real Slurm 22.05 (scenario 41, SlurmctldDebug=debug2): slurmd answers the kill request of a job
  // whose steps are gone ALREADY_COMPLETE (no Epilog), on which slurmctld's agent only queues a pass
  // (queue_job_scheduler): the background loop runs it batch_sched_delay (3 s) after the last pass.
  // A job slurmd has to kill (the time limit, preemption, scancel) ends with an epilog-complete RPC,
  // which runs a pass at once (_slurm_rpc_epilog_complete); so did every end up to 21.08 (agent.c).
  // One 4-CPU node, main passes only; J1 (the node, 10 s) starts at 3 and ends at 13; J2 (the node)
  // pends from 5 (its pass at 6); J3 (the node) at 12 asks for a pass, which runs at once (6 s after
  // the last): the last pass before J1's end is at 12.
  auto site = small_site(1, 4);
  site.scheduler.scheduler_type = "sched/builtin";
  auto trace = make_trace({{0, 1, 4, 10, 200}, {5, 1, 4, 100, 200}, {12, 1, 4, 100, 200}});
  const auto starts = [&](int version, Seconds runtime, Seconds limit, Seconds j3_submit) {
    site.scheduler.slurm_version = version;
    trace.jobs[0].runtime = runtime;
    trace.jobs[0].time_limit = limit;
    trace.jobs[2].submit = trace.jobs[2].eligible = kT0 + j3_submit;
    experiments::ReplayOptions o;
    o.check_invariants = true;
    const auto r = experiments::run_replay(site, trace, o);
    return std::array<Seconds, 3>{r.state->jobs[0].start - kT0, r.state->jobs[0].end - kT0,
                                  r.state->jobs[1].start - kT0};
  };
  // 22.05, J1 completes at 13: J2 waits for the pass batch_sched_delay after the one at 12.
  CHECK(starts(2205, 10, 200, 12) == std::array<Seconds, 3>{3, 13, 15});
  // 21.08: the end runs a pass at once.
  CHECK(starts(2108, 10, 200, 12) == std::array<Seconds, 3>{3, 13, 13});
  // 22.05, J1 (100 s of work) killed by its 8 s limit at the check at 30 (every 30 s from the start),
  // a second after J3's pass at 29: the kill runs a pass at once.
  CHECK(starts(2205, 100, 8, 29) == std::array<Seconds, 3>{3, 30, 30});
}

TEST_CASE("a job submitted before a job end in its second is seen by the pass that end triggers") {
  // Up to 21.08 a job end calls the main scheduler at once (epilog complete, 0.1-0.5 s after the
  // end); a job submitted earlier in that second is in its queue. Without the instants the simulator
  // runs a second's ends and their pass before its submissions, as a sacct replay must (whole seconds).
  // One 4-CPU node; job 1 (submitted at 0, started by the pass batch_sched_delay = 3 s later) fills it
  // until 13, when job 2 (the whole node) is submitted; sched_interval 60 s, bf_interval 30 s.
  auto site = small_site(1, 4);
  site.scheduler.slurm_version = 2108;
  const auto trace = make_trace({{0, 1, 4, 10, 200}, {13, 1, 4, 100, 200}});
  REQUIRE(experiments::run_replay(site, trace, {}).state->jobs[0].end - kT0 == 13);
  const auto job2 = [&](std::optional<sim::SubmitOrder> order) { return job2_start(site, trace, order); };
  // After the end pass (the default): the pass its submission asks for, batch_sched_delay after the
  // end pass at 13.
  CHECK(job2(std::nullopt) == std::pair{Seconds{16}, SchedulerPass::kMain});
  // Before the end: the end pass at 13 starts it.
  CHECK(job2(sim::SubmitOrder::kBeforeEnds) == std::pair{Seconds{13}, SchedulerPass::kMain});
  // 22.05: the end only queues a pass; the background loop's at 13 starts it either way.
  site.scheduler.slurm_version = 2205;
  CHECK(job2(std::nullopt) == std::pair{Seconds{13}, SchedulerPass::kMain});
  CHECK(job2(sim::SubmitOrder::kBeforeEnds) == std::pair{Seconds{13}, SchedulerPass::kMain});
}

TEST_CASE("fit_loop: a once-a-second slurmctld loop's phase from the log lines it wrote") {
  // Runs at 100.45 + 1.004 k (k = 0, 30, 31, 80, 100); run 31 started two jobs (two lines 1 ms
  // apart); 150.1 is a pass a job end triggered (runs 49 and 50 are at 149.646 and 150.65).
  const auto loop = experiments::fit_loop({131.574, 100.45, 130.57, 131.575, 150.1, 180.77, 200.85});
  REQUIRE(loop);
  CHECK(loop->period == doctest::Approx(1.004).epsilon(1e-9));
  CHECK(loop->anchor == doctest::Approx(100.45).epsilon(1e-9));
  // Second 118: run 18 at 100.45 + 18.072 = 118.522.
  REQUIRE(loop->in_second(118));
  CHECK(*loop->in_second(118) == doctest::Approx(118.522).epsilon(1e-9));
  // Run 137 at 237.998, run 138 at 239.002: the phase crossed a whole second, none ran in 238.
  CHECK(*loop->in_second(237) == doctest::Approx(237.998).epsilon(1e-9));
  CHECK_FALSE(loop->in_second(238));
  CHECK(*loop->in_second(239) == doctest::Approx(239.002).epsilon(1e-9));
  // Two lines cannot show a loop; nor can three that no period in [1, 1.02] s puts on one.
  CHECK_FALSE(experiments::fit_loop({100.0, 110.5}));
  CHECK_FALSE(experiments::fit_loop({100.0, 110.5, 120.25}));
}

namespace {

/// Writes `content` to DIR/NAME and returns the path.
std::string write_text(const std::filesystem::path& dir, const std::string& name,
                       const std::string& content) {
  const auto p = dir / name;
  std::ofstream(p) << content;
  return p.string();
}

/// The InputError message of reading `csv` as a scenario jobs.csv, or "" when it reads.
std::string jobs_csv_error(const std::string& csv) {
  static const auto dir = testing::scratch_dir("oracle_jobs_csv");
  const auto path = write_text(dir, "jobs.csv", csv);
  try {
    experiments::read_scenario_jobs(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("scenario jobs.csv: an array line is one job per task, jNNN_TASK, with its cap") {
  const auto dir = testing::scratch_dir("oracle_jobs_array");
  const auto path = write_text(dir, "jobs.csv",
                               "offset,user,account,partition,qos,cpus,limit_min,runtime_s,array\n"
                               "0,u1,a1,batch,normal,1,1,10,1-5:2%2\n"
                               "1,u1,a1,batch,normal,1,1,10,\n");
  const auto jobs = experiments::read_scenario_jobs(path);
  REQUIRE(jobs.size() == 4);
  CHECK(jobs[0].name == "j001_1");
  CHECK(jobs[2].name == "j001_5");
  CHECK(jobs[2].array_of == "j001");
  CHECK(jobs[2].array_task == 5);
  CHECK(jobs[2].array_cap == 2);
  CHECK(jobs[3].name == "j002");  // the next line's number, not the next job's
  CHECK(jobs[3].array_task == -1);
  CHECK(jobs_csv_error("offset,user,account,partition,qos,cpus,limit_min,runtime_s,array\n"
                       "0,u1,a1,batch,normal,1,1,10,3-1\n")
            .find("array") != std::string::npos);
}

TEST_CASE("scenario jobs.csv: columns by name, empty cells for options not given") {
  const auto dir = testing::scratch_dir("oracle_jobs_columns");
  // Columns in another order than the old fixed one; a comment line (skipped, as oracle.sh does).
  const auto path =
      write_text(dir, "jobs.csv",
                 "runtime_s,offset,user,account,partition,qos,cpus,limit_min,nodes,ntasks_per_node,"
                 "mem_mb,mem_per_cpu_mb,gres,constraint,dependency\n"
                 "# -n12 with no -N, 500 MB per CPU\n"
                 "40,3,u1,a1,batch,normal,12,2,,,,500,,,\n"
                 "30,5,u2,a1,batch,normal,,2,2,4,1000,,gpu:1,bigmem&fast,afterok:j001\n"
                 "20,7,u2,a1,batch,normal,2,1,,,,,gpu:tesla:2,,\n");
  const auto jobs = experiments::read_scenario_jobs(path);
  REQUIRE(jobs.size() == 3);
  CHECK(jobs[0].name == "j001");  // the comment line is not a job
  CHECK(jobs[0].offset == 3);
  CHECK(jobs[0].runtime == 40);
  CHECK(jobs[0].nodes == 0);
  CHECK(jobs[0].cpus == 12);
  CHECK(jobs[0].mem_mb == 500);
  CHECK(jobs[0].mem_per_cpu);
  CHECK(jobs[0].gres.empty());
  // -N2 --ntasks-per-node=4 without -n: 8 tasks.
  CHECK(jobs[1].nodes == 2);
  CHECK(jobs[1].tasks_per_node == 4);
  CHECK_FALSE(jobs[1].cpus_given);
  CHECK(jobs[1].cpus == 8);
  CHECK(jobs[1].mem_mb == 1000);
  CHECK_FALSE(jobs[1].mem_per_cpu);
  REQUIRE(jobs[1].gres.size() == 1);
  CHECK(jobs[1].gres[0] == GresRequest{"gpu", "", 1, true});
  CHECK(jobs[1].constraint == "bigmem&fast");
  CHECK(jobs[1].dependency == "afterok:j001");
  CHECK(jobs[2].mem_mb == -1);  // no memory option
  CHECK(jobs[2].gres[0] == GresRequest{"gpu", "tesla", 2, true});

  Trace trace;
  const auto r0 = experiments::scenario_job_request(jobs[0], trace);
  CHECK(r0.nodes == 0);  // no -N: the scheduler decides
  CHECK(r0.tasks == 12);
  CHECK(r0.req_cpus == 12);
  CHECK(r0.tasks_per_node == 0);
  CHECK(r0.mem_mb == 500);
  CHECK(r0.mem_per_cpu);
  CHECK(r0.constraints == kNoName);
  const auto r1 = experiments::scenario_job_request(jobs[1], trace);
  CHECK(r1.nodes == 2);
  CHECK(r1.tasks == 8);
  CHECK(r1.tasks_per_node == 4);
  CHECK_FALSE(r1.mem_per_cpu);
  CHECK(r1.gres == jobs[1].gres);
  CHECK(trace.strings.name(r1.constraints) == "bigmem&fast");
  CHECK(trace.user_name(r1) == "u2");
  CHECK(experiments::scenario_job_request(jobs[2], trace).mem_mb == -1);

  // The old fixed format (every recorded scenario's jobs.csv) reads as before.
  const auto old = experiments::read_scenario_jobs(
      write_text(dir, "old.csv",
                 "offset,user,account,partition,qos,nodes,cpus,mem_mb,limit_min,"
                 "runtime_s\n0,u1,a1,low,normal,4,32,1000,2,70\n"));
  REQUIRE(old.size() == 1);
  CHECK(old[0].nodes == 4);
  CHECK(old[0].cpus == 32);
  CHECK(old[0].mem_mb == 1000);
  CHECK_FALSE(old[0].mem_per_cpu);
  CHECK(old[0].time_limit == 120);
}

TEST_CASE("scenario jobs.csv: --exclusive, --nice and --begin (scenario 37)") {
  const auto dir = testing::scratch_dir("oracle_jobs_excl_nice_begin");
  const auto jobs = experiments::read_scenario_jobs(
      write_text(dir, "jobs.csv",
                 "offset,user,account,partition,qos,cpus,limit_min,runtime_s,exclusive,nice,begin_s\n"
                 "0,u1,a1,batch,normal,2,1,10,1,,\n"
                 "3,u1,a1,batch,normal,2,1,10,0,3000,90\n"
                 "4,u1,a1,batch,normal,2,1,10,,,\n"));
  REQUIRE(jobs.size() == 3);
  CHECK(jobs[0].exclusive);
  CHECK(jobs[0].nice == 0);
  CHECK(jobs[0].begin == kUnsetTime);
  CHECK_FALSE(jobs[1].exclusive);
  CHECK(jobs[1].nice == 3000);
  CHECK(jobs[1].begin == 90);
  CHECK_FALSE(jobs[2].exclusive);
  Trace trace;
  const auto r0 = experiments::scenario_job_request(jobs[0], trace);
  CHECK(r0.exclusive);
  const auto r1 = experiments::scenario_job_request(jobs[1], trace);
  CHECK_FALSE(r1.exclusive);
  CHECK(r1.nice == 3000);

  const std::string head =
      "offset,user,account,partition,qos,cpus,limit_min,runtime_s,exclusive,nice,begin_s\n";
  const auto has = [](const std::string& error, const std::string& what) {
    CAPTURE(error);
    CHECK(error.find(what) != std::string::npos);
  };
  has(jobs_csv_error(head + "0,u1,a1,b,normal,2,1,10,yes,,\n"),
      "jobs.csv:2: exclusive: 'yes' is not 1, 0 or empty");
  has(jobs_csv_error(head + "0,u1,a1,b,normal,2,1,10,,-5,\n"), "jobs.csv:2: nice:");
  has(jobs_csv_error(head + "0,u1,a1,b,normal,2,1,10,,2147483646,\n"), "jobs.csv:2: nice: more than");
  has(jobs_csv_error(head + "9,u1,a1,b,normal,2,1,10,,,5\n"), "jobs.csv:2: begin_s: before the job's offset");
}

TEST_CASE("scenario jobs.csv: cpus_per_task is -c, the job asks tasks x CPUs per task (scenario 38)") {
  const auto dir = testing::scratch_dir("oracle_jobs_cpus_per_task");
  const std::string head = "offset,user,account,partition,qos,nodes,cpus,cpus_per_task,limit_min,runtime_s\n";
  const auto jobs = experiments::read_scenario_jobs(
      write_text(dir, "jobs.csv", head + "0,u1,a1,batch,normal,,2,3,1,10\n1,u1,a1,batch,normal,1,4,,1,10\n"));
  REQUIRE(jobs.size() == 2);
  CHECK(jobs[0].cpus == 2);
  CHECK(jobs[0].cpus_per_task == 3);
  CHECK(jobs[1].cpus_per_task == 1);  // not given
  Trace trace;
  const auto r0 = experiments::scenario_job_request(jobs[0], trace);
  CHECK(r0.tasks == 2);
  CHECK(r0.cpus_per_task == 3);
  CHECK(r0.req_cpus == 6);
  CHECK(jobs_csv_error(head + "0,u1,a1,b,normal,,2,0,1,10\n").find("jobs.csv:2: cpus_per_task:") !=
        std::string::npos);
  CHECK(jobs_csv_error(head + "0,u1,a1,b,normal,,1000,2000,1,10\n")
            .find("jobs.csv:2: cpus: more than a million") != std::string::npos);
}

TEST_CASE("scenario jobs.csv: a bad value names file, line and column") {
  const std::string head =
      "offset,user,account,partition,qos,nodes,cpus,ntasks_per_node,mem_mb,mem_per_cpu_mb,gres,"
      "constraint,limit_min,runtime_s\n";
  const auto line2 = [&](const std::string& row) { return jobs_csv_error(head + row + "\n"); };
  CHECK(line2("0,u1,a1,b,normal,,4,,1000,,,,2,30").empty());
  const auto has = [](const std::string& error, const std::string& what) {
    CAPTURE(error);
    CHECK(error.find(what) != std::string::npos);
  };
  has(line2("0,u1,a1,b,normal,x,4,,1000,,,,2,30"), "jobs.csv:2: nodes: 'x' is not an integer >= 1");
  has(line2("0,u1,a1,b,normal,0,4,,1000,,,,2,30"), "jobs.csv:2: nodes:");
  has(line2("0,u1,a1,b,normal,4,2,,1000,,,,2,30"), "jobs.csv:2: cpus: needs cpus >= nodes");
  has(line2("0,u1,a1,b,normal,,,4,1000,,,,2,30"), "jobs.csv:2: cpus: empty");
  has(line2("0,u1,a1,b,normal,1,4,0,1000,,,,2,30"), "jobs.csv:2: ntasks_per_node:");
  has(line2("0,u1,a1,b,normal,1,4,,1000,500,,,2,30"),
      "jobs.csv:2: mem_per_cpu_mb: give mem_mb or mem_per_cpu_mb");
  has(line2("0,u1,a1,b,normal,1,4,,-5,,,,2,30"), "jobs.csv:2: mem_mb:");
  has(line2("0,u1,a1,b,normal,1,4,,,0,,,2,30"), "jobs.csv:2: mem_per_cpu_mb:");
  has(line2("0,u1,a1,b,normal,1,4,,1000,,gpu,,2,30"), "jobs.csv:2: gres: 'gpu' is not name[:type]:count");
  has(line2("0,u1,a1,b,normal,1,4,,1000,,gpu:0,,2,30"), "jobs.csv:2: gres:");
  has(line2("0,u1,a1,b,normal,1,4,,1000,,gpu:a:b:1,,2,30"), "jobs.csv:2: gres:");
  has(line2("0,u1,a1,b,normal,1,4,,1000,,,big mem,2,30"), "jobs.csv:2: constraint:");
  has(line2("0,u1,a1,b,normal,1,4,,1000,,,,0,30"), "jobs.csv:2: limit_min:");
  has(line2("0,u1,a1,b,normal,1,4,,1000,,,,2,30,extra"), "jobs.csv:2: line:");
  has(line2("0,u1,a1,b,normal,1,4,,1000,,,\"a,b\",2,30"), "jobs.csv:2: line: quoted fields");
  has(jobs_csv_error("offset,user,account,partition,qos,nodes,cpus,ntask_per_node,limit_min,runtime_s\n"),
      "jobs.csv:1: ntask_per_node: unknown column");
  has(jobs_csv_error("offset,user,account,partition,qos,nodes,limit_min,runtime_s\n"), "jobs.csv:1: cpus:");
}

TEST_CASE("a recorded run: jobs sbatch refused and jobs that could never start") {
  // Real Slurm 22.05 (scenario 16): a refused job still has a FAILED sacct record with Start = End =
  // Submit ("Requested node configuration is not available"); the harness names it REFUSED in
  // submits.txt. A job pending for good (PartitionNodeLimit) was cancelled by the harness
  // (never-started.txt): sacct shows Start None.
  const auto dir = testing::scratch_dir("oracle_refused_run");
  write_text(dir, "meta.txt", "trace_start 1000\ncontroller_start 990.5\n");
  write_text(dir, "ticks.txt", "");
  write_text(dir, "slurm.conf", "AuthInfo=cred_expire=30\n");
  write_text(dir, "jobs.csv",
             "offset,user,account,partition,qos,nodes,cpus,mem_mb,limit_min,runtime_s\n"
             "0,u1,a1,batch,normal,1,8,1000,2,40\n1,u1,a1,batch,normal,1,16,1000,2,30\n"
             "2,u1,a1,batch,normal,5,5,1000,2,30\n");
  write_text(dir, "sacct.txt",
             "JobID|JobName|Submit|Start|End|State|Flags\n"
             "1|j001|1970-01-01T00:16:40|1970-01-01T00:16:40|1970-01-01T00:17:20|COMPLETED|SchedMain\n"
             "2|j002|1970-01-01T00:16:41|1970-01-01T00:16:41|1970-01-01T00:16:41|FAILED|\n"
             "3|j003|1970-01-01T00:16:42|None|1970-01-01T00:18:00|CANCELLED by 0|\n");
  write_text(dir, "submits.txt", "j001 1 1000.2 0\nj002 REFUSED 1001.3 1\nj003 3 1002.2 2\n");
  write_text(dir, "never-started.txt", "j003 3 PartitionNodeLimit\n");
  const auto run = experiments::read_recorded_run(dir);
  CHECK(run.refused == std::set<std::string>{"j002"});
  REQUIRE(run.schedule.at("j002").size() == 1);
  const auto& refused = run.schedule.at("j002").front();
  CHECK(refused.state == "REJECTED");
  CHECK(refused.start == kUnsetTime);
  CHECK(refused.submit == 1);
  const auto& never = run.schedule.at("j003").back();
  CHECK(never.state == "PENDING");
  CHECK(never.start == kUnsetTime);
  CHECK(never.end == kUnsetTime);
  CHECK(run.never_started.at("j003") == "PartitionNodeLimit");
  CHECK(run.schedule.at("j001").front().start == 0);
  // The ms-stamped log lines of the passes that started jobs and of slurmctld's submissions
  // (fit_loop, simulate_recorded_run), and the instants sbatch returned (submits.txt).
  CHECK(run.submit_returned == std::map<std::string, double>{{"j001", 1000.2}, {"j003", 1002.2}});
  const std::string log =
      "[1970-01-01T00:16:40.089] _slurm_rpc_submit_batch_job: JobId=1 InitPrio=2192 usec=875\n"
      "[1970-01-01T00:16:40.358] sched: Allocate JobId=1 NodeList=n1 #CPUs=8 Partition=batch\n"
      "[1970-01-01T00:16:41.067] _slurm_rpc_submit_batch_job: Job violates accounting/QOS policy\n"
      "[1970-01-01T00:16:42.072] sched/backfill: _start_job: Started JobId=3 in batch on n4\n";
  write_text(dir, "slurmctld-events.log", log);
  const auto logged = experiments::read_recorded_run(dir);
  CHECK(logged.submit_logged == std::map<std::uint64_t, double>{{1, 1000.089}});
  CHECK(logged.main_starts == std::vector<double>{1000.358});
  CHECK(logged.backfill_starts == std::vector<double>{1002.072});
  CHECK(logged.started_logged ==
        std::map<std::uint64_t, std::vector<double>>{{1, {1000.358}}, {3, {1002.072}}});
  // Without slurmctld's end lines, j001's end is estimated: its start line, its 40 s sleep and
  // kJobEndLag; j003, cancelled, has none.
  CHECK(experiments::end_instants(logged) == std::vector<double>{1000.358 + 40 + experiments::kJobEndLag});
  // With them, the "done" line is the end (the lines before it for the same job are not).
  write_text(dir, "slurmctld-events.log",
             log +
                 "[1970-01-01T00:17:20.201] _job_complete: JobId=1 WTERMSIG 15\n"
                 "[1970-01-01T00:17:20.311] _job_complete: JobId=1 done\n");
  const auto ended = experiments::read_recorded_run(dir);
  CHECK(ended.ended_logged == std::map<std::uint64_t, std::vector<double>>{{1, {1040.311}}});
  CHECK(experiments::end_instants(ended) == std::vector<double>{1040.311});
  write_text(dir, "slurmctld-events.log", "[1970-01-01T00:16:40.089] _slurm_rpc_submit_batch_job: JobId=x\n");
  CHECK_THROWS_WITH_AS(experiments::read_recorded_run(dir),
                       doctest::Contains("slurmctld-events.log:1: JobId: expected a job id"), InputError);
  std::filesystem::remove(dir / "slurmctld-events.log");
  // A never-started job that did run is a broken recording.
  write_text(dir, "never-started.txt", "j001 1 Resources\n");
  CHECK_THROWS_WITH_AS(experiments::read_recorded_run(dir),
                       doctest::Contains("never-started.txt:1: NAME: j001 ran"), InputError);
}

TEST_CASE(
    "a recorded run with an array: its tasks by jNNN_TASK, a remnant that never started, the log's ids") {
  // As real Slurm 22.05 records an array (scenario 34): sacct names a task ID_TASK under the line's
  // jNNN, the tasks that never started as one record ID_[TASKS]; the harness's never-started.txt names
  // the line; slurmctld's log names a task by its array and its own id, "JobId=7_0(8)".
  const auto dir = testing::scratch_dir("oracle_array_run");
  write_text(dir, "meta.txt", "trace_start 1000\ncontroller_start 990.5\n");
  write_text(dir, "ticks.txt", "");
  write_text(dir, "slurm.conf", "AuthInfo=cred_expire=30\n");
  write_text(dir, "jobs.csv",
             "offset,user,account,partition,qos,nodes,cpus,limit_min,runtime_s,array\n"
             "0,u1,a1,batch,normal,1,8,2,40,0-3%2\n");
  write_text(dir, "sacct.txt",
             "JobID|JobName|Submit|Start|End|State|Flags\n"
             "7_0|j001|1970-01-01T00:16:40|1970-01-01T00:16:40|1970-01-01T00:17:20|COMPLETED|SchedMain\n"
             "7_1|j001|1970-01-01T00:16:40|1970-01-01T00:16:40|1970-01-01T00:17:20|COMPLETED|SchedMain\n"
             "7_[2-3%2]|j001|1970-01-01T00:16:40|None|1970-01-01T00:18:00|CANCELLED by 0|\n");
  write_text(dir, "submits.txt", "j001 7 1000.2 0\n");
  write_text(dir, "never-started.txt", "j001 7_[2-3%2] JobArrayTaskLimit\n");
  write_text(dir, "slurmctld-events.log",
             "[1970-01-01T00:16:40.358] sched: Allocate JobId=7_0(8) NodeList=n1 #CPUs=8 Partition=batch\n"
             "[1970-01-01T00:17:20.311] _job_complete: JobId=7_0(8) done\n");
  const auto run = experiments::read_recorded_run(dir);
  REQUIRE(run.jobs.size() == 4);
  CHECK(run.schedule.at("j001_1").front().start == 0);
  CHECK(run.schedule.at("j001_3").back().state == "PENDING");
  CHECK(run.never_started.count("j001_2") == 1);
  CHECK(run.never_started.count("j001_0") == 0);
  CHECK(run.job_ids.at("j001_3") == 7);
  CHECK(run.submit_returned.at("j001_2") == 1000.2);
  CHECK(run.task_ids == std::map<std::pair<std::uint64_t, std::int32_t>, std::uint64_t>{{{7, 0}, 8}});
  CHECK(run.started_logged.count(8) == 1);
  CHECK(experiments::end_instants(run) == std::vector<double>{1040.311});
}

namespace {

std::filesystem::path recorded_dir() {
  return std::filesystem::path(SLURMTWIN_SOURCE_DIR) / "tests" / "oracle" / "recorded";
}

}  // namespace

// Criteria a scenario is known to miss, with the cause (docs/fidelity.md, "What differs"). The test
// asserts them as measured, so that a fix (or a regression) shows up here and the list is updated.
struct KnownMiss {
  const char* scenario;
  bool start, tau, factors;  // true: this criterion is missed
  const char* why;
};
// 02 and 10 were redesigned away from Fair Tree near-ties and recorded anew; 05 follows from
// ReplayOptions::backfill_end_lag_below; 15 passes since a job that ends by itself queues its pass
// (Controller::end_job) instead of running one at once.
constexpr std::array<KnownMiss, 3> kKnownMisses{{
    // QOS preemption by REQUEUE with PreemptExemptTime: runs 1 and 2 and the simulator agree (0.6/0.8
    // s, every factor). Run 3 branched at +166, where three jobs ended within 0.7 s in another order
    // (n1 freed last instead of n3): its next backfill cycle did not start j001 on n1 as runs 1-2 did on
    // n3 (likely: j021's plan takes the lowest-indexed nodes, n1 and n2), j001's last run started 82 s later,
    // and
    // from then users' usages differ, so
    // 48 sshare rows of run 3 are off; its starts still pass (2.7 s mean |Δstart|).
    {"21_preempt_qos_requeue", false, false, true, "run 3 branched on the sub-second order of three ends"},
    // Job arrays: every start within 0.4 s (τ 1.000) in all three runs, every factor of runs 1 and 2.
    // In run 3 a backfill cycle 0.33 s after j009's submission started its first two tasks (main passes
    // did in runs 1 and 2), and the age of its capped remaining tasks then counted from +220 (when the
    // cap lifted) instead of their submission at +200: 8 sprio rows at +239..244 show 0.0283 where runs
    // 1 and 2 and the simulator show 0.0617 (age weight 100: 3 priority points). Not modelled.
    {"34_job_arrays", false, false, true, "run 3: a capped array's age restarts after a backfill split"},
    // Depth-oblivious fair share: every start within 0.7 s, runs 1 and 3 every factor. A user's usage
    // reads its siblings' usage_norm as last computed, which real Slurm refreshes whenever something
    // asks for a user's usage (a pending job at a decay run, a submit, the harness's sshare every
    // second); the twin refreshes the others' at the end of each decay run. In run 2 ut1's fair-share
    // factor from +178 s is 0.5046 in real Slurm, 0.5074 in the twin (69 sprio rows).
    {"40_depth_oblivious", false, false, true, "run 2: siblings' usage refreshed at other instants"},
}};

TEST_CASE("every recorded real-Slurm scenario: the simulator within the real run-to-run spread") {
  const auto root = recorded_dir();
  if (!std::filesystem::exists(root)) {
    MESSAGE("SKIPPED: no recordings in " << root.string());
    return;
  }
  std::vector<std::filesystem::path> dirs;
  for (const auto& e : std::filesystem::directory_iterator(root))
    if (std::filesystem::exists(e.path() / "run1" / "meta.txt")) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  REQUIRE(dirs.size() >= 8);
  const experiments::Acceptance acceptance;
  for (const auto& dir : dirs) {
    const auto name = dir.filename().string();
    CAPTURE(name);
    const auto r = experiments::evaluate_scenario(dir, acceptance);
    CHECK(r.runs >= 2);
    // Deterministic: the same recordings give the same figures.
    const auto again = experiments::evaluate_scenario(dir, acceptance);
    CHECK(again.sim_mean_abs_start == r.sim_mean_abs_start);
    CHECK(again.sim_tau == r.sim_tau);
    KnownMiss miss{"", false, false, false, ""};
    for (const auto& m : kKnownMisses)
      if (name == m.scenario) miss = m;
    CAPTURE(miss.why);
    CHECK(r.start_ok == !miss.start);
    CHECK(r.tau_ok == !miss.tau);
    CHECK(r.factors_ok == !miss.factors);
  }
}

TEST_CASE("a third real run is compared with the first and reported, not judged") {
  const auto dir = recorded_dir() / "21_preempt_qos_requeue";
  if (!std::filesystem::exists(dir / "run3" / "meta.txt")) {
    MESSAGE("SKIPPED: no recording in " << dir.string());
    return;
  }
  const auto r = experiments::evaluate_scenario(dir, experiments::Acceptance{});
  REQUIRE(r.runs == 3);
  REQUIRE(r.later_vs_first.size() == 1);
  // sacct of runs 1 and 3 (first starts after each trace start): j024 227 vs 206, j011 206 vs 189.
  CHECK(r.later_vs_first[0].max_abs_start == 21);
  CHECK(r.later_vs_first[0].worst.at(0) == "j024 -21 s");
  CHECK(r.later_vs_first[0].worst.at(1) == "j011 -17 s");
  // The margins still add run 2's spread (1 s at most there), so run 3's branch counts against the twin.
  CHECK(r.real_vs_real.max_abs_start == 1);
  CHECK(experiments::fidelity_report({r}, {}, "")
            .find("- real run 3 vs run 1 (not judged): mean/max |Δstart| "
                  "2.5/21 s") != std::string::npos);
}

TEST_CASE("a recorded run's node lists: sacct's NodeList and the simulator's nodes, as hostlists") {
  const auto dir = recorded_dir() / "17_site_files" / "run1";
  if (!std::filesystem::exists(dir / "meta.txt")) {
    MESSAGE("SKIPPED: no recording in " << dir.string());
    return;
  }
  const auto run = experiments::read_recorded_run(dir);
  // Real Slurm 22.05 (sacct NodeList of run 1): j024 (6 CPUs, no -N) split over n1 and n4; j021 (-N2)
  // on n[1-2]; j007 refused by sbatch, never placed.
  CHECK(run.schedule.at("j024").front().nodes == "n[1,4]");
  CHECK(run.schedule.at("j021").front().nodes == "n[1-2]");
  CHECK(run.schedule.at("j007").front().nodes.empty());
  const auto sim = experiments::simulate_recorded_run(run);
  CHECK(sim.schedule.at("j021").front().nodes == "n[1-2]");  // the twin placed it as real Slurm did
  CHECK(sim.schedule.at("j007").front().nodes.empty());
  // A run interrupted by preemption keeps its node (j003, scavenger, cancelled for j006 on n4).
  CHECK(run.schedule.at("j003").front().nodes == "n4");
  CHECK(sim.schedule.at("j003").front().nodes == "n4");
}

namespace {

/// For each recorded run of `scenario`: every job's nodes as real Slurm's sacct listed them and as the
/// simulator placed it; returns the runs read (0 when the scenario is not recorded).
std::size_t check_node_lists(const std::string& scenario,
                             const std::vector<std::pair<std::string, std::string>>& real_nodes) {
  const auto root = recorded_dir() / scenario;
  std::size_t runs = 0;
  for (const auto* name : {"run1", "run2", "run3"}) {
    if (!std::filesystem::exists(root / name / "meta.txt")) continue;
    ++runs;
    CAPTURE(name);
    const auto run = experiments::read_recorded_run(root / name);
    for (const auto& [job, nodes] : real_nodes) CHECK(run.schedule.at(job).front().nodes == nodes);
    const auto sim = experiments::simulate_recorded_run(run);
    for (const auto& entry : run.schedule) {
      const std::string& job = entry.first;  // a plain name: CAPTURE cannot take a structured binding
      CAPTURE(job);
      CHECK(sim.schedule.at(job).front().nodes == entry.second.front().nodes);
    }
  }
  return runs;
}

}  // namespace

TEST_CASE("select/cons_res under topology/tree: the best-fitting node of a leaf, as real Slurm chose") {
  // Scenario 23: n1 and n2 on leaf s1, n3 and n4 on s2; j001 holds 2 CPUs of n1, j002 4 of n2. Real
  // Slurm 22.05's select/cons_res put j003 (-N1 -n4) on n2, the node of s1 with the fewest CPUs that
  // hold it, in all three runs (cons_tres, and the simulator before 805d661, take s1's first node, n1:
  // then j006 waits 98 s for n1 and the runs differ by 33 s mean |Δstart|).
  const auto runs =
      check_node_lists("23_cons_res_topology", {{"j003", "n2"}, {"j006", "n1"}, {"j007", "n[3-4]"}});
  if (runs == 0) {
    MESSAGE("SKIPPED: scenario 23 not recorded");
    return;
  }
  CHECK(runs == 3);
}

TEST_CASE("node choice follows slurmctld's node table: by name, whatever order slurm.conf lists them in") {
  // Scenario 22 lists n4, n3, n2, n1 in slurm.conf and in the partition. Real Slurm 22.05 (sacct
  // NodeList, three runs) placed j001 on an idle cluster on n1 and every later job as if the nodes were
  // listed n1-n4 (slurmctld sorts its node table by name); the simulator, placing by the file's order,
  // put j001 on n4 and mirrored every placement (start times alike: the nodes are identical).
  const auto runs = check_node_lists("22_node_order", {{"j001", "n1"}, {"j004", "n[3-4]"}});
  if (runs == 0) {
    MESSAGE("SKIPPED: scenario 22 not recorded");
    return;
  }
  CHECK(runs == 3);
}

TEST_CASE(
    "Slurm's default timers: the backfill thread keeps cycling while a job is retried after a reservation") {
  // Scenario 24: no SchedulerParameters (bf_interval 30, bf_resolution 60, sched_interval 60,
  // batch_sched_delay 3), a global DefMemPerCPU that binds. The three real runs branched apart early
  // (real-vs-real 192 s mean |Δstart|), so the spread says nothing: each run is checked on its own.
  // Real slurmctld ran a backfill cycle every 30 s through stretches in which nothing was submitted,
  // started or ended (run 1: +296, where j017 and j024 then started on the 30-s cadence): a job
  // retried after a reservation whose will-run test finds an earlier start marks the jobs changed
  // (backfill.c). Before that was modelled the twin's thread idled there and run 1 replayed at 41 s
  // mean |Δstart| (τ 0.86); a backfill-started job that ran 90 s (3 cycles) ended after its last
  // second's cycle, as real Slurm's did (j009 at +116), only once the end lag counted cycles.
  const auto root = recorded_dir() / "24_default_timers";
  if (!std::filesystem::exists(root / "run1" / "meta.txt")) {
    MESSAGE("SKIPPED: scenario 24 not recorded");
    return;
  }
  for (const auto* name : {"run1", "run2", "run3"}) {
    CAPTURE(name);
    const auto run = experiments::read_recorded_run(root / name);
    const auto d =
        experiments::compare_schedules(run.schedule, experiments::simulate_recorded_run(run).schedule);
    CHECK(d.jobs == 26);
    CHECK(d.mean_abs_start <= 3.0);
    CHECK(d.tau >= 0.99);
    CHECK(d.nodes_equal == 26);
  }
}

TEST_CASE("MaxMemPerCPU and MaxMemPerNode as real slurmctld applies them before scheduling a job") {
  // Scenario 25: MaxMemPerCPU=1000 globally; j001-j004 (-N1 -n4 --mem-per-cpu=2000) got 8 CPUs each
  // in real Slurm 22.05 (sacct ReqCPUS 8: ceil(2000/1000) = 2 CPUs per task), the four nodes were
  // full and j005 (4 CPUs) waited 58 s for j001's end; in partition capped (MaxMemPerNode=6000) j006
  // (--mem=7000) and j007 (-N1 -n4 --mem-per-cpu=2000: 8000 MB on its node) pended for ever
  // (MaxMemPerLimit) while j008 (-n4 --mem-per-cpu=1000, no -N: counted 1000 MB a node) ran. The
  // previous build gave them 4 CPUs, started j005 at once and ran j006/j007 (19 s mean |Δstart|).
  const auto runs = check_node_lists("25_max_mem", {{"j001", "n1"}, {"j005", "n1"}, {"j006", ""}});
  if (runs == 0) {
    MESSAGE("SKIPPED: scenario 25 not recorded");
    return;
  }
  CHECK(runs == 3);
  const auto run = experiments::read_recorded_run(recorded_dir() / "25_max_mem" / "run1");
  CHECK(run.never_started.at("j006") == "MaxMemPerLimit");
  CHECK(run.never_started.at("j007") == "MaxMemPerLimit");
  const auto sim = experiments::simulate_recorded_run(run);
  for (const auto* job : {"j006", "j007"}) {
    CAPTURE(job);
    CHECK(sim.schedule.at(job).back().state == "PENDING");
  }
  const auto d = experiments::compare_schedules(run.schedule, sim.schedule);
  CHECK(d.mean_abs_start <= 1.0);
  CHECK(d.state_equal == 8);
}

TEST_CASE("DefCpuPerGPU and DefMemPerGPU as real select/cons_tres applies them") {
  // Scenario 26: DefCpuPerGPU=2 globally, DefMemPerGPU=6000 on partition gpu (n3, n4: 8 CPUs,
  // 16000 MB, 4 GPUs), DefMemPerCPU=1000. In all three real Slurm 22.05 runs j001-j003 (-n1
  // --gres=gpu:1) got 2 CPUs and 6000 MB each (sacct AllocTRES), so j003 did not fit beside j001 and
  // j002 on n3 and went to n4; j005 (gpu:2: 12000 MB) waited for j002's end on n3; j009 (gpu:1
  // --mem=2000) got 2000 MB but waited for a node with 6000 MB free (j003's end on n4: the GRES filter
  // asks DefMemPerGPU of a node even with --mem). The previous build gave them 1 CPU and 1000 MB:
  // 21 s mean |Δstart|, τ 0.69, 5 of 11 node lists.
  const auto runs = check_node_lists("26_def_per_gpu", {{"j003", "n4"}, {"j005", "n3"}, {"j009", "n4"}});
  if (runs == 0) {
    MESSAGE("SKIPPED: scenario 26 not recorded");
    return;
  }
  CHECK(runs == 3);
  for (const std::string name : {"run1", "run2", "run3"}) {
    CAPTURE(name);
    const auto run = experiments::read_recorded_run(recorded_dir() / "26_def_per_gpu" / name);
    const auto& real = run.schedule;
    // In the second after j003's end (the pass it triggers may fall in the next second).
    const auto after = real.at("j009").front().start - real.at("j003").front().end;
    CHECK(after >= 0);
    CHECK(after <= 1);
    const auto sim = experiments::simulate_recorded_run(run);
    const auto d = experiments::compare_schedules(real, sim.schedule);
    CHECK(d.mean_abs_start <= 1.0);
    CHECK(d.tau >= 0.99);
  }
}

TEST_CASE("TRES-minute and per-node limits, and a partition's QOS, as real Slurm 22.05 enforces them") {
  // Scenarios 27-30, three real runs each. 27: QOS GrpTRESRunMins=cpu=24 held j003 (4 CPUs x 3 min)
  // while j001 and j002 (4 x 3 min each, ending at 150-151) ran, until the decay tick at about 116 had
  // taken their run off (start 117); account ga's GrpTRESRunMins=cpu=20 held j006 the same way, beside
  // j005 (ends 120); MaxTRESRunMinsPU, which 22.05 does not enforce, held nothing (j009 at once).
  // 28: QOSMaxCpuPerNode, QOSMaxCpuMinutesPerJobLimit, QOSMinCpuNotSatisfied, AssocMaxCpuPerNode and,
  // once the NoDecay QOS had used its 7 CPU-minutes, QOSGrpCPUMinutesLimit held a job each for good.
  // 29: partition batch's QOS pq MaxWall=5 held a QOS long 10-minute job there (QOS first), QOS long
  // let a 10-minute job past an association's MaxWall=3 on partition open (and normal did not), and
  // QOS q24's GrpTRES=cpu=24 let u3 run 16 CPUs past its account's GrpTRES=cpu=12 (j011, j012), while
  // its normal-QOS j013 waited for them. 30: once QOS gk's (NoDecay) 5 CPU-minutes and account ak's 6
  // were used up, the limit check in the second of the decay run that found it ended their running
  // jobs (TIMEOUT at +57 and +117) and later jobs pended for good. The previous build ignored all of
  // it: 25.8, 17.8 and 15.4 s mean |Δstart| (τ 0.33, 0.72, 0.87), 8, 2 and 5 end states wrong in 28,
  // 29 and 30.
  const std::map<std::string, std::map<std::string, std::string>> held = {
      {"27_run_mins", {}},
      {"28_tres_job_limits",
       {{"j001", "QOSMaxCpuPerNode"},
        {"j006", "QOSMaxCpuMinutesPerJobLimit"},
        {"j009", "QOSMinCpuNotSatisfied"},
        {"j015", "AssocMaxCpuPerNode"},
        {"j021", "QOSGrpCPUMinutesLimit"}}},
      {"29_partition_qos",
       {{"j004", "QOSMaxWallDurationPerJobLimit"}, {"j005", "AssocMaxWallDurationPerJobLimit"}}},
      {"30_grp_mins_kill", {{"j006", "QOSGrpCPUMinutesLimit"}, {"j007", "AssocGrpCPUMinutesLimit"}}},
  };
  std::size_t runs = 0;
  for (const auto& [scenario, never] : held)
    for (const std::string name : {"run1", "run2", "run3"}) {
      const auto dir = recorded_dir() / scenario / name;
      if (!std::filesystem::exists(dir / "meta.txt")) continue;
      ++runs;
      CAPTURE(dir.string());
      const auto run = experiments::read_recorded_run(dir);
      const auto& real = run.schedule;
      CHECK(run.never_started.size() == never.size());
      for (const auto& [job, reason] : never) CHECK(run.never_started.at(job) == reason);
      if (scenario == "27_run_mins") {
        CHECK(real.at("j003").front().start < real.at("j001").front().end);
        CHECK(real.at("j003").front().start > real.at("j004").front().start);
        CHECK(real.at("j006").front().start < real.at("j005").front().end);
        CHECK(real.at("j009").front().start == real.at("j009").front().submit);
      }
      if (scenario == "30_grp_mins_kill")  // ended by the limit check after the decay run that used it up
        for (const auto* job : {"j001", "j002", "j004"}) {
          CAPTURE(job);
          const auto& r = real.at(job).front();
          CHECK(r.state == "TIMEOUT");
          CHECK(r.end - r.start < 150);  // its time limit is 300 s
        }
      if (scenario == "29_partition_qos") {
        CHECK(real.at("j012").front().start == real.at("j012").front().submit);
        CHECK(real.at("j013").front().start >= real.at("j012").front().end - 1);
      }
      const auto sim = experiments::simulate_recorded_run(run);
      for (const auto& [job, reason] : never) CHECK(sim.schedule.at(job).back().state == "PENDING");
      const auto d = experiments::compare_schedules(real, sim.schedule);
      CHECK(d.mean_abs_start <= 0.5);
      CHECK(d.tau >= 0.99);
      CHECK(d.state_equal == real.size());
      for (const auto& entry : real) {
        const std::string& job = entry.first;
        CAPTURE(job);
        if (entry.second.front().state == "TIMEOUT")
          CHECK(sim.schedule.at(job).front().end == entry.second.front().end);
      }
    }
  if (runs == 0) MESSAGE("SKIPPED: scenarios 27-30 not recorded");
  CHECK((runs == 0 || runs == 12));
}

TEST_CASE("accrue limits as real Slurm 22.05 counts them: later jobs overtake those held at age 0") {
  // Scenario 31, three real runs. j001 (all 4 nodes) runs to +100; behind it, with age the only
  // factor: u1's four QOS acc jobs (MaxJobsAccruePerUser=2: j004, j005 not counted), account ga's
  // GrpJobsAccrue=2 (u2's j006, j007 counted, u3's j008 not; u5's j009 counted under its QOS acc's
  // per-user limit, which is found first), u4's MaxJobsAccrue=1 (j011 not), QOS gacc's GrpJobsAccrue=1
  // (j013 not) and u8's j014 under no limit. Real Slurm started j002, j003, j006, j007 at +100; then
  // j009, j010, j012 and j014 (submitted up to 35 s after j004) before j004, j005, j008 and j011, which
  // accrued only from +100; j013 last. The previous build ignored the limits (FIFO by submit: mean
  // |Δstart| 51.4-51.8 s, τ 0.342, 495 of about 1,575 sprio rows off).
  std::size_t runs = 0;
  for (const std::string name : {"run1", "run2", "run3"}) {
    const auto dir = recorded_dir() / "31_accrue_limits" / name;
    if (!std::filesystem::exists(dir / "meta.txt")) continue;
    ++runs;
    CAPTURE(name);
    const auto run = experiments::read_recorded_run(dir);
    const auto start = [&](const char* job) { return run.schedule.at(job).front().start; };
    for (const auto* late : {"j004", "j005", "j008", "j011"})
      for (const auto* early : {"j009", "j010", "j012", "j014"}) {
        CAPTURE(late);
        CAPTURE(early);
        CHECK(start(late) > start(early));
      }
    CHECK(start("j013") > start("j011"));
    const auto sim = experiments::simulate_recorded_run(run);
    const auto d = experiments::compare_schedules(run.schedule, sim.schedule);
    CHECK(d.mean_abs_start <= 0.5);
    CHECK(d.tau >= 0.99);
    const auto f = experiments::compare_factors(run, sim);
    CHECK(f.job_rows > 1000);
    CHECK(f.job_rows_bad == 0);
  }
  if (runs == 0) MESSAGE("SKIPPED: scenario 31 not recorded");
  CHECK((runs == 0 || runs == 3));
}

TEST_CASE("limits that AccountingStorageEnforce does not enforce: real Slurm 22.05 checks none of them") {
  // Scenario 32, three real runs, AccountingStorageEnforce=associations: QOS capped's MaxJobsPU=1,
  // MaxSubmitPU=1, GrpTRES=cpu=8 and MaxWall=1 min, account ga's GrpJobs=1 and user us's
  // MaxSubmitJobs=1 held or refused nothing: j001-j006 started within a second of their submit (j001
  // with a 3-minute limit), and j007 waited only for nodes. The previous build enforced them all: 3
  // jobs refused, 1 pending for ever, 27.8-28.0 s mean |Δstart|, τ 0.333.
  std::size_t runs = 0;
  for (const std::string name : {"run1", "run2", "run3"}) {
    const auto dir = recorded_dir() / "32_limits_not_enforced" / name;
    if (!std::filesystem::exists(dir / "meta.txt")) continue;
    ++runs;
    CAPTURE(name);
    const auto run = experiments::read_recorded_run(dir);
    CHECK(run.never_started.empty());
    for (const auto* job : {"j001", "j002", "j003", "j004", "j005", "j006"}) {
      CAPTURE(job);
      const auto& r = run.schedule.at(job).front();
      CHECK(r.state == "COMPLETED");
      CHECK(r.start - r.submit <= 1);
    }
    const auto sim = experiments::simulate_recorded_run(run);
    const auto d = experiments::compare_schedules(run.schedule, sim.schedule);
    CHECK(d.mean_abs_start <= 0.5);
    CHECK(d.tau >= 0.99);
    CHECK(d.state_equal == run.schedule.size());
  }
  if (runs == 0) MESSAGE("SKIPPED: scenario 32 not recorded");
  CHECK((runs == 0 || runs == 3));
}

TEST_CASE("a QOS's per-account limits as real Slurm 22.05 enforces them") {
  // Scenario 33, three real runs. QOS pa: MaxJobsPerAccount=2 held u1's j003 while u1's j001 and u2's
  // j002 ran (until +60); MaxTRESPerAccount=cpu=12 held u3's second 8-CPU job j005 (account a2: 8 + 8)
  // until j004 ended (+73), though a1's two jobs ran beside it; MaxSubmitJobsPerAccount=4 refused j007,
  // a1's fifth; j008 (QOS normal, account a1) was not counted. The previous build read none of the three
  // ("not modelled"): 31.0 s mean |Δstart|, τ 0.524, j007 run instead of refused.
  std::size_t runs = 0;
  for (const std::string name : {"run1", "run2", "run3"}) {
    const auto dir = recorded_dir() / "33_qos_per_account" / name;
    if (!std::filesystem::exists(dir / "meta.txt")) continue;
    ++runs;
    CAPTURE(name);
    const auto run = experiments::read_recorded_run(dir);
    const auto& real = run.schedule;
    CHECK(real.at("j003").front().start >= real.at("j001").front().end);
    CHECK(real.at("j005").front().start >= real.at("j004").front().end);
    CHECK(real.at("j008").front().start - real.at("j008").front().submit <= 1);
    CHECK(real.at("j007").front().state == "REJECTED");
    const auto sim = experiments::simulate_recorded_run(run);
    const auto d = experiments::compare_schedules(real, sim.schedule);
    CHECK(d.mean_abs_start <= 0.5);
    CHECK(d.tau >= 0.99);
    CHECK(d.state_equal == real.size());
  }
  if (runs == 0) MESSAGE("SKIPPED: scenario 33 not recorded");
  CHECK((runs == 0 || runs == 3));
}

TEST_CASE("job arrays as real Slurm 22.05 schedules them: task caps and bf_max_job_array_resv") {
  // Scenario 34, three real runs (4 nodes x 8 CPUs, bf_max_job_array_resv=2). The whole-node array
  // j005 (tasks 0-3, QOS hi) pends from +3; backfill reserved nodes for two of its tasks only, so j006
  // (4 CPUs, 3 min) started at once in n2's free half. j007 (0-5%2), j009 (0-5%2) and j012 (1,3,5%2)
  // never ran more than two tasks at once. The previous build ignored the cap and bf_max_job_array_resv
  // (its replay of run 1: 15.7 s mean |Δstart|, τ 0.761 without the cap; 11.0 s, τ 0.909 without the
  // reservation cut, j006 started at +70).
  std::size_t runs = 0;
  for (const std::string name : {"run1", "run2", "run3"}) {
    const auto dir = recorded_dir() / "34_job_arrays" / name;
    if (!std::filesystem::exists(dir / "meta.txt")) continue;
    ++runs;
    CAPTURE(name);
    const auto run = experiments::read_recorded_run(dir);
    const auto& real = run.schedule;
    REQUIRE(real.size() == 31);  // 7 single jobs, 24 tasks
    CHECK(real.at("j006").front().start == 6);
    // At most two tasks of a capped array at once: each task starts no earlier than the end of the
    // task two before it.
    for (const auto& [array, tasks] : {std::pair{"j007", std::vector<int>{0, 1, 2, 3, 4, 5}},
                                       std::pair{"j009", std::vector<int>{0, 1, 2, 3, 4, 5}},
                                       std::pair{"j012", std::vector<int>{1, 3, 5}}})
      for (std::size_t k = 2; k < tasks.size(); ++k)
        CHECK(real.at(fmt::format("{}_{}", array, tasks[k])).front().start >=
              real.at(fmt::format("{}_{}", array, tasks[k - 2])).front().end);
    // The log names each task by its array and its own id: "JobId=17_0(18)".
    CHECK(run.task_ids.count({run.job_ids.at("j009"), 0}) == 1);
    const auto sim = experiments::simulate_recorded_run(run);
    const auto d = experiments::compare_schedules(real, sim.schedule);
    // (0.52 s in run 1: j006, started by backfill and done after 50 s, hands its node to j007 in the
    // backfill cycle of its end's second in real Slurm, a second later in the twin: item 6's lag.)
    CHECK(d.mean_abs_start <= 0.6);
    CHECK(d.tau >= 0.99);
    CHECK(d.state_equal == real.size());
  }
  if (runs == 0) MESSAGE("SKIPPED: scenario 34 not recorded");
  CHECK((runs == 0 || runs == 3));
}

TEST_CASE("DenyOnLimit as real Slurm 22.05 applies it at submit: either QOS of the pair, any limit") {
  // Scenario 35, three real runs. Refused by sbatch: j002 (over partition QOS pq's MaxWall; pq has
  // DenyOnLimit), j004 (over u3's association MaxTRESPerJob, partition of pq), j006 (the same in QOS
  // dq: the flag, no limit), j007 (QOS dq, over partition QOS pl's MaxWall; pl has no flag). Pending for
  // good: j003 and j005, the same requests without any flag. The previous build refused none of them.
  std::size_t runs = 0;
  for (const std::string name : {"run1", "run2", "run3"}) {
    const auto dir = recorded_dir() / "35_deny_on_limit" / name;
    if (!std::filesystem::exists(dir / "meta.txt")) continue;
    ++runs;
    CAPTURE(name);
    const auto run = experiments::read_recorded_run(dir);
    CHECK(run.refused == std::set<std::string>{"j002", "j004", "j006", "j007"});
    CHECK(run.never_started.size() == 2);
    const auto sim = experiments::simulate_recorded_run(run);
    for (const auto& [job, runs_of] : run.schedule) {
      CAPTURE(job);
      REQUIRE(sim.schedule.count(job) == 1);
      CHECK(sim.schedule.at(job).back().state == runs_of.back().state);
    }
    const auto d = experiments::compare_schedules(run.schedule, sim.schedule);
    CHECK(d.mean_abs_start <= 0.5);
  }
  if (runs == 0) MESSAGE("SKIPPED: scenario 35 not recorded");
  CHECK((runs == 0 || runs == 3));
}

TEST_CASE("GPUs as TRES as real Slurm 22.05 counts them: PriorityWeightTRES and a billing limit") {
  // Scenario 36, three real runs. Partition gpu: after the blockers j005 (3 GPUs), then j004 (1 GPU),
  // then j003 (none) started, the reverse of their submission: PriorityWeightTRES=GRES/gpu=2000 over
  // the partition's 8 GPUs. Partition gpub: account a2's GrpTRES=billing=20 let j006 and j007 (billed
  // 10.98 each, counted 10) run together and held j008 and j009 until they ended at +65. The previous
  // build ordered j003 first and left GPUs out of billing and billing limits unenforced.
  std::size_t runs = 0;
  for (const std::string name : {"run1", "run2", "run3"}) {
    const auto dir = recorded_dir() / "36_gpu_tres" / name;
    if (!std::filesystem::exists(dir / "meta.txt")) continue;
    ++runs;
    CAPTURE(name);
    const auto run = experiments::read_recorded_run(dir);
    const auto start = [](const experiments::Schedule& s, const char* job) {
      return s.at(job).front().start;
    };
    const auto sim = experiments::simulate_recorded_run(run);
    for (const auto* schedule : {&run.schedule, &sim.schedule}) {
      CHECK(start(*schedule, "j005") < start(*schedule, "j004"));
      CHECK(start(*schedule, "j004") < start(*schedule, "j003"));
      CHECK(start(*schedule, "j007") == start(*schedule, "j006"));
      for (const char* held : {"j008", "j009"})
        CHECK(start(*schedule, held) >= start(*schedule, "j006") + 60);
    }
    const auto d = experiments::compare_schedules(run.schedule, sim.schedule);
    CHECK(d.mean_abs_start <= 0.5);
    CHECK(d.tau >= 0.98);
    // squeue showed j008 and j009 pending on AssocGrpBilling for about a minute, sampled every
    // second; the simulator gives the same word at each of those instants.
    const auto f = experiments::compare_factors(run, sim);
    CHECK(f.reason_rows >= 100);
    CHECK(f.reason_rows_bad == 0);
  }
  if (runs == 0) MESSAGE("SKIPPED: scenario 36 not recorded");
  CHECK((runs == 0 || runs == 3));
}
