#include "experiments/sweep_hybrid.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include <Eigen/Dense>

#include "experiments/surrogate_data.hpp"

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

std::vector<std::size_t> calibration_points(std::size_t n, std::size_t count) {
  count = std::min(count, n);
  std::vector<std::size_t> out;
  for (std::size_t c = 0; c < count; ++c) out.push_back((2 * c + 1) * n / (2 * count));
  return out;
}

std::vector<double> point_coordinates(const SweepSpec& spec, const SweepPoint& point) {
  std::vector<double> x;
  for (const auto& p : spec.parameters) {
    const double v = point.at(p.name);
    if (!p.values.empty()) {
      const auto it = std::find(p.values.begin(), p.values.end(), v);
      x.push_back(p.values.size() > 1
                      ? static_cast<double>(it - p.values.begin()) / static_cast<double>(p.values.size() - 1)
                      : 0.0);
      continue;
    }
    const bool log = surrogate_log_scale(p);
    const auto f = [&](double a) { return log ? std::log1p(std::max(0.0, a)) : a; };
    x.push_back(p.hi > p.lo ? (f(v) - f(p.lo)) / (f(p.hi) - f(p.lo)) : 0.0);
  }
  return x;
}

void calibrate(std::vector<PointPrediction>& points, const std::vector<std::vector<double>>& coordinates,
               const std::vector<std::size_t>& calibration, const std::vector<std::vector<double>>& exact,
               std::size_t objectives) {
  if (calibration.size() < 2 || points.empty()) return;
  const std::size_t d = coordinates.at(0).size() + 1;  // coordinates, then the surrogate's median
  for (std::size_t k = 0; k < objectives; ++k) {
    // Standardize every column over all points, so one penalty fits every unit.
    Eigen::MatrixXd all(static_cast<Eigen::Index>(points.size()), static_cast<Eigen::Index>(d));
    for (std::size_t i = 0; i < points.size(); ++i) {
      for (std::size_t j = 0; j + 1 < d; ++j)
        all(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = coordinates[i][j];
      all(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(d - 1)) = points[i].mid[k];
    }
    if (!all.allFinite()) continue;
    const Eigen::RowVectorXd mean = all.colwise().mean();
    Eigen::RowVectorXd sd = ((all.rowwise() - mean).array().square().colwise().mean()).sqrt();
    for (Eigen::Index j = 0; j < sd.size(); ++j)
      if (!(sd(j) > 1e-12)) sd(j) = 1;
    const Eigen::MatrixXd z = (all.rowwise() - mean).array().rowwise() / sd.array();
    Eigen::MatrixXd a(static_cast<Eigen::Index>(calibration.size()), static_cast<Eigen::Index>(d));
    Eigen::VectorXd y(static_cast<Eigen::Index>(calibration.size()));
    for (std::size_t c = 0; c < calibration.size(); ++c) {
      a.row(static_cast<Eigen::Index>(c)) = z.row(static_cast<Eigen::Index>(calibration[c]));
      y(static_cast<Eigen::Index>(c)) = exact[c][k];
    }
    if (!y.allFinite()) continue;
    // Centre on the calibration points so the intercept is not penalized.
    const Eigen::RowVectorXd a_mean = a.colwise().mean();
    const double y_mean = y.mean();
    const Eigen::MatrixXd ac = a.rowwise() - a_mean;
    const Eigen::MatrixXd gram =
        ac.transpose() * ac +
        0.01 * static_cast<double>(calibration.size()) *
            Eigen::MatrixXd::Identity(static_cast<Eigen::Index>(d), static_cast<Eigen::Index>(d));
    const Eigen::VectorXd w = gram.ldlt().solve(ac.transpose() * (y.array() - y_mean).matrix());
    for (std::size_t i = 0; i < points.size(); ++i) {
      auto& p = points[i];
      const double fitted = y_mean + (z.row(static_cast<Eigen::Index>(i)) - a_mean).dot(w);
      const double shift = fitted - p.mid[k];
      p.mid[k] = fitted;
      p.lo[k] += shift;
      p.hi[k] += shift;
    }
  }
}

}  // namespace slurmtwin::cli
