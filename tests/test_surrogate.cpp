// The surrogate: features, dataset file, evaluation statistics, ridge baseline, the transformer's
// training/checkpoints, and the dataset generator's glue to the exact simulator.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "experiments/learn/surrogate_data.hpp"
#include "experiments/learn/surrogate_eval.hpp"
#include "experiments/replay/replay.hpp"
#include "scenario_support.hpp"
#include "surrogate/dataset.hpp"
#include "surrogate/evaluation.hpp"
#include "surrogate/features.hpp"
#include "surrogate/model.hpp"
#include "surrogate/ridge.hpp"
#include "tests/test_support.hpp"
#include "traces/default_site.hpp"
#include "traces/file_io.hpp"
#include "traces/read_report.hpp"

using namespace slurmtwin;
using namespace slurmtwin::surrogate;
using slurmtwin::testing::JobSpec;
using slurmtwin::testing::kT0;

namespace {

std::size_t column(const FeatureSchema& s, const std::string& name) {
  const auto it = std::find(s.numeric.begin(), s.numeric.end(), name);
  REQUIRE(it != s.numeric.end());
  return static_cast<std::size_t>(it - s.numeric.begin());
}

// A hand-made dataset whose log1p(wait) is a known function of two features and the setting:
// y = 2 + x0 + slope * s * x1 + hidden * z (x0, x1, z uniform in [0, 1], s = the one axis, encoded in
// [0, 1]; z is each job's own and not among its features: a part of the wait no model can learn).
SurrogateDataset synthetic_dataset(std::size_t windows, std::size_t jobs, std::size_t settings,
                                   double slope = 2.0, double hidden = 0.0) {
  SurrogateDataset d;
  d.trace_fingerprint = "synthetic";
  d.schema.numeric = {"x0", "x1", "noise"};
  d.schema.user_buckets = 8;
  d.schema.account_buckets = 4;
  d.schema.partitions = {"p"};
  d.schema.qos = {"normal"};
  d.axes.push_back({"PriorityWeightAge", 0, 1000, false});
  for (std::size_t s = 0; s < settings; ++s)
    d.settings.push_back({1000.0 * static_cast<double>(s) / static_cast<double>(settings - 1)});
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> u(0, 1);
  for (std::size_t w = 0; w < windows; ++w) {
    WindowTokens t;
    t.jobs = static_cast<std::uint32_t>(jobs);
    t.t0 = static_cast<std::int64_t>(w) * 1000;
    std::vector<float> waits(jobs * settings);
    for (std::size_t i = 0; i < jobs; ++i) {
      const float x0 = u(rng), x1 = u(rng), z = hidden > 0 ? u(rng) : 0.0f;
      t.numeric.insert(t.numeric.end(), {x0, x1, u(rng)});
      t.user.push_back(static_cast<std::int64_t>(i % 8));
      t.account.push_back(static_cast<std::int64_t>(i % 4));
      t.partition.push_back(1);
      t.qos.push_back(1);
      t.target.push_back(i % 4 != 0);  // every 4th job is context only
      t.job_index.push_back(static_cast<std::uint32_t>(i));
      for (std::size_t s = 0; s < settings; ++s) {
        const double enc = d.axes[0].encode(d.settings[s][0]);
        waits[s * jobs + i] = t.target[i]
                                  ? static_cast<float>(std::expm1(2 + x0 + slope * enc * x1 + hidden * z))
                                  : std::numeric_limits<float>::quiet_NaN();
      }
    }
    d.windows.push_back(std::move(t));
    d.waits.push_back(std::move(waits));
  }
  return d;
}

std::string temp_path(const std::string& name) {
  return (testing::scratch_dir("surrogate") / name).string();
}

// The small problem the training tests share: six windows of synthetic_dataset(), four train windows ×
// four settings, window 4 validates and window 5 tests on settings 2 and 4.
Split small_split() {
  Split split;
  split.train_windows = {0, 1, 2, 3};
  split.val_windows = {4};
  split.test_windows = {5};
  split.train_settings = {0, 1, 3, 5};
  split.val_settings = split.test_settings = {2, 4};
  return split;
}
ModelConfig small_model() {
  ModelConfig c;
  c.d_model = 16;
  c.heads = 2;
  c.encoder_layers = 1;
  c.ffn = 32;
  c.dropout = 0;
  return c;
}
TrainOptions quick_training(std::int64_t steps) {
  TrainOptions o;
  o.steps = steps;
  o.warmup = 20;
  o.eval_every = 50;
  o.patience = 100;
  o.lr = 5e-3;
  o.threads = 1;
  o.device = "cpu";
  return o;
}

// Two predictions of `w` agree bit for bit on its target jobs, and both leave its context jobs
// unpredicted (NaN).
bool same_on_targets(const Quantiles& a, const Quantiles& b, const WindowTokens& w) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    for (std::size_t i = 0; i < w.jobs; ++i) {
      if (w.target[i] && a[k][i] != b[k][i]) return false;
      if (!w.target[i] && !(std::isnan(a[k][i][1]) && std::isnan(b[k][i][1]))) return false;
    }
  return true;
}
// The errors of `m` on small_split()'s test part of a synthetic_dataset(6, 32, ...): window 5 under
// settings 2 and 4, each job grouped with itself under the other setting (for the setting effect).
JobErrors test_part_errors(const Surrogate& m, const SurrogateDataset& d) {
  const auto q = m.predict(d.windows[5], {d.encoded_setting(2), d.encoded_setting(4)});
  std::vector<JobPrediction> jobs;
  for (std::size_t k = 0; k < 2; ++k)
    for (std::size_t i = 0; i < 32; ++i)
      if (d.windows[5].target[i])
        jobs.push_back({d.waits[5][(k == 0 ? 2 : 4) * 32 + i], q[k][i][0], q[k][i][1], q[k][i][2], i});
  return job_errors(jobs);
}
}  // namespace

TEST_CASE("rank correlations match hand computation, ties included") {
  // b has a tie (7, 7): Spearman = Pearson of ranks [1,2,3,4,5] and [1,2,3.5,5,3.5] = 8 / sqrt(10 * 9.5).
  const std::vector<double> a = {1, 2, 3, 4, 5}, b = {5, 6, 7, 8, 7};
  CHECK(spearman(a, b) == doctest::Approx(8.0 / std::sqrt(95.0)).epsilon(1e-12));
  // Kendall tau-b: 8 concordant, 1 discordant, 1 pair tied in b only: 7 / sqrt(9 * 10).
  CHECK(kendall_tau(a, b) == doctest::Approx(7.0 / std::sqrt(90.0)).epsilon(1e-12));
  CHECK(spearman(a, a) == doctest::Approx(1.0));
  CHECK(kendall_tau(a, {5, 4, 3, 2, 1}) == doctest::Approx(-1.0));
  CHECK(std::isnan(spearman({1}, {2})));
}

TEST_CASE("per-job errors and interval coverage") {
  // Exact waits 1 h and 2 h, both predicted 1 h: MAE 0.5 h, RMSE sqrt(0.5) h; only the first lies in its
  // interval [log1p(1800), log1p(5400)].
  const double lo = std::log1p(1800.0), mid = std::log1p(3600.0), hi = std::log1p(5400.0);
  const auto e = job_errors({{3600, lo, mid, hi}, {7200, lo, mid, hi}});
  CHECK(e.jobs == 2);
  CHECK(e.mae_hours == doctest::Approx(0.5));
  CHECK(e.rmse_hours == doctest::Approx(std::sqrt(0.5)));
  CHECK(e.coverage80 == doctest::Approx(0.5));
  // log10 errors: 0 and log10(3600 / 7200)² = log10(2)².
  CHECK(e.mse_log10 == doctest::Approx(std::pow(std::log10(2.0), 2) / 2).epsilon(1e-9));
  // The exact log10 waits log10(3600) and log10(7200) vary by (log10(2) / 2)² about their mean: the
  // fraction of that variance unexplained is (log10(2)² / 2) / (log10(2)² / 4) = 2 (worse than the mean).
  CHECK(e.fvu_log10 == doctest::Approx(2.0).epsilon(1e-9));
  CHECK(std::isnan(job_errors({{3600, lo, mid, hi}, {3600, lo, lo, hi}}).fvu_log10));  // no variance
  CHECK(e.mae_hours_longest10 == doctest::Approx(1.0));  // 10% of 2 jobs rounds up to one: the 2 h job
  CHECK(e.mae_hours_shortest10 == doctest::Approx(0.0));
  CHECK(std::isnan(e.r2_setting_effect));  // no groups: no setting effect to score

  // The setting effect, in log1p units: job A waits 1 and 3 under two settings (moves -1, +1 about its
  // mean), predicted 1.5 and 2.5 (moves -0.5, +0.5); job B waits 5 under both, predicted 5 and 5; job C
  // has one setting only and an ungrouped job counts nowhere. Within-job variance 1 + 1 = 2 of a total
  // 2.5² + 0.5² + 1.5² + 1.5² = 11 about the mean 3.5; squared error of the moves 0.25 + 0.25 = 0.5.
  auto at = [](std::uint64_t group, double exact_log, double pred_log) {
    return JobPrediction{std::expm1(exact_log), pred_log - 1, pred_log, pred_log + 1, group};
  };
  const auto s = job_errors({at(0, 1, 1.5), at(0, 3, 2.5), at(1, 5, 5), at(1, 5, 5), at(2, 7, 1),
                             at(JobPrediction::kNoGroup, 2, 0)});
  CHECK(s.setting_variance_share == doctest::Approx(2.0 / 11.0));
  CHECK(s.r2_setting_effect == doctest::Approx(1.0 - 0.5 / 2.0));

  // Two windows, three settings: the prediction keeps the order in window 0 and reverses it in window 1.
  const auto r = ranking_errors({{0, 0, 100, 110},
                                 {0, 1, 200, 190},
                                 {0, 2, 300, 330},  //
                                 {1, 0, 100, 300},
                                 {1, 1, 200, 200},
                                 {1, 2, 300, 100}});
  CHECK(r.spearman == doctest::Approx(0.0));  // +1 and -1 averaged
  CHECK(r.kendall == doctest::Approx(0.0));
  CHECK(r.mean_abs_pct_error == doctest::Approx(100.0 * (0.1 + 0.05 + 0.1 + 2.0 + 0.0 + 2.0 / 3.0) / 6));
  CHECK(r.mean_pct_bias == doctest::Approx(100.0 * (0.1 - 0.05 + 0.1 + 2.0 + 0.0 - 2.0 / 3.0) / 6));
  // Pooled over the windows: exact 200, 400, 600; predicted 410, 390, 430. Ranks 1 2 3 against 2 1 3:
  // Spearman 1 - 6 (1 + 1) / (3 (9 - 1)) = 0.5. The predicted best is setting 1, whose exact 400 is
  // 100% above the best's 200.
  CHECK(r.spearman_pooled == doctest::Approx(0.5));
  CHECK(r.regret_pooled_pct == doctest::Approx(100.0));
  CHECK(ranking_errors({{0, 0, 100, 90}, {0, 1, 150, 120}}).regret_pooled_pct == doctest::Approx(0.0));
  // The one regret rule (also the hybrid's over design orders): % of |best|, and 0 / NaN at best 0.
  CHECK(regret_pct(110, 100) == doctest::Approx(10.0));
  CHECK(regret_pct(-90, -100) == doctest::Approx(10.0));
  CHECK(regret_pct(0, 0) == 0.0);
  CHECK(std::isnan(regret_pct(5, 0)));
}

TEST_CASE("bootstrap intervals over windows, by hand, and paired differences") {
  // Window 0: ten jobs predicted exactly, each inside its interval. Window 1: ten jobs predicted ten
  // times too long (log10 error 1), half of them inside. A resample of two windows is 00, 01/10 or 11,
  // so each figure takes one of three values: MSE log10 0, 0.5 or 1; coverage 1, 0.75 or 0.5. With 400
  // resamples each of 00 and 11 comes up about 100 times (at least 20 = 5% of them, with overwhelming
  // probability; the seed fixes it), so the 5th and 95th percentiles are the two extremes.
  // A second predictor misses by log10 errors of sqrt(0.1) in window 0 and sqrt(1.1) in window 1: its
  // MSE log10 is the first's + 0.1 in every resample, so the paired difference is -0.1 exactly, while
  // the two intervals, [0, 1] and [0.1, 1.1], overlap almost entirely.
  std::vector<JobPrediction> jobs, worse;
  std::vector<std::size_t> windows;
  for (std::size_t w = 0; w < 2; ++w)
    for (std::size_t i = 0; i < 10; ++i) {
      const double exact = 100.0 * static_cast<double>(i + 1), y = std::log1p(exact);
      const double p = std::log1p(exact * (w == 0 ? 1 : 10));  // p - y > 2 > 0.5 in window 1
      const double lo = w == 0 || i < 5 ? y - 1 : p - 0.5;
      jobs.push_back({exact, lo, p, p + 1, 100 * w + i});
      const double q = std::log1p(exact * std::pow(10.0, std::sqrt(w == 0 ? 0.1 : 1.1)));
      worse.push_back({exact, q - 1, q, q + 1, 100 * w + i});
      windows.push_back(w);
    }
  // Rows: window 0 ranks three settings right, window 1 wrong.
  const std::vector<SettingAggregate> rows = {{0, 0, 1, 1}, {0, 1, 2, 2}, {0, 2, 3, 3},
                                              {1, 0, 1, 3}, {1, 1, 2, 2}, {1, 2, 3, 1}};
  const auto b = bootstrap_by_window(jobs, windows, rows, 400, 3);
  CHECK(b.resamples == 400);
  CHECK(b.windows == 2);
  const auto mse = b.interval(Figure::kMseLog10), coverage = b.interval(Figure::kCoverage80);
  CHECK(mse.lo == doctest::Approx(0.0).epsilon(1e-9));
  CHECK(mse.hi == doctest::Approx(1.0).epsilon(1e-6));
  CHECK(coverage.lo == doctest::Approx(0.5));
  CHECK(coverage.hi == doctest::Approx(1.0));
  const auto spearman = b.interval(Figure::kSpearman);
  CHECK(spearman.lo == doctest::Approx(-1.0));  // both copies of window 1: -1; of window 0: +1
  CHECK(spearman.hi == doctest::Approx(1.0));
  // Signed mean-wait error: 0 in window 0; (+200% + 0 - 66.7%) / 3 = +44.4% in window 1.
  const auto bias = b.interval(Figure::kMeanWaitPctBias);
  CHECK(bias.lo == doctest::Approx(0.0));
  CHECK(bias.hi == doctest::Approx(100.0 * 4.0 / 9.0));
  // The point figures lie inside, and the same seed gives the same resamples.
  const auto point = job_errors(jobs);
  CHECK((point.mse_log10 >= mse.lo && point.mse_log10 <= mse.hi));
  const auto again = bootstrap_by_window(jobs, windows, rows, 400, 3);
  for (auto f : {Figure::kR2Hours, Figure::kMseLog10, Figure::kSpearman})  // (no setting effect: NaN)
    CHECK(again.samples[static_cast<std::size_t>(f)] == b.samples[static_cast<std::size_t>(f)]);

  const auto w = bootstrap_by_window(worse, windows, rows, 400, 3);
  const auto worse_mse = w.interval(Figure::kMseLog10);
  CHECK(worse_mse.lo == doctest::Approx(0.1).epsilon(1e-6));
  CHECK(worse_mse.hi == doctest::Approx(1.1).epsilon(1e-6));
  const auto diff = b.difference(w, Figure::kMseLog10);
  CHECK(diff.lo == doctest::Approx(-0.1).epsilon(1e-6));
  CHECK(diff.hi == doctest::Approx(-0.1).epsilon(1e-6));
  CHECK_THROWS_AS(b.difference(bootstrap_by_window(worse, windows, rows, 10, 3), Figure::kMseLog10),
                  std::invalid_argument);

  // One window: every resample is that window, so each interval is its point figure.
  const std::vector<JobPrediction> one(jobs.begin(), jobs.begin() + 10);  // window 0's
  const auto single = bootstrap_by_window(one, std::vector<std::size_t>(one.size(), 5), {}, 50);
  CHECK(single.windows == 1);
  CHECK(single.interval(Figure::kCoverage80).lo == 1.0);
  CHECK(single.interval(Figure::kCoverage80).hi == 1.0);
  CHECK(single.interval(Figure::kR2Hours).lo == doctest::Approx(job_errors(one).r2_hours));
  CHECK(std::isnan(single.interval(Figure::kSpearman).lo));  // no rows: no ranking figures
}

TEST_CASE("window features: what was submitted, and the history before it") {
  const Trace t = testing::make_trace({{0, 1, 4, 600, 3600},              // job 1: context
                                       {1800, 2, 8, 300, 7200},           // job 2: target, 30 min later
                                       {5400, 1, 1, 60, 0, -1, "bob"}});  // job 3: no limit
  const auto schema = make_schema(t, false);
  const std::vector<std::uint32_t> jobs = {0, 1, 2};
  const std::vector<std::uint8_t> targets = {0, 1, 1};
  const auto w = window_tokens(t, trace_context(t, false, 4, false), jobs, targets, schema);
  const std::size_t f = schema.numeric.size();
  auto at = [&](std::size_t i, const char* name) { return w.numeric[i * f + column(schema, name)]; };
  CHECK(w.t0 == kT0 + 1800);
  CHECK(at(1, "log_cpus") == doctest::Approx(std::log1p(8.0)));
  CHECK(at(1, "log_nodes") == doctest::Approx(std::log1p(2.0)));
  CHECK(at(1, "log_limit_min") == doctest::Approx(std::log1p(120.0)));
  CHECK(at(1, "log_runtime_min") == doctest::Approx(std::log1p(5.0)));
  CHECK(at(1, "runtime_over_limit") == doctest::Approx(300.0 / 7200.0));
  CHECK(at(0, "hours_since_t0") == doctest::Approx(-0.5));
  CHECK(at(2, "hours_since_t0") == doctest::Approx(1.0));
  CHECK(at(0, "is_target") == 0.0f);
  CHECK(at(1, "is_target") == 1.0f);
  // Job 2 sees job 1 in the previous hour; job 3 (90 min after job 1, 60 min after job 2) sees job 2 only.
  CHECK(at(1, "log_jobs_prev_hour") == doctest::Approx(std::log1p(1.0)));
  CHECK(at(2, "log_jobs_prev_hour") == doctest::Approx(std::log1p(1.0)));
  // alice's jobs in the previous day: 1 before job 2; bob's job 3 sees none of his own.
  CHECK(at(1, "log_user_jobs_prev_day") == doctest::Approx(std::log1p(1.0)));
  CHECK(at(2, "log_user_jobs_prev_day") == doctest::Approx(0.0));
  // Requested CPU-hours before job 3: 4 CPUs × 1 h + 8 CPUs × 2 h = 20.
  CHECK(at(2, "log_cpuh_before_in_window") == doctest::Approx(std::log1p(20.0)));
  CHECK(at(2, "log_cpuh_prev_week") == doctest::Approx(std::log1p(20.0)));
  // Fluid backlog on 4 CPUs: job 1 brings 4 × 600 CPU-s, served in 600 s; by job 2 (1800 s) it is gone;
  // job 2 brings 8 × 300 = 2400 CPU-s, of which 4 × 3600 would be served by job 3 (5400 s): zero again.
  CHECK(at(1, "log_fluid_backlog_week_hours") == 0.0f);
  CHECK(at(2, "log_fluid_backlog_week_hours") == 0.0f);
  CHECK(w.partition[0] == 1);  // the trace's first partition is category 1
  CHECK(w.user[0] == hash_bucket("alice", schema.user_buckets));

  // With job 1's 2400 CPU-s queued on 4 CPUs, a job 100 s later has 2000 CPU-s = 500 s of work ahead.
  const auto busy = trace_context(testing::make_trace({{0, 1, 4, 600}, {100}}), false, 4, false);
  CHECK(busy.history[1][7] == doctest::Approx(std::log1p(500.0 / 3600.0)));

  const auto submit_only =
      window_tokens(t, trace_context(t, false, 4, false), jobs, targets, make_schema(t, true));
  CHECK(submit_only.numeric[1 * f + column(schema, "log_runtime_min")] == 0.0f);
}

TEST_CASE("a job's history features do not depend on where the trace starts") {
  // Issue 26: the fluid backlog grew with the distance from the trace's first job, so the same jobs
  // got other features from a trace that started earlier. Six weeks of an overloaded cluster: a job of
  // 4 CPUs x 1 h every 10 min (24 CPUs of demand) on 16 CPUs, two users in turn.
  std::vector<testing::JobSpec> specs;
  for (std::int64_t t = 0; t < 42 * 86400; t += 600)
    specs.push_back({t, 1, 4, 3600, 7200, -1, specs.size() % 2 ? "bob" : "alice"});
  const Trace whole = testing::make_trace(specs);
  // The same jobs from day 28 on: a trace that starts four weeks later.
  const auto first_late = static_cast<std::size_t>(28 * 86400 / 600);
  const Trace late =
      testing::make_trace({specs.begin() + static_cast<std::ptrdiff_t>(first_late), specs.end()});
  const auto a = trace_context(whole, false, 16, false), b = trace_context(late, false, 16, false);
  // Once the later trace holds the 7 days before a job, every history column agrees.
  std::size_t compared = 0;
  for (std::size_t i = 0; i < late.jobs.size(); ++i) {
    if (late.jobs[i].submit < kT0 + 35 * 86400) continue;
    for (std::size_t k = 0; k < a.history[i].size(); ++k)
      CHECK(b.history[i][k] == doctest::Approx(a.history[first_late + i][k]).epsilon(1e-5));
    ++compared;
  }
  CHECK(compared == 7 * 144);
  // By hand: each job adds 4 x 3600 CPU-s and 10 min serves 16 x 600, so the backlog grows 4,800 CPU-s
  // per job; over the horizon (1,008 jobs in 7 days) that is 4,838,400 CPU-s = 84 h on 16 CPUs. Without
  // the horizon the last job saw six weeks of it, 504 h.
  CHECK(a.history.back()[7] == doctest::Approx(std::log1p(84.0)).epsilon(1e-5));
  CHECK(b.history.back()[7] == doctest::Approx(std::log1p(84.0)).epsilon(1e-5));
}

TEST_CASE("the recorded queue at each submission") {
  // A: submit 0, runs 100-200 on 4 CPUs (limit 1 h); B: submit 50, runs 150-300 on 2 CPUs; C: submit 120.
  Trace t = testing::make_trace({{0, 1, 4}, {50, 1, 2}, {120, 1, 1}});
  const std::vector<std::pair<Seconds, Seconds>> runs = {{100, 200}, {150, 300}, {130, 140}};
  for (std::size_t i = 0; i < 3; ++i) {
    t.jobs[i].start = kT0 + runs[i].first;
    t.jobs[i].end = kT0 + runs[i].second;
  }
  const auto q = recorded_queue_state(t);
  // At B's submit: A pending (4 CPU-hours requested), nothing running.
  CHECK(q.pending_jobs[1] == 1.0f);
  CHECK(q.pending_cpu_hours[1] == 4.0f);
  CHECK(q.running_jobs[1] == 0.0f);
  // At C's submit (120): B pending (2 CPU-hours), A running on 4 CPUs.
  CHECK(q.pending_jobs[2] == 1.0f);
  CHECK(q.pending_cpu_hours[2] == 2.0f);
  CHECK(q.running_jobs[2] == 1.0f);
  CHECK(q.running_cpus[2] == 4.0f);
  const auto schema = make_schema(t, true, true);
  const std::vector<std::uint32_t> jobs = {0, 1, 2};
  const std::vector<std::uint8_t> targets = {1, 1, 1};
  const auto w = window_tokens(t, trace_context(t, true, 4, true), jobs, targets, schema);
  CHECK(w.numeric[2 * schema.numeric.size() + column(schema, "log_running_cpus")] ==
        doctest::Approx(std::log1p(4.0)));
  CHECK_THROWS_AS(window_tokens(t, trace_context(t, false, 4, false), jobs, targets, schema),
                  std::invalid_argument);
}

TEST_CASE("windows are cut in submit order with their context") {
  std::vector<JobSpec> specs;
  for (int i = 0; i < 10; ++i)
    specs.push_back({static_cast<Seconds>(100 * (9 - i))});  // submitted in reverse
  const Trace t = testing::make_trace(specs);
  experiments::DatasetOptions o;
  o.window_jobs = 3;
  o.context_jobs = 2;
  const auto w = experiments::cut_windows(t, o);
  REQUIRE(w.size() == 2);  // targets are submit ranks 2-4 and 5-7; 8-9 do not fill a window
  CHECK(w[0].jobs == std::vector<std::uint32_t>{9, 8, 7, 6, 5});
  CHECK(w[0].target == std::vector<std::uint8_t>{0, 0, 1, 1, 1});
  CHECK(w[1].jobs == std::vector<std::uint32_t>{6, 5, 4, 3, 2});
}

TEST_CASE("simulated waits come from the exact replay") {
  // One node of 4 CPUs, FIFO: job 1 (4 CPUs, 600 s) starts in the pass batch_sched_delay (3 s) after its
  // submit and ends at 603 s; job 2 (submitted at 100 s, runs 100 s) starts when it ends: wait 503 s;
  // job 3 (submitted at 150 s) starts when job 2 ends at 703 s: wait 553 s.
  const Site site = testing::small_site(1, 4);
  const Trace t = testing::make_trace({{0, 1, 4, 600}, {100, 1, 4, 100}, {150, 1, 4, 100}});
  CHECK(experiments::simulated_waits(site, t) == std::vector<float>{3, 503, 553});

  // A dataset over two windows of one target job each (one context job before) takes them from one
  // replay of the whole trace per setting; with window_replay each window is replayed alone instead:
  // window 2 (jobs 2 and 3) then starts from an empty node: job 3 waits for job 2 only (3 + 100 - 50 s).
  experiments::DatasetOptions o;
  o.window_jobs = 1;
  o.context_jobs = 1;
  o.settings = 0;
  o.threads = 2;
  o.parameters = experiments::default_surrogate_parameters();
  const auto whole = experiments::build_dataset(site, t, o);
  REQUIRE(whole.windows.size() == 2);
  REQUIRE(whole.setting_count() == 1);
  CHECK(whole.waits[0][1] == 503.0f);
  CHECK(whole.waits[1][1] == 553.0f);
  CHECK(std::isnan(whole.waits[1][0]));  // context job
  o.window_replay = true;
  const auto alone = experiments::build_dataset(site, t, o);
  CHECK(alone.waits[0][1] == 503.0f);
  CHECK(alone.waits[1][1] == 53.0f);
  CHECK(alone.window_replay);
}

TEST_CASE("reference features: the site's own replay seen from each job") {
  // The FIFO case above: jobs run 3-603, 603-703 and 703-803 on the one 4-CPU node.
  const Site site = testing::small_site(1, 4);
  const Trace t = testing::make_trace({{0, 1, 4, 600}, {100, 1, 4, 100}, {150, 1, 4, 100}});
  experiments::ReplayOptions ro;
  ro.submit_factors = true;
  const auto replay = experiments::run_replay(site, t, ro);
  const auto ref = experiments::reference_run(replay, t);
  CHECK(ref.start == std::vector<std::int64_t>{kT0 + 3, kT0 + 603, kT0 + 703});
  CHECK(ref.end == std::vector<std::int64_t>{kT0 + 603, kT0 + 703, kT0 + 803});
  CHECK(ref.max_age == 7 * 86400);
  // Computed although the site's weights are all 0. One partition (PriorityJobFactor 1, the largest):
  // partition factor 1; no QOS priority anywhere: QOS factor 0; the only user holds all the shares
  // and is alone in its rank: fair-share factor 1 once the first decay run has computed Fair Tree; job 1
  // came in the controller's first second, before that run: 0.
  for (const auto& f : ref.factors) {
    CHECK(f[2] == 1.0f);
    CHECK(f[3] == 0.0f);
  }
  CHECK(ref.factors[0][0] == 0.0f);
  CHECK(ref.factors[1][0] == 1.0f);
  CHECK(ref.factors[2][0] == 1.0f);
  const auto schema = make_schema(t, false, false, true);
  CHECK(schema.reference);
  const auto context = experiments::surrogate_context(site, t, schema, &replay);
  const std::vector<std::uint32_t> jobs = {0, 1, 2};
  const std::vector<std::uint8_t> targets = {0, 1, 1};
  const auto w = window_tokens(t, context, jobs, targets, schema);
  const std::size_t f = schema.numeric.size();
  CHECK(w.numeric[2 * f + column(schema, "ref_log_wait")] == doctest::Approx(std::log1p(553.0)));
  // At job 3's submit (150 s) job 2 is pending (4 CPUs × 1 h limit = 4 CPU-hours) and job 1 runs on 4 CPUs.
  CHECK(w.numeric[2 * f + column(schema, "ref_log_pending_jobs")] == doctest::Approx(std::log1p(1.0)));
  CHECK(w.numeric[2 * f + column(schema, "ref_log_pending_cpuh")] == doctest::Approx(std::log1p(4.0)));
  CHECK(w.numeric[2 * f + column(schema, "ref_log_running_jobs")] == doctest::Approx(std::log1p(1.0)));
  CHECK(w.numeric[2 * f + column(schema, "ref_log_running_cpus")] == doctest::Approx(std::log1p(4.0)));
  // Submitted 50 s after the window's first target (job 2): 50 s of a 7-day PriorityMaxAge.
  CHECK(w.numeric[2 * f + column(schema, "ref_submit_over_max_age")] == doctest::Approx(50.0 / (7 * 86400)));
  CHECK_THROWS_AS(window_tokens(t, trace_context(t, false, 4, false), jobs, targets, schema),
                  std::invalid_argument);

  // A dataset with reference features takes the site's own setting (setting 0) from the reference replay.
  experiments::DatasetOptions o;
  o.window_jobs = 1;
  o.context_jobs = 1;
  o.settings = 0;
  o.reference = true;
  o.parameters = experiments::default_surrogate_parameters();
  const auto d = experiments::build_dataset(site, t, o);
  REQUIRE(d.windows.size() == 2);
  CHECK(d.schema.reference);
  CHECK(d.waits[0][1] == 503.0f);
  CHECK(d.waits[1][1] == 553.0f);
  o.window_replay = true;
  CHECK_THROWS_AS(experiments::build_dataset(site, t, o), std::invalid_argument);
  // The flag survives the file.
  CHECK(decode_dataset(encode_dataset(d), "d.stsd").schema == d.schema);
}

namespace {
// `count` windows of `targets` target jobs each, the next one starting `stride` jobs later (trace
// indices 0, stride, 2 * stride, ...), one context job before each; one setting, no axes.
SurrogateDataset strided_windows(std::uint32_t count, std::uint32_t targets, std::uint32_t stride) {
  SurrogateDataset d;
  d.settings.push_back({});
  for (std::uint32_t w = 0; w < count; ++w) {
    WindowTokens t;
    t.jobs = targets + 1;
    t.t0 = w;
    t.target.push_back(0);
    t.job_index.push_back(1000 + w);  // context jobs may repeat targets elsewhere: not a leak
    for (std::uint32_t i = 0; i < targets; ++i) {
      t.target.push_back(1);
      t.job_index.push_back(w * stride + i);
    }
    d.windows.push_back(std::move(t));
  }
  return d;
}

// The parts of strided_windows(14, 4, 2), whatever its jobs' indices. Window w targets jobs 2w..2w+3,
// so it shares jobs with w - 1 and w + 1. Interleaved: test 6 (jobs 12-15) and 13 (26-29) drop training
// windows 5, 7 and 12; validation 3 (6-9) and 10 (20-23) drop 2, 4, 9 and 11. Tail: test 12-13 (jobs
// 24-29) drop validation window 11 (22-25); validation 10 (20-23) drops 9.
void check_strided_split(const SurrogateDataset& strided) {
  using W = std::vector<std::uint32_t>;
  auto s = make_split(strided, 1, SplitMode::kInterleaved);
  CHECK(s.train_windows == W{0, 1, 8});
  CHECK(s.val_windows == W{3, 10});
  CHECK(s.test_windows == W{6, 13});
  s = make_split(strided, 1, SplitMode::kTail);
  CHECK(s.train_windows == W{0, 1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(s.val_windows == W{10});
  CHECK(s.test_windows == W{12, 13});
}
}  // namespace

TEST_CASE("the split keeps every held-out job out of training, also with overlapping windows") {
  using W = std::vector<std::uint32_t>;
  // Disjoint windows: of every 7 the 4th validates and the 7th tests; the tail split 70/15/15.
  const auto disjoint = strided_windows(14, 4, 4);
  auto s = make_split(disjoint, 1, SplitMode::kInterleaved);
  CHECK(s.train_windows == W{0, 1, 2, 4, 5, 7, 8, 9, 11, 12});
  CHECK(s.val_windows == W{3, 10});
  CHECK(s.test_windows == W{6, 13});
  s = make_split(disjoint, 1, SplitMode::kTail);
  CHECK(s.train_windows == W{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(s.val_windows == W{10, 11});
  CHECK(s.test_windows == W{12, 13});
  // all: every window and setting trains, nothing is held out (--split all, a model for use).
  s = make_split(disjoint, 1, SplitMode::kAll);
  CHECK(s.train_windows == W{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13});
  CHECK(s.train_settings.size() == disjoint.setting_count());
  CHECK(
      (s.val_windows.empty() && s.test_windows.empty() && s.val_settings.empty() && s.test_settings.empty()));
  CHECK(parse_split_mode("all") == SplitMode::kAll);
  CHECK(std::string(split_mode_name(SplitMode::kAll)) == "all");
  CHECK_THROWS_AS(parse_split_mode("none"), std::invalid_argument);
  check_strided_split(strided_windows(14, 4, 2));
}

TEST_CASE("fuzz finding: the split handles trace job indices up to 2^32 - 1") {
  // fuzz_surrogate_dataset: a checksummed dataset naming job 4,294,967,295 made the split size a
  // per-job table by the largest index (gigabytes, and index + 1 wrapped to 0 at the top). The same
  // overlapping layout as above, moved to the top of the index range, must split the same way.
  auto high = strided_windows(14, 4, 2);
  for (auto& win : high.windows)  // target jobs 0..29 -> 2^32 - 30 .. 2^32 - 1
    for (std::size_t i = 0; i < win.jobs; ++i)
      if (win.target[i]) win.job_index[i] += 0xffffffffu - 29;
  check_strided_split(high);
}

TEST_CASE("setting axes decode what they encode") {
  const SettingAxis log_axis{"PriorityWeightAge", 0, 100000, true}, lin{"PriorityMaxAge", 3600, 7200, false};
  for (double v : {0.0, 1.0, 999.0, 100000.0})
    CHECK(log_axis.decode(log_axis.encode(v)) == doctest::Approx(v).epsilon(1e-5));
  CHECK(log_axis.decode(0.5f) == doctest::Approx(std::expm1(std::log1p(100000.0) / 2)).epsilon(1e-5));
  CHECK(lin.decode(0.25f) == doctest::Approx(4500.0));
}

TEST_CASE("the surrogate varies any setting a sweep can, from the site's own value") {
  Site site = default_site();
  experiments::apply_setting(site, "PriorityWeightTRES/gres/gpu", 250);
  experiments::apply_setting(site, "bf_max_job_test", 320);
  experiments::apply_setting(site, "bf_window", 90);  // minutes, as slurm.conf
  CHECK(experiments::surrogate_setting(site, "PriorityWeightTRES/gres/gpu") == 250);
  CHECK(experiments::surrogate_setting(site, "bf_max_job_test") == 320);
  CHECK(experiments::surrogate_setting(site, "bf_window") == 90);
  CHECK(experiments::surrogate_setting(site, "QOS/normal/Priority") == site.find_qos("normal")->priority);
  CHECK_THROWS_WITH_AS(experiments::surrogate_setting(site, "bf_maxjobtest"),
                       "the surrogate cannot vary setting 'bf_maxjobtest'", std::invalid_argument);
}

TEST_CASE("the dataset file round-trips and rejects damaged files") {
  const auto d = synthetic_dataset(2, 16, 3);
  const std::string bytes = encode_dataset(d);
  const auto back = decode_dataset(bytes, "d.stsd");
  CHECK(back.schema == d.schema);
  CHECK(back.axes == d.axes);
  CHECK(back.settings == d.settings);
  REQUIRE(back.windows.size() == 2);
  CHECK(back.windows[1].numeric == d.windows[1].numeric);
  CHECK(encode_dataset(back) == bytes);

  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x20;
  CHECK_THROWS_WITH_AS(decode_dataset(flipped, "d.stsd"), doctest::Contains("checksum"), InputError);
  CHECK_THROWS_WITH_AS(decode_dataset(bytes.substr(0, bytes.size() - 3), "d.stsd"),
                       doctest::Contains("truncated"), InputError);
  CHECK_THROWS_WITH_AS(decode_dataset("STWTRACE" + bytes.substr(8), "d.stsd"), doctest::Contains("bad magic"),
                       InputError);
}

TEST_CASE("the ridge baseline recovers a linear model with a setting interaction") {
  // y = 2 + x0 + 2 s x1 is linear in the ridge's columns (x0, x1 standardised, s, s × x1).
  const auto d = synthetic_dataset(4, 64, 5);
  const auto ridge = RidgeBaseline::fit(d, {0, 1}, {0, 1, 2, 3, 4}, {2}, {0, 2, 4});
  CHECK(ridge.lambda() == doctest::Approx(1e-3));  // noise-free: the least penalty wins
  double worst = 0;
  const auto q = ridge.predict(d, 3, 4);
  for (std::size_t i = 0; i < 64; ++i) {
    if (!d.windows[3].target[i]) continue;
    worst = std::max(worst, std::abs(q[i][1] - std::log1p(static_cast<double>(d.waits[3][4 * 64 + i]))));
  }
  CHECK(worst < 0.01);
}

TEST_CASE(
    "the loss on each job's moves between settings teaches the setting effect that the per-job loss misses") {
  // Most of each job's wait is its own hidden part (amplitude 6, not among the features); the setting
  // moves it by 0.5 * s * x1 at most. The per-job loss spends the steps on the part it cannot learn; the
  // loss on moves between settings sees only the setting effect.
  Surrogate::set_threads(1);
  const auto d = synthetic_dataset(6, 32, 6, 0.5, 6.0);
  const Split split = small_split();
  ModelConfig c = small_model();
  c.competition_heads = 0;
  TrainOptions o = quick_training(400);
  auto setting_effect_r2 = [&](double within_weight) {
    o.within_weight = within_weight;
    Surrogate m(d, split, c, 3);
    m.train(d, split, o);
    const auto e = test_part_errors(m, d);
    CHECK(e.setting_variance_share < 0.05);  // the setting effect is a small part of the variance
    return e.r2_setting_effect;
  };
  const double plain = setting_effect_r2(0), with_moves = setting_effect_r2(10);
  MESSAGE("R² of the setting effect on held-out data: ", plain, " per-job loss only, ", with_moves,
          " with moves");
  CHECK(with_moves > 0.7);
  CHECK(with_moves > plain + 0.3);
}

TEST_CASE(
    "a ridge base: the untrained model predicts what the ridge baseline does, and training adds to it") {
  // log1p(wait) = 2 + x0 + 2 s x1 + 3 |x0 - 0.5|: the setting interaction makes the ridge's setting terms
  // matter, and the kink is what a linear model cannot fit and the network can.
  Surrogate::set_threads(1);
  auto d = synthetic_dataset(6, 32, 6);
  for (std::size_t w = 0; w < d.windows.size(); ++w)
    for (std::size_t s = 0; s < d.setting_count(); ++s)
      for (std::size_t i = 0; i < 32; ++i) {
        auto& wait = d.waits[w][s * 32 + i];
        const double x0 = d.windows[w].numeric[i * 3];
        wait = static_cast<float>(std::expm1(std::log1p(static_cast<double>(wait)) + 3 * std::abs(x0 - 0.5)));
      }
  const Split split = small_split();
  ModelConfig c = small_model();
  c.ridge_base = true;
  Surrogate model(d, split, c, 3);
  const auto ridge =
      RidgeBaseline::fit(d, split.train_windows, split.train_settings, split.val_windows, split.val_settings);
  const std::vector<std::uint32_t> settings = {0, 2, 4, 5};  // trained and held out
  std::vector<std::vector<float>> encoded;
  for (auto s : settings) encoded.push_back(d.encoded_setting(s));
  double worst = 0, lowest = 1e9, highest = -1e9;
  for (std::uint32_t w : {0u, 5u}) {
    const auto q = model.predict(d.windows[w], encoded);
    for (std::size_t k = 0; k < settings.size(); ++k) {
      const auto r = ridge.predict(d, w, settings[k]);
      for (std::size_t i = 0; i < 32; ++i)
        if (d.windows[w].target[i]) {
          worst = std::max(worst, static_cast<double>(std::abs(q[k][i][1] - r[i][1])));
          lowest = std::min(lowest, static_cast<double>(r[i][1]));
          highest = std::max(highest, static_cast<double>(r[i][1]));
        }
    }
  }
  MESSAGE("untrained ridge-base model vs the ridge: largest median difference ", worst, " (log1p s)");
  CHECK(highest - lowest > 1);  // the ridge's predictions do differ from job to job and setting to setting
  CHECK(worst < 1e-4);
  const double ridge_r2 = test_part_errors(model, d).r2_log;

  // Training starts there and learns what the ridge misses; the checkpoint keeps the base.
  TrainOptions o = quick_training(300);
  const auto report = model.train(d, split, o);
  const double trained_r2 = test_part_errors(model, d).r2_log;
  MESSAGE("held-out R² of log wait: ", ridge_r2, " the ridge, ", trained_r2, " after ", report.steps,
          " steps");
  CHECK(report.best_step > 0);
  CHECK(trained_r2 > 0.9);
  CHECK(trained_r2 > ridge_r2 + 0.3);
  const std::string path = temp_path("ridge_base.ckpt");
  model.save(path);
  const auto loaded = Surrogate::load(path);
  CHECK(loaded.config().ridge_base);
  CHECK(same_on_targets(loaded.predict(d.windows[5], encoded), model.predict(d.windows[5], encoded),
                        d.windows[5]));
}

TEST_CASE("a window encoded once predicts, batch after batch, what the window itself gives") {
  // The sweep engine encodes each window once and predicts every batch of points from that
  // (surrogate/model.hpp, EncodedWindow): the values must be those of predicting from the window.
  Surrogate::set_threads(1);
  const auto d = synthetic_dataset(6, 32, 6);
  auto config = small_model();
  config.competition_heads = 2;  // their pairwise weights are part of what is kept
  const Surrogate model(d, small_split(), config, 3);
  const auto& w = d.windows[5];
  const auto encoded = model.encode(w);
  for (const auto& settings : {std::vector<std::vector<float>>{d.encoded_setting(2)},
                               std::vector<std::vector<float>>{d.encoded_setting(4), d.encoded_setting(1)}})
    CHECK(same_on_targets(model.predict(encoded, settings), model.predict(w, settings), w));
  // It holds at least the encoder's output (32 tokens × d_model floats) and the two heads' 32 × 32 weights.
  CHECK(encoded.bytes() >= (32 * 16 + 2 * 32 * 32) * sizeof(float));
  // Another window's encoding predicts another window.
  CHECK_FALSE(same_on_targets(model.predict(model.encode(d.windows[4]), {d.encoded_setting(2)}),
                              model.predict(w, {d.encoded_setting(2)}), w));
}

TEST_CASE("a fresh model is normalised without the held-out settings' waits") {
  // Two datasets that differ only in the waits of held-out setting 2 (a thousand times longer in the
  // second) give fresh models with the same seed the same outputs: the target's mean and spread come
  // from the training settings alone. The training settings' waits do move them.
  Surrogate::set_threads(1);
  const auto d = synthetic_dataset(6, 32, 6);
  const Split split = small_split();
  auto scaled = [&](std::size_t setting) {
    auto e = d;
    for (auto& waits : e.waits)
      for (std::size_t i = 0; i < 32; ++i) waits[setting * 32 + i] *= 1000;
    return e;
  };
  const auto held_out = scaled(2), trained = scaled(1);
  const auto predict = [&](const SurrogateDataset& data) {
    return Surrogate(data, split, small_model(), 3).predict(d.windows[5], {d.encoded_setting(2)});
  };
  const auto base = predict(d);
  CHECK(same_on_targets(predict(held_out), base, d.windows[5]));
  CHECK_FALSE(same_on_targets(predict(trained), base, d.windows[5]));
}

TEST_CASE("the evaluation protocol scores the part it names, beside the ridge and the noise floor") {
  Surrogate::set_threads(1);
  const auto d = synthetic_dataset(6, 32, 6);
  const Split split = small_split();
  const Surrogate model(d, split, small_model(), 3);

  // Parts: one name for windows and settings, or WINDOWS:SETTINGS.
  CHECK(experiments::eval_part(d, split, "test").windows == std::vector<std::uint32_t>{5});
  CHECK(experiments::eval_part(d, split, "test").settings == std::vector<std::uint32_t>{2, 4});
  const auto test_train = experiments::eval_part(d, split, "test:train");
  CHECK(test_train.windows == std::vector<std::uint32_t>{5});
  CHECK(test_train.settings == std::vector<std::uint32_t>{0, 1, 3, 5});
  // "all": every window and setting of the dataset (another trace's dataset, split or not).
  const auto all = experiments::eval_part(d, split, "all");
  CHECK(all.windows == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5});
  CHECK(all.settings == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5});
  CHECK_THROWS_AS(experiments::eval_part(d, split, "everything"), std::invalid_argument);
  CHECK_THROWS_AS(experiments::eval_part(d, split, "test:everything"), std::invalid_argument);
  Split no_test = split;
  no_test.test_windows.clear();
  CHECK_THROWS_AS(experiments::eval_part(d, no_test, "test"), std::invalid_argument);

  experiments::EvalOptions o;
  o.against = &model;
  o.noise_floor = &d;  // the dataset's own exact waits: a perfect predictor
  const auto r = experiments::evaluate_surrogate(model, d, split, o);
  std::vector<std::string> keys;
  for (const auto& line : r.lines) keys.push_back(line.key);
  CHECK(keys == std::vector<std::string>{"transformer", "against", "ridge", "median",
                                         "noise_floor"});  // no ref column
  // The transformer's figures are those computed by hand from its predictions on window 5 under 2 and 4.
  const auto by_hand = test_part_errors(model, d);
  const auto& t = r.lines[0].result.jobs;
  CHECK(t.jobs == by_hand.jobs);
  CHECK(t.jobs == 48);  // 24 targets × 2 settings
  CHECK(t.mse_log10 == doctest::Approx(by_hand.mse_log10));
  CHECK(t.mae_hours == doctest::Approx(by_hand.mae_hours));
  CHECK(r.lines[1].result.jobs.mse_log10 == doctest::Approx(t.mse_log10));  // the same model again
  // The ridge is the one fitted on the split's training part.
  const auto ridge =
      RidgeBaseline::fit(d, split.train_windows, split.train_settings, split.val_windows, split.val_settings);
  CHECK(r.ridge_from_model);  // the model's own, fitted on this same split when it was made
  CHECK(r.ridge_columns == ridge.columns());
  CHECK(r.ridge_lambda == ridge.lambda());
  CHECK_FALSE(r.lines[2].result.point);
  // The trivial baseline: every job at the training part's median (the model's own), no interval.
  REQUIRE(model.training_median());
  std::vector<JobPrediction> at_median;
  for (std::uint32_t s : {2u, 4u})
    for (std::size_t i = 0; i < 32; ++i)
      if (d.windows[5].target[i]) {
        const float m = *model.training_median();
        at_median.push_back({d.waits[5][s * 32 + i], m, m, m, i});
      }
  CHECK(r.lines[3].result.point);
  CHECK(r.lines[3].result.jobs.mse_log10 == doctest::Approx(job_errors(at_median).mse_log10));
  CHECK(r.lines[3].result.jobs.fvu_log10 == doctest::Approx(job_errors(at_median).fvu_log10));
  // The noise floor of identical datasets is no error at all, and a point prediction.
  CHECK(r.lines[4].result.point);
  CHECK(r.lines[4].result.jobs.mse_log10 < 1e-10);
  CHECK(r.lines[4].result.jobs.fvu_log10 < 1e-10);
  CHECK(r.lines[4].result.jobs.mae_hours < 1e-6);
  CHECK(r.lines[4].result.ranking.regret_pooled_pct == 0.0);
  REQUIRE(r.lines[4].result.pooled_exact.size() == 2);  // the test part's two settings
  for (std::size_t k = 0; k < 2; ++k)
    CHECK(r.lines[4].result.pooled_predicted[k] ==
          doctest::Approx(r.lines[4].result.pooled_exact[k]).epsilon(1e-4));
  CHECK(r.lines[0].result.pooled_exact == r.lines[4].result.pooled_exact);
  // The groups: the one QOS's mean and p90 wait, then the accounts of the targets (buckets 1-3; every
  // 4th job, of bucket 0, is context only), 8 started targets each in the test window.
  using experiments::EvalGroup;
  REQUIRE(r.groups.size() == 5);
  CHECK((r.groups[0].kind == EvalGroup::Kind::kQos && r.groups[0].stat == EvalGroup::Stat::kMean));
  CHECK((r.groups[1].kind == EvalGroup::Kind::kQos && r.groups[1].stat == EvalGroup::Stat::kP90));
  for (std::size_t g = 0; g < 2; ++g) CHECK((r.groups[g].category == 1 && r.groups[g].jobs == 24));
  for (std::size_t g = 2; g < 5; ++g) {
    CHECK((r.groups[g].kind == EvalGroup::Kind::kAccount && r.groups[g].stat == EvalGroup::Stat::kMean));
    CHECK(r.groups[g].category == static_cast<std::int64_t>(g - 1));
    CHECK(r.groups[g].jobs == 8);
  }
  // Over all six windows (144 started targets): an account of one job (under 1%) is no group, but
  // counted; one given a fifth of account 1's jobs (and so the most) comes first.
  {
    auto moved = d;
    moved.windows[0].account[1] = 7;  // job 1: a target
    for (auto& win : moved.windows)
      for (std::size_t i = 5; i < win.jobs; i += 16) win.account[i] = 3;  // jobs 5, 21: of account 1
    std::size_t small = 0;
    const auto groups = experiments::eval_groups(moved, experiments::eval_part(moved, split, "all"), &small);
    CHECK(small == 1);
    std::vector<std::int64_t> accounts;
    for (const auto& g : groups)
      if (g.kind == EvalGroup::Kind::kAccount) accounts.push_back(g.category);
    CHECK(accounts == std::vector<std::int64_t>{3, 2, 1});  // 60, 48 and 35 jobs
  }
  // Every job is of the one QOS: its mean-wait ranking is the overall one, for every predictor (NaN where
  // a constant prediction ranks nothing).
  const auto same = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
  for (const auto& line : r.lines) {
    REQUIRE(line.result.groups.size() == 5);
    CHECK(same(line.result.groups[0].ranking.spearman_pooled, line.result.ranking.spearman_pooled));
    CHECK(same(line.result.groups[0].ranking.regret_pooled_pct, line.result.ranking.regret_pooled_pct));
  }
  // The p90 rows, by hand: window 5's 24 target waits under each test setting, sorted, interpolated
  // at 0.9 × 23 = 20.7; the noise floor (the same waits) predicts them exactly.
  for (std::size_t k = 0; k < 2; ++k) {
    const std::uint32_t s = k == 0 ? 2 : 4;
    std::vector<double> v;
    for (std::size_t i = 0; i < 32; ++i)
      if (d.windows[5].target[i]) v.push_back(d.waits[5][s * 32 + i]);
    std::sort(v.begin(), v.end());
    const double p90 = v[20] + 0.7 * (v[21] - v[20]);
    CHECK(r.lines[0].result.groups[1].pooled_exact[k] == doctest::Approx(p90));
    CHECK(r.lines[4].result.groups[1].pooled_predicted[k] == doctest::Approx(p90).epsilon(1e-4));
  }
  // Half the jobs of the test window of a QOS the schema does not know (category 0, as an unseen QOS
  // maps), and a "floor" that makes those jobs wait 10^6 s more under the best setting: overall it
  // prefers the other setting (regret > 0), while "normal"'s figures come from its own jobs, whose
  // floor waits are exact (regret 0).
  auto half = d;
  for (std::size_t i = 0; i < half.windows[5].jobs; i += 2) half.windows[5].qos[i] = 0;
  const auto& exact_pooled = r.lines.front().result.pooled_exact;
  REQUIRE(exact_pooled.size() == 2);
  REQUIRE(exact_pooled[0] != exact_pooled[1]);
  const auto best = r.part.settings[exact_pooled[0] < exact_pooled[1] ? 0 : 1];
  auto skewed = half;
  for (std::size_t i = 0; i < half.windows[5].jobs; i += 2)
    skewed.waits[5][best * half.windows[5].jobs + i] += 1e6f;
  experiments::EvalOptions floor_only;
  floor_only.ridge = false;
  floor_only.noise_floor = &skewed;
  const auto r2 = experiments::evaluate_surrogate(model, half, split, floor_only);
  const auto& floor = r2.lines.back().result;
  REQUIRE(r2.groups.size() == 5);  // normal's mean and p90, three accounts
  CHECK(floor.ranking.regret_pooled_pct > 0);
  CHECK(floor.groups[0].ranking.regret_pooled_pct == 0.0);
  CHECK(floor.groups[1].ranking.regret_pooled_pct == 0.0);
  CHECK(r2.groups[0].jobs == 16);  // the odd jobs: the even ones (8 targets) are of the unseen QOS, no group
  CHECK_FALSE(std::isnan(r2.lines.front().result.groups[0].ranking.regret_pooled_pct));  // the transformer's
  // The skewed jobs are of accounts 2 (and 0, context only): account 2's own ranking is wrong, 1's and 3's
  // not.
  CHECK(floor.groups[3].ranking.regret_pooled_pct > 0);
  CHECK(floor.groups[2].ranking.regret_pooled_pct == 0.0);
  CHECK(floor.groups[4].ranking.regret_pooled_pct == 0.0);
  CHECK(r.per_setting_ms > 0);
  CHECK(r.batched_ms >= r.marginal_ms);
  // Each group's bootstrap resamples the windows of its rows (all six here): the exact waits as the
  // noise floor rank the settings perfectly in every resample, by every group's statistic.
  experiments::EvalOptions boot;
  boot.part = "all";
  boot.ridge = false;
  boot.bootstrap = 30;
  boot.noise_floor = &d;
  const auto rb = experiments::evaluate_surrogate(model, d, split, boot);
  REQUIRE(rb.groups.size() == 5);
  for (std::size_t g = 0; g < rb.groups.size(); ++g) {
    const auto& ci = rb.lines.back().result.groups[g].ci;
    CHECK(ci.resamples == 30);
    CHECK(ci.windows == 6);
    REQUIRE(ci.samples[static_cast<std::size_t>(Figure::kSpearmanPooled)].size() == 30);
    for (double rho : ci.samples[static_cast<std::size_t>(Figure::kSpearmanPooled)])
      CHECK(rho == doctest::Approx(1.0));
  }

  // With a ref_log_wait column, each job's value of it is its prediction under every setting.
  auto with_ref = d;
  with_ref.schema.numeric[2] = "ref_log_wait";
  experiments::EvalOptions plain;
  plain.ridge = false;
  const auto rr = experiments::evaluate_surrogate(model, with_ref, split, plain);
  REQUIRE(rr.lines.size() == 3);
  CHECK(rr.lines[1].key == "median");
  CHECK(rr.lines[2].key == "reference");
  CHECK(rr.lines[2].result.point);
  std::vector<JobPrediction> copied;
  for (std::uint32_t s : {2u, 4u})
    for (std::size_t i = 0; i < 32; ++i)
      if (d.windows[5].target[i]) {
        const float v = d.windows[5].numeric[i * 3 + 2];
        copied.push_back({d.waits[5][s * 32 + i], v, v, v, i});
      }
  CHECK(rr.lines[2].result.jobs.mse_log10 == doctest::Approx(job_errors(copied).mse_log10));
  CHECK(rr.lines[2].result.jobs.mae_hours == doctest::Approx(job_errors(copied).mae_hours));

  // Another dataset (other waits: a hidden term) is scored against the ridge the model was made with,
  // not one fitted on that dataset: its figures are the training ridge's predictions there.
  const auto foreign = synthetic_dataset(6, 32, 6, 2.0, 1.5);
  experiments::EvalOptions ridge_only;
  ridge_only.part = "all";
  const auto rf = experiments::evaluate_surrogate(model, foreign, split, ridge_only);
  REQUIRE(rf.lines.size() == 3);
  CHECK(rf.lines[1].key == "ridge");
  CHECK(rf.lines[2].key == "median");
  std::vector<JobPrediction> by_training_ridge;
  for (std::uint32_t w = 0; w < 6; ++w)
    for (std::uint32_t s = 0; s < 6; ++s) {
      const auto q = model.training_ridge()->predict(foreign, w, s);
      for (std::size_t i = 0; i < 32; ++i)
        if (foreign.windows[w].target[i])
          by_training_ridge.push_back({foreign.waits[w][s * 32 + i], q[i][0], q[i][1], q[i][2], i});
    }
  CHECK(rf.lines[1].result.jobs.mse_log10 == doctest::Approx(job_errors(by_training_ridge).mse_log10));
  const auto refit = RidgeBaseline::fit(foreign, split.train_windows, split.train_settings, split.val_windows,
                                        split.val_settings);
  // A refit on that dataset would have been another ridge.
  CHECK(refit.predict(foreign, 5, 2) != model.training_ridge()->predict(foreign, 5, 2));

  // A floor made from other windows is refused, naming it.
  const auto other = synthetic_dataset(5, 32, 6);
  o.noise_floor = &other;
  o.noise_floor_name = "floor.stsd";
  try {
    experiments::evaluate_surrogate(model, d, split, o);
    FAIL("a noise floor of other windows was accepted");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).starts_with("floor.stsd: "));
  }
}

TEST_CASE("a moving average of the weights is what training validates and keeps") {
  Surrogate::set_threads(1);
  const auto d = synthetic_dataset(6, 32, 6);
  const Split split = small_split();
  TrainOptions o = quick_training(300);
  const auto held_out = [&](const Surrogate& m) { return test_part_errors(m, d).r2_log; };
  Surrogate raw(d, split, small_model(), 3);
  raw.train(d, split, o);
  o.ema = 0.95;
  Surrogate averaged(d, split, small_model(), 3), again(d, split, small_model(), 3);
  const auto report = averaged.train(d, split, o);
  again.train(d, split, o);
  MESSAGE("held-out R² of log wait: ", held_out(raw), " raw weights, ", held_out(averaged), " averaged");
  CHECK(held_out(averaged) > 0.9);  // the average learns the problem too
  CHECK(report.best_step > 0);
  // Other weights than the optimiser's (the same seed and steps), and deterministic.
  const auto p = averaged.predict(d.windows[5], {d.encoded_setting(2)});
  CHECK_FALSE(same_on_targets(p, raw.predict(d.windows[5], {d.encoded_setting(2)}), d.windows[5]));
  CHECK(same_on_targets(p, again.predict(d.windows[5], {d.encoded_setting(2)}), d.windows[5]));
}

TEST_CASE("renormalise: a fine-tune may take its statistics from the new data, keeping the weights") {
  Surrogate::set_threads(1);
  const auto d = synthetic_dataset(6, 32, 6);
  const Split split = small_split();
  Surrogate model(d, split, small_model(), 3);
  const auto before = model.predict(d.windows[5], {d.encoded_setting(2)});
  // On the data it was made from, the statistics are the same: nothing changes.
  model.renormalise(d, split);
  CHECK(same_on_targets(model.predict(d.windows[5], {d.encoded_setting(2)}), before, d.windows[5]));
  // On data whose training waits are all e times longer plus e - 1 (log1p(wait) one higher), the
  // target's mean moves by exactly 1 and its spread not at all: every quantile moves up by 1.
  auto longer = d;
  for (auto& waits : longer.waits)
    for (auto& w : waits) w = static_cast<float>(std::expm1(std::log1p(static_cast<double>(w)) + 1));
  model.renormalise(longer, split);
  const auto after = model.predict(d.windows[5], {d.encoded_setting(2)});
  for (std::size_t i = 0; i < 32; ++i)
    if (d.windows[5].target[i])
      for (int q = 0; q < 3; ++q) CHECK(after[0][i][q] == doctest::Approx(before[0][i][q] + 1).epsilon(1e-4));
}

TEST_CASE("the transformer learns a setting-dependent wait, and its checkpoint round-trips") {
  Surrogate::set_threads(1);
  const auto d = synthetic_dataset(6, 32, 6);
  const Split split = small_split();
  ModelConfig c = small_model();
  c.conditioned_layers = 1;
  c.competition_heads = 4;
  TrainOptions o = quick_training(300);

  auto r2_on_test = [&](const Surrogate& m) { return test_part_errors(m, d).r2_log; };
  Surrogate model(d, split, c, 3);
  const double before = r2_on_test(model);
  const auto report = model.train(d, split, o);
  const double after = r2_on_test(model);
  MESSAGE("held-out R² of log wait: ", before, " untrained, ", after, " after ", report.steps, " steps");
  CHECK(report.steps == 300);
  CHECK(after > 0.9);
  CHECK(after > before + 0.5);

  // The same seed and thread count train to the same weights.
  Surrogate again(d, split, c, 3);
  again.train(d, split, o);
  const auto p1 = model.predict(d.windows[5], {d.encoded_setting(2)});
  const auto p2 = again.predict(d.windows[5], {d.encoded_setting(2)});
  CHECK(same_on_targets(p1, p2, d.windows[5]));

  // Conformal calibration on the validation part (window 4 × settings 2 and 4: 48 targets): the shift is
  // the ceil(49 · 0.8) = 40th smallest score, so at least 40 of the 48 lie inside the shifted interval
  // (exactly 40 without ties; where a negative shift is held at the median, more).
  CHECK(report.calibration_targets == 48);
  CHECK(report.interval_shift == model.interval_shift());
  const auto qv = model.predict(d.windows[4], {d.encoded_setting(2), d.encoded_setting(4)});
  std::size_t inside = 0, raw_inside = 0;
  for (std::size_t k = 0; k < 2; ++k)
    for (std::size_t i = 0; i < 32; ++i)
      if (d.windows[4].target[i]) {
        const float y = std::log1p(d.waits[4][(k == 0 ? 2 : 4) * 32 + i]);
        inside += (y >= qv[k][i][0] && y <= qv[k][i][2]) ? 1 : 0;
        const float shift = model.interval_shift();  // the interval as trained, where it was not held
        raw_inside += (y >= qv[k][i][0] + shift && y <= qv[k][i][2] - shift) ? 1 : 0;
      }
  MESSAGE("validation coverage ", report.raw_coverage, " as trained, shift ", report.interval_shift, ", ",
          inside, " of 48 after");
  CHECK(inside >= 40);
  if (report.interval_shift > 0) {
    CHECK(inside == 40);
    CHECK(raw_inside == static_cast<std::size_t>(std::lround(report.raw_coverage * 48)));
  }

  const std::string path = temp_path("surrogate.ckpt");
  CHECK_FALSE(model.trained_split());             // a fresh model has no record of a split
  model.set_trained_split({SplitMode::kAll, 3});  // every mode round-trips
  model.save(path);
  CHECK(*Surrogate::load(path).trained_split() == SplitRecord{SplitMode::kAll, 3});
  model.set_trained_split({SplitMode::kTail, 11});
  model.save(path);
  const auto loaded = Surrogate::load(path);
  REQUIRE(loaded.trained_split());
  CHECK(*loaded.trained_split() == SplitRecord{SplitMode::kTail, 11});
  // The training targets' median (the trivial baseline) travels too: by hand, the middle of the
  // sorted log1p(wait) of the training windows x training settings, to the histogram's 0.001.
  {
    std::vector<double> ys;
    for (auto w : split.train_windows)
      for (auto s : split.train_settings)
        for (std::size_t i = 0; i < d.windows[w].jobs; ++i)
          if (const float wait = d.waits[w][s * d.windows[w].jobs + i]; !std::isnan(wait))
            ys.push_back(std::log1p(std::max(0.0f, wait)));
    REQUIRE(ys.size() > 10);
    std::sort(ys.begin(), ys.end());
    REQUIRE(model.training_median());
    CHECK(std::abs(*model.training_median() - ys[(ys.size() - 1) / 2]) <= 0.0006);  // the bin's centre
    CHECK(loaded.training_median() == model.training_median());
  }
  // The ridge fitted on the training split when the model was made travels with it.
  REQUIRE(loaded.training_ridge());
  CHECK(loaded.training_ridge()->predict(d, 5, 2) == model.training_ridge()->predict(d, 5, 2));
  CHECK(same_on_targets(loaded.predict(d.windows[5], {d.encoded_setting(2)}), p1, d.windows[5]));
  CHECK(loaded.parameter_count() == model.parameter_count());
  CHECK(loaded.interval_shift() == model.interval_shift());
  {
    // Older versions still load. Version 4: no ridge base flag (the byte after the six dimensions and
    // the dropout).
    const std::string good = read_input_file(path);
    std::string payload = good.substr(20, good.size() - 28);
    constexpr char kMagic[8] = {'S', 'T', 'W', 'S', 'U', 'R', 'C', 'K'};  // as surrogate/model.cpp
    // Version 6: no training median (the 4 bytes before the weights' size and the first name's length).
    {
      const auto median_at = payload.find("numeric.weight") - 4 - 8 - 4;
      float stored = 0;
      std::memcpy(&stored, payload.data() + median_at, sizeof stored);
      CHECK(stored == *model.training_median());
      payload.erase(median_at, 4);
      const auto v6 = Surrogate::decode(seal_container(kMagic, 6, payload), "v6.ckpt");
      CHECK_FALSE(v6.training_median());
      CHECK(v6.training_ridge());
      CHECK(same_on_targets(v6.predict(d.windows[5], {d.encoded_setting(2)}), p1, d.windows[5]));
    }
    // Version 5: no split record (mode and seed, 9 bytes) and no training ridge (a flag and the ridge),
    // before the weights' size and the first name's length.
    REQUIRE(model.training_ridge());
    ByteWriter ridge_bytes;
    model.training_ridge()->put(ridge_bytes);
    const auto v6_part = 9 + 1 + ridge_bytes.bytes().size();
    const auto first_name = payload.find("numeric.weight");
    REQUIRE(first_name != std::string::npos);
    REQUIRE(payload[first_name - 4 - 8 - v6_part] == 1);  // kTail
    payload.erase(first_name - 4 - 8 - v6_part, v6_part);
    const auto v5 = Surrogate::decode(seal_container(kMagic, 5, payload), "v5.ckpt");
    CHECK_FALSE(v5.trained_split());
    CHECK_FALSE(v5.training_ridge());
    CHECK(same_on_targets(v5.predict(d.windows[5], {d.encoded_setting(2)}), p1, d.windows[5]));
    REQUIRE(payload[6 * 8 + 8] == 0);
    payload.erase(6 * 8 + 8, 1);
    const auto v4 = Surrogate::decode(seal_container(kMagic, 4, payload), "v4.ckpt");
    CHECK_FALSE(v4.config().ridge_base);
    CHECK(same_on_targets(v4.predict(d.windows[5], {d.encoded_setting(2)}), p1, d.windows[5]));
    // A version 2 checkpoint (no shift: the payload without its 4 bytes before the weights) loads with
    // the network's own interval.
    const auto name = payload.find("numeric.weight");
    REQUIRE(name != std::string::npos);
    // Version 3: no bound (the 4 bytes before the weights' size and the first name's length).
    std::string v3_payload = payload;
    v3_payload.erase(name - 4 - 8 - 4, 4);
    const auto v3 = Surrogate::decode(seal_container(kMagic, 3, v3_payload), "v3.ckpt");
    CHECK(v3.interval_shift() == model.interval_shift());
    CHECK(std::isinf(v3.wait_bound()));
    payload.erase(name - 4 - 8 - 8, 8);  // version 2: neither the shift nor the bound
    const auto v2 = Surrogate::decode(seal_container(kMagic, 2, payload), "v2.ckpt");
    CHECK(v2.interval_shift() == 0);
    const auto q2 = v2.predict(d.windows[5], {d.encoded_setting(2)});
    for (std::size_t i = 0; i < 32; ++i) {
      if (!d.windows[5].target[i]) continue;
      CHECK(q2[0][i][1] == p1[0][i][1]);
      if (p1[0][i][0] < p1[0][i][1])
        CHECK(q2[0][i][0] == doctest::Approx(p1[0][i][0] + model.interval_shift()));
    }
  }
  // Quantiles never cross.
  for (std::size_t i = 0; i < 32; ++i)
    if (d.windows[5].target[i]) CHECK((p1[0][i][0] <= p1[0][i][1] && p1[0][i][1] <= p1[0][i][2]));

  // No prediction passes the longest training wait (windows 0-3 × settings 0, 1, 3, 5), even for a
  // setting far outside the trained range.
  float longest = 0;
  for (std::uint32_t w = 0; w < 4; ++w)
    for (std::uint32_t s : {0u, 1u, 3u, 5u})
      for (std::size_t i = 0; i < 32; ++i)
        if (d.windows[w].target[i]) longest = std::max(longest, std::log1p(d.waits[w][s * 32 + i]));
  CHECK(model.wait_bound() == longest);
  CHECK(loaded.wait_bound() == longest);
  auto far = d.encoded_setting(2);
  for (auto& v : far) v = 50.0f;  // encoded settings span about [0, 1]
  const auto qf = model.predict(d.windows[5], {far});
  std::size_t at_bound = 0;
  for (std::size_t i = 0; i < 32; ++i)
    if (d.windows[5].target[i]) {
      CHECK(qf[0][i][2] <= longest);
      CHECK((qf[0][i][0] <= qf[0][i][1] && qf[0][i][1] <= qf[0][i][2]));
      at_bound += qf[0][i][1] == longest;
    }
  MESSAGE(at_bound, " medians held at the bound for the far setting");
  CHECK(at_bound > 0);  // the far setting does reach the bound

  SurrogateDataset other = d;
  other.schema.qos.push_back("high");
  CHECK_THROWS_WITH_AS(loaded.check_compatible(other, "other.stsd"), doctest::Contains("feature schema"),
                       InputError);
  other = d;
  other.axes[0].hi = 5000;
  CHECK_THROWS_WITH_AS(loaded.check_compatible(other, "other.stsd"), doctest::Contains("PriorityWeightAge"),
                       InputError);

  // Few-shot adaptation: on a "new site" where the setting matters the other way round (slope -2), the
  // trained model is poor; fine-tuning on two windows × two settings fixes most of it.
  const auto shifted = synthetic_dataset(6, 32, 6, -2.0);
  auto mse_on = [&](const Surrogate& m, const SurrogateDataset& data) {
    double sum = 0, n = 0;
    const auto q = m.predict(data.windows[5], {data.encoded_setting(0), data.encoded_setting(5)});
    for (std::size_t k = 0; k < 2; ++k)
      for (std::size_t i = 0; i < 32; ++i)
        if (data.windows[5].target[i]) {
          const double e =
              q[k][i][1] - std::log1p(static_cast<double>(data.waits[5][(k == 0 ? 0 : 5) * 32 + i]));
          sum += e * e;
          n += 1;
        }
    return sum / n;
  };
  auto tuned = Surrogate::load(path);
  const double before_tuning = mse_on(tuned, shifted);
  Split few = split;
  few.train_windows = {0, 1};
  few.train_settings = {0, 5};
  TrainOptions ft = o;
  ft.steps = 150;
  const auto tuning = tuned.train(shifted, few, ft);
  const double after_tuning = mse_on(tuned, shifted);
  MESSAGE("shifted site: MSE of log wait ", before_tuning, " before fine-tuning, ", after_tuning, " after");
  CHECK(after_tuning < before_tuning / 4);
  CHECK(tuning.best_step > 0);

  // A fine-tune that only makes things worse (a learning rate far too high, on the model's own site)
  // keeps the weights it started from: no step validates better than step 0.
  auto wrecked = Surrogate::load(path);
  TrainOptions wild = o;
  wild.steps = 20;
  wild.warmup = 1;
  wild.eval_every = 10;
  wild.lr = 50;
  const auto wild_report = wrecked.train(d, split, wild);
  CHECK(wild_report.steps == 20);
  CHECK(wild_report.best_step == 0);
  const auto reference = Surrogate::load(path);
  CHECK(same_on_targets(wrecked.predict(d.windows[5], {d.encoded_setting(2)}),
                        reference.predict(d.windows[5], {d.encoded_setting(2)}), d.windows[5]));

  std::string bytes = read_input_file(path);
  bytes[bytes.size() - 100] ^= 0x01;
  write_file_atomic(path, bytes);
  CHECK_THROWS_WITH_AS(Surrogate::load(path), doctest::Contains("checksum"), InputError);
  std::filesystem::remove(path);
}
