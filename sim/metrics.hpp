#pragma once
// Replay metrics: waits and bounded slowdown per partition/account/QOS, utilisation and queue length
// over time, fairness, and (when the trace recorded real starts) fidelity against the recording.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/controller.hpp"
#include "sim/sim_state.hpp"
#include "traces/trace.hpp"

namespace slurmtwin::sim {

/// Bounded slowdown threshold tau (s): bsld = max(1, (wait + run) / max(run, tau)).
inline constexpr Seconds kSlowdownTau = 10;
/// Width of the utilisation / queue-length time series buckets (s).
inline constexpr Seconds kSeriesBucket = 3600;
/// At most this many buckets (an hour each: 1.9 years); a longer span doubles the width as often as
/// needed, so that an idle stretch of centuries (an SWF job 158 years after the others, a snapshot
/// far past the end) costs neither memory nor a metrics.json of hundreds of MB.
inline constexpr std::size_t kMaxSeriesBuckets = 16384;

/// Integrates utilisation and queue length over simulated time (an observer of the controller).
class TimeSeriesRecorder final : public ReplayObserver {
 public:
  void on_time_advance(const SimState& state, Seconds from, Seconds to) override;
  /// Records [from, to) with `used_cpus` allocated and `pending` jobs queued (`origin`: start of bucket 0
  /// when this is the first interval), and the memory (MB) and GPUs jobs hold.
  void add(Seconds origin, Seconds from, Seconds to, double used_cpus, std::size_t pending,
           double used_mem_mb = 0, double used_gpus = 0);

  struct Bucket {
    // Pending jobs by reason (PendingReason index), sampled once at the bucket's first time advance;
    // `samples` of them summed (buckets merged when the width doubles).
    std::array<double, static_cast<std::size_t>(PendingReason::kCount)> reasons{};
    double samples = 0;
    double cpu_seconds = 0;     // allocated CPU-seconds in the bucket
    double queue_seconds = 0;   // pending-job-seconds in the bucket
    double mem_mb_seconds = 0;  // allocated MB-seconds
    double gpu_seconds = 0;     // allocated GPU-seconds
  };
  bool resources = false;         // memory and GPUs recorded (by a replay, or schedule_series)
  Seconds first = kUnsetTime;     // start of bucket 0 (absolute, s)
  Seconds width = kSeriesBucket;  // of each bucket (s): kSeriesBucket times a power of two
  std::vector<Bucket> buckets;    // at most kMaxSeriesBuckets
  std::map<std::size_t, Seconds> queue_length_time;  // queue length -> seconds spent at it
  std::size_t max_queue = 0;
};

struct WaitStats {
  std::uint64_t jobs = 0;                                  // started jobs
  double mean = 0, median = 0, p90 = 0, p99 = 0, max = 0;  // wait (start - eligible... submit), s
  double p95 = 0;                                          // wait, s (not in metrics_to_json)
  double mean_bsld = 0;
};

/// Twin vs history over one group of jobs (those with both a recorded and a simulated start).
struct GroupFidelity {
  std::uint64_t jobs = 0;
  double start_error_mean_abs = 0;                         // s
  double recorded_mean_wait = 0, simulated_mean_wait = 0;  // s
  double mean_wait_deviation = 0;  // (simulated - recorded) / recorded; 0 when recorded is 0
};

struct FidelityStats {
  std::uint64_t jobs = 0;  // jobs with both a recorded and a simulated start
  double start_error_mean_abs = 0, start_error_p50_abs = 0, start_error_p90_abs = 0;  // s
  double recorded_mean_wait = 0, simulated_mean_wait = 0, mean_wait_deviation = 0;    // s, s, relative
  double moving_average_wait_mape = 0;            // MAPE of the 2-week moving average wait (by submit day)
  std::map<std::string, double> ks_by_partition;  // KS statistic of wait distributions
  // per partition, per QOS, per week of submission (the week's first day, YYYY-MM-DD, counted from the
  // replay's start)
  std::map<std::string, GroupFidelity> by_partition, by_qos, by_week;
};

struct ReplayMetrics {
  std::uint64_t input_jobs = 0, rejected = 0, started = 0, never_started = 0;
  std::uint64_t cancelled_before_start = 0;  // scancel while pending (the trace says when)
  std::map<std::string, std::uint64_t> rejected_by_reason;
  std::map<std::string, std::uint64_t> end_states;
  WaitStats overall;
  std::map<std::string, WaitStats> by_partition, by_account, by_qos;
  Seconds first_submit = 0, last_end = 0, makespan = 0;
  double utilisation = 0;  // allocated CPU-seconds / (cluster CPUs * makespan)
  // Memory and GPUs held by jobs (running or suspended) / what the nodes have, over the makespan; -1
  // where not recorded or, for GPUs, when the nodes have none.
  double memory_utilisation = -1, gpu_utilisation = -1;
  std::vector<double> memory_utilisation_series, gpu_utilisation_series;  // per series_bucket (or empty)
  // Pending jobs per reason (Slurm's names), per series_bucket: as the scheduler last gave them at the
  // bucket's start (averaged over merged buckets); reasons no job had are left out.
  std::map<std::string, std::vector<double>> pending_reasons_series;
  double mean_queue_length = 0;
  std::size_t max_queue_length = 0;
  std::vector<std::pair<std::size_t, double>> queue_length_cdf;  // (length, fraction of time <= length)
  std::vector<double> utilisation_series;                        // per series_bucket
  std::vector<double> queue_series;                              // mean pending jobs per series_bucket
  Seconds series_bucket = kSeriesBucket;                         // width of the series' buckets, s
  std::map<std::string, std::pair<double, double>>
      fairness;  // top-level account with jobs in the trace -> (usage share, target share among those)
  std::uint64_t preemptions = 0;  // interrupted runs (each requeue or cancel by preemption)
  std::map<std::string, std::uint64_t> preemptions_by_partition, preemptions_by_qos;
  double preempted_core_hours = 0;  // work lost: CPU-hours of interrupted runs
  std::uint64_t suspensions = 0;    // SUSPEND preemptions (the job resumed later; no work lost)
  double suspended_hours = 0;       // job-hours spent suspended
  bool has_fidelity = false;
  FidelityStats fidelity;
};

/// The time series of a schedule that no replay produced (a surrogate's prediction): from each
/// accepted job's submit, start and end in `state.jobs`, as a replay's recorder would have seen them,
/// up to `state.now` (the last event).
TimeSeriesRecorder schedule_series(const SimState& state);

/// Computes the metrics of a finished replay.
ReplayMetrics compute_metrics(const SimState& state, const Trace& trace, const TimeSeriesRecorder& series);
/// The metrics as a JSON document (stable key order, fixed precision: byte-identical across runs).
std::string metrics_to_json(const ReplayMetrics& m);

}  // namespace slurmtwin::sim
