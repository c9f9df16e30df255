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

namespace slurmtwin::cli {

/// What the surrogate predicts for one design point.
struct SurrogatePrediction {
  /// Metrics of the schedule in which every job waits its predicted 10%, 50% and 90% quantile.
  std::array<sim::ReplayMetrics, 3> metrics;
  /// Predicted median wait (s) of each trace job, in trace order; -1 for jobs the site rejects or that
  /// never start in the exact replay of the base site.
  std::vector<double> median_waits;
  double seconds = 0;  // wall time of this point's share of the prediction
};

/// The metrics of `base`'s schedule with each started job's start moved to its (re)submission in `base`
/// + `waits[trace index]` (s, rounded to whole seconds; the wait of simulated_waits); its run keeps the
/// length of its last run in `base`. Jobs `base` rejected or never started stay so; interrupted runs
/// (preemption) are dropped: the surrogate predicts waits, not preemptions. `work` is a copy of `*base.state`
/// that this rewrites (reused across calls to save the copy).
sim::ReplayMetrics predicted_schedule_metrics(const ReplayResult& base, const Trace& trace,
                                              const std::vector<double>& waits, sim::SimState& work);

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

}  // namespace slurmtwin::cli
