#pragma once
// Hybrid sweeps: which of the points the surrogate scored the exact simulator re-evaluates. The
// surrogate ranks well enough to find the neighbourhood of the best points but not to certify them,
// so the exact simulator checks the top of each objective's ranking and the points whose predicted
// interval is too wide to trust, within a budget.
#include <cstddef>
#include <vector>

#include "experiments/sweep.hpp"

namespace slurmtwin::cli {

/// The surrogate's prediction of one point: per objective then per constraint metric (the spec's
/// orders), the median and the 80% interval.
struct PointPrediction {
  std::vector<double> mid, lo, hi;
};

/// Indices (into `points`) to evaluate exactly, in the order they were chosen:
/// 1. each objective's best `top_k` medians among the points that may be feasible (every constraint
///    holds at the better end of its interval), taken round-robin over objectives by rank;
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
// design correct it much better than they would verify its top.

/// `count` of `n` points in design order, spread evenly: the middle of each of `count` equal strides.
std::vector<std::size_t> calibration_points(std::size_t n, std::size_t count);

/// Coordinates of a design point for calibration: each range parameter scaled to [0, 1] over its range,
/// on a log1p scale where the spec's scale is log or the setting is a PriorityWeight* (as the
/// surrogate sees the weights); a value-list parameter by its value's index over the list.
std::vector<double> point_coordinates(const SweepSpec& spec, const SweepPoint& point);

/// Replaces each objective's median (and shifts its interval by as much) by a ridge regression of the
/// exact values at the calibration points on the point's coordinates and the surrogate's median
/// (both standardized over all points; ridge penalty 0.01 × the calibration points, intercept free).
/// `exact[c][k]`: objective k at `calibration[c]`. Needs two calibration points at least; objectives not
/// finite there are left.
void calibrate(std::vector<PointPrediction>& points, const std::vector<std::vector<double>>& coordinates,
               const std::vector<std::size_t>& calibration, const std::vector<std::vector<double>>& exact,
               std::size_t objectives);

}  // namespace slurmtwin::cli
