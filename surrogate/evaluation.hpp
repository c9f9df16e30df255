#pragma once
// Accuracy figures of a surrogate against the exact simulator (or recorded waits): per-job errors,
// interval coverage, per-setting aggregate errors and how well the surrogate ranks settings.
#include <array>
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
  double r2_hours = 0;              // R² of the wait in hours
  double r2_log = 0;                // R² of log1p(wait s)
  double mse_log10 = 0;             // mean of (log10(max(pred,1)) - log10(max(exact,1)))², waits in s
  double fvu_log10 = 0;             // mse_log10 over the variance of log10(max(exact,1)): the fraction of
                                    // variance unexplained (1: no better than the part's own mean; NaN
                                    // when every exact wait is the same)
  double coverage80 = 0;            // share of jobs whose exact wait lies in [q10, q90]
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
  double mean_pct_bias = 0;       // the same, signed: > 0 when the surrogate over-predicts
  double spearman = 0;            // settings ranked by mean wait, averaged over windows
  double kendall = 0;
  double spearman_pooled = 0;  // settings ranked by their mean wait summed over all windows
  /// The decision: how far the exact pooled mean wait of the setting predicted best is above the exact
  /// best setting's, in % (0: it chose the best).
  double regret_pooled_pct = 0;
};
RankingErrors ranking_errors(const std::vector<SettingAggregate>& rows);  // all NaN without rows

/// How far `found` is above `best` (a minimised objective), in % of |best|; with best 0, 0 when
/// found is too, else NaN. The one rule for every "regret of the chosen setting" figure.
double regret_pct(double found, double best);

/// The 5th and 95th percentiles of a figure over bootstrap resamples (nearest rank; NaN when no
/// resample gave a number).
struct Interval {
  double lo = 0, hi = 0;
};
/// The 5th and 95th percentiles of the finite values of `v` (nearest rank); NaN when it has none.
Interval interval90(std::vector<double> v);

/// The figures of job_errors and ranking_errors that bootstrap_by_window resamples.
enum class Figure {
  kR2Hours,
  kMseLog10,
  kCoverage80,
  kR2SettingEffect,
  kMeanWaitPctError,
  kMeanWaitPctBias,
  kSpearman,
  kSpearmanPooled,
  kRegretPooled
};
inline constexpr std::size_t kBootstrapFigures = 9;
struct Bootstrap {
  std::size_t resamples = 0, windows = 0;
  /// Per figure, its value in each resample, NaN where it had none (e.g. a rank correlation of one setting).
  std::array<std::vector<double>, kBootstrapFigures> samples;
  /// The 90% interval of a figure.
  Interval interval(Figure f) const;
  /// The 90% interval of this figure less `other`'s, resample by resample (paired: both must come from
  /// the same jobs' windows and seed, as every predictor of one `eval` does).
  Interval difference(const Bootstrap& other, Figure f) const;
};
/// A percentile bootstrap over windows: each resample draws as many windows as there are, with
/// replacement, and recomputes the figures on their jobs and (window, setting) rows. Windows, not jobs,
/// are the unit: the jobs of a window share one queue, and a test part of a few windows (7 on the
/// ub_medium week) rests on a few hundred long waits. `job_windows[k]` is the window of jobs[k]; a
/// window drawn twice counts twice (its copies are distinct windows and groups). Deterministic for a
/// seed: the same windows and seed give the same resamples, whatever the predictions.
Bootstrap bootstrap_by_window(const std::vector<JobPrediction>& jobs,
                              const std::vector<std::size_t>& job_windows,
                              const std::vector<SettingAggregate>& rows, std::size_t resamples,
                              std::uint64_t seed = 1);

}  // namespace slurmtwin::surrogate
