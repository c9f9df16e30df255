#include "experiments/sweep/feasibility.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace slurmtwin::experiments {

double shortfall(const SweepConstraint& c, double value) {
  if (std::isnan(value)) return std::numeric_limits<double>::infinity();
  if (constraint_holds(c, value)) return 0;
  // A strict bound met with equality falls short by nothing measurable; it still fails.
  return std::max(std::abs(value - c.bound), std::numeric_limits<double>::min());
}

Feasibility assess_constraints(const std::vector<SweepRow>& rows,
                               const std::vector<SweepConstraint>& constraints,
                               const std::vector<bool>& consider) {
  const auto counted = [&](std::size_t i) { return consider.empty() || consider[i]; };
  Feasibility f;
  f.feasible.assign(rows.size(), false);
  f.constraints.assign(constraints.size(), {std::nan(""), std::nan(""), 0});
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!counted(i)) continue;
    bool all = true;
    for (std::size_t k = 0; k < constraints.size(); ++k) {
      const double v = rows[i].constraint_values[k];
      auto& r = f.constraints[k];
      if (!std::isnan(v)) {
        r.lo = std::isnan(r.lo) ? v : std::min(r.lo, v);
        r.hi = std::isnan(r.hi) ? v : std::max(r.hi, v);
      }
      const bool holds = constraint_holds(constraints[k], v);
      r.met += holds ? 1 : 0;
      all = all && holds;
    }
    f.feasible[i] = all;
    f.count += all ? 1 : 0;
  }
  if (constraints.empty() || f.count > 0) return f;
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!counted(i)) continue;
    double miss = 0;
    for (std::size_t k = 0; k < constraints.size(); ++k) {
      const auto& r = f.constraints[k];
      const double range = std::isnan(r.lo) ? 0 : r.hi - r.lo;
      const double scale = std::max({std::abs(constraints[k].bound), range, 1e-12});
      miss += shortfall(constraints[k], rows[i].constraint_values[k]) / scale;
    }
    if (miss < best) {
      best = miss;
      f.closest = i;
    }
  }
  return f;
}

std::optional<bool> resolved(const SweepRow& a, const SweepRow& b, std::size_t k) {
  const double sd = std::hypot(a.standard_error(k), b.standard_error(k));
  if (std::isnan(sd)) return std::nullopt;
  return std::abs(a.objectives[k] - b.objectives[k]) > 2 * sd;
}

std::string better_points_text(std::size_t better) {
  return better == 1 ? std::string("1 point of the sweep does better in every objective")
                     : fmt::format("{} points of the sweep do better in every objective", better);
}

Standing assess_current(const std::vector<SweepRow>& rows, const std::string& key,
                        const std::vector<SweepConstraint>& constraints,
                        const std::vector<std::size_t>& candidates, const std::vector<Goal>& goals) {
  Standing s;
  for (std::size_t k = 0; k < goals.size(); ++k) {
    std::size_t best = rows.size();
    for (auto i : candidates)
      if (best == rows.size() || (goals[k] == Goal::kMin ? rows[i].objectives[k] < rows[best].objectives[k]
                                                         : rows[i].objectives[k] > rows[best].objectives[k]))
        best = i;
    s.best.push_back(best);
  }
  const auto it = std::find_if(rows.begin(), rows.end(), [&](const SweepRow& r) { return r.key == key; });
  if (it == rows.end()) return s;
  s.row = static_cast<std::size_t>(it - rows.begin());
  for (std::size_t k = 0; k < constraints.size(); ++k)
    if (!constraint_holds(constraints[k], it->constraint_values[k])) s.broken.push_back(k);
  for (auto i : candidates) {
    bool all = true, one = false;
    for (std::size_t k = 0; k < goals.size(); ++k) {
      const double a = rows[i].objectives[k], b = it->objectives[k];
      const bool better = goals[k] == Goal::kMin ? a < b : a > b;
      all = all && (better || a == b);
      one = one || better;
    }
    s.better += all && one ? 1 : 0;
  }
  return s;
}

}  // namespace slurmtwin::experiments
