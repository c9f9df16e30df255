#include "experiments/learn/sweep_hybrid.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include <Eigen/Dense>

#include "experiments/learn/surrogate_data.hpp"
#include "surrogate/evaluation.hpp"
#include "traces/rng.hpp"

namespace slurmtwin::experiments {

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
  // In turn, each objective takes its best point not taken yet, so that when the budget runs out
  // every objective has had as many new points (a point two objectives rank high costs one turn).
  std::vector<std::size_t> next(n_obj, 0);
  for (bool more = true; more && chosen.size() < budget;) {
    more = false;
    for (std::size_t k = 0; k < n_obj; ++k) {
      while (next[k] < ranked[k].size() && taken.count(ranked[k][next[k]])) ++next[k];
      if (next[k] < ranked[k].size()) {
        take(ranked[k][next[k]++]);
        more = true;
      }
    }
  }

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

std::vector<double> quadratic_features(const std::vector<double>& x) {
  std::vector<double> out = x;
  for (std::size_t i = 0; i < x.size(); ++i)
    for (std::size_t j = i; j < x.size(); ++j) out.push_back(x[i] * x[j]);
  return out;
}

void fit_surface(std::vector<PointPrediction>& points, const std::vector<std::vector<double>>& features,
                 const std::vector<std::size_t>& exact_points, const std::vector<std::vector<double>>& exact,
                 std::size_t metrics) {
  using Eigen::Index;
  const auto n_exact = static_cast<Index>(exact_points.size());
  if (n_exact < 2 || points.empty()) return;
  const std::size_t n_features = features.at(0).size();
  for (std::size_t k = 0; k < metrics; ++k) {
    Eigen::VectorXd y(n_exact);
    for (Index e = 0; e < n_exact; ++e) y(e) = exact[static_cast<std::size_t>(e)][k];
    if (!y.allFinite()) continue;
    const bool with_surrogate = std::all_of(
        points.begin(), points.end(), [&](const PointPrediction& p) { return std::isfinite(p.mid[k]); });
    const auto d = static_cast<Index>(n_features + (with_surrogate ? 1 : 0));
    // Standardize every column over all points, so one penalty fits every unit.
    Eigen::MatrixXd all(static_cast<Index>(points.size()), d);
    for (std::size_t i = 0; i < points.size(); ++i) {
      for (std::size_t j = 0; j < n_features; ++j)
        all(static_cast<Index>(i), static_cast<Index>(j)) = features[i][j];
      if (with_surrogate) all(static_cast<Index>(i), d - 1) = points[i].mid[k];
    }
    if (!all.allFinite()) continue;
    const Eigen::RowVectorXd mean = all.colwise().mean();
    Eigen::RowVectorXd sd = ((all.rowwise() - mean).array().square().colwise().mean()).sqrt();
    for (Index j = 0; j < sd.size(); ++j)
      if (!(sd(j) > 1e-12)) sd(j) = 1;
    const Eigen::MatrixXd z = (all.rowwise() - mean).array().rowwise() / sd.array();
    Eigen::MatrixXd a(n_exact, d);
    for (Index e = 0; e < n_exact; ++e)
      a.row(e) = z.row(static_cast<Index>(exact_points[static_cast<std::size_t>(e)]));
    // Centre on the exact points so the intercept is not penalized.
    const Eigen::RowVectorXd a_mean = a.colwise().mean();
    const double y_mean = y.mean();
    const Eigen::MatrixXd ac = a.rowwise() - a_mean;
    const auto gram =
        (ac.transpose() * ac + 0.01 * static_cast<double>(n_exact) * Eigen::MatrixXd::Identity(d, d))
            .eval()
            .ldlt();
    const Eigen::VectorXd w = gram.solve(ac.transpose() * (y.array() - y_mean).matrix());
    double half_width = 0;  // of the interval without the surrogate's
    if (!with_surrogate) {
      // Leave-one-out residuals of the ridge fit: r_e / (1 - h_ee), h the hat matrix's diagonal.
      const Eigen::MatrixXd g_inv_at = gram.solve(ac.transpose());
      double sum = 0;
      for (Index e = 0; e < n_exact; ++e) {
        const double h = 1.0 / static_cast<double>(n_exact) + ac.row(e).dot(g_inv_at.col(e));
        const double r = y(e) - (y_mean + ac.row(e).dot(w));
        const double loo = h < 1 - 1e-9 ? r / (1 - h) : r;
        sum += loo * loo;
      }
      half_width = 1.2816 * std::sqrt(sum / static_cast<double>(n_exact));
    }
    for (std::size_t i = 0; i < points.size(); ++i) {
      auto& p = points[i];
      const double fitted = y_mean + (z.row(static_cast<Index>(i)) - a_mean).dot(w);
      if (with_surrogate) {
        const double shift = fitted - p.mid[k];
        p.lo[k] += shift;
        p.hi[k] += shift;
      } else {
        p.lo[k] = fitted - half_width;
        p.hi[k] = fitted + half_width;
      }
      p.mid[k] = fitted;
    }
  }
}

std::vector<std::size_t> choose_for_exact(const std::vector<PointPrediction>& surrogate,
                                          const std::vector<std::vector<double>>& features,
                                          const std::vector<SweepObjective>& objectives,
                                          const std::vector<SweepConstraint>& constraints,
                                          const HybridOptions& options, const ExactEvaluator& evaluate) {
  const std::size_t n = surrogate.size();
  const std::size_t budget = exact_budget(options, n);
  const std::size_t metrics = objectives.size() + constraints.size();
  const bool scored = std::any_of(surrogate.begin(), surrogate.end(), [](const PointPrediction& p) {
    return std::any_of(p.mid.begin(), p.mid.end(), [](double v) { return std::isfinite(v); });
  });
  const auto share = [&](double f) {
    return static_cast<std::size_t>(std::llround(std::clamp(f, 0.0, 1.0) * static_cast<double>(budget)));
  };
  std::vector<std::size_t> chosen;
  std::vector<char> taken(n, 0);
  if (scored && options.model_first > 0) {
    HybridOptions top = options;
    top.max_exact = static_cast<double>(share(options.model_first));
    top.top_k = n;  // the share, not top_k, bounds it
    for (auto c : select_for_verification(surrogate, objectives, constraints, top)) {
      chosen.push_back(c);
      taken[c] = 1;
    }
  }
  const std::size_t calibration = std::min(share(options.calibrate), budget - chosen.size());
  for (auto c : calibration_points(n, calibration))
    if (!taken[c]) {
      chosen.push_back(c);
      taken[c] = 1;
    }
  if (!scored && chosen.size() < 2 && budget > 0)
    throw std::invalid_argument(fmt::format(
        "a hybrid sweep without a model needs two calibration points at least (--calibrate {} of {} exact "
        "evaluations gives {}): raise --calibrate or --max-exact",
        options.calibrate, budget, chosen.size()));
  std::vector<std::vector<double>> exact = evaluate(chosen);
  // Without two exact values to fit, the surrogate's own predictions choose the whole budget at once.
  const bool refit = chosen.size() >= 2;
  while (chosen.size() < budget) {
    auto predictions = surrogate;
    fit_surface(predictions, features, chosen, exact, metrics);
    std::vector<std::size_t> rest;  // indices of the points not chosen yet
    std::vector<PointPrediction> rest_predictions;
    for (std::size_t i = 0; i < n; ++i)
      if (!taken[i]) {
        rest.push_back(i);
        rest_predictions.push_back(predictions[i]);
      }
    HybridOptions round = options;
    const std::size_t left = budget - chosen.size();
    round.max_exact = static_cast<double>(refit ? std::min(left, options.round) : left);
    std::vector<std::size_t> part;
    for (auto r : select_for_verification(rest_predictions, objectives, constraints, round)) {
      part.push_back(rest[r]);
      taken[rest[r]] = 1;
    }
    for (auto& values : evaluate(part)) exact.push_back(std::move(values));
    chosen.insert(chosen.end(), part.begin(), part.end());
    if (part.empty() || !refit) break;  // nothing left that may be feasible, or chosen at once
  }
  return chosen;
}

double HybridRegret::hit_rate(double within_pct) const {
  if (regret_pct.empty()) return std::nan("");
  const auto hits =
      std::count_if(regret_pct.begin(), regret_pct.end(), [&](double r) { return r <= within_pct; });
  return static_cast<double>(hits) / static_cast<double>(regret_pct.size());
}

double HybridRegret::median_pct() const {
  if (regret_pct.empty()) return std::nan("");
  auto v = regret_pct;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>((v.size() - 1) / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

double HybridRegret::worst_pct() const {
  return regret_pct.empty() ? std::nan("") : *std::max_element(regret_pct.begin(), regret_pct.end());
}

std::vector<HybridRegret> hybrid_regret_over_orders(const std::vector<std::vector<double>>& coordinates,
                                                    const std::vector<double>& exact,
                                                    const std::vector<double>& predicted,
                                                    const std::vector<std::size_t>& budgets,
                                                    const HybridOptions& options, std::size_t orders,
                                                    std::uint64_t seed) {
  const std::size_t n = exact.size();
  if (coordinates.size() != n || (!predicted.empty() && predicted.size() != n))
    throw std::invalid_argument("hybrid_regret_over_orders: one coordinate row and prediction per point");
  if (n == 0) throw std::invalid_argument("hybrid_regret_over_orders: no points");
  const double best = *std::min_element(exact.begin(), exact.end());
  const std::vector<SweepObjective> objectives = {{"objective", Goal::kMin, 0}};
  std::vector<HybridRegret> out;
  for (auto b : budgets) out.push_back({b, {}});
  Rng rng(seed);
  std::vector<std::size_t> order(n);
  for (std::size_t r = 0; r < orders; ++r) {
    std::iota(order.begin(), order.end(), std::size_t{0});
    for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);  // Fisher-Yates
    std::vector<std::vector<double>> features(n);
    std::vector<PointPrediction> surrogate(n);
    for (std::size_t i = 0; i < n; ++i) {
      features[i] = quadratic_features(coordinates[order[i]]);
      const double mid = predicted.empty() ? std::nan("") : predicted[order[i]];
      surrogate[i] = {{mid}, {mid}, {mid}};
    }
    const ExactEvaluator evaluate = [&](const std::vector<std::size_t>& part) {
      std::vector<std::vector<double>> values;
      for (auto p : part) values.push_back({exact[order[p]]});
      return values;
    };
    for (auto& row : out) {
      HybridOptions o = options;
      o.max_exact = static_cast<double>(std::min(row.budget, n));
      double found = std::numeric_limits<double>::infinity();
      for (auto c : choose_for_exact(surrogate, features, objectives, {}, o, evaluate))
        found = std::min(found, exact[order[c]]);
      row.regret_pct.push_back(surrogate::regret_pct(found, best));
    }
  }
  return out;
}

}  // namespace slurmtwin::experiments
