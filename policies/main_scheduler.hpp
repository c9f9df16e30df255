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
  Seconds submit = 0;
  std::uint64_t id = 0;
  std::int32_t array_task = -1;
  std::uint16_t part_index = 0;  // which of the job's requested partitions (index into SimJob::partitions)
};

/// Queue records of one pending job, one per requested partition (unsorted).
void append_queue_records(const sim::SimState& state, std::uint32_t job, std::vector<QueueRecord>& out);
/// Slurm's queue order (sort_job_queue2): true when `a` goes before `b`.
bool queue_before(const QueueRecord& a, const QueueRecord& b);
/// Sorts `queue` by queue_before, cheaply when it is nearly sorted already (few out-of-order neighbours,
/// as after a priority recalculation that moved a few users' jobs).
void sort_nearly_sorted(std::vector<QueueRecord>& queue);
/// Builds the sorted queue of pending jobs (highest precedence first).
std::vector<QueueRecord> build_job_queue(const sim::SimState& state);

struct MainPassStats {
  std::uint32_t examined = 0;
  std::uint32_t started = 0;
  std::uint32_t preempted = 0;  // victims preempted in this pass
};

class Preemption;

class MainScheduler {
 public:
  /// `preemption` (may be null) lets a job that cannot start preempt running jobs (spec §7.4).
  explicit MainScheduler(const SchedulerParameters& params, const Preemption* preemption = nullptr)
      : params_(params), preemption_(preemption) {}
  /// Runs one pass at state.now over `queue` (sorted by queue_before; records of jobs no longer
  /// pending are skipped); `full` = the whole queue, else at most default_queue_depth records.
  /// `partition_counts` (optional): records of `queue` per partition, if the caller keeps them.
  MainPassStats run(sim::SimState& state, sim::JobLauncher& launcher, bool full,
                    const std::vector<QueueRecord>& queue,
                    const std::vector<std::uint32_t>* partition_counts = nullptr) const;

 private:
  enum class Preempted { kNo, kWaiting, kStarted };
  /// Preempts victims for a job that could not start: with only suspended victims the job starts at
  /// once (kStarted); after CANCEL/REQUEUE victims it waits for their end (kWaiting).
  Preempted try_preemption(sim::SimState& state, sim::JobLauncher& launcher, const QueueRecord& rec,
                           const std::vector<bool>& avail) const;

  const SchedulerParameters& params_;
  const Preemption* preemption_;
};

}  // namespace slurmtwin::policies
