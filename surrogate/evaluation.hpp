#pragma once
// Accuracy figures of a surrogate against the exact simulator (or recorded waits): per-job errors,
// interval coverage, per-setting aggregate errors and how well the surrogate ranks settings.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace slurmtwin::surrogate {

/// Spearman's rank correlation (average ranks for ties); NaN for fewer than 2 values or no variance.
double spearman(const std::vector<double>& a, const std::vector<double>& b);
/// Kendall's tau-b; NaN for fewer than 2 values or all ties.
double kendall_tau(const std::vector<double>& a, const std::vector<double>& b);

/// One predicted job: exact wait (s) and the predicted 10/50/90% quantiles of log1p(wait s).
struct JobPrediction {
  double exact = 0;
  double q10 = 0, q50 = 0, q90 = 0;
  /// The same job under other settings shares a group (e.g. window and token); kNoGroup: ungrouped.
  std::uint64_t group = kNoGroup;
  static constexpr std::uint64_t kNoGroup = ~std::uint64_t{0};
};

struct JobErrors {
  std::size_t jobs = 0;
  double mae_hours = 0, rmse_hours = 0;
  double r2_hours = 0;       // R² of the wait in hours
  double r2_log = 0;         // R² of log1p(wait s)
  double mse_log10 = 0;      // mean of (log10(max(pred,1)) - log10(max(exact,1)))², waits in s
  double coverage80 = 0;     // share of jobs whose exact wait lies in [q10, q90]
  double mae_hours_longest10 = 0;   // MAE over the 10% of jobs with the longest exact waits
  double mae_hours_shortest10 = 0;  // and the 10% with the shortest
  /// How each job's log1p(wait) moves from setting to setting, over the groups with two or more members
  /// (NaN without): the share of the variance of log1p(wait) that lies within groups (what the settings
  /// change, not which job it is), and the R² of the predicted moves (each group's exact and predicted
  /// values less their own group means). Ranking settings asks for the second to be high.
  double setting_variance_share = 0;
  double r2_setting_effect = 0;
};
JobErrors job_errors(const std::vector<JobPrediction>& jobs);

/// Per (window, setting) aggregate: exact and predicted mean wait (s).
struct SettingAggregate {
  std::size_t window = 0, setting = 0;
  double exact_mean_wait = 0, predicted_mean_wait = 0;
};
struct RankingErrors {
  double mean_abs_pct_error = 0;  // of the mean wait over (window, setting) pairs, %
  double spearman = 0;            // settings ranked by mean wait, averaged over windows
  double kendall = 0;
  double spearman_pooled = 0;     // settings ranked by their mean wait summed over all windows
};
RankingErrors ranking_errors(const std::vector<SettingAggregate>& rows);

}  // namespace slurmtwin::surrogate
