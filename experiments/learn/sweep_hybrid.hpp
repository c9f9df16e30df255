#pragma once
// Hybrid sweeps: which points the exact simulator re-evaluates, within a budget. A prediction (a
// response surface fit on the exact values so far, with the surrogate's median as one more regressor
// when a model scored the points) finds the neighbourhood of the best points but cannot certify them,
// so the exact simulator checks the top of each objective's ranking and the points whose predicted
// interval is too wide to trust.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "experiments/sweep/sweep.hpp"

namespace slurmtwin::experiments {

/// Which points a hybrid sweep re-evaluates exactly.
struct HybridOptions {
  std::size_t top_k =
      10;  // per objective: the best K by predicted median (among points that may be feasible)
  double verify_width = 1.0;  // and every point whose 80% interval of an objective is wider than this
                              // fraction of its median
  double max_exact = 0.1;     // at most this many exact evaluations: a fraction of the points when < 1,
                              // else a count
  double calibrate = 0.3;     // share of that budget first spent on points spread over the design, whose
                              // exact values correct the surrogate's (fit_surface below)
  double model_first = 0;     // with a model: share of that budget spent before all else on the model's own
                              // best predictions (per objective, in turn; docs/log/surrogate.md, "Wide
                              // setting space": what paid on new weeks); calibration takes what is left
  std::size_t round = 8;      // after those, points are chosen this many at a time, the response surface
                              // refit on every exact value so far (a fixed count, not the thread count,
                              // so that the choice does not depend on -j)
};

/// Indices (into `points`) to evaluate exactly, in the order they were chosen:
/// 1. each objective's best `top_k` medians among the points that may be feasible (every constraint
///    holds at the better end of its interval), taken in turn: each objective its best one not taken
///    yet (a point two objectives rank high uses one turn, and the other objective takes its next);
/// 2. then every point with an objective whose interval width (hi - lo) exceeds `verify_width` times
///    |median|, widest first;
/// until `max_exact` points are chosen (a fraction of the points when < 1, else a count). Ties go to
/// the lower index, so the choice is deterministic.
std::vector<std::size_t> select_for_verification(const std::vector<PointPrediction>& points,
                                                 const std::vector<SweepObjective>& objectives,
                                                 const std::vector<SweepConstraint>& constraints,
                                                 const HybridOptions& options);

/// The exact-evaluation budget of `options` for `n` points.
std::size_t exact_budget(const HybridOptions& options, std::size_t n);

// Calibration. The surrogate's error on a sweep's objectives is mostly a bias that varies smoothly
// with the setting (on the ub_medium week its medians ranked 136 settings at Spearman −0.22, while a
// linear fit on exact points ranks held-out ones at 0.70–0.79): a few exact values spread over the
// design correct it much better than they would verify its top. On the full 1,000-point ub_medium
// design the fit alone (no surrogate column) chose as well, so a hybrid without a model screens with
// that response surface only (docs/log/surrogate.md, "Hybrid without a model").

/// `count` of `n` points in design order, spread evenly: the middle of each of `count` equal strides.
std::vector<std::size_t> calibration_points(std::size_t n, std::size_t count);

/// Coordinates of a design point for calibration: each range parameter scaled to [0, 1] over its range,
/// on a log1p scale where the spec's scale is log or the setting is a PriorityWeight* (as the
/// surrogate sees the weights); a value-list parameter by its value's index over the list.
std::vector<double> point_coordinates(const SweepSpec& spec, const SweepPoint& point);

/// The response surface's regressors: the coordinates, then every product x_i x_j (i <= j), so the
/// surface can bend and the weights can interact (each weight matters relative to the others).
std::vector<double> quadratic_features(const std::vector<double>& x);

/// Per metric k < `metrics`: a ridge regression of the exact values `exact[e][k]` at the points
/// `exact_points[e]` on `features` and — where every point has a finite median for k (a surrogate
/// scored them) — the surrogate's median, all standardized over all points (ridge penalty 0.01 × the
/// exact points, intercept free). Every point's median becomes the fit. With the surrogate's column the
/// interval moves with the median; without it the interval is the fit ± 1.2816 × the leave-one-out RMS
/// residual at the exact points (80% if the residuals were normal). Needs two exact points; metrics not
/// finite at one of them are left as they are.
void fit_surface(std::vector<PointPrediction>& points, const std::vector<std::vector<double>>& features,
                 const std::vector<std::size_t>& exact_points, const std::vector<std::vector<double>>& exact,
                 std::size_t metrics);

/// The hybrid's exact evaluations, in the order chosen: with a surrogate, first `model_first` × the
/// budget of its best predictions (select_for_verification on its own medians); then `calibrate` × the
/// budget points spread over the design (calibration_points, less those already chosen, within what is
/// left of the budget), then rounds of `options.round` points chosen by
/// select_for_verification on fit_surface refit on every exact value so far (regressors `features`, e.g.
/// quadratic_features of point_coordinates), each round evaluated before the next is chosen, until the
/// budget is spent or no point may be feasible. `surrogate`: per point the surrogate's prediction, or NaN
/// where none scored the points; with fewer than two exact values to fit, it chooses the whole budget
/// at once (calibrate 0: the surrogate's own ranking). std::invalid_argument when there is neither a
/// surrogate nor two calibration points.
std::vector<std::size_t> choose_for_exact(const std::vector<PointPrediction>& surrogate,
                                          const std::vector<std::vector<double>>& features,
                                          const std::vector<SweepObjective>& objectives,
                                          const std::vector<SweepConstraint>& constraints,
                                          const HybridOptions& options, const ExactEvaluator& evaluate);

/// How well the hybrid chooses among points whose exact values are already known (a dataset's settings,
/// a finished exact sweep): one objective, minimised. For each of `orders` random orders of the points
/// (seeded: the calibration points depend on the design order) and each budget, choose_for_exact runs
/// with regressors quadratic_features(coordinates), the known `exact` values as its evaluator and
/// `predicted` as the surrogate's median (empty: the surface alone screens), and the regret is how far the
/// best exact value it evaluated is above the best of all points, in % of that best.
struct HybridRegret {
  std::size_t budget = 0;
  std::vector<double> regret_pct;  // one per order
  /// The share of orders within `within_pct` % of the best.
  double hit_rate(double within_pct) const;
  /// The median (lower middle) and the largest regret over the orders.
  double median_pct() const;
  double worst_pct() const;
};
std::vector<HybridRegret> hybrid_regret_over_orders(const std::vector<std::vector<double>>& coordinates,
                                                    const std::vector<double>& exact,
                                                    const std::vector<double>& predicted,
                                                    const std::vector<std::size_t>& budgets,
                                                    const HybridOptions& options, std::size_t orders,
                                                    std::uint64_t seed);

}  // namespace slurmtwin::experiments
