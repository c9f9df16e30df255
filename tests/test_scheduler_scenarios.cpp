// Golden scenarios for the exact simulator on hand-made clusters. Expected times are computed by hand
// from Slurm's rules (spec §1, §4, §5, §9) and written out next to each check.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "experiments/cli/site_options.hpp"
#include "experiments/replay/replay.hpp"
#include "experiments/sweep/sweep_spec.hpp"
#include "replay_support.hpp"
#include "scenario_support.hpp"
#include "test_support.hpp"
#include "traces/default_site.hpp"
#include "traces/hostlist.hpp"
#include "traces/readers.hpp"
#include "traces/slurm_conf.hpp"
#include "traces/synthetic.hpp"
#include "traces/time_format.hpp"
#include "traces/trace_io.hpp"

using namespace slurmtwin;

namespace {

using testing::JobSpec;
using testing::kT0;
using testing::make_trace;
using testing::small_site;

experiments::ReplayResult replay(const Site& site, const Trace& trace) {
  return testing::checked_replay(site, trace);
}

Seconds start_of(const experiments::ReplayResult& r, std::size_t i) {
  return r.state->jobs[i].start - kT0;
}

}  // namespace

TEST_CASE("a resource-blocked job blocks its partition: no lower-priority job starts around it") {
  // 2 nodes x 4 CPUs. J1 takes node n1 (4 CPUs); J2 needs both nodes; J3 needs 1 CPU.
  // t=3 (first limited pass, batch_sched_delay 3 after the submits): J1 starts; J2 cannot, so partition
  // p is blocked for the rest of the pass and J3 waits although n2 is idle.
  // t=103 J1 ends -> end-triggered pass: J2 starts on both nodes, J3 blocked by resources.
  // t=153 J2 ends -> J3 starts.
  const auto r = replay(small_site(2, 4), make_trace({{0, 1, 4, 100}, {0, 2, 8, 50}, {0, 1, 1, 10}}));
  CHECK(start_of(r, 0) == 3);
  CHECK(start_of(r, 1) == 103);
  CHECK(start_of(r, 2) == 153);
  CHECK(r.state->jobs[0].started_by == SchedulerPass::kMain);
  CHECK(r.state->jobs[0].alloc.size() == 1);
  CHECK(r.state->jobs[0].alloc[0].node == 0);  // equal weights: the first node in slurm.conf order
  CHECK(r.state->jobs[1].alloc.size() == 2);
  // J3 saw both reasons while it waited.
  CHECK(r.state->jobs[2].has_seen(sim::PendingReason::kPriority));
  CHECK(r.state->jobs[2].has_seen(sim::PendingReason::kResources));
}

TEST_CASE("a limited pass examines default_queue_depth + 1 records, the rest wait for the full pass") {
  // One node with 4 CPUs, four 1-CPU jobs submitted at t=0, default_queue_depth=1.
  // Slurm stops a limited pass when `depth++ > default_queue_depth`: records 0 and 1 are examined
  // at t=3, so J1 and J2 start then; J3 and J4 start in the full pass at t=60 (sched_interval).
  // sched/builtin: no backfill cycle (at t=30 it would start J3 and J4, which fit now).
  auto site = small_site(1, 4);
  site.scheduler.scheduler_type = "sched/builtin";
  site.scheduler.params.default_queue_depth = 1;
  const auto r =
      replay(site, make_trace({{0, 1, 1, 1000}, {0, 1, 1, 1000}, {0, 1, 1, 1000}, {0, 1, 1, 1000}}));
  CHECK(start_of(r, 0) == 3);
  CHECK(start_of(r, 1) == 3);
  CHECK(start_of(r, 2) == 60);
  CHECK(start_of(r, 3) == 60);
}

TEST_CASE("a job over its time limit ends as TIMEOUT on the next 30 s limit check") {
  // Starts at t=3 with a 60 s limit and 100 s of work: limit reached at t=63; limit checks run every
  // 30 s from the controller start (t=0, 30, 60, 90...), so it ends at t=90.
  const auto r = replay(small_site(1, 4), make_trace({{0, 1, 1, 100, 60}}));
  const auto& j = r.state->jobs[0];
  CHECK(j.start - kT0 == 3);
  CHECK(j.end - kT0 == 90);
  CHECK(j.end_state == JobState::kTimeout);
}

TEST_CASE("OverTimeLimit: the partition's replaces the cluster's, UNLIMITED never ends a job for its limit") {
  // slurmctld reads part_ptr->over_time_limit when the partition sets one, else the cluster's
  // (job_time_limit). A job starts at t=3 with a 60 s limit and 1000 s of work; limit checks every 30 s.
  auto site = small_site(1, 4);
  const auto trace = make_trace({{0, 1, 1, 1000, 60}});
  const auto end_of = [&] {
    const auto r = replay(site, trace);
    return std::pair{r.state->jobs[0].end - kT0, r.state->jobs[0].end_state};
  };
  site.scheduler.over_time_limit = 300;  // 3 + 60 + 300 = 363: the check at 390
  CHECK(end_of() == std::pair{Seconds{390}, JobState::kTimeout});
  site.partitions[0].over_time_limit = 120;  // the partition's alone: 3 + 60 + 120 = 183, check at 210
  CHECK(end_of() == std::pair{Seconds{210}, JobState::kTimeout});
  site.partitions[0].over_time_limit = kUnlimited;  // never ended for its limit: its work is done at 1003
  CHECK(end_of() == std::pair{Seconds{1003}, JobState::kCompleted});
}

TEST_CASE("cons_tres rounds CPUs up to whole cores and a job with no memory request takes the whole node") {
  SUBCASE("whole cores: 1 task on a 2-thread core gets 2 CPUs") {
    const auto r = replay(small_site(1, 8, 2), make_trace({{0, 1, 1, 10, 60, 100}}));
    CHECK(r.state->jobs[0].alloc_cpus == 2);
  }
  SUBCASE("CR_CPU allocates single CPUs") {
    auto site = small_site(1, 8, 2);
    site.scheduler.select_type_parameters = {"CR_CPU_Memory"};
    const auto r = replay(site, make_trace({{0, 1, 1, 10, 60, 100}}));
    CHECK(r.state->jobs[0].alloc_cpus == 1);
  }
  SUBCASE("no memory request and no DefMemPerCPU: the node's memory is all taken, so jobs cannot share it") {
    auto site = small_site(1, 8);
    site.partitions[0].def_mem_per_cpu_mb = 0;
    // J1 (1 CPU, 100 s) takes all 1000 MB; J2 (1 CPU) must wait for it: starts at t=103.
    const auto r = replay(site, make_trace({{0, 1, 1, 100}, {0, 1, 1, 10}}));
    CHECK(start_of(r, 0) == 3);
    CHECK(r.state->jobs[0].alloc[0].mem_mb == 1000);
    CHECK(start_of(r, 1) == 103);
  }
  SUBCASE("DefMemPerCPU=100: both 1-CPU jobs fit side by side") {
    const auto r = replay(small_site(1, 8), make_trace({{0, 1, 1, 100}, {0, 1, 1, 10}}));
    CHECK(start_of(r, 1) == 3);
    CHECK(r.state->jobs[1].alloc[0].mem_mb == 100);
  }
}

TEST_CASE("slurm.conf's global DefMemPerCPU sets the memory of jobs without --mem") {
  // One node, 8 CPUs, RealMemory=1000; DefMemPerCPU=150 in slurm.conf's global part, none on the
  // partition. Eight 1-CPU jobs without --mem, 100 s each, submitted at 0: 150 MB each, so 6 fit
  // (900 MB; a 7th would need 1050) and start at t=3 (batch_sched_delay); the other 2 start when the
  // first ones end at 103. Before the global default was applied each took the node's whole memory
  // and they ran one after another.
  std::vector<std::string> w;
  auto site = import_slurm_conf_text(
      "DefMemPerCPU=150\nNodeName=n1 CPUs=8 RealMemory=1000\nPartitionName=p Nodes=n1 Default=YES\n",
      "g.conf", w);
  const auto accounts = small_site(1, 8);
  site.qos = accounts.qos;
  site.accounts = accounts.accounts;
  site.users = accounts.users;
  site.associations = accounts.associations;
  std::vector<JobSpec> jobs(8, JobSpec{0, 1, 1, 100});
  const auto r = replay(site, make_trace(jobs));
  for (std::size_t i = 0; i < 8; ++i) CHECK(start_of(r, i) == (i < 6 ? 3 : 103));
  CHECK(r.state->jobs[0].alloc[0].mem_mb == 150);
}

TEST_CASE("DefMemPerGPU and DefCpuPerGPU set the memory and CPUs of a GPU job without --mem or -c") {
  // select/cons_tres _set_gpu_defaults (22.05). One node of 8 CPUs, 16000 MB and 4 GPUs; the partition
  // has DefMemPerCPU=1000, DefMemPerGPU=6000 and DefCpuPerGPU=2. Four jobs at 0 (100 s each, equal
  // priority, so in id order); the main pass at 3:
  // J1 -n1 --gres=gpu:1: 2 CPUs (2 per GPU) and 6000 MB (per GPU, not 1000 per CPU): starts.
  // J2 -n1 --gres=gpu:2 --mem=500: 4 CPUs and its own 500 MB, but the GRES filter asks 2 x 6000 MB free
  //    of a node even so, and 10000 are: it waits for J1's end at 103 (backfill reserves the node).
  // J3 -n3 --gres=gpu:1: 3 CPUs (more than 2 per GPU), 6000 MB; J4 -n1, no GPU: 1000 MB (DefMemPerCPU).
  //    Both fit now but would cross J2's reservation (limit 3600 s): they start after it at 103, on
  //    4 + 3 + 1 = 8 CPUs.
  auto site = small_site(1, 8);
  site.nodes[0].real_memory_mb = 16000;
  site.nodes[0].gres.push_back({"gpu", "", 4});
  auto& part = site.partitions[0];
  part.def_mem_per_cpu_mb = 1000;
  part.def_mem_per_gpu_mb = 6000;
  part.def_cpu_per_gpu = 2;
  auto trace = make_trace({{0, 1, 1, 100}, {0, 1, 1, 100}, {0, 1, 3, 100}, {0, 1, 1, 100}});
  trace.jobs[0].gres.push_back({"gpu", "", 1, true});
  trace.jobs[1].gres.push_back({"gpu", "", 2, true});
  trace.jobs[1].mem_mb = 500;
  trace.jobs[2].gres.push_back({"gpu", "", 1, true});
  const auto r = replay(site, trace);
  const auto& jobs = r.state->jobs;
  CHECK(start_of(r, 0) == 3);
  CHECK(jobs[0].alloc_cpus == 2);
  CHECK(jobs[0].alloc.at(0).mem_mb == 6000);
  CHECK(start_of(r, 1) == 103);
  CHECK(jobs[1].alloc_cpus == 4);
  CHECK(jobs[1].alloc.at(0).mem_mb == 500);
  CHECK(start_of(r, 2) == 103);
  CHECK(jobs[2].alloc_cpus == 3);
  CHECK(jobs[2].alloc.at(0).mem_mb == 6000);
  CHECK(start_of(r, 3) == 103);
  CHECK(jobs[3].alloc.at(0).mem_mb == 1000);
}

TEST_CASE(
    "a job's GPUs are TRES: PriorityWeightTRES orders GPU jobs first and TRESBillingWeights bills them") {
  // priority_multifactor.c _get_tres_prio_weighted over the job's tres_req_cnt, where
  // gres_ctld_set_job_tres_cnt puts "gres/gpu" = GPUs per node x nodes; calc_job_billable_tres weighs
  // the same counts (22.05; seen on real Slurm in scenario 36). One node, 8 CPUs, 4 GPUs;
  // PriorityWeightTRES=GRES/gpu=2000 (no other weight): J4 (3 GPUs) 3/4 x 2000 = 1500, J3 (1 GPU) 500,
  // J2 (no GPU) 0. The blocker runs 1..61; then J4 at 61, J3 at 101, J2 at 141 (40 s each); by id,
  // as without the GPU term, J2 would start first. Billing CPU=1,GRES/gpu=4: J4 6 + 3 x 4 = 18.
  auto site = testing::every_second_site(1, 8);
  site.nodes[0].gres.push_back({"gpu", "", 4});
  site.scheduler.weight_tres = parse_tres_weights("GRES/gpu=2000");
  site.partitions[0].tres_billing_weights = parse_tres_weights("CPU=1.0,GRES/gpu=4.0");
  auto trace = make_trace({{0, 1, 8, 60}, {1, 1, 6, 40}, {2, 1, 6, 40}, {3, 1, 6, 40}});
  trace.jobs[2].gres.push_back({"gpu", "", 1, true});
  trace.jobs[3].gres.push_back({"gpu", "", 3, true});
  const auto r = replay(site, trace);
  CHECK(start_of(r, 0) == 1);
  CHECK(start_of(r, 3) == 61);
  CHECK(start_of(r, 2) == 101);
  CHECK(start_of(r, 1) == 141);
  CHECK(r.state->jobs[3].billing == 18.0);
  CHECK(r.state->jobs[2].billing == 10.0);
  CHECK(r.state->jobs[1].billing == 6.0);
}

TEST_CASE("MaxMemPerCPU gives a job more CPUs per task, and over MaxMemPerNode a job is held for ever") {
  // job_mgr.c _valid_pn_min_mem (22.05), as job_limits_check applies it before scheduling a job.
  SUBCASE("per-CPU memory over MaxMemPerCPU: ceil(mem / cap) times the CPUs per task") {
    // MaxMemPerCPU=100, -n2 --mem-per-cpu=250: ratio ceil(250/100) = 3, so 3 CPUs per task (6 in all)
    // and ceil(250/3) = 84 MB per CPU (504 MB on the node).
    auto site = small_site(1, 8);
    site.partitions[0].max_mem_per_cpu_mb = 100;
    auto trace = make_trace({{0, 1, 2, 100}});
    trace.jobs[0].mem_mb = 250;
    trace.jobs[0].mem_per_cpu = true;
    const auto r = replay(site, trace);
    CHECK(r.state->jobs[0].request.cpus_per_task == 3);
    CHECK(r.state->jobs[0].alloc_cpus == 6);
    CHECK(r.state->jobs[0].alloc.at(0).mem_mb == 504);
    // Within the cap: unchanged.
    trace.jobs[0].mem_mb = 100;
    CHECK(replay(site, trace).state->jobs[0].alloc_cpus == 2);
  }
  SUBCASE("memory per node over MaxMemPerNode: pending for ever with reason MaxMemPerLimit") {
    // Nodes of 8 CPUs and 1000 MB, MaxMemPerNode=500. J1 --mem=600: over. J2 -N1 -n3
    // --mem-per-cpu=200: 3 tasks on its one node, 600 MB: over. J3 the same without -N: slurmctld
    // counts one task per node, 200 MB: under, runs at t=3. J4 --mem=0 (the whole node, 1000 MB): over.
    auto site = small_site(1, 8);
    site.partitions[0].max_mem_per_node_mb = 500;
    auto trace = make_trace({{0, 1, 1, 100}, {0, 1, 3, 100}, {0, 0, 3, 100}, {0, 1, 1, 100}});
    trace.jobs[0].mem_mb = 600;
    for (auto i : {1, 2}) {
      trace.jobs[i].mem_mb = 200;
      trace.jobs[i].mem_per_cpu = true;
    }
    trace.jobs[3].mem_mb = 0;
    const auto r = replay(site, trace);
    for (auto i : {0, 1, 3}) {
      CAPTURE(i);
      CHECK(r.state->jobs[i].state == sim::SimJobState::kPending);
      CHECK(r.state->jobs[i].reason == sim::PendingReason::kPnMemLimit);
    }
    CHECK(std::string(to_string(sim::PendingReason::kPnMemLimit)) == "MaxMemPerLimit");
    CHECK(start_of(r, 2) == 3);
  }
}

TEST_CASE("QOS MaxJobsPerUser keeps a job pending without blocking others") {
  // QOS normal allows 1 running job per user. alice's J1 starts at t=3; alice's J2 waits
  // (QOSMaxJobsPerUserLimit) and does not block bob's J3, which starts at t=3 too; J2 starts when J1
  // ends at t=103 (end-triggered pass).
  auto site = small_site(1, 8);
  site.qos[0].limits.max_jobs_per_user = 1;
  JobSpec j1{0, 1, 1, 100}, j2{0, 1, 1, 10}, j3{0, 1, 1, 10};
  j3.user = "bob";
  const auto r = replay(site, make_trace({j1, j2, j3}));
  CHECK(start_of(r, 0) == 3);
  CHECK(start_of(r, 2) == 3);
  CHECK(start_of(r, 1) == 103);
  CHECK(r.state->jobs[1].has_seen(sim::PendingReason::kQosMaxJobsPerUser));
}

TEST_CASE("jobs Slurm would refuse at submit are rejected with a reason and counted") {
  auto site = small_site(1, 4);
  site.scheduler.enforce_part_limits = "YES";
  site.partitions[0].max_time = 3600;
  auto trace = make_trace({{0, 1, 1, 10, 7200}, {0, 1, 1, 10}});
  trace.jobs[1].partition = trace.partitions.intern("nosuch");
  const auto r = replay(site, trace);
  CHECK(r.metrics.rejected == 2);
  CHECK(r.metrics.rejected_by_reason.at("time limit exceeds partition MaxTime") == 1);
  CHECK(r.metrics.rejected_by_reason.at("unknown partition") == 1);
  CHECK(r.metrics.input_jobs == r.metrics.rejected + r.metrics.started + r.metrics.never_started);
}

TEST_CASE("a job that can never fit stays pending and the replay still ends") {
  // 2 nodes but the job asks for 3: PartitionNodeLimit forever; the other job runs normally.
  const auto r = replay(small_site(2, 4), make_trace({{0, 3, 3, 10}, {0, 1, 1, 10}}));
  CHECK(r.metrics.never_started == 1);
  CHECK(r.metrics.started == 1);
  CHECK(r.state->jobs[0].reason == sim::PendingReason::kPartitionNodeLimit);
}

namespace {

// One node with one CPU; fair share is the only priority factor (weight 1000); priorities are
// recalculated every 60 s from controller start (t=0, 60, 120, ...).
Site fairshare_site() {
  auto site = small_site(1, 1);
  site.scheduler.weight_fairshare = 1000;
  site.scheduler.calc_period = 60;
  return site;
}

// alice's J1 runs from t=3 for `j1_runtime` s; at t=30 alice submits J3... (job 2) and bob job 3.
Trace fairshare_trace(Seconds j1_runtime) {
  JobSpec j1{0, 1, 1, j1_runtime}, j2{30, 1, 1, 100}, j3{30, 1, 1, 100};
  j3.user = "bob";
  return make_trace({j1, j2, j3});
}

}  // namespace

TEST_CASE("priorities are step functions: a pass uses the value stored at the last recalculation") {
  // Tick t=0: nobody has usage, all tied -> both users fs = 2/2 = 1.0. At submit (t=30) jobs 2 (alice)
  // and 3 (bob) both get priority 1000 * 1.0 = 1000.
  SUBCASE("J1 ends at t=53, before the t=60 tick: the tie at 1000 is broken by job id, alice first") {
    const auto r = replay(fairshare_site(), fairshare_trace(50));
    CHECK(r.state->jobs[1].priority_at_start == 1000);
    CHECK(start_of(r, 1) == 53);
    CHECK(start_of(r, 2) == 153);
  }
  SUBCASE("J1 ends at t=103, after the t=60 tick: alice's usage now ranks bob first") {
    // Tick t=60 charges J1's slice [3, 60] to alice; Fair Tree under account acct: bob U=0 -> LF=inf,
    // rank 2/2 -> fs 1.0; alice LF = 0.5/1 -> rank 1/2 -> fs 0.5. Priorities: alice 500, bob 1000.
    const auto r = replay(fairshare_site(), fairshare_trace(100));
    CHECK(start_of(r, 2) == 103);
    CHECK(r.state->jobs[2].priority_at_start == 1000);
    CHECK(start_of(r, 1) == 203);
    CHECK(r.state->jobs[1].priority_at_start == 500);
  }
}

TEST_CASE("the snapshot shows sprio- and sshare-like factors at the asked instant") {
  // Same as above (J1 ends at t=103); at t=90 jobs 2 and 3 pend with the t=60 priorities.
  experiments::ReplayOptions o;
  o.snapshot_at = kT0 + 90;
  const auto r = testing::checked_replay(fairshare_site(), fairshare_trace(100), o);
  const auto& s = r.snapshot;
  // JOBID PARTITION USER PRIORITY SITE AGE ASSOC FAIRSHARE JOBSIZE PARTITION QOS NICE TRES
  CHECK(s.find("\n2 p alice 500 0 0 0 500 0 0 0 0 -\n") != std::string::npos);
  CHECK(s.find("\n3 p bob 1000 0 0 0 1000 0 0 0 0 -\n") != std::string::npos);
  // ACCOUNT USER RAW_SHARES NORM_SHARES RAW_USAGE EFFECTV_USAGE LEVEL_FS FAIRSHARE: alice's usage is
  // the slice [3, 60] = 57 s x df^57 x 1 CPU, df = 1 - 0.693/604800 -> 56.996 -> "57".
  CHECK(s.find("\nacct alice 1 0.500000 57 1.000000 0.5 0.500000\n") != std::string::npos);
  CHECK(s.find("\nacct bob 1 0.500000 0 0.000000 inf 1.000000\n") != std::string::npos);
}

TEST_CASE("the ub_medium week replays to the end with invariants checked at every event") {
  auto week = testing::ub_medium_week();
  if (!week) return;
  auto& [site, trace] = *week;
  experiments::ReplayOptions ro;
  ro.check_invariants = true;
  ro.add_missing_associations = false;  // every user of the trace is in sacctmgr.script
  const auto r = slurmtwin::testing::checked_replay(std::move(site), trace, ro);
  CHECK(r.metrics.input_jobs == 19579);
  CHECK(r.metrics.rejected == 0);
  CHECK(r.metrics.started == 19579);
  CHECK(r.metrics.end_states.at("COMPLETED") +
            r.metrics.end_states.count("TIMEOUT") * r.metrics.end_states.at("TIMEOUT") ==
        19579);
  CHECK(r.metrics.utilisation > 0.0);
  CHECK(r.metrics.utilisation <= 1.0);
}

TEST_CASE("QOS MaxSubmitJobsPerUser refuses submissions over the limit, counting pending and running jobs") {
  // Limit 2 per user. t=0: alice's jobs 1 and 2 are accepted, job 3 is refused; job 4 (bob) is
  // accepted. Job 1 ends at 3+100=103; alice's job 5 at t=200 is accepted again (one job of hers left)
  // and starts at once: the last pass (full, t=180) was at least batch_sched_delay ago.
  auto site = small_site(1, 8);
  site.qos[0].limits.max_submit_jobs_per_user = 2;
  JobSpec bob{0, 1, 1, 10};
  bob.user = "bob";
  const auto r =
      replay(site, make_trace({{0, 1, 1, 100}, {0, 1, 1, 1000}, {0, 1, 1, 10}, bob, {200, 1, 1, 10}}));
  CHECK(r.state->jobs[2].state == sim::SimJobState::kRejected);
  CHECK(r.state->jobs[2].reject_reason == "QOSMaxSubmitJobPerUserLimit");
  CHECK(r.metrics.rejected == 1);
  CHECK(start_of(r, 3) == 3);
  CHECK(start_of(r, 4) == 200);
}

TEST_CASE("a multi-partition job gets one queue record per partition and starts where it fits") {
  // Partitions p (node n1) and q (node n2), 4 CPUs each. J1 (p, 4 CPUs) starts on n1 at t=3; J2 (p)
  // cannot and blocks p for the pass; J3 asks "p,q": its p record is skipped (p is blocked) and its q
  // record starts it on n2 at t=3. J2 starts when J1 ends (t=103).
  auto site = small_site(2, 4);
  site.partitions[0].nodes = {"n1"};
  Partition q = site.partitions[0];
  q.name = std::string(1, 'q');
  q.nodes = {"n2"};
  q.is_default = false;
  site.partitions.push_back(q);
  auto trace = make_trace({{0, 1, 4, 100}, {0, 1, 4, 100}, {0, 1, 4, 100}});
  trace.jobs[2].partition = trace.partitions.intern("p,q");
  const auto r = replay(site, trace);
  CHECK(start_of(r, 0) == 3);
  CHECK(start_of(r, 2) == 3);
  CHECK(r.state->jobs[2].run_partition == 1);
  CHECK(r.state->jobs[2].alloc.at(0).node == 1);
  CHECK(start_of(r, 1) == 103);
  CHECK(r.state->jobs[1].run_partition == 0);
}

TEST_CASE("a multi-partition job's records keep each partition's priority across recalculations") {
  // Partitions p (n1, PriorityJobFactor 100) and q (n2, factor 1), 4 CPUs each; PriorityWeightPartition
  // 10000, PriorityWeightQOS 1000. J1 (q) and J2 (p) fill both nodes at t=3; J1 ends at 1003, J2 at 5003.
  // J3 asks "p,q" (t=10): 10000 in p, 100 in q. J4 (q, QOS boost, t=20): 100 + 1000 = 1100 in q, so it
  // is ahead of J3's q record and takes n2 at 1003, also after the recalculations at every
  // PriorityCalcPeriod (300 s) before then; J3 follows on n2 when J4 ends at 1103.
  auto site = small_site(2, 4);
  site.partitions[0].nodes = {"n1"};
  site.partitions[0].priority_job_factor = 100;
  Partition q = site.partitions[0];
  q.name = std::string(1, 'q');
  q.nodes = {"n2"};
  q.is_default = false;
  q.priority_job_factor = 1;
  site.partitions.push_back(q);
  Qos boost;
  boost.name = "boost";
  boost.priority = 1;
  site.qos.push_back(boost);
  site.scheduler.weight_partition = 10000;
  site.scheduler.weight_qos = 1000;
  auto trace = make_trace({{0, 1, 4, 1000}, {0, 1, 4, 5000}, {10, 1, 4, 100}, {20, 1, 4, 100}});
  trace.jobs[0].partition = trace.partitions.intern("q");
  trace.jobs[2].partition = trace.partitions.intern("p,q");
  trace.jobs[3].partition = trace.partitions.intern("q");
  trace.jobs[3].qos = trace.qos.intern("boost");
  const auto r = replay(site, trace);
  CHECK(start_of(r, 0) == 3);
  CHECK(start_of(r, 1) == 3);
  CHECK(start_of(r, 3) == 1003);
  CHECK(start_of(r, 2) == 1103);
  CHECK(r.state->jobs[2].run_partition == 1);
}

TEST_CASE("a request no node could ever hold is refused at submit, as slurmctld does") {
  // Issue 22, finding 5. Real Slurm refuses these at sbatch ("Requested node configuration is not
  // available"); they used to pend forever. 2 nodes x 4 CPUs, 1000 MB each.
  auto trace = make_trace({{0, 1, 8, 10},              // 8 CPUs on one node: nodes have 4
                           {0, 2, 8, 10},              // 8 CPUs on two nodes: fits
                           {0, 1, 1, 10, 3600, 2000},  // 2000 MB on a 1000 MB node
                           {0, 1, 1, 10}});
  trace.jobs[3].constraints = trace.strings.intern("bigmem");  // a feature no node has
  const auto r = replay(small_site(2, 4), trace);
  CHECK(r.state->jobs[0].state == sim::SimJobState::kRejected);
  CHECK(r.state->jobs[0].reject_reason == "requested node configuration is not available");
  CHECK(r.state->jobs[1].start - kT0 == 3);
  CHECK(r.state->jobs[2].state == sim::SimJobState::kRejected);
  CHECK(r.state->jobs[3].state == sim::SimJobState::kRejected);
  CHECK(r.metrics.rejected_by_reason.at("requested node configuration is not available") == 3);
}

TEST_CASE("a job that runs to its time limit (events -sim-walltime -1) ends as TIMEOUT") {
  // Issue 22, finding 9: runtime kUnlimited overflowed start + runtime and aborted the replay
  // (vector::_M_default_append). Limit 600 s: started at 3, the 30 s limit check after 603 is at
  // 630 (checks at 30 k from controller start, the first submit).
  auto trace = make_trace({{0, 1, 1, 10, 600}});
  trace.jobs[0].runtime = kUnlimited;
  const auto r = replay(small_site(1, 4), trace);
  CHECK(r.state->jobs[0].end - kT0 == 630);
  CHECK(r.state->jobs[0].end_state == JobState::kTimeout);
  // With no limit at all it would run forever: refused with a reason rather than simulated for ever.
  auto forever = make_trace({{0, 1, 1, 10}});
  forever.jobs[0].runtime = kUnlimited;
  forever.jobs[0].time_limit = kUnlimited;
  const auto f = replay(small_site(1, 4), forever);
  CHECK(f.state->jobs[0].state == sim::SimJobState::kRejected);
}

TEST_CASE("more CPUs than the partition has pends (PartitionConfig) and blocks nothing, as on real Slurm") {
  // Recorded on real Slurm 22.05 (tests/oracle 16_impossible, j010): -n40 with no -N on 4 x 8 CPUs is
  // accepted and pends with PartitionConfig for ever. Here -n16 on 2 x 4 CPUs; the 1-CPU job behind it
  // starts at 3 (a limit-held job blocks no partition).
  const auto r = replay(small_site(2, 4), make_trace({{0, 0, 16, 10}, {0, 1, 1, 10}}));
  CHECK(r.state->jobs[0].state == sim::SimJobState::kPending);
  CHECK(r.state->jobs[0].reason == sim::PendingReason::kPartitionConfig);
  CHECK(r.state->jobs[1].start - kT0 == 3);
  // EnforcePartLimits=ANY: refused at submit instead (job_mgr.c ESLURM_TOO_MANY_REQUESTED_CPUS), and
  // so is -N3 on the 2-node partition.
  auto site = small_site(2, 4);
  site.scheduler.enforce_part_limits = "ANY";
  const auto enforced = replay(site, make_trace({{0, 0, 16, 10}, {0, 3, 3, 10}, {0, 1, 1, 10}}));
  CHECK(enforced.metrics.rejected_by_reason.at(
            "more nodes or CPUs than the partition has (EnforcePartLimits)") == 2);
  CHECK(enforced.state->jobs[2].start - kT0 == 3);
}

TEST_CASE("a QOS with DenyOnLimit refuses a job over its MaxWall at submit, and without it the job pends") {
  // Recorded on real Slurm 22.05 (tests/oracle 14_qos_user_limits, j011): "Job violates accounting/QOS
  // policy" after QOSMaxWallDurationPerJobLimit; without the flag the job pends with that reason.
  auto site = small_site(1, 4);
  site.qos[0].limits.max_wall = 600;
  const auto trace = make_trace({{0, 1, 1, 10, 3600}});
  const auto pends = replay(site, trace);
  CHECK(pends.state->jobs[0].reason == sim::PendingReason::kQosMaxWall);
  site.qos[0].flags.insert("DenyOnLimit");
  const auto refused = replay(site, trace);
  CHECK(refused.state->jobs[0].state == sim::SimJobState::kRejected);
  CHECK(refused.state->jobs[0].reject_reason == "QOSMaxWallDurationPerJobLimit");
}

namespace {

/// Replays `trace`, reads its jobs.sacct back strictly, replays that, and counts the jobs (not
/// requeued: sacct keeps a requeued job's last Submit) whose start or nodes differ.
std::pair<std::size_t, std::size_t> sacct_round_trip(const Site& site, const Trace& trace) {
  const auto first = testing::checked_replay(site, trace);
  Trace back;
  ReadReport report;
  ReadOptions opts;
  opts.strict = true;
  RejectSink sink(report, opts);
  read_sacct_parsable(experiments::jobs_sacct(first, trace), "jobs.sacct", back, sink);
  REQUIRE(report.balanced());
  const auto second = testing::checked_replay(site, back);
  std::map<std::uint64_t, const sim::SimJob*> by_id;
  for (const auto& j : second.state->jobs) by_id[j.id] = &j;
  std::size_t compared = 0, differ = 0;
  for (const auto& j : first.state->jobs) {
    if (!j.past_runs.empty()) continue;
    const auto it = by_id.find(j.id);
    REQUIRE(it != by_id.end());
    ++compared;
    const bool same =
        it->second->start == j.start && it->second->alloc.size() == j.alloc.size() &&
        std::equal(j.alloc.begin(), j.alloc.end(), it->second->alloc.begin(),
                   [](const auto& a, const auto& b) { return a.node == b.node && a.cpus == b.cpus; });
    if (!same && differ++ < 3)
      MESSAGE("job " << j.id << " starts at " << j.start << " then " << it->second->start);
  }
  return {compared, differ};
}

}  // namespace

TEST_CASE("replay(T) and replay(sacct(replay(T))) start every job at the same time on the same nodes") {
  // Issue 22, finding 9: the simulator's own jobs.sacct did not reproduce its schedule (688 of 1,383
  // jobs of the default 2-day trace started differently: NNodes=1 was written for jobs that asked
  // for no node count and spread over several nodes, and read back as -N1). --ntasks-per-node,
  // --cpus-per-task and --exclusive, which sacct has no column for, travel in SubmitLine.
  auto config = default_synthetic_config();
  config.days = 2;
  auto trace = generate_synthetic(config);
  // Every third job asks for no node count (-n only), so some spread over several nodes.
  std::size_t k = 0, spread = 0, per_node = 0;
  for (auto& j : trace.jobs) {
    if (j.gres.empty() && ++k % 3 == 0) j.nodes = 0;
    per_node += j.tasks_per_node > 0 || j.cpus_per_task > 1;
  }
  CHECK(per_node > 100);  // the GPU jobs set both
  const auto site = default_site();
  const auto [compared, differ] = sacct_round_trip(site, trace);
  const auto first = testing::checked_replay(site, trace);
  for (const auto& j : first.state->jobs)
    spread += trace.jobs[j.trace_index].nodes == 0 && j.alloc.size() > 1;
  CHECK(spread > 10);  // the case NNodes alone got wrong
  CHECK(compared > 1000);
  CHECK(differ == 0);
}

TEST_CASE("the ub_medium week's schedule survives its own jobs.sacct, exclusive jobs included") {
  // 19,579 jobs, 179 of them --exclusive: without SubmitLine they came back shared and 18,344 jobs
  // started differently.
  const auto week = testing::ub_medium_week();
  if (!week) return;
  const auto& [site, trace] = *week;
  CHECK(std::count_if(trace.jobs.begin(), trace.jobs.end(), [](const auto& j) { return j.exclusive; }) ==
        179);
  const auto [compared, differ] = sacct_round_trip(site, trace);
  CHECK(compared == 19579);
  CHECK(differ == 0);
}

TEST_CASE("scancel: a pending job leaves the queue at its cancel time, a running one ends then") {
  // One node, 4 CPUs. J1 (4 CPUs, 100 s) starts at t=3; J2 and J3 (4 CPUs each) wait behind it.
  // J2 is cancelled at t=50 while pending (a sacct record CANCELLED with no start): J3 starts at 103
  // when J1 ends, not at 153 after J2.
  auto trace = make_trace({{0, 1, 4, 100}, {0, 1, 4, 50}, {0, 1, 4, 10}});
  trace.jobs[1].cancel = kT0 + 50;
  const auto r = replay(small_site(1, 4), trace);
  const auto& j2 = r.state->jobs[1];
  CHECK(j2.state == sim::SimJobState::kDone);
  CHECK(j2.start == kUnsetTime);
  CHECK(j2.end - kT0 == 50);
  CHECK(j2.end_state == JobState::kCancelled);
  CHECK(start_of(r, 2) == 103);
  CHECK(r.metrics.cancelled_before_start == 1);
  CHECK(r.metrics.never_started == 0);
  CHECK(r.metrics.started == 2);

  // Had the twin started it before the user's scancel, scancel ends it then: J1 cancelled at t=50
  // (it started at 3) frees the node for J2 in the pass its end triggers.
  auto running = make_trace({{0, 1, 4, 100}, {0, 1, 4, 50}});
  running.jobs[0].cancel = kT0 + 50;
  const auto s = replay(small_site(1, 4), running);
  CHECK(s.state->jobs[0].end - kT0 == 50);
  CHECK(s.state->jobs[0].end_state == JobState::kCancelled);
  CHECK(start_of(s, 1) == 50);

  // The same two cancellations from a UB toolkit events trace, whose -cancel-in S runs scancel S s after
  // the submit (run_slurm.py): J1 (dt 0, -cancel-in 50) ends CANCELLED at 50 while running; J2 (dt 1,
  // -cancel-in 30.7: scancel at 31.7) leaves the queue at 31; J3 starts at 50.
  const std::string events =
      "-dt 0 -e submit_batch_job | -sim-walltime 100 --uid=alice -A acct -p p -N 1 -n 4 -cancel-in 50 j\n"
      "-dt 1 -e submit_batch_job | -sim-walltime 50 --uid=alice -A acct -p p -N 1 -n 4 -cancel-in 30.7 j\n"
      "-dt 2 -e submit_batch_job | -sim-walltime 10 --uid=alice -A acct -p p -N 1 -n 4 j\n";
  Trace ev;
  ev.origin = kT0;
  ReadReport report;
  RejectSink sink(report, ReadOptions{.strict = true});
  read_events(events, "scancel.events", ev, sink, {});
  REQUIRE(ev.jobs.size() == 3);
  const auto e = replay(small_site(1, 4), ev);
  CHECK(e.state->jobs[0].end - kT0 == 50);
  CHECK(e.state->jobs[0].end_state == JobState::kCancelled);
  CHECK(e.state->jobs[1].start == kUnsetTime);
  CHECK(e.state->jobs[1].end - kT0 == 31);
  CHECK(e.state->jobs[1].end_state == JobState::kCancelled);
  CHECK(start_of(e, 2) == 50);
}

TEST_CASE("a job in a partition where its user has that partition's own association is charged to it") {
  // Real Slurm 22.05 (tests/oracle 17_site_files): erin has associations genomics (any partition) and
  // genomics/prio; her jobs in prio are charged to the prio one (sshare), others to the general one.
  auto site = small_site(1, 4);
  Partition prio = site.partitions[0];
  prio.name = "prio";
  prio.is_default = false;
  site.partitions.push_back(prio);
  UserAssoc own = site.associations[0];
  own.partition = "prio";
  site.associations.push_back(own);
  auto trace = make_trace({{0, 1, 1, 10}, {0, 1, 1, 10}});
  trace.jobs[1].partition = trace.partitions.intern("prio");
  const auto r = replay(site, trace);
  CHECK(r.state->jobs[0].assoc == 0);
  CHECK(r.state->jobs[1].assoc == static_cast<std::int32_t>(site.associations.size() - 1));
}

TEST_CASE("the twin against history: start errors and wait deviation per partition, QOS and week") {
  // The blocked-partition schedule above (J1 at 3, J2 at 103, J3 at 153), against recorded starts
  // 3, 110 and 150: |errors| 0, 7, 3 -> mean 10/3 s; mean waits 259/3 simulated vs 263/3 recorded.
  auto trace = make_trace({{0, 1, 4, 100}, {0, 2, 8, 50}, {0, 1, 1, 10}});
  for (const auto& [i, at] : {std::pair{0, 3}, {1, 110}, {2, 150}}) {
    trace.jobs[static_cast<std::size_t>(i)].start = kT0 + at;
    trace.jobs[static_cast<std::size_t>(i)].end = kT0 + at + 10;
  }
  const auto r = replay(small_site(2, 4), trace);
  REQUIRE(start_of(r, 1) == 103);
  REQUIRE(r.metrics.has_fidelity);
  const auto& f = r.metrics.fidelity;
  CHECK(f.start_error_mean_abs == doctest::Approx(10.0 / 3));
  for (const auto* table : {&f.by_partition, &f.by_qos, &f.by_week}) {
    REQUIRE(table->size() == 1);
    const auto& g = table->begin()->second;
    CHECK(g.jobs == 3);
    CHECK(g.start_error_mean_abs == doctest::Approx(10.0 / 3));
    CHECK(g.simulated_mean_wait == doctest::Approx(259.0 / 3));
    CHECK(g.recorded_mean_wait == doctest::Approx(263.0 / 3));
    CHECK(g.mean_wait_deviation == doctest::Approx(-4.0 / 263));
  }
  CHECK(f.by_week.begin()->first == format_timestamp(r.state->origin).substr(0, 10));
  // ... as metrics a check can hold
  CHECK(experiments::metric_value(r.metrics, "start_error_mean") == doctest::Approx(10.0 / 3));
  CHECK(experiments::metric_value(r.metrics, "start_error_mean@partition:p") == doctest::Approx(10.0 / 3));
  CHECK(experiments::metric_value(r.metrics, "wait_mean_deviation@qos:normal") ==
        doctest::Approx(-4.0 / 263));
  CHECK_FALSE(experiments::metric_is_known("start_error_mean@account:acct"));
  const auto no_history = replay(small_site(2, 4), make_trace({{0, 1, 4, 100}}));
  CHECK_THROWS_WITH_AS(experiments::metric_value(no_history.metrics, "start_error_mean"),
                       "metric 'start_error_mean' compares with recorded starts: the trace has none (a sacct "
                       "dump has them)",
                       std::invalid_argument);
}

TEST_CASE("idle time costs no events: two jobs ten years apart replay in a handful of events") {
  // Issue 27, D1: the periodic timers fired through idle simulated time (two SWF jobs 158 years apart
  // took 100M events). While nothing is pending, running or held they park, and resume at the next
  // submit on their own phase, as if every skipped tick had run. Job 2 comes 1 s after a full-pass
  // tick (every 60 s from kT0; ten years is a multiple of 60 s).
  constexpr Seconds kDecade = 10 * 365 * 86400;
  auto site = small_site(1, 4);
  const auto far = make_trace({{0, 1, 4, 100, 600}, {kDecade + 1, 1, 4, 100, 600}});
  const auto near = make_trace({{0, 1, 4, 100, 600}, {301, 1, 4, 100, 600}});  // 5 min: no long stretch
  // The idle backfill thread runs a cycle at the first change: job 2 starts at its submit.
  const auto r = replay(site, far);
  CHECK(start_of(r, 0) == 3);
  CHECK(start_of(r, 1) == kDecade + 1);
  CHECK(r.state->jobs[1].started_by == SchedulerPass::kBackfill);
  CHECK(r.events < 200);
  CHECK(start_of(replay(site, near), 1) == 301);
  // Without backfill: the skipped tick at +0 counts as the full pass it would have been, so the main
  // pass job 2 requests waits batch_sched_delay (3 s) after it: +3 (and 303 after the tick at 300).
  site.scheduler.scheduler_type = "sched/builtin";
  const auto builtin = replay(site, far);
  CHECK(start_of(builtin, 1) == kDecade + 3);
  CHECK(builtin.events < 200);
  CHECK(start_of(replay(site, near), 1) == 303);
}

TEST_CASE("memory and GPU utilisation: what jobs hold over what the nodes have, by hand") {
  Site site = small_site(2, 4);                        // 2 x 4 CPUs, 1000 MB each
  site.nodes[0].gres = {{"gpu", "", 2}};               // n1 has the cluster's 2 GPUs
  auto trace = make_trace({{0, 1, 2, 100, 3600, 500},  // 2 CPUs, 500 MB, 1 GPU (below), 100 s
                           {0, 1, 4, 50, 3600, -1}});  // 4 CPUs, DefMemPerCPU 100: 400 MB, 50 s
  trace.jobs[0].gres = {{"gpu", "", 1, true}};
  const auto r = testing::checked_replay(site, trace);
  const auto& j = r.state->jobs;
  REQUIRE(j[0].start != kUnsetTime);
  REQUIRE(j[1].start == j[0].start);  // both fit at once (job 1 on n1 for its GPU, job 2 on n2)
  const auto& m = r.metrics;
  const double makespan = static_cast<double>(m.makespan);
  CHECK(makespan == static_cast<double>(j[0].end - kT0));
  CHECK(m.utilisation == doctest::Approx((2 * 100 + 4 * 50) / (8 * makespan)));
  CHECK(m.memory_utilisation == doctest::Approx((500 * 100 + 400 * 50) / (2000 * makespan)));
  CHECK(m.gpu_utilisation == doctest::Approx((1 * 100) / (2 * makespan)));
  // The series hold the same held shares per bucket: their sum times the bucket width is the total.
  double mem = 0, gpu = 0;
  for (double v : m.memory_utilisation_series) mem += v * static_cast<double>(m.series_bucket) * 2000;
  for (double v : m.gpu_utilisation_series) gpu += v * static_cast<double>(m.series_bucket) * 2;
  CHECK(mem == doctest::Approx(500 * 100 + 400 * 50));
  CHECK(gpu == doctest::Approx(100));
  // No GPUs on the nodes: no GPU utilisation (-1), not 0.
  CHECK(testing::checked_replay(small_site(2, 4), make_trace({{0, 1, 2, 100}})).metrics.gpu_utilisation ==
        -1);
}

TEST_CASE("pending reasons over time: the queue at each hour's start, by the reason the scheduler gave") {
  // One 4-CPU node: job 1 holds it for 3 h; jobs 2 and 3 (submitted at +10 s, +20 s) wait until then,
  // job 2 for Resources. At the start of hours 1 and 2 both are pending; at hour 3 job 2 runs.
  const auto r = testing::checked_replay(
      small_site(1, 4),
      make_trace({{0, 1, 4, 3 * 3600, 4 * 3600}, {10, 1, 4, 3600, 7200}, {20, 1, 4, 3600, 7200}}));
  const auto& m = r.metrics;
  REQUIRE(m.series_bucket == 3600);
  CAPTURE(sim::metrics_to_json(m));
  REQUIRE(m.pending_reasons_series.count("Resources"));
  const auto pending_at = [&](std::size_t bucket) {
    double n = 0;
    for (const auto& [reason, v] : m.pending_reasons_series) n += bucket < v.size() ? v[bucket] : 0;
    return n;
  };
  // Buckets start at the replay's origin; job 1 ends at 3 h after its start.
  const auto hour = [&](Seconds t) { return static_cast<std::size_t>((t - r.state->origin) / 3600) + 1; };
  const auto first_full = hour(kT0 + 20);  // the first bucket that starts with both waiting
  CHECK(pending_at(first_full) == 2);
  CHECK(m.pending_reasons_series.at("Resources")[first_full] >= 1);
  CHECK(pending_at(first_full + 1) == 2);
  CHECK(pending_at(hour(r.state->jobs[1].start)) == 1);  // job 2 runs, job 3 still waits
  // "None" (as squeue shows a job no pass has looked at yet) only in the first sample: job 1 at submit.
  REQUIRE(m.pending_reasons_series.count("None"));
  const auto& none = m.pending_reasons_series.at("None");
  CHECK(std::accumulate(none.begin(), none.end(), 0.0) == none.front());
}
