#pragma once
// sbatch --dependency expressions (Slurm 22.05 syntax), parsed from the text a trace recorded:
//   after:ID[+MIN][:ID[+MIN]...]  afterany:ID[:ID...]  afterok:...  afternotok:...  aftercorr:...
//   afterburstbuffer:...  singleton  and the legacy bare ID (= afterany:ID)
// joined by ',' (all must hold) or '?' (any one); both in one list make every term '?', as slurmctld
// 22.05 reads it. ID is a job id or ARRAYID_TASK.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "traces/job_record.hpp"

namespace slurmtwin {

enum class DependencyType : std::uint8_t {
  kAfter,       // the job has started (or was cancelled before starting), + delay
  kAfterAny,    // the job has ended, in any state
  kAfterOk,     // the job has ended successfully
  kAfterNotOk,  // the job has ended in a failed state
  kAfterCorr,   // array task N of the job has ended successfully (for this job's own task N)
  kSingleton,   // no earlier job of the same user and job name is still pending or running
};
const char* to_string(DependencyType type);

struct DependencyTerm {
  DependencyType type = DependencyType::kAfterAny;
  std::uint64_t job_id = 0;      // unused for kSingleton
  std::int32_t array_task = -1;  // ID_TASK: one array task; -1: the job (every task of an array)
  Seconds delay = 0;             // after:ID+MIN, in seconds
  bool operator==(const DependencyTerm&) const = default;
};

struct DependencySpec {
  bool any = false;  // '?'-joined: one satisfied term suffices; else all must hold
  std::vector<DependencyTerm> terms;
  bool operator==(const DependencySpec&) const = default;
};

/// Parses a --dependency expression; throws std::invalid_argument saying what is wrong. afterburstbuffer
/// is read as afterany (burst buffers are not modelled; their stage-out follows the job's end).
DependencySpec parse_dependency(std::string_view text);

}  // namespace slurmtwin
