#pragma once
// The main scheduling pass (spec §4-5): queue records per (job, partition), sorted by PriorityTier,
// priority, submit time, job id; strict priority within a partition: the first job that cannot start
// for lack of resources blocks its partition (and its nodes for every other partition) for the rest
// of the pass; limit-blocked jobs block nothing; limited passes stop after default_queue_depth.
#include <cstdint>
#include <vector>

#include "sim/controller.hpp"
#include "sim/sim_state.hpp"

namespace slurmtwin::policies {

/// One queue record: a job in one of its partitions, with that pair's priority.
struct QueueRecord {
  std::uint32_t job = 0;
  std::uint16_t partition = 0;
  std::uint16_t tier = 0;
  std::uint32_t priority = 0;
  bool reservation = false;  // asks for a reservation: before every record that does not (fills padding)
  Seconds submit = 0;
  std::uint64_t id = 0;
  std::int32_t array_task = -1;
  std::uint16_t part_index = 0;    // which of the job's requested partitions (index into SimJob::partitions)
  std::uint16_t preempt_rank = 0;  // preemptors first (Preemption::queue_rank), after the tier
};
static_assert(sizeof(QueueRecord) <= 40,
              "a queue of a million records is sorted at every pass: keep it small");

class Preemption;

/// Queue records of one pending job, one per requested partition (unsorted); `preemption` (may be
/// null) gives their preemptor rank.
void append_queue_records(const sim::SimState& state, std::uint32_t job, std::vector<QueueRecord>& out,
                          const Preemption* preemption = nullptr);
/// Slurm's queue order (sort_job_queue2): true when `a` goes before `b`: PriorityTier, preemptors
/// first (as far as a strict weak order allows, see Preemption::queue_rank), jobs of a reservation,
/// priority, submit time, job id, array task.
bool queue_before(const QueueRecord& a, const QueueRecord& b);
/// Beyond this many out-of-order neighbours a full sort is cheaper than insertion.
constexpr std::size_t kMaxDescents = 32;
/// Sorts `queue` by queue_before, cheaply when it is nearly sorted already (at most `max_descents`
/// out-of-order neighbours, as after a priority recalculation: insertion, O(n + inversions)), else
/// with std::sort.
void sort_nearly_sorted(std::vector<QueueRecord>& queue, std::size_t max_descents = kMaxDescents);
/// Sorts `queue`, whose only out-of-order neighbours are at `descents` (the increasing indices i with
/// queue[i] before queue[i - 1]), by insertion at those places: O(descents + inversions), the same
/// result as insertion sort over the whole queue.
void sort_at_descents(std::vector<QueueRecord>& queue, const std::vector<std::size_t>& descents);
/// Builds the sorted queue of pending jobs (highest precedence first).
std::vector<QueueRecord> build_job_queue(const sim::SimState& state, const Preemption* preemption = nullptr);

/// Pending jobs whose pending reason may be None or Resources: a superset of them, kept by the caller
/// (jobs are added when queued and when a pass notes Resources; passes drop the others). Once every
/// partition left in a full pass is blocked, the rest of the pass can only turn those two reasons into
/// Priority, so with this list it settles them in bulk instead of walking the rest of the queue.
class UnsettledJobs {
 public:
  void add(std::uint32_t job) {
    if (job >= listed_.size()) listed_.resize(job + 1, 0);
    if (listed_[job]) return;
    listed_[job] = 1;
    jobs_.push_back(job);
  }
  const std::vector<std::uint32_t>& jobs() const { return jobs_; }
  /// Keeps the listed jobs for which `keep(job)` is true.
  template <class Keep>
  void retain(Keep keep) {
    std::erase_if(jobs_, [&](std::uint32_t job) {
      if (keep(job)) return false;
      listed_[job] = 0;
      return true;
    });
  }

 private:
  std::vector<std::uint32_t> jobs_;
  std::vector<char> listed_;  // per job index: in jobs_
};

struct MainPassStats {
  std::uint32_t examined = 0;  // records looked at one by one (not those of a tail settled in bulk)
  std::uint32_t started = 0;
  std::uint32_t preempted = 0;  // victims preempted in this pass
};

class Preemption;
class Reservations;

class MainScheduler {
 public:
  /// `preemption` (may be null) lets a job that cannot start preempt running jobs (spec §7.4);
  /// `reservations` (may be null: none) keeps jobs off reserved nodes.
  explicit MainScheduler(const SchedulerParameters& params, const Preemption* preemption = nullptr,
                         const Reservations* reservations = nullptr)
      : params_(params), preemption_(preemption), reservations_(reservations) {}
  /// Runs one pass at state.now over `queue` (sorted by queue_before; records of jobs no longer
  /// pending are skipped); `full` = the whole queue, else at most default_queue_depth records.
  /// `partition_counts` (optional): records of `queue` per partition, if the caller keeps them.
  /// `unsettled` (optional, with partition_counts): see UnsettledJobs; the pass keeps it up to date.
  MainPassStats run(sim::SimState& state, sim::JobLauncher& launcher, bool full,
                    const std::vector<QueueRecord>& queue,
                    const std::vector<std::uint32_t>* partition_counts = nullptr,
                    UnsettledJobs* unsettled = nullptr) const;

 private:
  enum class Preempted { kNo, kWaiting, kStarted };
  /// Preempts victims for a job that could not start: with only suspended victims the job starts at
  /// once (kStarted); after CANCEL/REQUEUE victims it waits for their end (kWaiting).
  Preempted try_preemption(sim::SimState& state, sim::JobLauncher& launcher, const QueueRecord& rec,
                           const std::vector<bool>& avail) const;
  /// The rest of a full pass from queue[cut] on, when every partition with records left is blocked:
  /// what walking it would do (Priority for the jobs whose reason is None or Resources and that have a
  /// record there), found from `unsettled`. False, changing nothing, if a job's records are not where
  /// its priorities put them (the caller then walks).
  bool settle_tail(sim::SimState& state, const std::vector<QueueRecord>& queue, std::size_t cut,
                   UnsettledJobs& unsettled) const;

  const SchedulerParameters& params_;
  const Preemption* preemption_;
  const Reservations* reservations_;
};

}  // namespace slurmtwin::policies
