// QOS and association limits on hand-made clusters, expected times computed by hand from
// slurmctld 22.05's acct_policy.c (cited per case) and the decay thread's running-minutes charge
// (priority_multifactor.c). Decay ticks fall at the controller start (kT0) and every
// PriorityCalcPeriod after; with a pass every second a job submitted at kT0 starts at t=1, and what a
// tick frees starts in the next second's pass (as on real Slurm: 27_run_mins, j003 and j006).
#include <doctest/doctest.h>

#include "replay_support.hpp"
#include "scenario_support.hpp"

using namespace slurmtwin;

namespace {

using testing::JobSpec;
using testing::kT0;
using testing::make_trace;
using testing::small_site;
using R = sim::PendingReason;

// Two 8-CPU nodes, PriorityCalcPeriod 60 s, a pass every second (as the oracle's scenarios run).
Site site_2x8() {
  return testing::every_second_site(2, 8);
}

experiments::ReplayResult replay(const Site& site, const Trace& trace) {
  return testing::checked_replay(site, trace);
}

Seconds start_of(const experiments::ReplayResult& r, std::size_t i) {
  const auto& j = r.state->jobs[i];
  return j.start == kUnsetTime ? kUnsetTime : j.start - kT0;
}

void set_qos(Trace& t, std::size_t job, const char* qos) {
  t.jobs[job].qos = t.qos.intern(qos);
}

Qos& add_qos(Site& site, const char* name) {
  Qos q;
  q.name = name;
  site.qos.push_back(q);
  return site.qos.back();
}

}  // namespace

TEST_CASE("GrpTRESRunMins: a job waits until running CPUs x time limit left, plus its own, fit") {
  // QOS GrpTRESRunMins=cpu=24. J1 and J2 (4 CPUs, 3 min each) start at t=1: 2 x 4 x 180 s = 24
  // CPU-min running. J3 (4 CPUs x 3 min = 12) does not fit: 24 + 12 > 24. The decay thread takes
  // what ran off at each tick: at t=60, 2 x 4 x 59 s -> 968 s = 16 min (integer), 16 + 12 > 24;
  // at t=120, 2 x 4 x 60 s more -> 488 s = 8 min, 8 + 12 <= 24: J3 starts at t=121,
  // long before J1 and J2 end (t=151), where GrpTRES would have let it start.
  auto site = site_2x8();
  site.qos[0].limits.grp_tres_run_mins = {{"cpu", 24}};
  const auto r = replay(site, make_trace({{0, 1, 4, 150, 180}, {0, 1, 4, 150, 180}, {0, 1, 4, 60, 180}}));
  CHECK(start_of(r, 0) == 1);
  CHECK(start_of(r, 1) == 1);
  CHECK(start_of(r, 2) == 121);
  CHECK(r.state->jobs[2].has_seen(R::kQosGrpTresRunMins));
}

TEST_CASE(
    "GrpTRES=billing counts each job's billing TRES, truncated to a whole number as slurmctld stores it") {
  // TRESBillingWeights=CPU=1.0,Mem=0.5G; DefMemPerCPU 100. J1 and J2: 4 CPUs and 400 MB, billing
  // 4 + 400 x 0.5 / 1024 = 4.195, counted 4 (assoc_mgr_tres_weighted's double in a uint64_t TRES
  // count); 4 + 4 <= 8: both start at t=1 (8.39 would hold J2). J3 (1 CPU, 100 MB: 1.049 -> 1) waits,
  // 8 + 1 > 8, until J1 ends at 61. Seen on real Slurm 22.05 in scenario 36 (GrpTRES=billing=20).
  for (const bool qos : {false, true}) {
    CAPTURE(qos);
    auto site = site_2x8();
    site.partitions[0].tres_billing_weights = parse_tres_weights("CPU=1.0,Mem=0.5G");
    (qos ? site.qos[0].limits : site.accounts[1].limits).grp_tres = {{"billing", 8}};
    JobSpec j2{0, 1, 4, 100, 180};
    j2.user = "bob";
    const auto r = replay(site, make_trace({{0, 1, 4, 60, 180}, j2, {0, 1, 1, 60, 180}}));
    CHECK(start_of(r, 0) == 1);
    CHECK(start_of(r, 1) == 1);
    CHECK(start_of(r, 2) == 61);
    CHECK(r.state->jobs[2].has_seen(qos ? R::kQosGrpBilling : R::kAssocGrpBilling));
    CHECK(std::string(sim::to_string(qos ? R::kQosGrpBilling : R::kAssocGrpBilling)) ==
          (qos ? "QOSGrpBilling" : "AssocGrpBilling"));
  }
}

TEST_CASE("an account's GrpTRESRunMins binds its users together") {
  // Account acct GrpTRESRunMins=cpu=20: alice's J1 (4 CPUs x 3 min = 12) starts at t=1; bob's J2 (12)
  // waits (12 + 12 > 20) with AssocGrpCPURunMinutesLimit; at t=60 J1 has 4 x 121 s = 484 s = 8 min
  // left: 8 + 12 <= 20, J2 starts at t=61.
  auto site = site_2x8();
  site.accounts[1].limits.grp_tres_run_mins = {{"cpu", 20}};
  JobSpec j2{0, 1, 4, 60, 180};
  j2.user = "bob";
  const auto r = replay(site, make_trace({{0, 1, 4, 100, 180}, j2}));
  CHECK(start_of(r, 0) == 1);
  CHECK(start_of(r, 1) == 61);
  CHECK(r.state->jobs[1].has_seen(R::kAssocGrpTresRunMins));
}

TEST_CASE("MaxTRESPerNode, MaxTRESMinsPerJob and MinTRESPerJob hold a job for ever, and no other") {
  // QOS MaxTRESPerNode=cpu=4: 8 CPUs on 1 node pend (QOSMaxCpuPerNode), 8 on 2 nodes (4 each) run.
  // QOS mins MaxTRESMinsPerJob=cpu=20: 8 CPUs x 3 min = 24 pend, 4 x 5 = 20 run. QOS minq
  // MinTRESPerJob=cpu=4: 2 CPUs pend (QOSMinCpuNotSatisfied), 4 run. Recorded on real Slurm 22.05:
  // tests/oracle 28_tres_job_limits.
  auto site = small_site(4, 8);
  site.qos[0].limits.max_tres_per_node = {{"cpu", 4}};
  add_qos(site, "mins").limits.max_tres_mins_per_job = {{"cpu", 20}};
  add_qos(site, "minq").limits.min_tres_per_job = {{"cpu", 4}};
  auto trace = make_trace({{0, 1, 8, 30, 120},
                           {0, 2, 8, 30, 120},
                           {0, 1, 8, 30, 180},
                           {0, 1, 4, 30, 300},
                           {0, 1, 2, 30, 120},
                           {0, 1, 4, 30, 120}});
  for (std::size_t i = 2; i < 4; ++i) set_qos(trace, i, "mins");
  for (std::size_t i = 4; i < 6; ++i) set_qos(trace, i, "minq");
  const auto r = replay(site, trace);
  const auto& jobs = r.state->jobs;
  CHECK(start_of(r, 0) == kUnsetTime);
  CHECK(jobs[0].reason == R::kQosMaxTresPerNode);
  CHECK(sim::to_string(jobs[0].reason) == std::string("QOSMaxCpuPerNode"));
  CHECK(start_of(r, 1) == 3);
  CHECK(jobs[1].alloc.size() == 2);
  CHECK(start_of(r, 2) == kUnsetTime);
  CHECK(sim::to_string(jobs[2].reason) == std::string("QOSMaxCpuMinutesPerJobLimit"));
  CHECK(start_of(r, 3) == 3);
  CHECK(start_of(r, 4) == kUnsetTime);
  CHECK(sim::to_string(jobs[4].reason) == std::string("QOSMinCpuNotSatisfied"));
  CHECK(start_of(r, 5) == 3);
}

TEST_CASE("a job over a post-select limit while no node is free waits on the limit and blocks no partition") {
  // select_nodes checks acct_policy_job_runnable_post_select even when no nodes were chosen, on the
  // request's counts (req_nodes: -N1 here), and returns ESLURM_ACCOUNTING_POLICY, which schedule()
  // does not count against the partition. Real Slurm 22.05 (28_tres_job_limits) showed
  // QOSMaxCpuPerNode, not Resources, for an 8-CPU one-node job while every node was busy.
  // Two 8-CPU nodes, main scheduler only: J0 and J1 take 6 CPUs of each; J2 (-N1 -n8, QOS
  // MaxTRESPerNode=cpu=4) cannot be placed; J3 (2 CPUs, after it in the queue) starts beside them.
  auto site = small_site(2, 8);
  site.scheduler.scheduler_type = "sched/builtin";
  site.qos[0].limits.max_tres_per_node = {{"cpu", 4}};
  add_qos(site, "free");
  auto trace = make_trace({{0, 1, 6, 100, 300}, {0, 1, 6, 100, 300}, {0, 1, 8, 30, 120}, {0, 1, 2, 30, 120}});
  for (const std::size_t i : {0, 1, 3}) set_qos(trace, i, "free");
  const auto r = replay(site, trace);
  const auto& jobs = r.state->jobs;
  CHECK(start_of(r, 3) == start_of(r, 0));  // was: when J0 ended (J2 Resources blocked the partition)
  CHECK(start_of(r, 2) == kUnsetTime);
  CHECK(jobs[2].reason == R::kQosMaxTresPerNode);
  CHECK(!jobs[2].has_seen(R::kResources));
}

TEST_CASE("a job over a limit behind a blocked partition keeps the limit as its reason") {
  // backfill.c sets the reason of a job over a limit (acct_policy_job_runnable_* set state_reason);
  // schedule() replaces only None and Resources by Priority in a blocked partition. Real Slurm 22.05
  // (17_site_files) showed AssocGrpCpuLimit there, where the twin showed Priority in 50-66 of ~180 rows.
  // Account acct GrpTRES=cpu=8: alice's J0 (8 CPUs) runs; carol's J1 (16 CPUs, account other) waits
  // for both nodes and blocks the partition; alice's J2 (4 CPUs) is over acct's limit until J0 ends.
  auto site = site_2x8();
  site.accounts[1].limits.grp_tres = {{"cpu", 8}};
  site.accounts.push_back({"other", "root", {1, false}, 0, {}, "", {}});
  site.users.push_back({"carol", "other", "None"});
  site.associations.push_back({"carol", "other", "", {1, false}, 0, {}, "", {}});
  JobSpec carol{0, 2, 16, 50, 180};
  carol.user = "carol";
  auto trace = make_trace({{0, 1, 8, 100, 180}, carol, {5, 1, 4, 30, 180}});
  trace.jobs[1].account = trace.accounts.intern("other");
  const auto r = replay(site, trace);
  const auto& j2 = r.state->jobs[2];
  CHECK(j2.has_seen(R::kAssocGrpTres));  // was Priority throughout (never checked by the main pass)
  CHECK(start_of(r, 1) == 101);
  CHECK(start_of(r, 2) == 151);
}

TEST_CASE("backfill reserves no nodes for a job over a post-select limit on the nodes it planned") {
  // backfill.c checks acct_policy_job_runnable_post_select on the planned nodes before it adds a
  // reservation ("adding reservation ... blocked by acct_policy_job_runnable_post_select": continue).
  // Two 8-CPU nodes: J0 fills n1 for 1,000 s; J1 holds one CPU of n2 until 141 s (limit 150 s).
  // J2 (--exclusive, 2 CPUs, QOS MaxTRESPerNode=cpu=4) passes on its request (2 CPUs on 1 node) but
  // would be given all 8 CPUs of n2 once J1 ends: no reservation there, so J3 (7 CPUs, 300 s) is
  // backfilled on n2 at once rather than when J1 ends.
  auto site = small_site(2, 8);
  add_qos(site, "pn").limits.max_tres_per_node = {{"cpu", 4}};
  auto trace =
      make_trace({{0, 1, 8, 1000, 2000}, {0, 1, 1, 140, 150}, {1, 1, 2, 30, 120}, {2, 1, 7, 30, 300}});
  set_qos(trace, 2, "pn");
  trace.jobs[2].exclusive = true;
  const auto r = replay(site, trace);
  CHECK(start_of(r, 2) == kUnsetTime);
  CHECK(r.state->jobs[2].reason == R::kQosMaxTresPerNode);
  CHECK(start_of(r, 3) == 30);  // the first backfill cycle (bf_interval 30 s); was 143: behind J2's
                                // reservation of n2 from 150 s, started by the main pass once J1 ended
}

TEST_CASE(
    "a DenyOnLimit QOS refuses at submit what MaxTRESPerNode, MaxTRESMins or MinTRESPerJob would hold") {
  // Real Slurm 22.05 (28_tres_job_limits, j011-j013): sbatch: error: QOSMaxCpuPerNode / ...
  auto site = small_site(2, 8);
  auto& q = site.qos[0];
  q.flags.insert("DenyOnLimit");
  q.limits.max_tres_per_node = {{"cpu", 4}};
  q.limits.max_tres_mins_per_job = {{"cpu", 20}};
  q.limits.min_tres_per_job = {{"cpu", 2}};
  const auto r = replay(
      site, make_trace({{0, 1, 8, 30, 120}, {0, 1, 4, 30, 360}, {0, 1, 1, 30, 120}, {0, 2, 8, 30, 120}}));
  const auto& jobs = r.state->jobs;
  CHECK(jobs[0].reject_reason == "QOSMaxCpuPerNode");
  CHECK(jobs[1].reject_reason == "QOSMaxCpuMinutesPerJobLimit");
  CHECK(jobs[2].reject_reason == "QOSMinCpuNotSatisfied");
  CHECK(start_of(r, 3) == 3);
  CHECK(r.metrics.rejected == 3);
}

TEST_CASE("DenyOnLimit on either QOS of the pair refuses at submit whatever limit the request breaks") {
  // _acct_policy_validate: strict_checking is the flag of the partition's QOS or the job's, and then
  // holds for QOS and association limits alike. Real Slurm 22.05 (35_deny_on_limit) refused the four
  // jobs below that break a limit under it and kept the two without it pending for good.
  // Partition p (QOS pq: DenyOnLimit, MaxWall=2 min) on n1, partition lax (QOS pl: MaxWall=2 min) on
  // n2; QOS dq: DenyOnLimit, no limit; bob's association MaxTRESPerJob=cpu=4.
  auto site = small_site(2, 8);
  auto& pq = add_qos(site, "pq");
  pq.flags.insert("DenyOnLimit");
  pq.limits.max_wall = 120;
  add_qos(site, "pl").limits.max_wall = 120;
  add_qos(site, "dq").flags.insert("DenyOnLimit");
  site.associations[1].limits.max_tres_per_job = {{"cpu", 4}};
  site.partitions[0].qos = "pq";
  site.partitions[0].nodes = {"n1"};
  auto lax = site.partitions[0];
  lax.name = "lax";
  lax.is_default = false;
  lax.qos = "pl";
  lax.nodes = {"n2"};
  site.partitions.push_back(lax);
  JobSpec bob_p{0, 1, 8, 30, 120}, bob_lax{0, 1, 8, 30, 120}, bob_dq{0, 1, 8, 30, 120};
  bob_p.user = bob_lax.user = bob_dq.user = "bob";
  auto trace = make_trace({{0, 1, 4, 30, 180},    // J0 p, 3 min: over pq's MaxWall, pq denies
                           {0, 1, 4, 30, 180},    // J1 lax, 3 min: over pl's MaxWall, pends
                           bob_p,                 // J2 p, 8 CPUs: over bob's MaxTRESPerJob, pq denies
                           bob_lax,               // J3 lax, 8 CPUs: pends
                           bob_dq,                // J4 lax, QOS dq, 8 CPUs: dq denies
                           {0, 1, 4, 30, 180},    // J5 lax, QOS dq, 3 min: pl's MaxWall, dq denies
                           {0, 1, 4, 30, 120}});  // J6 p, within every limit: runs
  for (const std::size_t k : {1, 3, 4, 5}) trace.jobs[k].partition = trace.partitions.intern("lax");
  set_qos(trace, 4, "dq");
  set_qos(trace, 5, "dq");
  const auto r = replay(site, trace);
  const auto& jobs = r.state->jobs;
  CHECK(jobs[0].reject_reason == "QOSMaxWallDurationPerJobLimit");
  CHECK(jobs[2].reject_reason == "AssocMaxCpuPerJobLimit");  // squeue's word on real Slurm (scenario 35)
  CHECK(jobs[4].reject_reason == "AssocMaxCpuPerJobLimit");
  CHECK(jobs[5].reject_reason == "QOSMaxWallDurationPerJobLimit");
  CHECK(r.metrics.rejected == 4);
  CHECK(start_of(r, 1) == kUnsetTime);
  CHECK(jobs[1].reason == R::kQosMaxWall);
  CHECK(start_of(r, 3) == kUnsetTime);
  CHECK(jobs[3].reason == R::kAssocMaxTresPerJob);
  CHECK(start_of(r, 6) == 3);
  SUBCASE("a job listing both partitions is refused: each partition of its list is validated") {
    trace.jobs[1].partition = trace.partitions.intern("lax,p");
    CHECK(replay(site, trace).state->jobs[1].reject_reason == "QOSMaxWallDurationPerJobLimit");
  }
}

TEST_CASE("GrpTRESMins: once a NoDecay QOS's jobs have used its CPU-minutes, its next jobs wait for good") {
  // QOS gmins GrpTRESMins=cpu=7, NoDecay. J1 (4 CPUs) and J2 (2 CPUs) run 60 s from t=1: 6 CPU-min
  // used at t=61. J3 (2 CPUs, t=100): 6 < 7, it starts although 6 + 2 x 2 min > 7 (without
  // AccountingStorageEnforce=safe only what was used counts), runs 30 s: 7 used. J4 (t=200): 7 >= 7,
  // held with QOSGrpCPUMinutesLimit. As real Slurm 22.05 did (28_tres_job_limits, j017-j021).
  auto site = site_2x8();
  auto& q = site.qos[0];
  q.flags.insert("NoDecay");
  q.limits.grp_tres_mins = {{"cpu", 7}};
  const auto r = replay(
      site, make_trace({{0, 1, 4, 60, 120}, {0, 1, 2, 60, 120}, {100, 1, 2, 30, 120}, {200, 1, 1, 30, 60}}));
  CHECK(start_of(r, 2) == 100);
  CHECK(start_of(r, 3) == kUnsetTime);
  CHECK(sim::to_string(r.state->jobs[3].reason) == std::string("QOSGrpCPUMinutesLimit"));
  SUBCASE("with AccountingStorageEnforce=safe a job starts only if its whole time limit fits") {
    // J1 4 x 1 min and J2 2 x 1 min fit (4 + 2 <= 7); J3's 2 x 2 min do not fit the 1 left.
    site.scheduler.accounting_storage_enforce.insert("safe");
    const auto safe = replay(site, make_trace({{0, 1, 4, 60, 60}, {0, 1, 2, 60, 60}, {100, 1, 2, 30, 120}}));
    CHECK(start_of(safe, 0) == 1);
    CHECK(start_of(safe, 1) == 1);
    CHECK(start_of(safe, 2) == kUnsetTime);
  }
}

TEST_CASE("a limit the QOS sets replaces the association's, and the partition's QOS sets limits first") {
  // acct_policy.c: qos_rec / qos_out_ptr hold what a QOS set; association checks skip those limits.
  // alice's association MaxWall=3 min: a 10-min job in QOS normal pends (AssocMaxWall...), in QOS
  // long (MaxWall=20 min) it runs. Partition p's QOS pq MaxTRESPerUser=cpu=8 binds every job in p,
  // whatever its QOS: alice's J2 (1 CPU) and J3 (7) run, her J4 (1 more) waits for J2's end at t=33;
  // QOS over (OverPartQOS, MaxTRESPerUser=cpu=12) sets that limit first for its own jobs: bob's 5 + 5
  // CPUs run.
  auto site = small_site(4, 8);
  site.associations[0].limits.max_wall = 180;
  add_qos(site, "long").limits.max_wall = 1200;
  add_qos(site, "pq").limits.max_tres_per_user = {{"cpu", 8}};
  auto& over = add_qos(site, "over");
  over.flags.insert("OverPartQOS");
  over.limits.max_tres_per_user = {{"cpu", 12}};
  site.partitions[0].qos = "pq";
  JobSpec b1{0, 1, 5, 100}, b2{0, 1, 5, 100};
  b1.user = b2.user = "bob";
  auto trace =
      make_trace({{0, 1, 1, 30, 600}, {0, 1, 1, 30, 600}, {0, 1, 7, 100, 120}, {1, 1, 1, 30, 120}, b1, b2});
  set_qos(trace, 1, "long");
  set_qos(trace, 4, "over");
  set_qos(trace, 5, "over");
  const auto r = replay(site, trace);
  CHECK(start_of(r, 0) == kUnsetTime);
  CHECK(r.state->jobs[0].reason == R::kAssocMaxWall);
  CHECK(start_of(r, 1) == 3);
  CHECK(start_of(r, 2) == 3);
  CHECK(r.state->jobs[3].has_seen(R::kQosMaxTresPerUser));  // alice: 8 of pq's 8 in use
  CHECK(start_of(r, 3) == 33);
  CHECK(start_of(r, 4) == 3);
  CHECK(start_of(r, 5) == 3);
}

TEST_CASE("MaxTRESRunMinsPU binds from Slurm 24.05, while 22.05 reads it and starts the job") {
  // QOS MaxTRESRunMinsPU=cpu=32: alice's J1 (4 CPUs x 5 min = 20) runs; J2 (20) would make 40. 22.05
  // has no check for it (acct_policy.c reads max_tres_run_mins_pu nowhere): J2 starts at t=1. 24.05
  // holds it until J1's time left fits: at the tick of t=60 J1 has 4 x 241 s = 16 min left (16 + 20 >
  // 32), at t=120 4 x 181 s = 12 min: J2 starts at t=121. bob is not bound by alice's minutes.
  auto site = site_2x8();
  site.qos[0].limits.max_tres_run_mins_per_user = {{"cpu", 32}};
  JobSpec b{0, 1, 4, 30, 300};
  b.user = "bob";
  const auto trace = make_trace({{0, 1, 4, 250, 300}, {0, 1, 4, 30, 300}, b});
  CHECK(start_of(replay(site, trace), 1) == 1);
  site.scheduler.slurm_version = 2405;
  const auto r = replay(site, trace);
  CHECK(start_of(r, 1) == 121);
  CHECK(start_of(r, 2) == 1);
  CHECK(sim::to_string(tres_reason(R::kQosMaxTresRunMinsPerUser, 0)) == std::string("MaxCpuRunMinsPerUser"));
}

TEST_CASE("GrpTRESMins used up while jobs run: they end at the next 30-s limit check, TIMEOUT") {
  // QOS GrpTRESMins=cpu=5, NoDecay. J1 (4 CPUs) and J2 (2 CPUs) run from t=1; the decay run at t=60
  // charges 6 x 59 s = 354 s = 5 CPU-min (integer): used up. slurmctld's limit check
  // (acct_policy_job_time_out, every 30 s) ends every running job of the QOS holding CPUs at t=90,
  // TIMEOUT; J3 (t=100) waits for good. With GrpTRESMins=cpu=6 the t=60 run finds 5 < 6 and the next,
  // at t=120, 354 + 360 s = 11 min: they end at t=150.
  auto site = site_2x8();
  site.qos[0].flags.insert("NoDecay");
  site.qos[0].limits.grp_tres_mins = {{"cpu", 5}};
  const auto trace = make_trace({{0, 1, 4, 300, 600}, {0, 1, 2, 300, 600}, {100, 1, 1, 30, 120}});
  const auto r = replay(site, trace);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(r.state->jobs[i].end - kT0 == 90);
    CHECK(r.state->jobs[i].end_state == JobState::kTimeout);
  }
  CHECK(start_of(r, 2) == kUnsetTime);
  site.qos[0].limits.grp_tres_mins = {{"cpu", 6}};
  const auto later = replay(site, trace);
  CHECK(later.state->jobs[0].end - kT0 == 150);
}

TEST_CASE("a partition's QOS MaxSubmitJobsPerUser counts every job submitted to the partition") {
  // Partition p's QOS pq MaxSubmitJobsPerUser=2: alice's third job (any QOS) is refused at submit,
  // QOSMaxSubmitJobPerUserLimit; bob's first is not. QOS over (OverPartQOS, MaxSubmitJobsPerUser=5)
  // sets the limit first for its jobs: alice's fourth, in QOS over, is accepted (3 submitted < 5).
  auto site = small_site(2, 8);
  add_qos(site, "pq").limits.max_submit_jobs_per_user = 2;
  auto& over = add_qos(site, "over");
  over.flags.insert("OverPartQOS");
  over.limits.max_submit_jobs_per_user = 5;
  site.partitions[0].qos = "pq";
  JobSpec b{0, 1, 1, 100};
  b.user = "bob";
  auto trace = make_trace({{0, 1, 1, 100}, {0, 1, 1, 100}, {0, 1, 1, 100}, b, {0, 1, 1, 100}});
  set_qos(trace, 4, "over");
  const auto r = replay(site, trace);
  const auto& jobs = r.state->jobs;
  CHECK(jobs[2].reject_reason == "QOSMaxSubmitJobPerUserLimit");
  CHECK(r.metrics.rejected == 1);
  CHECK(start_of(r, 3) == 3);
  CHECK(start_of(r, 4) == 3);
}

TEST_CASE("without AccountingStorageEnforce=limits no QOS or association limit is checked") {
  // acct_policy.c returns before every check unless limits (or safe) is enforced: at submit
  // (acct_policy_validate, MaxSubmitJobs), in the queue (MaxJobs, GrpTRES, MaxWall) and after node
  // selection. Real Slurm 22.05 ran every job of scenario 32 at once under such limits.
  auto site = site_2x8();
  site.qos[0].limits.max_jobs_per_user = 1;
  site.qos[0].limits.max_wall = 60;
  site.accounts[1].limits.grp_tres = {{"cpu", 4}};
  site.associations[0].limits.max_submit_jobs_per_user = 1;
  const auto trace = make_trace({{0, 1, 4, 100, 180}, {0, 1, 4, 100, 180}, {0, 1, 4, 100, 180}});
  SUBCASE("enforced: one job at a time, the others refused or held") {
    const auto r = replay(site, trace);
    CHECK(start_of(r, 0) == kUnsetTime);  // MaxWall 60 s < its 180-s limit: held for good
    CHECK(r.state->jobs[1].state == sim::SimJobState::kRejected);  // MaxSubmitJobs=1
    CHECK(r.state->jobs[0].has_seen(R::kQosMaxWall));
  }
  SUBCASE("associations only (Slurm's default is none): every job at once") {
    site.scheduler.accounting_storage_enforce = {"associations"};
    const auto r = replay(site, trace);
    for (std::size_t i = 0; i < 3; ++i) CHECK(start_of(r, i) == 1);
  }
}

TEST_CASE("a QOS's per-account limits bind one account's users together, each account apart") {
  // acct_policy.c keeps a QOS's usage per account (used_limits_acct): MaxJobsPerAccount and
  // MaxTRESPerAccount hold a job while its account's running jobs in the QOS reach them, and
  // MaxSubmitJobsPerAccount refuses it at submit. alice and bob share account acct; carol has her own.
  auto site = site_2x8();
  site.accounts.push_back({"other", "root", {1, false}, 0, {}, "", {}});
  site.users.push_back({"carol", "other", "None"});
  site.associations.push_back({"carol", "other", "", {1, false}, 0, {}, "", {}});
  JobSpec bob{0, 1, 4, 100, 180};
  bob.user = "bob";
  JobSpec carol{0, 1, 4, 100, 180};
  carol.user = "carol";
  auto trace = make_trace({{0, 1, 4, 100, 180}, bob, carol});
  trace.jobs[2].account = trace.accounts.intern("other");
  SUBCASE("MaxJobsPerAccount=1: bob waits for alice's job; carol's account runs beside it") {
    site.qos[0].limits.max_jobs_per_account = 1;
    const auto r = replay(site, trace);
    CHECK(start_of(r, 0) == 1);
    CHECK(start_of(r, 2) == 1);
    CHECK(start_of(r, 1) >= 101);  // J1 ends at 101
    CHECK(r.state->jobs[1].has_seen(R::kQosMaxJobsPerAccount));
  }
  SUBCASE("MaxTRESPerAccount=cpu=6: 4 + 4 CPUs of acct do not fit, carol's 4 do") {
    site.qos[0].limits.max_tres_per_account = {{"cpu", 6}};
    const auto r = replay(site, trace);
    CHECK(start_of(r, 2) == 1);
    CHECK(start_of(r, 1) >= 101);
    CHECK(r.state->jobs[1].has_seen(sim::tres_reason(R::kQosMaxTresPerAccount, 0)));
    CHECK(std::string(sim::to_string(sim::tres_reason(R::kQosMaxTresPerAccount, 0))) == "MaxCpuPerAccount");
  }
  SUBCASE("MaxSubmitJobsPerAccount=1: bob's job is refused, carol's is not") {
    site.qos[0].limits.max_submit_jobs_per_account = 1;
    const auto r = replay(site, trace);
    CHECK(r.state->jobs[1].state == sim::SimJobState::kRejected);
    CHECK(r.state->jobs[1].reject_reason == "MaxSubmitJobsPerAccount");
    CHECK(start_of(r, 2) == 1);
  }
  // acct_policy.c checks an association's MaxJobs and MaxSubmitJobs only where no QOS of the job sets
  // the per-account or the per-user count (both must be INFINITE): a QOS MaxJobsPA of 3 replaces
  // alice's MaxJobs=1 and her second job runs beside her first; without it, it waits.
  SUBCASE("a QOS's MaxJobsPerAccount replaces the association's MaxJobs") {
    trace = make_trace({{0, 1, 4, 100, 180}, {0, 1, 4, 100, 180}});
    site.associations[0].limits.max_jobs_per_user = 1;
    site.qos[0].limits.max_jobs_per_account = 3;
    const auto r = replay(site, trace);
    CHECK(start_of(r, 0) == 1);
    CHECK(start_of(r, 1) == 1);
    site.qos[0].limits.max_jobs_per_account.reset();
    const auto held = replay(site, trace);
    CHECK(start_of(held, 1) >= 101);
    CHECK(held.state->jobs[1].has_seen(R::kAssocMaxJobs));
  }
  SUBCASE("a QOS's MaxSubmitJobsPerAccount replaces the association's MaxSubmitJobs") {
    trace = make_trace({{0, 1, 4, 100, 180}, {0, 1, 4, 100, 180}});
    site.associations[0].limits.max_submit_jobs_per_user = 1;
    site.qos[0].limits.max_submit_jobs_per_account = 3;
    const auto r = replay(site, trace);
    CHECK(r.metrics.rejected == 0);
    site.qos[0].limits.max_submit_jobs_per_account.reset();
    const auto refused = replay(site, trace);
    CHECK(refused.state->jobs[1].reject_reason == "AssocMaxSubmitJobLimit");
  }
}

TEST_CASE("pending reasons are squeue's words for each TRES of a per-TRES limit") {
  // job_reason_string in Slurm 22.05's slurm_protocol_defs.c; CPU words as real squeue printed them in
  // scenarios 09, 13, 14, 27, 28 and 35 (QOSMaxCpuPerJobLimit, AssocMaxCpuPerJobLimit, ...), billing in 36.
  const auto word = [](R first, int slot) {
    return std::string(sim::to_string(sim::tres_reason(first, slot)));
  };
  CHECK(word(R::kQosMaxTresPerJob, 0) == "QOSMaxCpuPerJobLimit");
  CHECK(word(R::kQosMaxTresPerJob, 1) == "QOSMaxMemoryPerJob");
  CHECK(word(R::kQosMaxTresPerJob, 2) == "QOSMaxNodePerJobLimit");
  CHECK(word(R::kQosMaxTresPerJob, 3) == "QOSMaxGRESPerJob");
  CHECK(word(R::kQosMaxTresPerJob, 4) == "QOSMaxBillingPerJob");
  CHECK(word(R::kQosMaxTresPerUser, 0) == "QOSMaxCpuPerUserLimit");
  CHECK(word(R::kQosMaxTresPerUser, 2) == "QOSMaxNodePerUserLimit");
  CHECK(word(R::kQosMaxTresPerUser, 4) == "QOSMaxBillingPerUser");
  CHECK(word(R::kAssocMaxTresPerJob, 0) == "AssocMaxCpuPerJobLimit");
  CHECK(word(R::kAssocMaxTresPerJob, 1) == "AssocMaxMemPerJob");
  CHECK(word(R::kAssocMaxTresPerJob, 4) == "AssocMaxBillingPerJob");
  CHECK(word(R::kQosGrpTresMins, 4) == "QOSGrpBillingMinutes");
  CHECK(word(R::kAssocMaxTresPerNode, 0) == "AssocMaxCpuPerNode");
  CHECK(word(R::kAssocMaxTresPerNode, 4) == "AssocMaxBillingPerNode");
  CHECK(word(R::kQosMaxTresPerAccount, 0) == "MaxCpuPerAccount");
  CHECK(word(R::kQosMaxTresPerAccount, 4) == "MaxBillingPerAccount");
  CHECK(std::string(sim::to_string(R::kQosMaxJobsPerAccount)) == "MaxJobsPerAccount");
  CHECK(std::string(sim::to_string(R::kAssocMaxWall)) == "AssocMaxWallDurationPerJobLimit");
  CHECK(std::string(sim::to_string(R::kQosMaxWall)) == "QOSMaxWallDurationPerJobLimit");
  CHECK(std::string(sim::to_string(R::kAssocMaxJobs)) == "AssocMaxJobsLimit");
  CHECK(std::string(sim::to_string(R::kAssocGrpBilling)) == "AssocGrpBilling");
}

TEST_CASE(
    "where job-count and TRES limits both hold a job, the reason is the job-count one, as slurmctld's") {
  // acct_policy_job_runnable_pre_select checks GrpJobs, MaxJobs and MaxWall of both QOS and of every
  // level of the association tree before _post_select checks any TRES limit. Account proj
  // (GrpJobs=1) above acct (GrpTRES=cpu=4): J1 (4 CPUs) runs from t=1; J2 (2 CPUs) is over both, and
  // its reason is AssocGrpJobsLimit (real Slurm in scenario 13), not acct's AssocGrpCpuLimit met first
  // walking up. With a QOS GrpTRES=cpu=4 as well, still the association's GrpJobs.
  auto site = site_2x8();
  site.accounts.push_back({"proj", "root", {1, false}, 0, {}, "", {}});
  site.accounts[1].parent = "proj";
  site.accounts[1].limits.grp_tres = {{"cpu", 4}};
  site.accounts.back().limits.grp_jobs = 1;
  for (const bool qos : {false, true}) {
    CAPTURE(qos);
    if (qos) site.qos[0].limits.grp_tres = {{"cpu", 4}};
    const auto r = replay(site, make_trace({{0, 1, 4, 60, 180}, {0, 1, 2, 60, 180}}));
    CHECK(start_of(r, 0) == 1);
    CHECK(start_of(r, 1) == 61);
    CHECK(r.state->jobs[1].has_seen(R::kAssocGrpJobs));
    CHECK_FALSE(r.state->jobs[1].has_seen(R::kAssocGrpTres));
    CHECK_FALSE(r.state->jobs[1].has_seen(R::kQosGrpTres));
  }
}
