#pragma once
// Internal helpers shared by the two sacct readers (parsable2 and --json): job id parsing and the
// folding of repeated records (duplicates, requeued runs, job steps) into one JobRecord per job.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "traces/read_report.hpp"
#include "traces/trace.hpp"

namespace slurmtwin::sacct_detail {

/// A parsed sacct JobID: "123", "123_4" (array task), "123_[5-10%2]" (pending array remnant),
/// "123+1" (het component), each optionally followed by ".step" ("batch", "extern", "0", ...).
struct SacctJobId {
  std::uint64_t job_id = 0;
  std::int32_t array_task = -1;
  std::int32_t het_component = -1;
  bool pending_array = false;           // "123_[5-10]": the not yet started tasks of an array, as one record
  std::uint32_t array_max_running = 0;  // "123_[5-10%2]": the array's task cap (--array=...%2); 0 = none
  std::string step;                     // "" for the job itself
};

/// Parses a sacct JobID / JobIDRaw; nullopt when it is not of any of the forms above.
std::optional<SacctJobId> parse_sacct_job_id(std::string_view text);

/// Identity of one job record: (job id, array task, het component).
using JobKey = std::tuple<std::uint64_t, std::int32_t, std::int32_t>;
inline JobKey key_of(const JobRecord& j) {
  return {j.job_id, j.array_task, j.het_component};
}

/// Folds the records of one input into trace.jobs: the first record of a job is accepted; a later
/// one with the same Submit is a "duplicate record", with another Submit a "requeued run" (sacct -D):
/// the job keeps its first submit and takes the latest run's start/end/runtime/state, restarts++.
/// Job steps are folded into their job, or rejected as "orphan job step" at finish().
class JobFolder {
 public:
  JobFolder(Trace& trace, RejectSink& sink) : trace_(trace), sink_(sink) {}
  /// Adds one job record (not a step).
  void add_job(JobRecord&& job);
  /// Notes that the job record with this key was rejected (its steps are then orphans too).
  void note_rejected(const JobKey& key) { rejected_.insert(key); }
  /// Adds one job step record, resolved against the jobs at finish().
  void add_step(const JobKey& parent, std::uint64_t line, std::string field, std::string text);
  /// Folds or rejects the steps seen so far; call once after the last record.
  void finish();

 private:
  struct Entry {
    std::size_t index = 0;      // into trace_.jobs
    std::set<Seconds> submits;  // submit times of the runs seen
    Seconds latest_submit = kUnsetTime;
  };
  struct PendingStep {
    JobKey parent;
    std::uint64_t line = 0;
    std::string field;
    std::string text;
  };
  Trace& trace_;
  RejectSink& sink_;
  std::map<JobKey, Entry> jobs_;
  std::set<JobKey> rejected_;
  std::vector<PendingStep> steps_;
};

}  // namespace slurmtwin::sacct_detail
