#pragma once
// Job dependencies of a replay (sbatch --dependency, traces/dependency.hpp) resolved to job indices.
// The jobs and what they wait for form a Boost.Graph digraph (an edge from each job a term names to
// the job that waits for it); when a job starts or ends, its out-edges are the waiting jobs to test
// again. Semantics follow slurmctld 22.05 (src/slurmctld/job_scheduler.c, test_job_dependency):
//   after      the named job is no longer pending (started, or cancelled), and `+MIN` have passed
//              since its start;
//   afterany   it has ended, in any state;     afterok / afternotok   it has ended successfully / not;
//   aftercorr  the named array's task with this job's task id has ended successfully;
//   singleton  no other job of the same user and job name is running, or pending with a lower job id.
// An afterok/afternotok/aftercorr term whose job ended the other way can never be satisfied; with ','
// that holds the job forever (reason DependencyNeverSatisfied: Slurm 22.05 keeps it pending unless
// DependencyParameters=kill_invalid_depend, which is not modelled), with '?' only if every term failed.
// A job succeeds when it ends COMPLETED in the replay and its record does not say it failed
// (FAILED, CANCELLED, OUT_OF_MEMORY, NODE_FAIL, BOOT_FAIL, DEADLINE): failure is the job's own.
// A term naming a job that does not exist when it is tested (not in the trace, or submitted later in
// the replay's order: submit time, then job id) is lifted, as 22.05 lifts a term whose job is gone
// (newer Slurm refuses afterok/afternotok on an unknown job at submit; not modelled; nor is a job
// purged after MinJobAge counted as gone). Refused at submit, with the reason: an unreadable
// expression, or a dependency on the job itself.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/sim_state.hpp"
#include "traces/dependency.hpp"
#include "traces/trace.hpp"

namespace slurmtwin::sim {

enum class DependencyStatus : std::uint8_t { kSatisfied, kWaiting, kNever };

class Dependencies {
 public:
  /// `jobs` as resolved from `trace` (SimJob::trace_index). Cheap when no job has a dependency.
  Dependencies(const Trace& trace, const std::vector<SimJob>& jobs);
  ~Dependencies();
  Dependencies(const Dependencies&) = delete;
  Dependencies& operator=(const Dependencies&) = delete;

  /// No job of the trace has a dependency to honour.
  bool empty() const { return specs_.empty(); }
  /// Some job has a dependency Slurm would refuse at submit.
  bool has_refusals() const { return !refusals_.empty(); }
  /// Whether job `job` (index into SimState::jobs) has a dependency.
  bool has(std::uint32_t job) const { return specs_.count(job) != 0; }
  /// Why Slurm would refuse job `job` at submit ("" = it would not).
  std::string refusal(std::uint32_t job) const;
  /// The job's dependency at state.now. kWaiting with `retry_at` set (else kUnsetTime): an `after+MIN`
  /// term that will hold by then if nothing else changes.
  DependencyStatus test(const SimState& state, std::uint32_t job, Seconds& retry_at) const;
  /// Jobs whose dependency names job `job` (to test again when it starts or ends), once per term that
  /// names it: the controller sorts and dedupes what it retests.
  std::vector<std::uint32_t> dependents(std::uint32_t job) const;
  /// Singleton jobs of the same user and name as `job` (to test again when it ends).
  const std::vector<std::uint32_t>& singletons_like(std::uint32_t job) const;

 private:
  struct Resolved {  // one job's terms, each naming job indices (one, or every task of an array)
    struct Term {
      DependencyType type;
      std::vector<std::uint32_t> jobs;
      Seconds delay = 0;
    };
    bool any = false;
    std::vector<Term> terms;
  };
  struct Graph;  // Boost.Graph adjacency list, hidden from includers
  bool succeeded(const SimState& state, std::uint32_t job) const;
  bool singleton_blocked(const SimState& state, std::uint32_t job) const;

  std::map<std::uint32_t, Resolved> specs_;
  std::map<std::uint32_t, std::string> refusals_;
  std::vector<bool> recorded_failure_;                        // per job: its record says it failed
  std::vector<std::pair<std::uint32_t, std::uint32_t>> key_;  // per job: (user, job name) for singleton
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::uint32_t>>
      same_key_;  // of singletons_' keys
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::uint32_t>> singletons_;
  std::unique_ptr<Graph> graph_;
};

}  // namespace slurmtwin::sim
