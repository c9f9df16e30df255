#pragma once
// Building the surrogate's dataset from the exact simulator: cut a trace into windows (a block of
// target jobs in submit order, preceded by context jobs that build up the queue), replay every
// window under every sampled setting, and keep each target job's simulated wait. Or, in recorded
// mode, keep the trace's own recorded waits (real-wait prediction).
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "experiments/replay/replay.hpp"
#include "experiments/sweep/sweep_spec.hpp"
#include "experiments/sweep/sweep_store.hpp"
#include "surrogate/dataset.hpp"
#include "traces/site.hpp"
#include "traces/trace.hpp"

namespace slurmtwin::experiments {

struct DatasetOptions {
  std::uint32_t window_jobs = 768;   // target jobs per window
  std::uint32_t context_jobs = 256;  // jobs before the window that are replayed (and seen) too
  std::uint32_t stride_jobs = 0;     // first target of window k+1 minus that of window k (0 = window_jobs)
  std::uint32_t max_windows = 0;     // 0 = as many as the trace holds
  std::vector<SweepParameter> parameters;  // the swept settings (ranges)
  std::uint32_t settings = 40;             // Latin-hypercube points besides the site's own setting
  std::uint64_t seed = 1;
  bool recorded = false;          // waits from the trace's recorded start times, no simulation
  bool window_replay = false;     // replay each window alone (context + targets from an empty cluster)
                                  // instead of taking its waits from one replay of the whole trace
  bool submit_time_only = false;  // no real runtimes among the features
  bool queue_state = false;       // recorded queue at submission among the features (real-wait mode)
  bool reference = false;         // features from an exact replay of the site's own setting (ReferenceRun)
  Seconds start_offset = 0;  // every replay's controller starts this long before the first submit (s): it
                             // moves the phase of every timer (backfill cycles, main passes, decay ticks)
  /// Replays per setting, their controller starts spread over one bf_interval (start_offset + k ×
  /// bf_interval / phases): each job's wait is the mean over them, its expected wait whatever the phase
  /// of slurmctld's timers (NaN when it never started in one of them). docs/surrogate.md.
  std::uint32_t phases = 1;
  unsigned threads = 0;                              // replays in parallel (0 = all cores)
  const surrogate::FeatureSchema* schema = nullptr;  // reuse a checkpoint's schema (fine-tuning)
  /// When set and raised (SIGINT), the replays stop at their next step of simulated time and
  /// build_dataset throws Interrupted (experiments/interrupt.hpp).
  const std::atomic<bool>* stop = nullptr;
};

/// Whether the surrogate sees `p` on a log1p scale (SettingAxis::log): the PriorityWeight*, whose useful
/// values span orders of magnitude, and log-scaled ranges. Hybrid calibration uses the same coordinates.
bool surrogate_log_scale(const SweepParameter& p);

/// The six PriorityWeight* settings over [0, 100000] on a log1p scale (the default sweep space).
std::vector<SweepParameter> default_surrogate_parameters();

/// The site's current value (current_setting) of a setting the surrogate can vary: any a sweep can
/// (setting_is_known: the weights, PriorityWeightTRES/<tres>, the age and decay times, the flags, QOS
/// priorities, the bf_* and main-scheduler settings); throws std::invalid_argument otherwise.
double surrogate_setting(const Site& site, const std::string& name);

/// The jobs of window `k`: indices into trace.jobs (submit order) and which are targets.
struct WindowJobs {
  std::vector<std::uint32_t> jobs;
  std::vector<std::uint8_t> target;
};
std::vector<WindowJobs> cut_windows(const Trace& trace, const DatasetOptions& options);
/// Every job of `trace` (with a submit time) once as a target, for inference over a whole trace: blocks
/// of `window_jobs` jobs in submit order, each preceded by up to `context_jobs` context jobs (the first
/// block has none, the last may be shorter). cut_windows instead skips the first `context_jobs` jobs.
std::vector<WindowJobs> cover_windows(const Trace& trace, std::uint32_t window_jobs,
                                      std::uint32_t context_jobs);

/// The trace restricted to `jobs` (same dictionaries and origin).
Trace sub_trace(const Trace& trace, const std::vector<std::uint32_t>& jobs);

/// Wait (s) of every job of `trace` replayed on `site` as the replay's metrics count it (sim/metrics.cpp):
/// the start of the run that finished minus its (re)submission — a requeue resets Submit, as sacct
/// shows — NaN for jobs that never started, in trace order. The sweeps' per-job waits and the surrogate
/// engine's schedules use the same. A raised `stop` ends the replay with Interrupted.
std::vector<float> simulated_waits(const Site& site, const Trace& trace,
                                   const std::atomic<bool>* stop = nullptr, Seconds start_offset = 0);
/// The same from a replay already made.
std::vector<float> replay_waits(const ReplayResult& replay, const Trace& trace);

/// The surrogate's reference features from an exact replay made with ReplayOptions::submit_factors.
surrogate::ReferenceRun reference_run(const ReplayResult& replay, const Trace& trace);

/// The trace context the surrogate's features need: load history, and the reference replay's view when
/// `reference` is given (its site's CPUs give the fluid model's capacity).
surrogate::TraceContext surrogate_context(const Site& site, const Trace& trace,
                                          const surrogate::FeatureSchema& schema,
                                          const ReplayResult* reference);

/// Training data from a sweep's exact results (active learning: `surrogate update`): the windows of
/// `trace` (cut_windows with `window_jobs` and `context_jobs`), one setting per row of `rows` that the
/// exact simulator produced with per-job waits stored (`job_waits: true` in the spec), each axis at
/// the row's site's value (`base` with the row's parameters applied). Rows without per-job waits or of
/// another trace are skipped; throws std::invalid_argument when none is left.
surrogate::SurrogateDataset dataset_from_sweep(const Site& base, const Trace& trace,
                                               const std::vector<SweepRow>& rows,
                                               const surrogate::FeatureSchema& schema,
                                               const std::vector<surrogate::SettingAxis>& axes,
                                               std::uint32_t window_jobs, std::uint32_t context_jobs);

surrogate::SurrogateDataset build_dataset(
    const Site& site, const Trace& trace, const DatasetOptions& options,
    const std::function<void(std::size_t done, std::size_t total)>& progress = {});

}  // namespace slurmtwin::experiments
