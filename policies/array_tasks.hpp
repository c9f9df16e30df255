#pragma once
// Job array tasks in a scheduling pass. Slurm keeps a pending array's tasks in one job record, so one
// queue record: the main pass and backfill try its tasks one after another while they start (or,
// in backfill, get a reservation), and once one is not started the record is done for the pass
// (reject_array_job in job_scheduler.c and backfill.c, 22.05). The replay has a record per task;
// this skips the rest of a rejected array's tasks as Slurm never reaches them (no depth counted).
#include <cstdint>

#include "sim/sim_state.hpp"

namespace slurmtwin::policies {

class ArrayReject {
 public:
  /// For array task `job` tried in `partition`: true when an earlier task of its array was rejected
  /// in that partition in this pass (skip it; it takes that task's reason, reason()); else it becomes
  /// the task assumed rejected until accept() (Slurm: "assume reject whole array for now, clear if OK").
  bool skip(const sim::SimState& s, std::uint32_t job, std::uint16_t partition) {
    const auto& j = s.jobs[job];
    if (j.array_task < 0) return false;
    if (rejected_ >= 0 && partition_ == partition && s.jobs[static_cast<std::size_t>(rejected_)].id == j.id)
      return true;
    rejected_ = job;
    partition_ = partition;
    return false;
  }
  /// The reason of the rejected task, which a skipped one takes (fill_array_reasons).
  sim::PendingReason reason(const sim::SimState& s) const {
    return s.jobs[static_cast<std::size_t>(rejected_)].reason;
  }
  /// The task tried last started (or got a reservation): the array's next task is tried.
  void accept() { rejected_ = -1; }

 private:
  std::int64_t rejected_ = -1;  // job index of the rejected task, -1: none
  std::uint16_t partition_ = 0;
};

}  // namespace slurmtwin::policies
