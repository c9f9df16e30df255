#pragma once
// The surrogate as a sweep engine: predicts every job's wait under each design point of a sweep with
// a trained checkpoint (surrogate/model.hpp) and turns the predicted schedule into the same metrics a
// replay reports, so `sweep run --engine surrogate|hybrid` and `compare` can score points without
// replaying them. docs/surrogate.md ("Surrogate in the loop").
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "experiments/replay/replay.hpp"
#include "experiments/sweep/sweep.hpp"
#include "sim/metrics.hpp"

namespace slurmtwin::experiments {

/// The surrogate engine's settings (`--model`, `--window-jobs`, `--context-jobs`, `--point-batch`).
struct SurrogateEngineOptions {
  std::string model;                 // checkpoint (slurmtwin surrogate train)
  std::uint32_t window_jobs = 384;   // target jobs per window (as the model was trained)
  std::uint32_t context_jobs = 128;  // jobs before each window the model sees as context
  std::size_t point_batch = 128;     // points predicted together (memory: batch × jobs × 3 doubles)
  int threads = 0;                   // libtorch CPU threads (0 = all cores)
};

/// The metrics of `base`'s schedule with each started job's start moved to its (re)submission in `base`
/// + `waits[trace index]` (s, rounded to whole seconds; the wait of simulated_waits); its run keeps the
/// length of its last run in `base`. Jobs `base` rejected or never started stay so; interrupted runs
/// (preemption) are dropped: the surrogate predicts waits, not preemptions. `work` is a copy of `*base.state`
/// that this rewrites (reused across calls to save the copy). Without `series` the schedule's time
/// series is not built: the metrics that read it (metric_reads_series) are then 0 or -1.
sim::ReplayMetrics predicted_schedule_metrics(const ReplayResult& base, const Trace& trace,
                                              const std::vector<double>& waits, sim::SimState& work,
                                              bool series = true);

class SurrogateEngine {
 public:
  /// Loads the checkpoint, checks that it can vary every swept setting of `spec` (InputError naming the
  /// spec line otherwise), replays the base site once exactly (which jobs start, their partition,
  /// CPUs and run time come from there) and encodes the trace's windows once. `warnings` receives
  /// what the user should know (a model trained on another trace, points outside its training range).
  SurrogateEngine(const SweepSpec& spec, const SweepPlan& plan, const SurrogateEngineOptions& options,
                  std::vector<std::string>& warnings);
  ~SurrogateEngine();
  SurrogateEngine(const SurrogateEngine&) = delete;
  SurrogateEngine& operator=(const SurrogateEngine&) = delete;

  /// Predictions for the plan's tasks `tasks`, in that order. Deterministic.
  std::vector<SurrogatePrediction> predict(const std::vector<std::size_t>& tasks) const;
  /// Predictions for resolved sites (the base site with other settings applied; e.g. an optimiser's
  /// candidates), in order.
  std::vector<SurrogatePrediction> predict_sites(const std::vector<const Site*>& sites) const;

  /// Wall time of the set-up (loading, the base replay, encoding windows), s.
  double setup_seconds() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace slurmtwin::experiments
