#include "experiments/sweep_hybrid.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

namespace slurmtwin::cli {

std::size_t exact_budget(const HybridOptions& options, std::size_t n) {
  if (options.max_exact < 1)
    return static_cast<std::size_t>(std::floor(options.max_exact * static_cast<double>(n)));
  return std::min(n, static_cast<std::size_t>(options.max_exact));
}

std::vector<std::size_t> select_for_verification(const std::vector<PointPrediction>& points,
                                                 const std::vector<SweepObjective>& objectives,
                                                 const std::vector<SweepConstraint>& constraints,
                                                 const HybridOptions& options) {
  const std::size_t budget = exact_budget(options, points.size());
  const std::size_t n_obj = objectives.size();
  std::vector<std::size_t> chosen;
  std::set<std::size_t> taken;
  const auto take = [&](std::size_t i) {
    if (chosen.size() < budget && taken.insert(i).second) chosen.push_back(i);
  };
  // May be feasible: each constraint holds at the better end of its predicted interval.
  const auto maybe_feasible = [&](const PointPrediction& p) {
    for (std::size_t c = 0; c < constraints.size(); ++c) {
      const std::size_t k = n_obj + c;
      const double best =
          bounds_above(constraints[c].op) ? std::min(p.lo[k], p.mid[k]) : std::max(p.hi[k], p.mid[k]);
      if (!constraint_holds(constraints[c], best)) return false;
    }
    return true;
  };
  std::vector<std::vector<std::size_t>> ranked(n_obj);
  for (std::size_t k = 0; k < n_obj; ++k) {
    for (std::size_t i = 0; i < points.size(); ++i)
      if (!std::isnan(points[i].mid[k]) && maybe_feasible(points[i])) ranked[k].push_back(i);
    const bool min = objectives[k].goal == Goal::kMin;
    std::stable_sort(ranked[k].begin(), ranked[k].end(), [&](std::size_t a, std::size_t b) {
      return min ? points[a].mid[k] < points[b].mid[k] : points[a].mid[k] > points[b].mid[k];
    });
    if (ranked[k].size() > options.top_k) ranked[k].resize(options.top_k);
  }
  for (std::size_t r = 0; r < options.top_k; ++r)
    for (std::size_t k = 0; k < n_obj; ++k)
      if (r < ranked[k].size()) take(ranked[k][r]);

  // Wide intervals, widest (relative to the median) first.
  std::vector<std::pair<double, std::size_t>> wide;
  for (std::size_t i = 0; i < points.size(); ++i) {
    double widest = 0;
    for (std::size_t k = 0; k < n_obj; ++k) {
      const auto& p = points[i];
      const double width = (p.hi[k] - p.lo[k]) / std::max(std::abs(p.mid[k]), 1e-12);
      if (std::isfinite(width)) widest = std::max(widest, width);
    }
    if (widest > options.verify_width) wide.emplace_back(widest, i);
  }
  std::stable_sort(wide.begin(), wide.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [width, i] : wide) take(i);
  return chosen;
}

}  // namespace slurmtwin::cli
