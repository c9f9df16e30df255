#pragma once
// Surrogate against exact simulator, on the points of one sweep database where both ran: per-metric
// errors across settings, how well the surrogate ranks the settings, interval coverage, per-job wait
// errors, and the time each engine took. Used by `slurmtwin compare` (docs/surrogate.md).
#include <string>
#include <vector>

#include "experiments/sweep/sweep_store.hpp"
#include "surrogate/evaluation.hpp"

namespace slurmtwin::experiments {

inline constexpr std::size_t kCompareResamples = 1000;

struct MetricComparison {
  std::string metric;
  Goal goal = Goal::kMin;
  std::size_t points = 0;            // points with both values
  double mae = 0;                    // mean |predicted - exact|, in the metric's unit
  double mean_abs_pct_error = 0;     // mean |predicted - exact| / |exact|, % (points with exact != 0)
  double mean_pct_bias = 0;          // the same, signed: > 0 when the surrogate over-predicts
  double r2 = 0;                     // of the exact values by the predicted medians, across points
  double spearman = 0, kendall = 0;  // rank agreement of the settings
  /// 90% interval of the Spearman figure by resampling the points (kCompareResamples, seeded): the points
  /// are a sample of settings, and a few dozen rank no better than their sampling allows.
  surrogate::Interval spearman_ci;
  double coverage80 = 0;  // share of points whose exact value lies in the predicted interval
  /// The exact value of the point the surrogate ranks best, and the exact best: how much picking by
  /// the surrogate alone would lose (relative, %; 0 = it found the best).
  double regret_pct = 0;
  std::size_t exact_best_rank = 0;  // rank (1 = best) of the exact best point in the surrogate's order
};

struct EngineComparison {
  std::size_t points = 0;                 // points with both an exact value and a prediction
  std::vector<MetricComparison> metrics;  // objectives, then constraint metrics not among them
  // Per-job waits, pooled over the points whose exact and predicted per-job waits are both stored.
  std::size_t job_points = 0, jobs = 0;
  double job_mae_hours = 0, job_r2_log = 0, job_mse_log10 = 0;
  // Seconds per point: the exact replay's and the surrogate's share of a batched prediction (medians
  // over the points).
  double exact_seconds_per_point = 0, surrogate_seconds_per_point = 0;
};

/// Compares the two engines on every row of `rows` that has both (the store's objectives and
/// constraints give the metrics).
EngineComparison compare_engines(const std::vector<SweepRow>& rows,
                                 const std::vector<SweepObjective>& objectives,
                                 const std::vector<SweepConstraint>& constraints);

/// The comparison as Markdown; `wall` adds the wall time each engine's phase took in this run.
std::string comparison_markdown(const EngineComparison& c, const std::string& title, double exact_wall_s,
                                double surrogate_wall_s);

}  // namespace slurmtwin::experiments
