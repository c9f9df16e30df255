#pragma once
// Job features for the surrogate: what is known about each job of a window when it is submitted
// (resources, limits, time of day and week, recent load of its user and account), plus its real
// runtime unless the "submit-time only" mode is on (real-wait prediction, where runtimes are not
// known in advance). No libtorch here: the features are plain arrays so that the dataset
// generator, the ridge baseline and the model share them.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "traces/trace.hpp"

namespace slurmtwin::surrogate {

/// The wait (s) that stands for "never started" where a wait must be a number (the reference features,
/// `eval --noise-floor`): beyond any wait of a real trace window.
inline constexpr double kNeverStartedWait = 30.0 * 86400.0;

/// What the model's inputs mean. Saved in datasets and checkpoints: a checkpoint only accepts a
/// dataset whose schema is equal.
struct FeatureSchema {
  std::vector<std::string> numeric;     // names of the numeric features, in column order
  std::uint32_t user_buckets = 1024;    // users hash into this many embedding rows
  std::uint32_t account_buckets = 256;  // accounts likewise
  std::vector<std::string> partitions;  // category 1..n (0 = a partition not seen in training)
  std::vector<std::string> qos;         // likewise
  bool submit_time_only = false;        // no real runtimes among the features
  bool queue_state = false;             // the recorded queue at submission (real-wait mode; see QueueState)
  bool reference = false;               // what an exact replay of the site's own setting did (ReferenceRun)
  bool operator==(const FeatureSchema&) const = default;
};

/// The schema for `trace` (its partitions and QOS as categories). `queue_state` adds the columns of
/// QueueState and the recorded priority; `reference` the columns of a ReferenceRun.
FeatureSchema make_schema(const Trace& trace, bool submit_time_only, bool queue_state = false,
                          bool reference = false);

/// One exact replay of the trace under the site's own setting, which a sweep runs anyway: the surrogate
/// then learns how a setting moves each job away from this reference schedule (its wait, the queue it
/// met and its priority factors there) rather than the whole schedule from scratch. Per trace job.
struct ReferenceRun {
  std::vector<std::int64_t> start, end;  // absolute s of its first run; kUnsetTime when it never started
  std::vector<std::array<float, 5>>
      factors;                       // normalized fair-share, job size, partition, QOS, assoc at submit
  std::int64_t max_age = 7 * 86400;  // s, the site's PriorityMaxAge (the age factor's scale)
};

/// The queue each job met when it was submitted, from the trace's recorded start and end times of
/// earlier jobs (known at that instant in the real system): jobs and requested CPU-hours pending,
/// jobs and CPUs running. For real-wait prediction only: a simulated schedule differs from the record.
struct QueueState {
  std::vector<float> pending_jobs, pending_cpu_hours, running_jobs, running_cpus;  // per trace job
};
QueueState recorded_queue_state(const Trace& trace);

/// The setting-independent tokens of one window: one row of features per job, in submit order.
struct WindowTokens {
  std::uint32_t jobs = 0;
  std::vector<float> numeric;  // jobs × schema.numeric.size(), row-major, not normalised
  std::vector<std::int64_t> user, account, partition, qos;  // categorical indices
  std::vector<std::uint8_t> target;      // 1 = the model predicts this job's wait; 0 = context only
  std::vector<std::uint32_t> job_index;  // index of each token's job in the source trace
  std::int64_t t0 = 0;                   // submit time of the first target job (epoch s)
};

/// Features of `jobs` (indices into trace.jobs, in submit order); `targets[i]` marks the jobs whose
/// wait is predicted (the others are the context just before the window).
/// What each job's features take from the rest of the trace, computed once per trace: its recent
/// history (submissions of everybody, its user and its account over the hour, day, 3 days and week
/// before it, and the work queued ahead of it in a fluid model of the cluster; setting-independent,
/// so it summarises the load the scheduler faces) and, for real-wait
/// prediction, the recorded queue at its submission.
struct TraceContext {
  std::vector<std::array<float, 8>> history;     // per trace job
  std::vector<std::array<float, 5>> queue;       // per trace job, when queue_state
  std::vector<std::array<float, 10>> reference;  // per trace job, when given a ReferenceRun
  std::int64_t max_age = 0;                      // s, ReferenceRun::max_age
  bool queue_state = false;
};
/// `capacity_cpus`: the cluster's CPUs, for the fluid backlog (0 = leave it out).
TraceContext trace_context(const Trace& trace, bool queue_state, double capacity_cpus, bool submit_time_only,
                           const ReferenceRun* reference = nullptr);

/// The tokens of `jobs`; throws std::invalid_argument when the schema wants queue state or reference
/// columns the context lacks.
WindowTokens window_tokens(const Trace& trace, const TraceContext& context,
                           std::span<const std::uint32_t> jobs, std::span<const std::uint8_t> targets,
                           const FeatureSchema& schema);

/// FNV-1a hash bucket of a name (stable across runs and machines; unseen names still map somewhere).
std::int64_t hash_bucket(const std::string& name, std::uint32_t buckets);

}  // namespace slurmtwin::surrogate
