#include "surrogate/evaluation.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <stdexcept>
#include <tuple>

namespace slurmtwin::surrogate {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](auto a, auto b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double avg = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;  // ranks from 1
    for (std::size_t k = i; k <= j; ++k) r[idx[k]] = avg;
    i = j + 1;
  }
  return r;
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const auto n = static_cast<double>(a.size());
  const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n,
               mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : kNaN;
}

double r_squared(const std::vector<double>& exact, const std::vector<double>& pred) {
  const double mean = std::accumulate(exact.begin(), exact.end(), 0.0) / static_cast<double>(exact.size());
  double ss_res = 0, ss_tot = 0;
  for (std::size_t i = 0; i < exact.size(); ++i) {
    ss_res += (exact[i] - pred[i]) * (exact[i] - pred[i]);
    ss_tot += (exact[i] - mean) * (exact[i] - mean);
  }
  return ss_tot > 0 ? 1.0 - ss_res / ss_tot : kNaN;
}

// JobErrors::setting_variance_share and r2_setting_effect (exact_log, pred_log: log1p waits per job).
void setting_effect(const std::vector<JobPrediction>& jobs, const std::vector<double>& exact_log,
                    const std::vector<double>& pred_log, JobErrors& e) {
  std::map<std::uint64_t, std::tuple<double, double, double>> groups;  // sum of exact, of predicted, count
  for (std::size_t k = 0; k < jobs.size(); ++k)
    if (jobs[k].group != JobPrediction::kNoGroup) {
      auto& [se, sp, n] = groups[jobs[k].group];
      se += exact_log[k];
      sp += pred_log[k];
      n += 1;
    }
  std::vector<std::size_t> members;  // the jobs of groups with two or more
  for (std::size_t k = 0; k < jobs.size(); ++k)
    if (const auto it = groups.find(jobs[k].group); it != groups.end() && std::get<2>(it->second) >= 2)
      members.push_back(k);
  double mean = 0;
  for (auto k : members) mean += exact_log[k] / static_cast<double>(members.size());
  double within = 0, total = 0, residual = 0;
  for (auto k : members) {
    const auto& [se, sp, n] = groups.at(jobs[k].group);
    const double de = exact_log[k] - se / n, dp = pred_log[k] - sp / n;
    within += de * de;
    residual += (de - dp) * (de - dp);
    total += (exact_log[k] - mean) * (exact_log[k] - mean);
  }
  e.setting_variance_share = total > 0 ? within / total : kNaN;
  e.r2_setting_effect = within > 0 ? 1.0 - residual / within : kNaN;
}

}  // namespace

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return kNaN;
  return pearson(ranks(a), ranks(b));
}

double kendall_tau(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return kNaN;
  double concordant = 0, discordant = 0, ties_a = 0, ties_b = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = i + 1; j < a.size(); ++j) {
      const double da = a[i] - a[j], db = b[i] - b[j];
      if (da == 0 && db == 0) continue;
      if (da == 0) {
        ties_a += 1;
      } else if (db == 0) {
        ties_b += 1;
      } else if ((da > 0) == (db > 0)) {
        concordant += 1;
      } else {
        discordant += 1;
      }
    }
  const double denom = std::sqrt((concordant + discordant + ties_a) * (concordant + discordant + ties_b));
  return denom > 0 ? (concordant - discordant) / denom : kNaN;
}

JobErrors job_errors(const std::vector<JobPrediction>& jobs) {
  JobErrors e;
  e.jobs = jobs.size();
  if (jobs.empty()) return e;
  std::vector<double> exact_h, pred_h, exact_log, pred_log;
  double abs_sum = 0, sq_sum = 0, log10_sum = 0, covered = 0, exact10_sum = 0, exact10_sq = 0;
  for (const auto& j : jobs) {
    const double p = std::expm1(std::max(0.0, j.q50));
    exact_h.push_back(j.exact / 3600.0);
    pred_h.push_back(p / 3600.0);
    exact_log.push_back(std::log1p(j.exact));
    pred_log.push_back(j.q50);
    abs_sum += std::abs(p - j.exact) / 3600.0;
    sq_sum += (p - j.exact) * (p - j.exact) / (3600.0 * 3600.0);
    const double exact10 = std::log10(std::max(j.exact, 1.0));
    const double d10 = std::log10(std::max(p, 1.0)) - exact10;
    log10_sum += d10 * d10;
    exact10_sum += exact10;
    exact10_sq += exact10 * exact10;
    const double y = std::log1p(j.exact);
    covered += (y >= j.q10 && y <= j.q90) ? 1.0 : 0.0;
  }
  const auto n = static_cast<double>(jobs.size());
  e.mae_hours = abs_sum / n;
  e.rmse_hours = std::sqrt(sq_sum / n);
  e.r2_hours = r_squared(exact_h, pred_h);
  e.r2_log = r_squared(exact_log, pred_log);
  e.mse_log10 = log10_sum / n;
  const double mean10 = exact10_sum / n, var10 = exact10_sq / n - mean10 * mean10;
  e.fvu_log10 = var10 > 1e-12 ? e.mse_log10 / var10 : std::nan("");
  e.coverage80 = covered / n;
  std::vector<std::size_t> idx(jobs.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](auto a, auto b) { return jobs[a].exact < jobs[b].exact; });
  const std::size_t tenth = std::max<std::size_t>(1, jobs.size() / 10);
  double lo = 0, hi = 0;
  for (std::size_t k = 0; k < tenth; ++k) {
    lo += std::abs(pred_h[idx[k]] - exact_h[idx[k]]);
    hi += std::abs(pred_h[idx[idx.size() - 1 - k]] - exact_h[idx[idx.size() - 1 - k]]);
  }
  e.mae_hours_shortest10 = lo / static_cast<double>(tenth);
  e.mae_hours_longest10 = hi / static_cast<double>(tenth);
  setting_effect(jobs, exact_log, pred_log, e);
  return e;
}

RankingErrors ranking_errors(const std::vector<SettingAggregate>& rows) {
  RankingErrors r;
  if (rows.empty()) return {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN};  // nothing to rank
  std::map<std::size_t, std::pair<std::vector<double>, std::vector<double>>> per_window;
  std::map<std::size_t, std::pair<double, double>> per_setting;
  double pct = 0, bias = 0, pct_n = 0;
  for (const auto& row : rows) {
    per_window[row.window].first.push_back(row.exact_mean_wait);
    per_window[row.window].second.push_back(row.predicted_mean_wait);
    per_setting[row.setting].first += row.exact_mean_wait;
    per_setting[row.setting].second += row.predicted_mean_wait;
    if (row.exact_mean_wait > 0) {
      const double relative = (row.predicted_mean_wait - row.exact_mean_wait) / row.exact_mean_wait;
      pct += std::abs(relative);
      bias += relative;
      pct_n += 1;
    }
  }
  r.mean_abs_pct_error = pct_n > 0 ? 100.0 * pct / pct_n : kNaN;
  r.mean_pct_bias = pct_n > 0 ? 100.0 * bias / pct_n : kNaN;
  double sp = 0, kt = 0, n = 0;
  for (const auto& [w, v] : per_window) {
    const double s = spearman(v.first, v.second), k = kendall_tau(v.first, v.second);
    if (std::isnan(s) || std::isnan(k)) continue;
    sp += s;
    kt += k;
    n += 1;
  }
  r.spearman = n > 0 ? sp / n : kNaN;
  r.kendall = n > 0 ? kt / n : kNaN;
  std::vector<double> e, p;
  for (const auto& [s, v] : per_setting) {
    e.push_back(v.first);
    p.push_back(v.second);
  }
  r.spearman_pooled = spearman(e, p);
  // Ties in the prediction go to the lowest setting index (the map's order).
  const auto chosen = static_cast<std::size_t>(std::min_element(p.begin(), p.end()) - p.begin());
  const double best = *std::min_element(e.begin(), e.end());
  r.regret_pooled_pct = regret_pct(e[chosen], best);
  return r;
}

double regret_pct(double found, double best) {
  if (best != 0) return 100.0 * (found - best) / std::abs(best);
  return found == best ? 0.0 : kNaN;
}

// Nearest rank: the smallest value with at least p of them at or below.
Interval interval90(std::vector<double> v) {
  std::erase_if(v, [](double x) { return std::isnan(x); });
  if (v.empty()) return {kNaN, kNaN};
  std::sort(v.begin(), v.end());
  const auto rank = [&](double p) {
    return v[static_cast<std::size_t>(std::max(1.0, std::ceil(p * static_cast<double>(v.size())))) - 1];
  };
  return {rank(0.05), rank(0.95)};
}

Interval Bootstrap::interval(Figure f) const {
  return interval90(samples[static_cast<std::size_t>(f)]);
}

Interval Bootstrap::difference(const Bootstrap& other, Figure f) const {
  const auto& a = samples[static_cast<std::size_t>(f)];
  const auto& b = other.samples[static_cast<std::size_t>(f)];
  if (a.size() != b.size()) throw std::invalid_argument("paired bootstrap figures of different resamples");
  std::vector<double> d(a.size());
  for (std::size_t r = 0; r < a.size(); ++r) d[r] = a[r] - b[r];  // NaN when either is
  return interval90(std::move(d));
}

Bootstrap bootstrap_by_window(const std::vector<JobPrediction>& jobs,
                              const std::vector<std::size_t>& job_windows,
                              const std::vector<SettingAggregate>& rows, std::size_t resamples,
                              std::uint64_t seed) {
  Bootstrap b;
  b.resamples = resamples;
  // Each window's jobs (with their groups numbered densely, so a copy's groups can be told apart) and rows.
  std::map<std::size_t, std::pair<std::vector<std::size_t>, std::vector<std::size_t>>> by_window;
  std::map<std::uint64_t, std::uint64_t> dense;
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    by_window[job_windows.at(k)].first.push_back(k);
    if (jobs[k].group != JobPrediction::kNoGroup) dense.emplace(jobs[k].group, dense.size());
  }
  for (std::size_t k = 0; k < rows.size(); ++k) by_window[rows[k].window].second.push_back(k);
  std::vector<const std::pair<std::vector<std::size_t>, std::vector<std::size_t>>*> windows;
  for (const auto& [w, members] : by_window) windows.push_back(&members);
  b.windows = windows.size();
  if (windows.empty()) return b;

  std::mt19937_64 rng(seed);
  std::vector<JobPrediction> sample_jobs;
  std::vector<SettingAggregate> sample_rows;
  for (std::size_t r = 0; r < resamples; ++r) {
    sample_jobs.clear();
    sample_rows.clear();
    for (std::size_t c = 0; c < windows.size(); ++c) {  // copy c of a window drawn at random
      const auto& [members, aggregates] = *windows[rng() % windows.size()];
      for (auto k : members) {
        JobPrediction j = jobs[k];
        if (j.group != JobPrediction::kNoGroup) j.group = c * dense.size() + dense.at(j.group);
        sample_jobs.push_back(j);
      }
      for (auto k : aggregates) {
        SettingAggregate a = rows[k];
        a.window = c;
        sample_rows.push_back(a);
      }
    }
    const auto e = job_errors(sample_jobs);
    const auto g = ranking_errors(sample_rows);
    const std::array<double, kBootstrapFigures> figures = {
        e.r2_hours,      e.mse_log10, e.coverage80,      e.r2_setting_effect, g.mean_abs_pct_error,
        g.mean_pct_bias, g.spearman,  g.spearman_pooled, g.regret_pooled_pct};  // in the order of Figure
    for (std::size_t f = 0; f < kBootstrapFigures; ++f) b.samples[f].push_back(figures[f]);
  }
  return b;
}

}  // namespace slurmtwin::surrogate
