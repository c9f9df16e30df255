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

}  // namespace slurmtwin::cli
