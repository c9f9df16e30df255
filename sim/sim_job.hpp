#pragma once
// A job as the simulator sees it: the trace request resolved against the site (partition, QOS and
// association indices, CPUs, memory and GRES per node), plus its run-time state.
#include <bitset>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "sim/event_queue.hpp"
#include "traces/job_record.hpp"
#include "traces/site.hpp"

namespace slurmtwin::sim {

enum class SimJobState : std::uint8_t {
  kFuture,  // not submitted yet
  kPending,
  kRunning,
  kSuspended,  // preempted in SUSPEND mode: CPUs given up, memory and GRES kept
  kDone,       // ended (COMPLETED, TIMEOUT, ...)
  kRejected,   // refused at submit (reason in reject_reason)
};

/// The TRES slots limits count (kLimitTres: CPUs, memory, nodes, GPUs, billing).
inline constexpr int kTresSlots = static_cast<int>(kLimitTres.size());

/// Why a pending job did not start in the last pass (squeue's Reason).
enum class PendingReason : std::uint8_t {
  kNone,
  kPriority,
  kResources,
  kPartitionTimeLimit,
  kPartitionNodeLimit,
  kQosMaxJobsPerUser,
  kQosGrpJobs,
  kQosGrpTres,
  kQosMaxTresPerUser,  // MaxTRESPerUser: a block of five, like those below (tres_reason)
  kAssocMaxJobs = kQosMaxTresPerUser + kTresSlots,
  kAssocGrpTres,  // GrpTRES cpu of the association or an account above it
  kBeginTime,
  kDependency,                // its dependency does not hold yet
  kDependencyNeverSatisfied,  // and never will (Slurm keeps it pending)
  kQosGrpMem,
  kQosGrpNode,
  kQosGrpGres,
  kQosMaxTresPerJob,  // MaxTRESPerJob (a block of five)
  kQosMaxWall = kQosMaxTresPerJob + kTresSlots,
  kAssocGrpJobs,
  kAssocGrpMem,
  kAssocGrpNode,
  kAssocGrpGres,
  kAssocMaxTresPerJob,  // MaxTRESPerJob, inherited (a block of five)
  kAssocMaxWall = kAssocMaxTresPerJob + kTresSlots,
  kPartitionConfig,  // more CPUs than the partition has (Slurm: ESLURM_TOO_MANY_REQUESTED_CPUS)
  kReservation,      // its --reservation is not active (not yet, or ended: then held for good)
  kReqNodeNotAvail,  // would not fit even if every node it may use (in service, not reserved) were idle
  kPnMemLimit,       // memory per node over MaxMemPerNode: held for ever (Slurm: MaxMemPerLimit)
  // Limits checked once a job's nodes are chosen, one block of five per limit, in Tres slot order
  // (CPUs, memory, nodes, GPUs, billing): the reason of slot k is the block's first + k (tres_reason).
  kQosGrpTresMins,                                          // GrpTRESMins used up
  kQosGrpTresRunMins = kQosGrpTresMins + kTresSlots,        // GrpTRESRunMins: running jobs' TRES x time left
  kQosMaxTresMinsPerJob = kQosGrpTresRunMins + kTresSlots,  // TRES x time limit over MaxTRESMinsPerJob
  kQosMaxTresPerNode = kQosMaxTresMinsPerJob + kTresSlots,
  kQosMinTres = kQosMaxTresPerNode + kTresSlots,                          // under MinTRESPerJob
  kQosMaxTresRunMinsPerUser = kQosMinTres + kTresSlots,                   // Slurm >= 24.05
  kQosMaxTresRunMinsPerAccount = kQosMaxTresRunMinsPerUser + kTresSlots,  // Slurm >= 24.05
  kAssocGrpTresMins = kQosMaxTresRunMinsPerAccount + kTresSlots,
  kAssocGrpTresRunMins = kAssocGrpTresMins + kTresSlots,
  kAssocMaxTresMinsPerJob = kAssocGrpTresRunMins + kTresSlots,
  kAssocMaxTresPerNode = kAssocMaxTresMinsPerJob + kTresSlots,
  kQosMaxTresPerAccount = kAssocMaxTresPerNode + kTresSlots,  // QOS MaxTRESPerAccount (MaxCpuPerAccount, ...)
  kQosMaxJobsPerAccount = kQosMaxTresPerAccount + kTresSlots,
  kJobArrayTaskLimit,  // its array's --array=...%N tasks run (job_array_start_test)
  kQosGrpBilling,      // GrpTRES billing of the QOS (the other slots are kQosGrpTres..kQosGrpGres)
  kAssocGrpBilling,    // GrpTRES billing of the association or an account above it
  kLicenses,           // fewer of a licence it asks (-L) are free than it needs
  kCount,              // number of reasons (SimJob::reasons_seen's size)
};
const char* to_string(PendingReason reason);
/// The reason of TRES slot `slot` (0 CPUs, 1 memory, 2 nodes, 3 GPUs, 4 billing) in a block that starts at
/// `first`.
constexpr PendingReason tres_reason(PendingReason first, int slot) {
  return static_cast<PendingReason>(static_cast<int>(first) + slot);
}

/// What preemption does to a victim (spec §7.4): end it (CANCEL), put it back in the queue (REQUEUE), or
/// suspend it until its preemptor ends (SUSPEND).
enum class PreemptAction : std::uint8_t { kNone, kCancel, kRequeue, kSuspend };

/// NodeRequest::max_nodes of a job that gave no -N (or no maximum): it may spread over any number.
inline constexpr std::uint32_t kUnboundedNodes = 1u << 30;

/// Resource needs of a job on each node it uses (cons_tres view).
struct NodeRequest {
  std::uint32_t min_nodes = 1;
  std::uint32_t max_nodes = 1;   // >= min_nodes; nodes==0 in the trace lets the job spread
  std::uint32_t total_cpus = 1;  // tasks * cpus_per_task
  std::uint32_t cpus_per_task = 1;
  std::uint32_t cpus_per_node = 0;          // fixed per-node CPUs (--ntasks-per-node), 0 = any split
  std::int64_t mem_per_node_mb = 0;         // used when !mem_per_cpu; -1 = all of each node's memory
  std::int64_t mem_per_cpu_mb = 0;          // > 0: memory scales with CPUs allocated on the node
  std::vector<std::int64_t> gres_per_node;  // indexed by ClusterState gres kind
  // A node with less memory free is of no use (MB): DefMemPerGPU x GPUs per node, which cons_tres's GRES
  // filter asks of a node even when the job gives --mem (gres_select_filter_remove_unusable).
  std::int64_t gres_mem_floor_mb = 0;
  bool exclusive = false;      // whole nodes
  std::uint32_t features = 0;  // index into the constraint table (0 = none)

  /// The most nodes it may use: max_nodes, but never more nodes than tasks (cons_tres choose_nodes).
  std::uint32_t node_bound() const {
    const std::uint32_t tasks = total_cpus / (cpus_per_task > 0 ? cpus_per_task : 1);
    return tasks > 0 && max_nodes > tasks ? (tasks > min_nodes ? tasks : min_nodes) : max_nodes;
  }
  /// What decides how the request uses a node (ClusterState::usable_cpus reads nothing else of it), as
  /// a tuple of references for comparing requests.
  auto shape_tie() const {
    return std::tie(total_cpus, cpus_per_task, cpus_per_node, mem_per_node_mb, mem_per_cpu_mb, gres_per_node,
                    gres_mem_floor_mb, exclusive, features);
  }
  /// The CPUs asked of one node when its usable CPUs are counted (ClusterState::usable_cpus):
  /// --ntasks-per-node's fixed count, else all the node can give (cons_tres compares nodes by what
  /// they have free).
  std::uint32_t per_node_ask() const { return cpus_per_node > 0 ? cpus_per_node : 0xFFFFFFFFu; }
};

/// Licences a job holds while it runs (and while suspended: slurmctld returns them once it ends).
struct LicenseUse {
  std::uint32_t license = 0;  // index into Site::licenses
  std::uint32_t count = 0;
  bool operator==(const LicenseUse&) const = default;
};

/// One allocation on one node.
struct NodeAlloc {
  std::uint32_t node = 0;
  std::uint32_t cpus = 0;
  std::int64_t mem_mb = 0;
};

/// A run of a job that was interrupted by preemption (requeued afterwards), as `sacct -D` shows it.
struct PastRun {
  Seconds submit = kUnsetTime;
  Seconds eligible = kUnsetTime;
  Seconds accrue = kUnsetTime;
  Seconds start = kUnsetTime;
  Seconds end = kUnsetTime;
  std::uint16_t partition = 0;
  std::uint32_t alloc_cpus = 0;
  std::vector<std::uint32_t> nodes;
  std::uint32_t priority = 0;
  SchedulerPass started_by = SchedulerPass::kUnknown;
};

struct SimJob {
  std::uint32_t trace_index = 0;  // index in Trace::jobs
  std::uint64_t id = 0;           // job id (order tie-breaker)
  std::int32_t array_task = -1;
  // --array=...%N: at most array_cap of its array's tasks run at once; array_slot indexes
  // SimState::array_running (-1: no cap).
  std::uint32_t array_cap = 0;
  std::int32_t array_slot = -1;
  std::vector<std::uint16_t> partitions;  // site partition indices, in request order
  std::uint16_t qos = 0;                  // site QOS index
  std::int32_t assoc = -1;                // user association index in the association tree
  std::uint32_t user = 0;                 // user index (dense, for per-user limits)
  Seconds submit = kUnsetTime;
  Seconds eligible = kUnsetTime;
  Seconds time_limit = 0;       // s, resolved (kUnlimited possible)
  Seconds cancel = kUnsetTime;  // scancel at this time (absolute), kUnsetTime = never
  Seconds runtime = 0;          // s, what it would run if unlimited
  NodeRequest request;
  // slurmctld's details->min_nodes, which the job size factor counts: -N's minimum (1 without). The
  // request's min_nodes may be higher (--ntasks-per-node raises it in node selection only).
  std::uint32_t asked_nodes = 1;
  std::int32_t nice = 0;
  // --reservation: the index in Site::reservations of the first period of that name; -1 for none.
  std::int32_t reservation = -1;
  std::vector<LicenseUse> licenses;  // -L, against the site's Licenses=

  // run-time state
  SimJobState state = SimJobState::kFuture;
  PendingReason reason = PendingReason::kNone;
  std::bitset<static_cast<std::size_t>(PendingReason::kCount)> reasons_seen;  // PendingReasons seen pending
  /// Records `r` as its reason now (and among those seen).
  void note_reason(PendingReason r) {
    reason = r;
    reasons_seen.set(static_cast<std::size_t>(r));
  }
  bool has_seen(PendingReason r) const { return reasons_seen.test(static_cast<std::size_t>(r)); }
  // Under accrue limits (GrpJobsAccrue, MaxJobsAccrue*): when its age started to accrue, once counted
  // (absolute s); kUnsetTime = not yet (age 0). Unused without such limits.
  Seconds accrue = kUnsetTime;
  std::uint32_t priority = 0;                // current priority (stored value, as Slurm)
  std::vector<std::uint32_t> part_priority;  // per requested partition
  std::uint16_t run_partition = 0;           // partition it started in
  Seconds start = kUnsetTime;
  Seconds end = kUnsetTime;
  std::uint32_t priority_at_start = 0;
  SchedulerPass started_by = SchedulerPass::kUnknown;
  JobState end_state = JobState::kUnknown;
  std::vector<NodeAlloc> alloc;
  std::uint32_t alloc_cpus = 0;
  // slurmctld's job_ptr->total_cpus while pending: the CPUs of the last allocation its node selection
  // found (the test on idle nodes at submit, a backfill plan): whole nodes for --exclusive, whole cores
  // under CR_Core with threads. The job size priority factor counts these; 0 (none yet, or requeued):
  // the request's CPUs.
  std::uint32_t size_cpus = 0;
  double billing = 0;                 // billable TRES, cached at start
  Seconds last_charged = kUnsetTime;  // usage charged up to here
  std::string reject_reason;
  // preemption
  std::uint32_t restarts = 0;                    // times requeued
  std::vector<PastRun> past_runs;                // interrupted runs, oldest first
  PreemptAction preempt = PreemptAction::kNone;  // what happens at `end` when it was preempted with grace
  EventId end_event;                             // pending end (cancelled when preemption moves it)
  EventId cancel_event;                          // pending scancel (dropped when the job ends)
  Seconds preempt_started = kUnsetTime;          // when this job last preempted others (as a preemptor)
  // suspension (SUSPEND preemption)
  std::int64_t suspended_by = -1;   // job index of the preemptor it waits for, -1 = none
  std::vector<std::uint32_t> held;  // per alloc entry: CPUs held for it while suspended (ClusterState::hold)
  Seconds remaining = 0;            // run time left when suspended, s
  Seconds suspended_at = kUnsetTime;
  Seconds suspended_total = 0;  // s spent suspended
  std::uint32_t suspensions = 0;
  std::uint32_t slot = 0;  // position in SimState::pending or ::running (controller bookkeeping)
};

/// The job's current (or last) run as a record: what a requeue keeps in SimJob::past_runs.
inline PastRun current_run(const SimJob& j) {
  PastRun run{.submit = j.submit,
              .eligible = j.eligible,
              .accrue = j.accrue,
              .start = j.start,
              .end = j.end,
              .partition = j.run_partition,
              .alloc_cpus = j.alloc_cpus,
              .nodes = {},
              .priority = j.priority_at_start,
              .started_by = j.started_by};
  for (const auto& a : j.alloc) run.nodes.push_back(a.node);
  return run;
}

/// Whether a job is in the scheduling queue at `now`: pending and eligible. A requeued job and one
/// waiting for --begin or a dependency are pending but out of the queue (squeue: BeginTime,
/// Dependency); no pass may start them (spec §7.5).
inline bool in_queue(const SimJob& j, Seconds now) {
  return j.state == SimJobState::kPending && j.eligible != kUnsetTime && j.eligible <= now;
}

}  // namespace slurmtwin::sim
