#pragma once
// sched/backfill (spec §6): one backfill cycle at state.now over the sorted queue.
//
// Design. Two structures model the future, as in Slurm:
//  * Running jobs are NOT in the node-space map. Their future release is a list sorted by planned end
//    (start + time limit; never the real runtime). A will-run test releases them, in Slurm's growing
//    time windows (30, 60, 120, ... s from the first overlapping end rounded up to 30 s) and asks
//    select_nodes whether the job fits; the start estimate is the planned end of the last job released
//    (a job already past its limit: end + KillWait + OverTimeLimit, at least now + 1, as cons_tres
//    _guess_job_end). Releases are not re-applied per test: per request shape, a future availability
//    profile (each node's usable CPUs now, and on each released node after the releases up to it) is
//    built once per cycle and patched when backfill starts a job. The values of nodes whose state
//    and running jobs are unchanged since the previous cycle are reused from it; the others' come
//    from node states recorded by releasing the running jobs on them and allocating them back
//    (ProfileCache, profile_cache.hpp). A test then sums the profile over its candidate nodes, and
//    select_nodes (given the profile's values, all it reads of a state) runs only when enough CPUs and
//    nodes are usable (for a single-node request: on one node), necessary conditions of its success.
//    A record identical in request, partition, time limit and reservation eligibility to one already
//    evaluated since the last start or reservation reuses that outcome.
//  * Pending jobs given a future start get whole-node reservations in the node-space map: a sorted,
//    contiguous list of time slots [begin, end) covering [floor(now/res)*res, floor((now+bf_window)/res)
//    *res), each with a bitset of nodes not reserved. Reservations are quantized to bf_resolution
//    (_set_slot_time) and clipped to the window; the map holds at most bf_node_space_size
//    (= bf_max_job_test) slots, after which the cycle stops.
// A job may start now only on nodes free of reservations over [now, now + its time limit], so it can
// never delay an earlier-ordered job's reservation. Advanced reservations (reservations.hpp) and
// nodes out of service are taken out of each test's partition nodes, as job_test_resv and
// up_node_bitmap do; a test that a reservation overlapped retries after the next reservation end.
//
// Approximations (documented in docs/simulator.md): passes take no simulated time (bf_max_time,
// yields and bf_continue have no effect); bf_busy_nodes does not change node choice; array tasks are
// tried as Slurm tries an array record (array_tasks.hpp, bf_max_job_array_resv); no licenses, --time-min,
// node features requiring reboot or exclusive-user filtering. Preemption: a job that cannot start now
// but could after preempting (cons_tres removing the preemption candidates) preempts them as the main
// scheduler does; with SUSPEND victims it starts at once, otherwise the victims' nodes are reserved for
// it for the rest of the cycle (it starts in a later pass); its future start estimates ignore
// preemptable jobs (Slurm's will-run also removes them there).
#include <cstdint>
#include <vector>

#include "policies/main_scheduler.hpp"
#include "policies/profile_cache.hpp"
#include "sim/controller.hpp"
#include "sim/sim_state.hpp"

namespace slurmtwin::policies {

/// A pending job's expected start computed by a cycle (squeue --start).
struct PlannedStart {
  std::uint32_t job = 0;  // index into SimState::jobs
  Seconds start = 0;      // expected start (s, absolute)
  bool reserved = false;  // whole-node reservation added to the node-space map
};

/// What one backfill cycle did (counts, as Slurm's sdiag reports them).
struct BackfillStats {
  std::uint32_t examined = 0;  // records that passed limits and the bf_max_job_user/part counters
  std::uint32_t tested = 0;    // job_test_cnt: jobs that reached the will-run test (bf_max_job_test)
  std::uint32_t started = 0;   // jobs started now by this cycle
  std::uint32_t reserved = 0;  // reservations added to the node-space map
  std::uint32_t slots = 0;     // node-space map records at the end of the cycle
  // A will-run test found a start earlier than the time it tested from (a retry after a reservation),
  // so slurmctld moved that job's expected start and marked the jobs changed (backfill.c: start_res >
  // start_time sets last_job_update): the next cycle has work even if nothing else happens.
  bool updated_jobs = false;
  std::vector<PlannedStart> planned;  // future starts found, in queue order
  std::vector<std::uint32_t> sized;   // jobs whose SimJob::size_cpus a will-run test changed
};

/// Optional model of how long a real backfill cycle takes (FastSim-style, spec §1 and §11): off when
/// tests_per_second is 0. A real cycle stops after bf_max_time (default bf_interval) of wall time, of
/// which it sleeps bf_yield_sleep every bf_yield_interval to yield its locks; at `tests_per_second`
/// will-run tests per second that caps the jobs tested, and the cycle's duration delays the next one.
struct BackfillCostModel {
  double tests_per_second = 0;  // measured on the real site, e.g. from sdiag's backfill statistics
  bool enabled() const { return tests_per_second > 0; }
  /// Most jobs one cycle can test within bf_max_time.
  std::uint32_t test_budget(const SchedulerParameters& params) const;
  /// Simulated seconds a cycle that tested `tested` jobs takes (whole seconds, at least 1).
  Seconds duration(const SchedulerParameters& params, std::uint32_t tested) const;
};

class Preemption;
class Reservations;

class Backfill {
 public:
  /// `preemption` (may be null) lets a job that cannot start now preempt running jobs (spec §6.3-6.4);
  /// `reservations` (may be null: none) keeps jobs off reserved nodes and plans them around.
  explicit Backfill(const SchedulerParameters& params, BackfillCostModel cost = {},
                    const Preemption* preemption = nullptr, const Reservations* reservations = nullptr)
      : params_(params), cost_(cost), preemption_(preemption), reservations_(reservations) {}
  /// Runs one cycle at state.now over `queue` (sorted by queue_before; records of jobs no longer
  /// pending are skipped); starts jobs through `launcher` with SchedulerPass::kBackfill, which must
  /// allocate them in state.cluster. state.cluster is modified during the cycle (planned releases are
  /// applied and undone) and left as the started jobs make it. `cache` (may be null: everything is
  /// computed anew) keeps per-shape usable CPUs from one cycle of this replay to the next; the
  /// outcome is the same either way.
  BackfillStats run(sim::SimState& state, sim::JobLauncher& launcher, const std::vector<QueueRecord>& queue,
                    ProfileCache* cache = nullptr) const;
  const BackfillCostModel& cost_model() const { return cost_; }

 private:
  const SchedulerParameters& params_;
  BackfillCostModel cost_;
  const Preemption* preemption_;
  const Reservations* reservations_;
};

}  // namespace slurmtwin::policies
