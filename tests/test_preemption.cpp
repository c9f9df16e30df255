// Preemption golden scenarios (spec §7); every expected time is derived by hand in the comments.
// One node with 4 CPUs; the controller starts at the first submit (t=0); the main pass runs
// batch_sched_delay (3 s) after submits and every 60 s (full pass); requeued jobs are eligible
// 121 s after the preemption (requeue delay 120 + 1).
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "experiments/learn/surrogate_data.hpp"
#include "experiments/learn/surrogate_engine.hpp"
#include "experiments/replay/replay.hpp"
#include "policies/preemption.hpp"
#include "replay_support.hpp"

using namespace slurmtwin;

namespace {

constexpr Seconds kT0 = 1'800'000'000;

Partition partition(const std::string& name, std::uint16_t tier) {
  Partition p;
  p.name = name;
  p.nodes = {"n1"};
  p.priority_tier = tier;
  p.def_mem_per_cpu_mb = 100;
  return p;
}

Qos qos(const std::string& name) {
  Qos q;
  q.name = name;
  return q;
}

Site preempt_site() {
  Site s;
  Node n;
  n.name = "n1";
  n.cpus = 4;
  n.cores_per_socket = 4;
  n.real_memory_mb = 1000;
  s.nodes = {n};
  s.partitions = {partition("low", 1), partition("high", 2)};
  s.partitions[0].is_default = true;
  s.qos = {qos("normal"), qos("low"), qos("high")};
  s.accounts = {{"root", "", {1, false}, 0, {}, "", {}}, {"acct", "root", {1, false}, 0, {}, "", {}}};
  s.users = {{"alice", "acct", "None"}};
  s.associations = {{"alice", "acct", "", {1, false}, 0, {}, "", {}}};
  return s;
}

// J1: 4 CPUs at t=0 (runtime 1000); J2: 4 CPUs at t=100 (runtime 100).
Trace two_jobs(const std::string& p1, const std::string& q1, const std::string& p2, const std::string& q2) {
  Trace t;
  const auto add = [&](std::uint64_t id, Seconds at, const std::string& p, const std::string& q,
                       Seconds run) {
    JobRecord j;
    j.job_id = id;
    j.user = t.users.intern("alice");
    j.account = t.accounts.intern("acct");
    j.partition = t.partitions.intern(p);
    j.qos = t.qos.intern(q);
    j.submit = j.eligible = kT0 + at;
    j.nodes = 1;
    j.tasks = j.req_cpus = 4;
    j.runtime = run;
    j.time_limit = 2000;
    t.jobs.push_back(j);
  };
  add(1, 0, p1, q1, 1000);
  add(2, 100, p2, q2, 100);
  return t;
}

experiments::ReplayResult replay(const Site& site, const Trace& trace) {
  return testing::checked_replay(site, trace);
}

}  // namespace

TEST_CASE("partition_prio REQUEUE: a higher-tier job requeues a lower-tier one") {
  auto site = preempt_site();
  site.scheduler.preempt_type = "preempt/partition_prio";
  site.scheduler.preempt_mode = PreemptMode::kRequeue;
  const auto r = replay(site, two_jobs("low", "normal", "high", "normal"));
  const auto& j1 = r.state->jobs[0];
  const auto& j2 = r.state->jobs[1];
  // t=3 J1 starts. t=100 J2 cannot start: J1 (tier 1 < 2) is requeued at once, J2 starts in the
  // pass its end triggers, same second; J2 ends at 200; J1 is eligible at 100+121 = 221 and starts.
  CHECK(j2.start - kT0 == 100);
  REQUIRE(j1.past_runs.size() == 1);
  CHECK(j1.past_runs[0].start - kT0 == 3);
  CHECK(j1.past_runs[0].end - kT0 == 100);
  CHECK(j1.restarts == 1);
  CHECK(j1.submit - kT0 == 100);  // a requeue resets Submit
  CHECK(j1.start - kT0 == 221);
  CHECK(j1.end - kT0 == 1221);  // reruns its whole runtime
  CHECK(j1.end_state == JobState::kCompleted);
  CHECK(r.metrics.preemptions == 1);
  CHECK(r.metrics.preemptions_by_partition.at("low") == 1);
  CHECK(r.metrics.preempted_core_hours == doctest::Approx(97.0 * 4 / 3600));
  // sacct -D style output: the PREEMPTED run, then the final one.
  const auto sacct = experiments::jobs_sacct(r, two_jobs("low", "normal", "high", "normal"));
  CHECK(sacct.find("|PREEMPTED|") != std::string::npos);

  // One wait per job everywhere, as the metrics count it: J1 from its requeue (Submit 100) to its last
  // start (221), 121 s — not from its first start (3 s, before the reset Submit); J2 0 s.
  CHECK(r.metrics.overall.mean == doctest::Approx((121.0 + 0.0) / 2));
  CHECK(experiments::simulated_waits(site, two_jobs("low", "normal", "high", "normal")) ==
        std::vector<float>{121, 0});
  // The surrogate engine's schedule built from those waits gives the replay's waits back.
  sim::SimState work = *r.state;
  const auto same =
      experiments::predicted_schedule_metrics(r, two_jobs("low", "normal", "high", "normal"), {121, 0}, work);
  CHECK(same.overall.mean == r.metrics.overall.mean);
  CHECK(same.overall.max == r.metrics.overall.max);
}

TEST_CASE("PreemptExemptTime protects young jobs until the first pass after it expires") {
  auto site = preempt_site();
  site.scheduler.preempt_type = "preempt/partition_prio";
  site.scheduler.preempt_mode = PreemptMode::kRequeue;
  site.scheduler.preempt_exempt_time = 200;
  const auto r = replay(site, two_jobs("low", "normal", "high", "normal"));
  // J1 started at 3 is exempt until 203; full passes run at 60, 120, 180, 240: J2 preempts at 240.
  CHECK(r.state->jobs[1].start - kT0 == 240);
  CHECK(r.state->jobs[0].past_runs.at(0).end - kT0 == 240);
  CHECK(r.state->jobs[0].start - kT0 == 240 + 121);
}

TEST_CASE("preempt/qos CANCEL with GraceTime: the victim runs its grace, ends PREEMPTED, is not requeued") {
  auto site = preempt_site();
  site.scheduler.preempt_type = "preempt/qos";
  site.scheduler.preempt_mode = PreemptMode::kRequeue;  // global; the victim QOS overrides it
  site.qos[1].preempt_mode = PreemptMode::kCancel;
  site.qos[1].grace_time = 30;
  site.qos[2].preempt = {"low"};
  const auto r = replay(site, two_jobs("low", "low", "low", "high"));
  const auto& j1 = r.state->jobs[0];
  // t=100 J2 (QOS high, Preempt=low) preempts J1 with 30 s grace: J1 ends at 130 as PREEMPTED; the
  // full pass at 120 does not act again (within KillWait + MessageTimeout = 40 s of the attempt).
  CHECK(j1.end - kT0 == 130);
  CHECK(j1.end_state == JobState::kPreempted);
  CHECK(j1.restarts == 0);
  CHECK(r.state->jobs[1].start - kT0 == 130);
  CHECK(r.metrics.preemptions_by_qos.at("low") == 1);
}

TEST_CASE("without preemption, or for a QOS it may not preempt, the job waits") {
  auto site = preempt_site();
  SUBCASE("PreemptType none") {
    const auto r = replay(site, two_jobs("low", "normal", "high", "normal"));
    CHECK(r.state->jobs[1].start - kT0 == 1003);  // after J1's 1000 s run from t=3
    CHECK(r.metrics.preemptions == 0);
  }
  SUBCASE("preempt/qos, but high does not list normal") {
    site.scheduler.preempt_type = "preempt/qos";
    site.scheduler.preempt_mode = PreemptMode::kRequeue;
    site.qos[2].preempt = {"low"};
    const auto r = replay(site, two_jobs("low", "normal", "low", "high"));
    CHECK(r.state->jobs[1].start - kT0 == 1003);
    CHECK(r.metrics.preemptions == 0);
  }
}

TEST_CASE(
    "partition_prio SUSPEND,GANG: the victim gives up its CPUs, the preemptor starts at once, the victim "
    "resumes") {
  auto site = preempt_site();
  site.scheduler.preempt_type = "preempt/partition_prio";
  site.scheduler.preempt_mode = PreemptMode::kSuspendGang;
  const auto r = replay(site, two_jobs("low", "normal", "high", "normal"));
  const auto& j1 = r.state->jobs[0];
  const auto& j2 = r.state->jobs[1];
  // t=3 J1 starts (would end at 1003). t=100 J2 cannot start: J1 is suspended (its 4 CPUs freed, its
  // 400 MB kept; 600 MB left is enough for J2's 400 MB) and J2 starts in the same pass. J2 ends at
  // 200; J1 resumes then with 903 s left and ends at 1103 as COMPLETED, one suspension of 100 s.
  CHECK(j2.start - kT0 == 100);
  CHECK(j2.started_by == SchedulerPass::kMain);
  CHECK(j1.start - kT0 == 3);
  CHECK(j1.end - kT0 == 1103);
  CHECK(j1.end_state == JobState::kCompleted);
  CHECK(j1.suspensions == 1);
  CHECK(j1.suspended_total == 100);
  CHECK(j1.restarts == 0);
  CHECK(r.metrics.suspensions == 1);
  CHECK(r.metrics.preemptions == 0);  // nothing was interrupted for good
}

TEST_CASE("SUSPEND cannot help when the victim's memory is what the preemptor lacks") {
  // As above, but each job asks 600 MB per node: J1 keeps its 600 MB while suspended, so J2 (600 MB)
  // cannot fit on the 1000 MB node and J1 is not suspended; J2 waits for J1's end at 1003.
  auto site = preempt_site();
  site.scheduler.preempt_type = "preempt/partition_prio";
  site.scheduler.preempt_mode = PreemptMode::kSuspendGang;
  auto trace = two_jobs("low", "normal", "high", "normal");
  for (auto& j : trace.jobs) j.mem_mb = 600;
  const auto r = replay(site, trace);
  CHECK(r.state->jobs[0].suspensions == 0);
  CHECK(r.state->jobs[1].start - kT0 == 1003);
}

TEST_CASE("a suspended job keeps accruing fair-share usage, as slurmctld's decay thread charges it") {
  // partition_prio SUSPEND,GANG, no usage decay (PriorityDecayHalfLife=0: df = 1), billing = allocated
  // CPUs (no TRESBillingWeights), decay ticks every 300 s from the first submit.
  // t=3 J1 (4 CPUs) starts; t=100 J2 (high tier, runtime 300) suspends J1 and starts; t=400 J2 ends
  // and J1 resumes. Usage of alice (both jobs) seen at t=600, after that tick:
  //   tick 300: J2 running (100..300) 200 s x 4 = 800; J1 suspended, charged from its start
  //             (3..300) 297 s x 4 = 1188 (a code that skipped suspended jobs would lose this slice);
  //   t=400 J2 ends: (300..400] 100 s x 4 = 400;
  //   tick 600: J1 running (300..600) 300 s x 4 = 1200.
  //   total 800 + 1188 + 400 + 1200 = 3588 billing-seconds.
  auto site = preempt_site();
  site.scheduler.preempt_type = "preempt/partition_prio";
  site.scheduler.preempt_mode = PreemptMode::kSuspendGang;
  site.scheduler.decay_half_life = 0;
  auto trace = two_jobs("low", "normal", "high", "normal");
  trace.jobs[1].runtime = 300;
  experiments::ReplayOptions o;
  o.check_invariants = true;
  o.snapshot_at = kT0 + 600;
  const auto r = experiments::run_replay(site, trace, o);
  CHECK(r.state->jobs[1].start - kT0 == 100);
  CHECK(r.state->jobs[0].end - kT0 == 1303);  // 903 s left at t=400
  const auto at = r.snapshot.find("\nacct alice ");
  REQUIRE(at != std::string::npos);
  // ACCOUNT USER RAW_SHARES NORM_SHARES RAW_USAGE ...
  std::istringstream line(r.snapshot.substr(at + 1));
  std::string account, user, raw_shares, norm_shares, raw_usage;
  line >> account >> user >> raw_shares >> norm_shares >> raw_usage;
  CHECK(raw_usage == "3588");
}

namespace {

struct Spec {
  Seconds at;
  const char* partition;
  const char* qos;
  std::uint32_t nodes;
  std::uint32_t cpus;
  Seconds runtime;
  Seconds limit = 2000;
};

// Jobs 1..N of user alice, in the order given.
/// preempt_site with nodes n1..nK (4 CPUs each) in both partitions, preempt/partition_prio REQUEUE.
Site tiers_site(std::uint32_t nodes) {
  auto site = preempt_site();
  for (std::uint32_t k = 2; k <= nodes; ++k) {
    site.nodes.push_back(site.nodes[0]);
    site.nodes.back().name = "n" + std::to_string(k);
  }
  for (auto& p : site.partitions) {
    p.nodes.clear();
    for (const auto& n : site.nodes) p.nodes.push_back(n.name);
  }
  site.scheduler.preempt_type = "preempt/partition_prio";
  site.scheduler.preempt_mode = PreemptMode::kRequeue;
  return site;
}

Trace trace_of(const std::vector<Spec>& specs) {
  Trace t;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto& s = specs[i];
    JobRecord j;
    j.job_id = i + 1;
    j.user = t.users.intern("alice");
    j.account = t.accounts.intern("acct");
    j.partition = t.partitions.intern(s.partition);
    j.qos = t.qos.intern(s.qos);
    j.submit = j.eligible = kT0 + s.at;
    j.nodes = s.nodes;
    j.tasks = j.req_cpus = s.cpus;
    j.runtime = s.runtime;
    j.time_limit = s.limit;
    t.jobs.push_back(j);
  }
  return t;
}

}  // namespace

TEST_CASE("preempt/qos queue order: a job whose QOS can preempt another's sorts before it") {
  auto site = preempt_site();
  site.scheduler.preempt_type = "preempt/qos";
  site.scheduler.preempt_mode = PreemptMode::kRequeue;
  site.scheduler.preempt_exempt_time = 100000;  // nothing is ever preempted: only the order shows
  site.qos[2].preempt = {"low"};
  SUBCASE("ranks") {
    // high preempts low: 1; low and normal preempt nothing: 0. A QOS above high: 2.
    auto ladder = site;
    ladder.qos.push_back(qos("top"));
    ladder.qos[3].preempt = {"high", "normal"};
    const policies::Preemption p(ladder);
    sim::SimJob j;
    const auto rank = [&](std::uint16_t q) {
      j.qos = q;
      return p.queue_rank(j);
    };
    CHECK(rank(0) == 0);
    CHECK(rank(1) == 0);
    CHECK(rank(2) == 1);
    CHECK(rank(3) == 2);
    ladder.scheduler.preempt_type = "preempt/partition_prio";  // tiers order partitions already
    CHECK(policies::Preemption(ladder).queue_rank(j) == 0);
  }
  SUBCASE("replay") {
    // J1 (normal, not preemptable by high) runs 3..1003. J2 (low, t=10) and J3 (high, t=20) wait, all
    // priorities 1: by submit time J2 would go first; J3's QOS can preempt J2's, so J3 goes first:
    // J3 1003..1103, then J2 1103..1203.
    const auto r = replay(site, trace_of({{0, "low", "normal", 1, 4, 1000},
                                          {10, "low", "low", 1, 4, 100},
                                          {20, "low", "high", 1, 4, 100}}));
    CHECK(r.state->jobs[0].end - kT0 == 1003);
    CHECK(r.state->jobs[2].start - kT0 == 1003);
    CHECK(r.state->jobs[1].start - kT0 == 1103);
    CHECK(r.metrics.preemptions == 0);
  }
}

TEST_CASE("a job requeued within one PriorityCalcPeriod of its start is queued by its new submit time") {
  // partition_prio REQUEUE, PreemptExemptTime 0 < PriorityCalcPeriod 300, all priorities 1 (order by
  // submit time). J1..J5 (low, whole node) at t=0; J1 starts at 3. J6 (high) at t=50: the backfill
  // cycle of that second (the first cycle ran at 30, nothing changed until the submit) finds that it
  // fits once J1 is preempted: J1 is requeued at 50 (Submit 50, eligible 171), J6 starts in the pass
  // J1's end triggers and runs 50..250. Then the low jobs by submit time: J2 250, J3 350, J4 450,
  // J5 550, and J1 (submitted again at 50) last at 650. Its queue record from t=0 must not survive
  // the requeue (it would start J1 at 250, before J2).
  auto site = preempt_site();
  site.scheduler.preempt_type = "preempt/partition_prio";
  site.scheduler.preempt_mode = PreemptMode::kRequeue;
  std::vector<Spec> specs = {{0, "low", "normal", 1, 4, 1000}};
  for (int i = 0; i < 4; ++i) specs.push_back({0, "low", "normal", 1, 4, 100});
  specs.push_back({50, "high", "normal", 1, 4, 200});
  const auto r = replay(site, trace_of(specs));
  const auto& jobs = r.state->jobs;
  REQUIRE(jobs[0].past_runs.size() == 1);
  CHECK(jobs[0].past_runs[0].end - kT0 == 50);
  CHECK(jobs[5].start - kT0 == 50);
  for (std::size_t k = 1; k <= 4; ++k) CHECK(jobs[k].start - kT0 == 150 + 100 * static_cast<Seconds>(k));
  CHECK(jobs[0].start - kT0 == 650);
  CHECK(jobs[0].submit - kT0 == 50);
}

TEST_CASE("backfill preempts for a job the main scheduler does not reach") {
  // Nodes n1..n3 (4 CPUs), partitions low (tier 1) and high (tier 2) over all three, partition_prio
  // REQUEUE. t=0: R (high) on n1, L1 and L2 (low) on n2 and n3, all started at 3. t=100: H1 (high,
  // 3 nodes) cannot start and preempting cannot help (R is not preemptable): in every main pass it
  // blocks partition high, so H2 (high, 1 node, limit 200) is never tried there. Backfill at 100 (the
  // cycle of the submits' second): H1 gets a reservation on all three nodes from 3 + 6000 (L1 and L2's
  // planned ends); H2 does not fit now, but does once L1 (lowest tier, fewest nodes, lowest id) is
  // preempted: L1 is requeued at 100 and n2 is reserved for H2. The end-triggered pass at 100 starts
  // nothing (H1 blocks), the next backfill cycle (100 + bf_interval 30 = 130) starts H2 on n2.
  const auto r = replay(tiers_site(3), trace_of({{0, "high", "normal", 1, 4, 5000, 6000},
                                                 {0, "low", "normal", 1, 4, 5000, 6000},
                                                 {0, "low", "normal", 1, 4, 5000, 6000},
                                                 {100, "high", "normal", 3, 12, 100, 200},
                                                 {100, "high", "normal", 1, 4, 100, 200}}));
  const auto& jobs = r.state->jobs;
  REQUIRE(jobs[1].past_runs.size() == 1);
  CHECK(jobs[1].past_runs[0].end - kT0 == 100);
  CHECK(jobs[2].past_runs.empty());
  CHECK(jobs[4].start - kT0 == 130);
  CHECK(jobs[4].started_by == SchedulerPass::kBackfill);
  CHECK(r.metrics.preemptions == 1);
}

TEST_CASE("backfill plans a job that may preempt without the jobs it may preempt") {
  // Nodes n1..n4 (4 CPUs), partitions low (tier 1) and high (tier 2) over all four, partition_prio
  // REQUEUE. t=0: R (high) on n1 until its planned end 3 + 6000; L1 and L2 (low, preemptable by high)
  // on n2 and n3 until 3 + 9000; n4 stays free. t=100: H (high) wants all four nodes: preempting L1
  // and L2 is not enough while R runs. slurmctld's will-run plans H with L1 and L2 gone, at R's planned
  // end 6003 (without them gone it would be their planned end, 9003), so B (low, one node, limit 7000:
  // it would run until 7100) may not backfill onto n4 at 100, as real Slurm kept such a job off the free
  // node (docs/fidelity.md, scenario 43). R ends at 5003: H preempts L1 and L2 and starts then, runs
  // 100 s; B starts when H ends, at 5103 (L1 and L2 are eligible again only at 5003 + 121).
  const auto r = replay(tiers_site(4), trace_of({{0, "high", "normal", 1, 4, 5000, 6000},
                                                 {0, "low", "normal", 1, 4, 8000, 9000},
                                                 {0, "low", "normal", 1, 4, 8000, 9000},
                                                 {100, "high", "normal", 4, 16, 100, 200},
                                                 {100, "low", "normal", 1, 4, 100, 7000}}));
  const auto& jobs = r.state->jobs;
  CHECK(jobs[3].start - kT0 == 5003);
  CHECK(jobs[4].start - kT0 == 5103);
  CHECK(r.metrics.preemptions == 2);
}

TEST_CASE("a requeued job does not start before it is eligible again, however long the queue") {
  // Issue 22, finding 2 (seen against real Slurm, and a SIGSEGV when the early start was followed by
  // the job's Eligible event). n1 as above; n2 (4 CPUs) in partition "side" holds S (t=0, 5000 s) and
  // eight more side jobs wait behind it all along, so the queue keeps 8 live records. partition_prio
  // REQUEUE: J1 (low, t=0) starts at 3; J2 (high, t=100, 30 s) requeues J1 at 100 (eligible 221) and
  // runs 100..130. J1's record from its first stay must not start it when J2 ends at 130: real Slurm
  // holds it (BeginTime) until 221, and it starts then.
  auto site = preempt_site();
  site.scheduler.preempt_type = "preempt/partition_prio";
  site.scheduler.preempt_mode = PreemptMode::kRequeue;
  Node n2 = site.nodes[0];
  n2.name = "n2";
  site.nodes.push_back(n2);
  Partition side = partition("side", 1);
  side.nodes = {"n2"};
  site.partitions.push_back(side);
  std::vector<Spec> specs = {{0, "low", "normal", 1, 4, 1000},
                             {100, "high", "normal", 1, 4, 30},
                             {0, "side", "normal", 1, 4, 5000, 6000}};
  for (int i = 0; i < 8; ++i) specs.push_back({1, "side", "normal", 1, 4, 100});
  const auto r = replay(site, trace_of(specs));
  const auto& j1 = r.state->jobs[0];
  REQUIRE(j1.past_runs.size() == 1);
  CHECK(j1.past_runs[0].end - kT0 == 100);
  CHECK(r.state->jobs[1].start - kT0 == 100);
  CHECK(j1.start - kT0 == 221);
  CHECK(j1.end - kT0 == 1221);
}

TEST_CASE("SUSPEND: the CPUs the preemptor leaves stay with the suspended job, not with others") {
  // Issue 22, finding 4 (real Slurm 22.05: another job started 25 s early and the victim resumed late).
  // partition_prio SUSPEND,GANG on one 4-CPU node. J1 (low, 4 CPUs, 1000 s) starts at 3. J2 (high,
  // 2 CPUs, 100 s) at t=100 suspends J1 and starts at once. J3 (low, 2 CPUs, 50 s) at t=110: J1 keeps
  // its cores under gang scheduling (only its preemptor shares them), so J3 waits. J2 ends at 200, J1
  // resumes then with 903 s left and ends at 1103; J3 starts in that end's pass, at 1103.
  auto site = preempt_site();
  site.scheduler.preempt_type = "preempt/partition_prio";
  site.scheduler.preempt_mode = PreemptMode::kSuspendGang;
  const auto r = replay(site, trace_of({{0, "low", "normal", 1, 4, 1000},
                                        {100, "high", "normal", 1, 2, 100},
                                        {110, "low", "normal", 1, 2, 50}}));
  const auto& jobs = r.state->jobs;
  CHECK(jobs[1].start - kT0 == 100);
  CHECK(jobs[0].suspensions == 1);
  CHECK(jobs[0].end - kT0 == 1103);
  CHECK(jobs[2].start - kT0 == 1103);
}
