#include "experiments/learn/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "traces/trace_summary.hpp"

namespace slurmtwin::experiments {
namespace {

double median(const std::vector<double>& v) {
  return v.empty() ? std::nan("") : distribution(v).p50;
}

MetricComparison compare_metric(const std::string& metric, Goal goal, const std::vector<double>& exact,
                                const std::vector<double>& mid, const std::vector<double>& lo,
                                const std::vector<double>& hi) {
  MetricComparison m;
  m.metric = metric;
  m.goal = goal;
  m.points = exact.size();
  if (exact.empty()) return m;
  double abs = 0, pct = 0, bias = 0, covered = 0, mean = 0;
  std::size_t pct_n = 0;
  for (std::size_t i = 0; i < exact.size(); ++i) {
    const double e = std::abs(mid[i] - exact[i]);
    abs += e;
    if (exact[i] != 0) {
      const double relative = 100 * (mid[i] - exact[i]) / std::abs(exact[i]);
      pct += std::abs(relative);
      bias += relative;
      ++pct_n;
    }
    covered += (lo[i] <= exact[i] && exact[i] <= hi[i]) ? 1 : 0;
    mean += exact[i];
  }
  const double n = static_cast<double>(exact.size());
  mean /= n;
  double ss_res = 0, ss_tot = 0;
  for (std::size_t i = 0; i < exact.size(); ++i) {
    ss_res += (exact[i] - mid[i]) * (exact[i] - mid[i]);
    ss_tot += (exact[i] - mean) * (exact[i] - mean);
  }
  m.mae = abs / n;
  m.mean_abs_pct_error = pct_n ? pct / static_cast<double>(pct_n) : std::nan("");
  m.mean_pct_bias = pct_n ? bias / static_cast<double>(pct_n) : std::nan("");
  m.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : std::nan("");
  m.spearman = surrogate::spearman(mid, exact);
  {
    std::mt19937_64 rng(1);
    std::vector<double> values, a(exact.size()), b(exact.size());
    for (std::size_t r = 0; r < kCompareResamples; ++r) {
      for (std::size_t i = 0; i < exact.size(); ++i) {
        const auto k = rng() % exact.size();
        a[i] = mid[k];
        b[i] = exact[k];
      }
      values.push_back(surrogate::spearman(a, b));  // NaN (skipped) when one point was drawn every time
    }
    m.spearman_ci = surrogate::interval90(std::move(values));
  }
  m.kendall = surrogate::kendall_tau(mid, exact);
  m.coverage80 = covered / n;
  // Orders by the goal (best first), ties by index.
  const auto order = [&](const std::vector<double>& v) {
    std::vector<std::size_t> idx(v.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(),
                     [&](auto a, auto b) { return goal == Goal::kMin ? v[a] < v[b] : v[a] > v[b]; });
    return idx;
  };
  const auto by_surrogate = order(mid);
  const std::size_t exact_best = order(exact).front();
  const double best = exact[exact_best], picked = exact[by_surrogate.front()];
  m.regret_pct =
      best != 0 ? 100 * std::abs(picked - best) / std::abs(best) : (picked == best ? 0 : std::nan(""));
  m.exact_best_rank =
      static_cast<std::size_t>(std::find(by_surrogate.begin(), by_surrogate.end(), exact_best) -
                               by_surrogate.begin()) +
      1;
  return m;
}

}  // namespace

EngineComparison compare_engines(const std::vector<SweepRow>& rows,
                                 const std::vector<SweepObjective>& objectives,
                                 const std::vector<SweepConstraint>& constraints) {
  EngineComparison c;
  std::vector<const SweepRow*> both;
  for (const auto& r : rows)
    if (r.engine == "exact" && r.has_prediction()) both.push_back(&r);
  c.points = both.size();
  // Metrics: objectives, then constraint metrics that are not objectives (index into predicted).
  std::vector<std::pair<std::size_t, Goal>> metrics;  // (index in predicted, goal)
  std::vector<std::string> names;
  for (std::size_t k = 0; k < objectives.size(); ++k) {
    metrics.emplace_back(k, objectives[k].goal);
    names.push_back(objectives[k].metric);
  }
  for (std::size_t k = 0; k < constraints.size(); ++k) {
    if (std::find(names.begin(), names.end(), constraints[k].metric) != names.end()) continue;
    metrics.emplace_back(objectives.size() + k, bounds_above(constraints[k].op) ? Goal::kMin : Goal::kMax);
    names.push_back(constraints[k].metric);
  }
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    const auto [k, goal] = metrics[m];
    std::vector<double> exact, mid, lo, hi;
    for (const auto* r : both) {
      const double e = k < objectives.size() ? r->objectives[k] : r->constraint_values[k - objectives.size()];
      if (std::isnan(e) || k >= r->predicted.size() || std::isnan(r->predicted[k])) continue;
      exact.push_back(e);
      mid.push_back(r->predicted[k]);
      lo.push_back(r->predicted_lo[k]);
      hi.push_back(r->predicted_hi[k]);
    }
    c.metrics.push_back(compare_metric(names[m], goal, exact, mid, lo, hi));
  }
  std::vector<surrogate::JobPrediction> jobs;
  std::vector<double> exact_s, surrogate_s;
  for (const auto* r : both) {
    exact_s.push_back(r->run_seconds);
    surrogate_s.push_back(r->predicted_seconds);
    if (r->job_waits.empty() || r->predicted_job_waits.empty()) continue;
    const auto e = decode_job_waits(r->job_waits), p = decode_job_waits(r->predicted_job_waits);
    if (e.size() != p.size()) continue;
    ++c.job_points;
    for (std::size_t i = 0; i < e.size(); ++i)
      if (e[i] >= 0 && p[i] >= 0) {
        const double q = std::log1p(static_cast<double>(p[i]));
        jobs.push_back({static_cast<double>(e[i]), q, q, q});
      }
  }
  if (!jobs.empty()) {
    const auto j = surrogate::job_errors(jobs);
    c.jobs = j.jobs;
    c.job_mae_hours = j.mae_hours;
    c.job_r2_log = j.r2_log;
    c.job_mse_log10 = j.mse_log10;
  }
  c.exact_seconds_per_point = median(exact_s);
  c.surrogate_seconds_per_point = median(surrogate_s);
  return c;
}

std::string comparison_markdown(const EngineComparison& c, const std::string& title, double exact_wall_s,
                                double surrogate_wall_s) {
  std::string out = fmt::format(
      "# {}\n\n{} points evaluated by both the exact simulator and the surrogate.\n\n", title, c.points);
  out +=
      "| metric | goal | points | MAE | mean abs % error | mean % bias | R² | Spearman [90% interval] | "
      "Kendall τ | 80% coverage | regret of the surrogate's pick % | exact best's rank by the surrogate |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& m : c.metrics)
    out += fmt::format(
        "| {} | {} | {} | {:.4g} | {:.2f} | {:+.2f} | {:.3f} | {:.3f} [{:.2f}, {:.2f}] | {:.3f} | {:.2f} | "
        "{:.2f} | {} |\n",
        m.metric, m.goal == Goal::kMin ? "min" : "max", m.points, m.mae, m.mean_abs_pct_error,
        m.mean_pct_bias, m.r2, m.spearman, m.spearman_ci.lo, m.spearman_ci.hi, m.kendall, m.coverage80,
        m.regret_pct, m.exact_best_rank);
  if (c.jobs > 0)
    out += fmt::format(
        "\nPer-job waits (median prediction), pooled over {} points, {} job waits: MAE {:.3f} h, R² of "
        "log1p(wait) {:.3f}, MSE of log10(wait s) {:.3f}.\n",
        c.job_points, c.jobs, c.job_mae_hours, c.job_r2_log, c.job_mse_log10);
  out += fmt::format(
      "\nTime per point (median): exact replay {:.3f} s, surrogate {:.4f} s ({:.1f}× faster).\n",
      c.exact_seconds_per_point, c.surrogate_seconds_per_point,
      c.surrogate_seconds_per_point > 0 ? c.exact_seconds_per_point / c.surrogate_seconds_per_point : 0.0);
  if (exact_wall_s > 0 || surrogate_wall_s > 0)
    out += fmt::format(
        "Wall time in this run: exact phase {:.1f} s, surrogate phase {:.1f} s (including loading the model, "
        "one "
        "exact replay of the base site and encoding the windows).\n",
        exact_wall_s, surrogate_wall_s);
  return out;
}

}  // namespace slurmtwin::experiments
