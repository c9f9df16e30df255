// Sweeps with the surrogate in the loop (issue 8): the metrics of a predicted schedule, which points a
// hybrid sweep verifies, the store keeping both engines' values, and `sweep run --engine
// surrogate|hybrid` end to end with a small trained model.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <numeric>
#include <set>
#include <stdexcept>

#include "experiments/learn/compare.hpp"
#include "experiments/learn/optimize.hpp"
#include "experiments/learn/surrogate_data.hpp"
#include "experiments/learn/surrogate_engine.hpp"
#include "experiments/learn/surrogate_sweep.hpp"
#include "experiments/learn/sweep_hybrid.hpp"
#include "experiments/replay/replay.hpp"
#include "experiments/sweep/sweep.hpp"
#include "experiments/sweep/sweep_store.hpp"
#include "surrogate/model.hpp"
#include "tests/test_support.hpp"
#include "traces/default_site.hpp"
#include "traces/synthetic.hpp"

namespace slurmtwin::experiments {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Trace one_day(std::uint64_t seed) {
  auto config = default_synthetic_config();
  config.seed = seed;
  config.days = 1;
  return generate_synthetic(config);
}

// Writes DIR/spec.yaml: the built-in site and a synthetic day (seed 11), then `rest` (parameters,
// objectives, ...); returns its path.
std::string day_spec(const std::filesystem::path& dir, const std::string& rest) {
  const auto path = (dir / "spec.yaml").string();
  std::ofstream(path) << "trace:\n  synthetic: {seed: 11, days: 1}\n" << rest;
  return path;
}

// The 3 x 3 grid of age and fair-share weights several engine tests sweep (nine points: without the
// site's current settings, which would be a tenth).
constexpr const char* kGrid9 =
    "parameters:\n  PriorityWeightAge: [0, 3000, 9000]\n  PriorityWeightFairshare: [100, 5000, 10000]\n"
    "current_settings: false\n";

/// run_sweep_spec with the surrogate and hybrid engines' scorer for `so` and `ho`.
SweepRunSummary run_scored(const SweepSpec& spec, const std::string& db, SweepRunOptions o,
                           const SurrogateEngineOptions& so, const HybridOptions& ho) {
  SurrogateScorer scorer(so, ho);
  o.scorer = &scorer;
  return run_sweep_spec(spec, db, o);
}

}  // namespace

TEST_CASE("predicted schedule: the exact waits as the prediction give back the replay's metrics") {
  const Trace trace = one_day(11);
  const ReplayResult r = run_replay(default_site(), trace, ReplayOptions{});
  REQUIRE(r.metrics.preemptions == 0);  // the surrogate does not predict preemptions
  REQUIRE(r.metrics.started > 100);
  std::vector<double> waits(trace.jobs.size(), -1);
  for (const auto& j : r.state->jobs)
    if (j.start != kUnsetTime) waits[j.trace_index] = static_cast<double>(j.start - j.submit);
  sim::SimState work = *r.state;
  const auto same = predicted_schedule_metrics(r, trace, waits, work);
  // Every metric but the pending reasons, which a prediction does not have (no scheduler ran).
  const auto without_reasons = [](std::string json) {
    const auto at = json.find("  \"pending_reasons_series\"");
    return at == std::string::npos ? json : json.erase(at, json.find('\n', at) + 1 - at);
  };
  CHECK(same.pending_reasons_series.empty());
  CHECK_FALSE(r.metrics.pending_reasons_series.empty());
  CHECK(without_reasons(sim::metrics_to_json(same)) == without_reasons(sim::metrics_to_json(r.metrics)));

  // Every started job waiting one hour longer: the mean wait grows by exactly 3600 s, and the queue
  // holds each job one hour longer.
  for (auto& w : waits)
    if (w >= 0) w += 3600;
  const auto later = predicted_schedule_metrics(r, trace, waits, work);
  CHECK(later.overall.mean == doctest::Approx(r.metrics.overall.mean + 3600).epsilon(1e-12));
  CHECK(later.overall.max == doctest::Approx(r.metrics.overall.max + 3600));
  CHECK(later.started == r.metrics.started);
  CHECK(later.makespan >= r.metrics.makespan);
  CHECK(later.mean_queue_length > r.metrics.mean_queue_length);

  // Without the time series (the 10% and 90% schedules of a spec that reads none of it): every metric
  // metric_reads_series does not name is the same; those it names are not computed.
  const auto bare = predicted_schedule_metrics(r, trace, waits, work, false);
  const std::string part = "@partition:" + r.state->site.partitions.front().name;
  std::size_t from_series = 0;
  for (const std::string metric :
       {"wait_mean", "wait_median", "wait_p90", "wait_p95", "wait_p99", "wait_max", "bsld_mean",
        "jobs_started", "utilisation", "memory_utilisation", "gpu_utilisation", "preemptions",
        "mean_queue_length", "never_started", "fairness"}) {
    CAPTURE(metric);
    REQUIRE(metric_is_known(metric));
    for (const auto& name : {metric, metric + part}) {
      if (!metric_is_known(name)) continue;
      if (metric_reads_series(name)) {
        ++from_series;
        CHECK(metric_value(bare, name) != metric_value(later, name));
      } else {
        CHECK(metric_value(bare, name) == metric_value(later, name));
      }
    }
  }
  CHECK(from_series == 3);  // memory and GPU utilisation, mean queue length
}

TEST_CASE("hybrid sweep: which points the exact simulator verifies, by hand") {
  // Objectives: wait (min), utilisation (max); constraint: p95 <= 100.
  const std::vector<SweepObjective> objectives = {{"wait_mean", Goal::kMin}, {"utilisation", Goal::kMax}};
  SweepConstraint c = parse_constraint("wait_p95 <= 100");
  // mid/lo/hi per point: wait, utilisation, p95.
  const std::vector<PointPrediction> p = {
      {{10, 0.50, 90}, {9, 0.49, 80}, {11, 0.51, 95}},     // 0: best wait, feasible
      {{5, 0.40, 150}, {4, 0.39, 120}, {6, 0.41, 160}},    // 1: better wait, but certainly infeasible
      {{20, 0.90, 80}, {19, 0.89, 70}, {21, 0.91, 90}},    // 2: best utilisation
      {{12, 0.60, 110}, {11, 0.59, 95}, {13, 0.61, 120}},  // 3: second wait; may be feasible (lo 95)
      {{30, 0.80, 50}, {5, 0.20, 40}, {60, 0.95, 60}},     // 4: second utilisation; wide interval
      {{40, 0.10, 50}, {39, 0.09, 40}, {41, 0.11, 60}},    // 5: nothing
  };
  HybridOptions o;
  o.top_k = 1;
  o.verify_width = 1.0;
  o.max_exact = 6;
  // Rank 1 of wait (0; 1 is infeasible), rank 1 of utilisation (2), then the wide one (4: (60-5)/30).
  CHECK(select_for_verification(p, objectives, {c}, o) == std::vector<std::size_t>{0, 2, 4});
  o.top_k = 2;  // rank 2: wait 3, utilisation 4
  CHECK(select_for_verification(p, objectives, {c}, o) == std::vector<std::size_t>{0, 2, 3, 4});
  o.max_exact = 0.5;  // half of 6 points
  CHECK(select_for_verification(p, objectives, {c}, o) == std::vector<std::size_t>{0, 2, 3});
  o.max_exact = 6;
  CHECK(select_for_verification(p, objectives, {}, o) == std::vector<std::size_t>{1, 2, 0, 4});
  // Objectives that agree on their best: wait ranks 0, 3, 2 and utilisation 0, 4, 2 (point 1 is
  // infeasible). Each objective takes its best point not taken yet in turn: wait 0, then utilisation
  // its next, 4 (by rank alone it would lose its turn to the shared 0, and wait's 3 would come next).
  std::vector<PointPrediction> q = p;
  q[0].mid[1] = 0.95;
  q[2].mid[1] = 0.70;
  o.top_k = 3;
  o.verify_width = 100;  // no wide intervals
  o.max_exact = 2;
  CHECK(select_for_verification(q, objectives, {c}, o) == std::vector<std::size_t>{0, 4});
  o.max_exact = 4;
  CHECK(select_for_verification(q, objectives, {c}, o) == std::vector<std::size_t>{0, 4, 3, 2});
  o.verify_width = 1.0;
  o.max_exact = 6;
  CHECK(exact_budget(o, 1000) == 6);
  o.max_exact = 0.1;
  CHECK(exact_budget(o, 1000) == 100);
}

TEST_CASE("hybrid calibration: spread-out points, coordinates, and a surrogate bias corrected") {
  CHECK(calibration_points(10, 3) == std::vector<std::size_t>{1, 5, 8});  // middles of strides of 10/3
  CHECK(calibration_points(8, 4) == std::vector<std::size_t>{1, 3, 5, 7});
  CHECK(calibration_points(3, 5) == std::vector<std::size_t>{0, 1, 2});
  CHECK(calibration_points(5, 0).empty());

  SweepSpec spec;
  SweepParameter age, bf, list;
  age.name = "PriorityWeightAge";  // a weight: log1p scale, as the surrogate sees it
  age.hi = 100000;
  bf.name = "bf_interval";
  bf.lo = 30;
  bf.hi = 90;
  list.name = "bf_max_job_test";
  list.values = {10, 20, 40};
  spec.parameters = {age, bf, list};
  const auto x = point_coordinates(spec, {{"PriorityWeightAge", std::expm1(std::log1p(100000.0) / 2)},
                                          {"bf_interval", 60},
                                          {"bf_max_job_test", 40}});
  REQUIRE(x.size() == 3);
  CHECK(x[0] == doctest::Approx(0.5));
  CHECK(x[1] == doctest::Approx(0.5));
  CHECK(x[2] == doctest::Approx(1.0));

  // Eight points; the exact objective is 50 + 20 x1 + 10 x2, the surrogate says 100 - 30 x1 (wrong way
  // round). Four exact values (points 1, 3, 5, 7) correct it: the calibrated medians rank all eight as
  // the exact values do and lie within 2% of them; each interval moves with its median.
  std::vector<std::vector<double>> coordinates;
  std::vector<PointPrediction> points;
  std::vector<double> truth;
  for (int i = 0; i < 8; ++i) {
    const double x1 = i / 7.0, x2 = (i * 3 % 8) / 7.0;
    coordinates.push_back({x1, x2});
    points.push_back({{100 - 30 * x1}, {90 - 30 * x1}, {120 - 30 * x1}});
    truth.push_back(50 + 20 * x1 + 10 * x2);
  }
  const std::vector<std::size_t> calibration = {1, 3, 5, 7};
  std::vector<std::vector<double>> exact;
  for (auto c : calibration) exact.push_back({truth[c]});
  fit_surface(points, coordinates, calibration, exact, 1);
  std::vector<std::size_t> by_truth(8), by_calibrated(8);
  std::iota(by_truth.begin(), by_truth.end(), 0);
  std::iota(by_calibrated.begin(), by_calibrated.end(), 0);
  std::sort(by_truth.begin(), by_truth.end(), [&](auto a, auto b) { return truth[a] < truth[b]; });
  std::sort(by_calibrated.begin(), by_calibrated.end(),
            [&](auto a, auto b) { return points[a].mid[0] < points[b].mid[0]; });
  CHECK(by_calibrated == by_truth);
  for (int i = 0; i < 8; ++i) {
    CAPTURE(i);
    CHECK(points[i].mid[0] == doctest::Approx(truth[i]).epsilon(0.02));
    CHECK(points[i].hi[0] - points[i].mid[0] == doctest::Approx(20.0));
    CHECK(points[i].mid[0] - points[i].lo[0] == doctest::Approx(10.0));
  }
}

TEST_CASE("hybrid response surface: quadratic regressors, a fit without a surrogate and its interval") {
  CHECK(quadratic_features({2, 3}) == std::vector<double>{2, 3, 4, 6, 9});
  CHECK(quadratic_features({}).empty());

  // 25 points on a 5 x 5 grid; the truth is a bowl with its bottom at (0.75, 0.25). Nine exact values
  // (a 3 x 3 sub-grid without the bottom) and no surrogate: the quadratic surface puts its minimum on
  // the bottom, and interpolates the rest within 7% of the truth's range (the ridge penalty shrinks it).
  std::vector<std::vector<double>> features;
  std::vector<double> truth;
  for (int a = 0; a < 5; ++a)
    for (int b = 0; b < 5; ++b) {
      const double x1 = a / 4.0, x2 = b / 4.0;
      features.push_back(quadratic_features({x1, x2}));
      truth.push_back(10 + 8 * (x1 - 0.75) * (x1 - 0.75) + 4 * (x2 - 0.25) * (x2 - 0.25));
    }
  const std::vector<std::size_t> at = {0, 2, 4, 10, 12, 14, 20, 22, 24};
  const auto blank = [] { return std::vector<PointPrediction>(25, PointPrediction{{kNaN}, {kNaN}, {kNaN}}); };
  auto points = blank();
  std::vector<std::vector<double>> exact;
  for (auto i : at) exact.push_back({truth[i]});
  fit_surface(points, features, at, exact, 1);
  std::size_t best = 0;
  for (std::size_t i = 0; i < 25; ++i) {
    CAPTURE(i);
    CHECK(std::abs(points[i].mid[0] - truth[i]) < 0.45);  // 7% of the truth's range, 10 .. 16.75
    CHECK(points[i].hi[0] - points[i].mid[0] == doctest::Approx(points[i].mid[0] - points[i].lo[0]));
    if (points[i].mid[0] < points[best].mid[0]) best = i;
  }
  CHECK(best == 3 * 5 + 1);  // (0.75, 0.25)
  const double tight = points[0].hi[0] - points[0].mid[0];

  // The same with +-0.5 added to alternate exact values: the interval widens to at least 1.2816 x the
  // fit's in-sample RMS residual (leave-one-out residuals are larger than in-sample ones).
  auto noisy = blank();
  for (std::size_t e = 0; e < at.size(); ++e) exact[e][0] = truth[at[e]] + (e % 2 ? 0.5 : -0.5);
  fit_surface(noisy, features, at, exact, 1);
  double sum = 0;
  for (std::size_t e = 0; e < at.size(); ++e) sum += std::pow(noisy[at[e]].mid[0] - exact[e][0], 2);
  const double half = noisy[0].hi[0] - noisy[0].mid[0];
  CHECK(half > 1.2816 * std::sqrt(sum / 9.0));
  CHECK(half > tight);
  // Not finite at an exact point: the metric is left alone.
  auto left = blank();
  exact[3][0] = kNaN;
  fit_surface(left, features, at, exact, 1);
  CHECK(std::isnan(left[7].mid[0]));
}

TEST_CASE("hybrid choice: calibration, then rounds on a refit surface find the best feasible point") {
  // 49 points on a 7 x 7 grid in design order; objective (min) a tilted bowl, constraint x1 <= 0.5
  // (as its own metric: the value x1). The unconstrained bottom (x1 = 5/6) is infeasible; the best
  // feasible point is (0.5, 1/6).
  std::vector<std::vector<double>> features, truth;
  for (int a = 0; a < 7; ++a)
    for (int b = 0; b < 7; ++b) {
      const double x1 = a / 6.0, x2 = b / 6.0;
      features.push_back(quadratic_features({x1, x2}));
      truth.push_back({5 * (x1 - 0.8) * (x1 - 0.8) + 3 * (x2 - 0.3) * (x2 - 0.3) + x1 * x2, x1});
    }
  const std::vector<SweepObjective> objectives = {{"wait_mean", Goal::kMin}};
  const std::vector<SweepConstraint> constraints = {parse_constraint("utilisation <= 0.5")};  // holds x1
  std::size_t best = 0;
  for (std::size_t i = 0; i < 49; ++i)
    if (truth[i][1] <= 0.5 && truth[i][0] < truth[best][0]) best = i;
  REQUIRE(best == 3 * 7 + 1);
  std::vector<std::size_t> calls, seen;
  const ExactEvaluator evaluate = [&](const std::vector<std::size_t>& part) {
    calls.push_back(part.size());
    std::vector<std::vector<double>> out;
    for (auto i : part) {
      seen.push_back(i);
      out.push_back(truth[i]);
    }
    return out;
  };
  HybridOptions o;
  o.max_exact = 12;
  o.calibrate = 0.5;
  o.round = 2;
  const std::vector<PointPrediction> none(49, PointPrediction{{kNaN, kNaN}, {kNaN, kNaN}, {kNaN, kNaN}});
  const auto chosen = choose_for_exact(none, features, objectives, constraints, o, evaluate);
  CHECK(chosen.size() == 12);
  CHECK(calls == std::vector<std::size_t>{6, 2, 2, 2});  // calibration, then three rounds of 2
  CHECK(seen == chosen);
  CHECK(std::vector<std::size_t>(chosen.begin(), chosen.begin() + 6) == calibration_points(49, 6));
  CHECK(std::find(chosen.begin(), chosen.end(), best) != chosen.end());
  CHECK(std::set<std::size_t>(chosen.begin(), chosen.end()).size() == 12);  // no point twice

  // A surrogate that has the objective the wrong way round joins the regression as one more column
  // and does not mislead it.
  std::vector<PointPrediction> wrong;
  for (const auto& t : truth) wrong.push_back({{-t[0], t[1]}, {-t[0] - 1, t[1]}, {-t[0] + 1, t[1]}});
  calls.clear();
  seen.clear();
  const auto with = choose_for_exact(wrong, features, objectives, constraints, o, evaluate);
  CHECK(std::find(with.begin(), with.end(), best) != with.end());
  // model_first: the model's own best 3 of the 12 (by hand: the feasible points of largest truth, ties to
  // the lower index) come first, in one batch with the 6 calibration points, and the rounds still find
  // the best feasible point.
  std::vector<std::size_t> by_model;
  for (std::size_t i = 0; i < 49; ++i)
    if (truth[i][1] <= 0.5) by_model.push_back(i);
  std::stable_sort(by_model.begin(), by_model.end(),
                   [&](std::size_t a, std::size_t b) { return truth[a][0] > truth[b][0]; });
  auto first = o;
  first.model_first = 0.25;
  calls.clear();
  seen.clear();
  const auto screened = choose_for_exact(wrong, features, objectives, constraints, first, evaluate);
  CHECK(std::vector<std::size_t>(screened.begin(), screened.begin() + 3) ==
        std::vector<std::size_t>(by_model.begin(), by_model.begin() + 3));
  CHECK(calls.front() == 9);
  CHECK(screened.size() == 12);
  CHECK(std::find(screened.begin(), screened.end(), best) != screened.end());
  // A model that knows the truth puts the best first.
  std::vector<PointPrediction> right;
  for (const auto& t : truth) right.push_back({{t[0], t[1]}, {t[0], t[1]}, {t[0], t[1]}});
  CHECK(choose_for_exact(right, features, objectives, constraints, first, evaluate).front() == best);
  // calibrate 0: the surrogate's own ranking chooses the whole budget at once (its "best" is the worst).
  o.calibrate = 0;
  o.top_k = 12;
  calls.clear();
  const auto raw = choose_for_exact(wrong, features, objectives, constraints, o, evaluate);
  CHECK(calls == std::vector<std::size_t>{0, 12});
  CHECK(std::find(raw.begin(), raw.end(), best) == raw.end());
  // No surrogate and no calibration: nothing to choose with.
  CHECK_THROWS_AS(choose_for_exact(none, features, objectives, constraints, o, evaluate),
                  std::invalid_argument);
}

TEST_CASE("hybrid regret over design orders: a known table replayed offline, by hand") {
  // 49 points of a 7 x 7 grid; objective (min) a bowl whose minimum 1.0 is the grid point (2/6, 4/6).
  std::vector<std::vector<double>> coordinates;
  std::vector<double> exact;
  for (int a = 0; a < 7; ++a)
    for (int b = 0; b < 7; ++b) {
      const double x1 = a / 6.0, x2 = b / 6.0;
      coordinates.push_back({x1, x2});
      exact.push_back(1 + 4 * (x1 - 2 / 6.0) * (x1 - 2 / 6.0) + 2 * (x2 - 4 / 6.0) * (x2 - 4 / 6.0));
    }
  HybridOptions o;
  o.round = 4;
  const std::vector<std::size_t> budgets = {8, 16};
  // The surface alone: the bowl is quadratic, so a fit on the calibration points (2 and 5 of them) plus
  // a round finds its minimum in every order once the fit has enough points (16: 5 + rounds of 4).
  const auto surface = hybrid_regret_over_orders(coordinates, exact, {}, budgets, o, 20, 11);
  REQUIRE(surface.size() == 2);
  CHECK(surface[0].budget == 8);
  CHECK(surface[0].regret_pct.size() == 20);
  for (double r : surface[1].regret_pct) CHECK(r == doctest::Approx(0).epsilon(1e-12));
  CHECK(surface[1].hit_rate(1.0) == 1.0);
  CHECK(surface[1].worst_pct() == doctest::Approx(0).epsilon(1e-12));
  const HybridRegret three{8, {4.0, 1.0, 9.0}};
  CHECK(three.median_pct() == 4.0);
  CHECK(three.worst_pct() == 9.0);
  CHECK(three.hit_rate(4.0) == doctest::Approx(2.0 / 3));
  // Same seed, same orders: the same regrets; another seed shuffles differently but is as good at 16.
  CHECK(hybrid_regret_over_orders(coordinates, exact, {}, budgets, o, 20, 11)[0].regret_pct ==
        surface[0].regret_pct);
  // A model that ranks the points the wrong way round, verified alone (calibrate 0): its 8 "best" are
  // the 8 worst points, so the regret is the 8th worst's by hand, in every order.
  std::vector<double> wrong;
  for (double v : exact) wrong.push_back(-v);
  auto top = o;
  top.calibrate = 0;
  top.top_k = 49;
  auto sorted = exact;
  std::sort(sorted.begin(), sorted.end());
  const double eighth_worst = sorted[49 - 8];
  const auto raw = hybrid_regret_over_orders(coordinates, exact, wrong, {8}, top, 3, 11);
  for (double r : raw[0].regret_pct) CHECK(r == doctest::Approx(100 * (eighth_worst - 1.0)));
  CHECK(raw[0].hit_rate(1.0) == 0.0);
  // A perfect model verified alone: regret 0 with any budget.
  const auto perfect = hybrid_regret_over_orders(coordinates, exact, exact, {5}, top, 3, 11);
  for (double r : perfect[0].regret_pct) CHECK(r == 0.0);
  CHECK_THROWS_AS(hybrid_regret_over_orders(coordinates, {1.0}, {}, budgets, o, 1, 1), std::invalid_argument);
}

TEST_CASE("sweep store: an exact result replaces a prediction's values and keeps the prediction") {
  const auto dir = testing::scratch_dir("sweep_engines_store");
  const auto db = (dir / "s.db").string();
  SweepStore store(db);
  const std::vector<SweepObjective> objectives = {{"wait_mean", Goal::kMin}};
  const std::vector<SweepConstraint> constraints = {parse_constraint("wait_p95 <= 100")};
  store.add_objectives(objectives);
  store.set_constraints(constraints);
  SweepRow predicted;
  predicted.key = "k1";
  predicted.params_json = "{}";
  predicted.metrics_json = "{}";
  predicted.engine = "surrogate";
  predicted.objectives = {10};
  predicted.constraint_values = {90};
  predicted.predicted = {10, 90};
  predicted.predicted_lo = {8, 80};
  predicted.predicted_hi = {13, 99};
  predicted.predicted_seconds = 0.5;
  CHECK(store.insert(predicted, objectives, constraints));
  CHECK_FALSE(store.insert(predicted, objectives, constraints));  // already predicted
  CHECK(store.status().at("k1").predicted);
  CHECK_FALSE(store.status().at("k1").exact);

  SweepRow exact = predicted;
  exact.engine = "exact";
  exact.objectives = {12};
  exact.constraint_values = {101};
  exact.predicted.clear();
  exact.predicted_lo.clear();
  exact.predicted_hi.clear();
  exact.predicted_seconds = kNaN;
  exact.run_seconds = 3;
  CHECK(store.insert(exact, objectives, constraints));
  CHECK_FALSE(store.insert(exact, objectives, constraints));  // exact already
  auto rows = store.rows();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].engine == "exact");
  CHECK(rows[0].objectives == std::vector<double>{12});
  CHECK(rows[0].constraint_values == std::vector<double>{101});
  CHECK(rows[0].predicted == std::vector<double>{10, 90});
  CHECK(rows[0].predicted_lo == std::vector<double>{8, 80});
  CHECK(rows[0].predicted_hi == std::vector<double>{13, 99});
  CHECK(rows[0].predicted_seconds == 0.5);

  // The other way round: a prediction added to an exact row leaves its values alone.
  exact.key = "k2";
  CHECK(store.insert(exact, objectives, constraints));
  predicted.key = "k2";
  CHECK(store.insert(predicted, objectives, constraints));
  rows = store.rows();
  REQUIRE(rows.size() == 2);
  CHECK(rows[1].engine == "exact");
  CHECK(rows[1].objectives == std::vector<double>{12});
  CHECK(rows[1].predicted == std::vector<double>{10, 90});
  CHECK(store.status().at("k2").exact);
  CHECK(store.status().at("k2").predicted);
}

namespace {

// A small surrogate of the built-in site on a synthetic day, trained for a few steps: enough to test
// the plumbing, not accuracy (docs/surrogate.md has the accuracy figures).
// With `reference`, the model also sees the exact replay of the site's own setting (docs/surrogate.md).
std::string small_model(const std::filesystem::path& dir, bool reference = false) {
  DatasetOptions o;
  o.reference = reference;
  o.window_jobs = 64;
  o.context_jobs = 16;
  o.settings = 5;
  o.threads = 1;
  for (const char* name : {"PriorityWeightAge", "PriorityWeightFairshare"}) {
    SweepParameter p;
    p.name = name;
    p.lo = 0;
    p.hi = 10000;
    o.parameters.push_back(p);
  }
  const auto d = build_dataset(default_site(), one_day(11), o);
  surrogate::ModelConfig c;
  c.d_model = 16;
  c.heads = 2;
  c.encoder_layers = 1;
  c.competition_heads = 2;
  c.ffn = 32;
  surrogate::TrainOptions t;
  t.steps = 20;
  t.warmup = 5;
  t.eval_every = 10;
  t.threads = 1;
  t.device = "cpu";
  const auto split = surrogate::make_split(d, 1);
  surrogate::Surrogate model(d, split, c, 1);
  model.train(d, split, t);
  const auto path = (dir / (reference ? "small_ref.ckpt" : "small.ckpt")).string();
  model.save(path);
  return path;
}

}  // namespace

TEST_CASE("sweep --engine surrogate and hybrid: stored predictions, exact verification, both values kept") {
  const auto dir = testing::scratch_dir("sweep_engines");
  const auto spec_path = day_spec(dir, std::string(kGrid9) +
                                           "objectives:\n  - {metric: wait_mean, goal: min}\n"
                                           "  - {metric: utilisation, goal: max}\n"
                                           "constraints:\n  - wait_p95 <= 1000000\n");
  const auto spec = load_sweep_spec(spec_path);
  SweepRunOptions o;
  SurrogateEngineOptions so;
  HybridOptions ho;
  o.check_invariants = true;
  o.engine = SweepEngine::kSurrogate;
  so.model = small_model(dir);
  so.window_jobs = 64;
  so.context_jobs = 16;
  so.point_batch = 4;  // several batches
  o.jobs = 1;
  const auto db1 = (dir / "s1.db").string();
  const auto s = run_scored(spec, db1, o, so, ho);
  CHECK(s.total == 9);
  CHECK(s.predicted == 9);
  CHECK(s.evaluated == 0);
  CHECK(run_scored(spec, db1, o, so, ho).predicted == 0);  // resumed: nothing left to predict

  // Same predictions with 2 threads.
  o.jobs = 2;
  const auto db2 = (dir / "s2.db").string();
  run_scored(spec, db2, o, so, ho);
  const auto rows = SweepStore(db1).rows(true);
  const auto rows2 = SweepStore(db2).rows(true);
  REQUIRE(rows.size() == 9);
  REQUIRE(rows2.size() == 9);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    CAPTURE(r.params_json);
    CHECK(r.engine == "surrogate");
    CHECK(r.metrics_json == rows2[i].metrics_json);
    CHECK(r.predicted == rows2[i].predicted);
    REQUIRE(r.predicted.size() == 3);  // 2 objectives + 1 constraint
    CHECK(r.objectives == std::vector<double>{r.predicted[0], r.predicted[1]});
    CHECK(r.constraint_values == std::vector<double>{r.predicted[2]});
    for (std::size_t k = 0; k < 3; ++k)
      CHECK((r.predicted_lo[k] <= r.predicted[k] && r.predicted[k] <= r.predicted_hi[k]));
    CHECK(r.predicted[0] > 0);
  }
  std::set<double> waits;
  for (const auto& r : rows) waits.insert(r.predicted[0]);
  CHECK(waits.size() > 1);  // the setting changes the prediction

  // Hybrid into the store of the surrogate run: no new prediction; the chosen points are replayed
  // exactly and equal an exact sweep's values, and keep their prediction.
  o.engine = SweepEngine::kHybrid;
  ho.top_k = 1;
  ho.verify_width = 1e9;
  ho.max_exact = 3;
  ho.calibrate = 0;
  const auto h = run_scored(spec, db1, o, so, ho);
  CHECK(h.predicted == 0);
  CHECK(h.verified >= 1);
  CHECK(h.verified <= 2);
  CHECK(h.evaluated == h.verified);
  o.engine = SweepEngine::kExact;
  const auto exact_db = (dir / "exact.db").string();
  CHECK(run_scored(spec, exact_db, o, so, ho).evaluated == 9);
  std::map<std::string, SweepRow> exact;
  for (auto& r : SweepStore(exact_db).rows()) exact[r.key] = r;
  std::size_t verified = 0;
  for (const auto& r : SweepStore(db1).rows()) {
    if (r.engine != "exact") continue;
    ++verified;
    CHECK(r.objectives == exact.at(r.key).objectives);
    CHECK(r.metrics_json == exact.at(r.key).metrics_json);
    CHECK(r.has_prediction());
  }
  CHECK(verified == h.verified);
  // An exact run on the hybrid store replays only the rest.
  CHECK(run_scored(spec, db1, o, so, ho).evaluated == 9 - h.verified);

  // With calibration: half of a budget of 4 goes to design points 2 and 6 (calibration_points(9, 2)),
  // replayed exactly first; the top of each objective, by the calibrated values, takes the rest.
  o.engine = SweepEngine::kHybrid;
  ho.max_exact = 4;
  ho.calibrate = 0.5;
  const auto db3 = (dir / "s3.db").string();
  const auto c = run_scored(spec, db3, o, so, ho);
  CHECK(c.predicted == 9);
  CHECK(c.verified == 4);
  CHECK(c.evaluated == 4);
  CHECK(c.skipped == 0);
  const auto plan = plan_sweep(spec);
  std::map<std::string, SweepRow> calibrated;
  for (auto& r : SweepStore(db3).rows()) calibrated[r.key] = r;
  CHECK(calibrated.at(plan.tasks[2].key).engine == "exact");
  CHECK(calibrated.at(plan.tasks[6].key).engine == "exact");
  std::size_t exact_rows = 0;
  for (const auto& [key, r] : calibrated)
    if (r.engine == "exact") {
      ++exact_rows;
      CHECK(r.objectives == exact.at(key).objectives);
    }
  CHECK(exact_rows == 4);
}

// The binary's --model-first reaches the engine: `slurmtwin sweep run --engine hybrid --model-first 0.5`
// verifies the same points as HybridOptions::model_first = 0.5 in the library, and those are not the
// points that the default (0) verifies, so a flag dropped on its way fails this.
TEST_CASE("slurmtwin sweep run --model-first: the model's best verified first, as the library chooses") {
  const auto dir = testing::scratch_dir("sweep_model_first");
  const auto spec_path = day_spec(dir, std::string(kGrid9) +
                                           "objectives:\n  - {metric: wait_mean, goal: min}\n"
                                           "  - {metric: utilisation, goal: max}\n");
  const auto spec = load_sweep_spec(spec_path);
  SweepRunOptions o;
  o.engine = SweepEngine::kHybrid;
  o.jobs = 1;
  SurrogateEngineOptions so;
  so.model = small_model(dir);
  so.window_jobs = 64;
  so.context_jobs = 16;
  so.point_batch = 4;
  HybridOptions ho;  // the CLI's defaults but for the three below
  ho.max_exact = 4;
  ho.calibrate = 0.5;
  const auto exact_keys = [](const std::string& db) {
    std::set<std::string> keys;
    for (const auto& r : SweepStore(db).rows())
      if (r.engine == "exact") keys.insert(r.key);
    return keys;
  };
  const auto plain_db = (dir / "plain.db").string();
  run_scored(spec, plain_db, o, so, ho);
  ho.model_first = 0.5;
  const auto first_db = (dir / "first.db").string();
  run_scored(spec, first_db, o, so, ho);
  REQUIRE(exact_keys(first_db).size() == 4);
  REQUIRE(exact_keys(plain_db) != exact_keys(first_db));  // else the check below tells nothing

  const auto cli_db = (dir / "cli.db").string();
  const auto run = testing::run_cli(fmt::format(
      "sweep run {} --db {} --engine hybrid --model {} --window-jobs 64 --context-jobs 16 --point-batch 4 "
      "-j 1 --max-exact 4 --calibrate 0.5 --model-first 0.5",
      spec_path, cli_db, so.model));
  CAPTURE(run.out);
  REQUIRE(run.code == 0);
  CHECK(exact_keys(cli_db) == exact_keys(first_db));
}

TEST_CASE("sweep --engine hybrid without a model: the response surface chooses, any thread count") {
  const auto dir = testing::scratch_dir("sweep_engines_surface");
  const auto spec_path =
      day_spec(dir, std::string(kGrid9) + "objectives:\n  - {metric: wait_mean, goal: min}\n");
  const auto spec = load_sweep_spec(spec_path);
  SweepRunOptions o;
  SurrogateEngineOptions so;
  HybridOptions ho;
  o.jobs = 1;
  const auto exact_db = (dir / "exact.db").string();
  CHECK(run_scored(spec, exact_db, o, so, ho).evaluated == 9);
  std::map<std::string, SweepRow> exact;
  for (auto& r : SweepStore(exact_db).rows()) exact[r.key] = r;

  // Budget 5: design points 2 and 6 (calibration_points(9, 2)), then three rounds of one.
  o.engine = SweepEngine::kHybrid;
  ho.max_exact = 5;
  ho.calibrate = 0.4;
  ho.round = 1;
  std::vector<std::set<std::string>> chosen;
  for (unsigned jobs : {1u, 2u}) {
    o.jobs = jobs;
    const auto db = (dir / fmt::format("h{}.db", jobs)).string();
    const auto s = run_scored(spec, db, o, so, ho);
    CHECK(s.predicted == 0);
    CHECK(s.verified == 5);
    CHECK(s.evaluated == 5);
    std::set<std::string> keys;
    for (const auto& r : SweepStore(db).rows()) {
      CHECK(r.engine == "exact");
      CHECK_FALSE(r.has_prediction());
      CHECK(r.objectives == exact.at(r.key).objectives);
      keys.insert(r.key);
    }
    chosen.push_back(keys);
  }
  CHECK(chosen[0].size() == 5);
  CHECK(chosen[0] == chosen[1]);
  const auto plan = plan_sweep(spec);
  CHECK(chosen[0].count(plan.tasks[2].key) == 1);
  CHECK(chosen[0].count(plan.tasks[6].key) == 1);

  // With the site's current settings in the sweep (a tenth point), they are always replayed exactly,
  // whether the surface chose them or not: the point every other is compared with.
  std::string with_current = std::string(kGrid9) + "objectives:\n  - {metric: wait_mean, goal: min}\n";
  with_current.replace(with_current.find("current_settings: false\n"), 24, "");
  const auto spec10 = load_sweep_spec(day_spec(dir, with_current));
  const auto plan10 = plan_sweep(spec10);
  REQUIRE(plan10.current);
  REQUIRE(plan10.current_added);  // the default site's weights are not on the grid
  o.jobs = 1;
  const auto db10 = (dir / "h10.db").string();
  const auto s10 = run_scored(spec10, db10, o, so, ho);
  std::map<std::string, SweepRow> rows10;
  for (auto& r : SweepStore(db10).rows()) rows10[r.key] = r;
  const auto& current_key = plan10.tasks[*plan10.current].key;
  REQUIRE(rows10.count(current_key) == 1);
  CHECK(rows10.at(current_key).engine == "exact");
  MESSAGE("hybrid with the current settings verified ", s10.verified, " points");
  CHECK(
      (s10.verified == 5 || s10.verified == 6));  // the budget's five, and the current one if not among them
  CHECK(s10.verified == rows10.size());
  CHECK(s10.evaluated == s10.verified);
}

TEST_CASE(
    "sweep --engine surrogate with reference features: the base replay feeds every point, any thread count") {
  const auto dir = testing::scratch_dir("sweep_engines_ref");
  const auto spec_path =
      day_spec(dir, std::string(kGrid9) + "objectives:\n  - {metric: wait_mean, goal: min}\n");
  const auto spec = load_sweep_spec(spec_path);
  SweepRunOptions o;
  SurrogateEngineOptions so;
  HybridOptions ho;
  o.engine = SweepEngine::kSurrogate;
  so.model = small_model(dir, true);
  so.window_jobs = 64;
  so.context_jobs = 16;
  std::vector<std::vector<SweepRow>> runs;
  for (unsigned jobs : {1u, 2u}) {
    o.jobs = jobs;
    const auto db = (dir / fmt::format("s{}.db", jobs)).string();
    CHECK(run_scored(spec, db, o, so, ho).predicted == 9);
    runs.push_back(SweepStore(db).rows(true));
  }
  REQUIRE(runs[0].size() == 9);
  std::set<double> waits;
  for (std::size_t i = 0; i < 9; ++i) {
    CHECK(runs[0][i].metrics_json == runs[1][i].metrics_json);
    waits.insert(runs[0][i].predicted[0]);
  }
  CHECK(waits.size() > 1);  // the setting changes the prediction
}

TEST_CASE(
    "sweep --engine: a model is required, and a setting the model does not know fails naming the line") {
  const auto dir = testing::scratch_dir("sweep_engines_errors");
  const auto spec_path = day_spec(dir,
                                  "parameters:\n  PriorityWeightJobSize: [0, 1000]\n"
                                  "objectives:\n  - {metric: wait_mean}\n");
  const auto r = testing::run_cli(fmt::format("sweep run {} --engine surrogate", spec_path));
  CHECK(r.code == 2);
  CHECK(r.out.find("--model") != std::string::npos);
  // A hybrid needs no model, but then two calibration points (2 points x 0.1 gives no exact budget:
  // nothing to do; --max-exact 2 with --calibrate 0.25 gives one).
  const auto few =
      testing::run_cli(fmt::format("sweep run {} --engine hybrid --max-exact 2 --calibrate 0.25 --db {}",
                                   spec_path, (dir / "few.db").string()));
  CHECK(few.code != 0);
  CHECK(few.out.find("two calibration points") != std::string::npos);
  // --model-first verifies a model's predictions: without a model, or outside [0, 1], it is refused.
  const auto first =
      testing::run_cli(fmt::format("sweep run {} --engine hybrid --model-first 0.5", spec_path));
  CHECK(first.code == 2);
  CHECK(first.out.find("--model-first needs --model") != std::string::npos);
  CHECK(testing::run_cli(fmt::format("sweep run {} --engine hybrid --model-first 1.5", spec_path)).code == 2);
  const auto model = small_model(dir);
  const auto bad = testing::run_cli(fmt::format(
      "sweep run {} --engine hybrid --model {} --window-jobs 64 --context-jobs 16", spec_path, model));
  CHECK(bad.code == 2);
  CHECK(bad.out.find("spec.yaml:4") != std::string::npos);
  CHECK(bad.out.find("PriorityWeightJobSize") != std::string::npos);
}

}  // namespace slurmtwin::experiments

namespace slurmtwin::experiments {

TEST_CASE("compare: errors, rank agreement, coverage and regret of the surrogate, by hand") {
  const std::vector<SweepObjective> objectives = {{"wait_mean", Goal::kMin}};
  const auto rows_of = [](const std::vector<double>& exact, const std::vector<double>& mid) {
    std::vector<SweepRow> rows;
    for (std::size_t i = 0; i < exact.size(); ++i) {
      SweepRow r;
      r.engine = "exact";
      r.objectives = {exact[i]};
      r.predicted = {mid[i]};
      r.predicted_lo = {mid[i] - 2.5};
      r.predicted_hi = {mid[i] + 2.5};
      r.run_seconds = 4.0 + static_cast<double>(i);  // median 5.5
      r.predicted_seconds = 0.5;
      rows.push_back(r);
    }
    SweepRow only_predicted = rows.front();  // not exact: left out
    only_predicted.engine = "surrogate";
    rows.push_back(only_predicted);
    return rows;
  };
  auto c = compare_engines(rows_of({10, 20, 30, 40}, {12, 18, 33, 39}), objectives, {});
  CHECK(c.points == 4);
  REQUIRE(c.metrics.size() == 1);
  auto m = c.metrics[0];
  CHECK(m.mae == doctest::Approx(2.0));                    // (2 + 2 + 3 + 1) / 4
  CHECK(m.mean_abs_pct_error == doctest::Approx(10.625));  // (20 + 10 + 10 + 2.5) / 4
  CHECK(m.mean_pct_bias == doctest::Approx(4.375));        // (20 - 10 + 10 - 2.5) / 4
  CHECK(m.spearman == doctest::Approx(1.0));
  // The order agrees on every pair, so it does on every resample of the points (one point drawn four
  // times has no order and is skipped): the interval is [1, 1].
  CHECK(m.spearman_ci.lo == doctest::Approx(1.0));
  CHECK(m.spearman_ci.hi == doctest::Approx(1.0));
  CHECK(m.coverage80 == doctest::Approx(0.75));  // 30 is outside [30.5, 35.5]
  CHECK(m.r2 == doctest::Approx(1 - 18.0 / 500.0));
  CHECK(m.regret_pct == doctest::Approx(0.0));
  CHECK(m.exact_best_rank == 1);
  CHECK(c.exact_seconds_per_point == doctest::Approx(5.5));
  CHECK(c.surrogate_seconds_per_point == doctest::Approx(0.5));
  // The surrogate prefers point 1 (exact 20) to the exact best (10): 100% regret, best ranked 2nd.
  m = compare_engines(rows_of({10, 20, 30, 40}, {21, 18, 33, 39}), objectives, {}).metrics[0];
  CHECK(m.regret_pct == doctest::Approx(100.0));
  CHECK(m.exact_best_rank == 2);
  CHECK(m.kendall == doctest::Approx(4.0 / 6.0));  // 5 concordant pairs of 6, 1 discordant
  // Spearman 1 - 6 * 2 / (4 * 15) = 0.8. A resample without point 0 or without point 1 (about a third of
  // them: 2 * (3/4)^4 - (2/4)^4) orders perfectly; one of only those two points, reversed, gives -1.
  CHECK(m.spearman == doctest::Approx(0.8));
  CHECK(m.spearman_ci.hi == doctest::Approx(1.0));
  CHECK(m.spearman_ci.lo < 0.5);
  const auto text = comparison_markdown(c, "t", 0, 0);
  CHECK(text.find("| wait_mean | min | 4 | 2 | 10.62 | +4.38 | 0.964 | 1.000 [1.00, 1.00] |") !=
        std::string::npos);
  CHECK(text.find("11.0× faster") != std::string::npos);
}

TEST_CASE("slurmtwin compare: both engines on a spec, one Markdown report") {
  const auto dir = testing::scratch_dir("compare_cli");
  const auto spec_path = day_spec(dir,
                                  "parameters:\n  PriorityWeightAge: [0, 9000]\n"
                                  "  PriorityWeightFairshare: [100, 10000]\n"
                                  "objectives:\n  - {metric: wait_mean, goal: min}\n");
  const auto model = small_model(dir);
  const auto report = (dir / "report.md").string();
  const auto r = testing::run_cli(fmt::format(
      "compare {} --model {} --window-jobs 64 --context-jobs 16 -j 1 -o {}", spec_path, model, report));
  CHECK(r.code == 0);
  const auto text = testing::slurp(report);
  // The design's 4 and the site's current settings (the default site: age 1000, fair share 10000).
  CHECK(text.find("5 points evaluated by both") != std::string::npos);
  CHECK(text.find("| wait_mean | min | 5 |") != std::string::npos);
  CHECK(text.find("Per-job waits (median prediction), pooled over 5 points") != std::string::npos);
  // Rerun: nothing left to evaluate, the same figures.
  const auto again = testing::run_cli(
      fmt::format("compare {} --model {} --window-jobs 64 --context-jobs 16 -j 1", spec_path, model));
  CHECK(again.code == 0);
  CHECK(again.out.find("| wait_mean | min | 5 |") != std::string::npos);
  const auto only = testing::run_cli(fmt::format("compare {} --model {} --report-only", spec_path, model));
  CHECK(only.code == 0);
  CHECK(only.out.find("| wait_mean | min | 5 |") != std::string::npos);
  CHECK(only.out.find("Wall time in this run") == std::string::npos);  // nothing ran
}

}  // namespace slurmtwin::experiments

namespace slurmtwin::experiments {

TEST_CASE("optimize: surrogate search, exact verification of the winners and of the site's own setting") {
  const auto dir = testing::scratch_dir("optimize");
  const auto spec_path = day_spec(dir,
                                  "parameters:\n  PriorityWeightAge: {range: [0, 10000]}\n"
                                  "  PriorityWeightFairshare: {range: [0, 10000]}\n"
                                  "design: {type: lhs, points: 4}\n"
                                  "objectives:\n  - {metric: wait_mean, goal: min}\n"
                                  "constraints:\n  - wait_p95 <= 1000000\n");
  const auto spec = load_sweep_spec(spec_path);
  OptimizeOptions o;
  o.candidates = 12;
  o.rounds = 1;
  o.keep = 2;
  o.per_keep = 3;
  o.verify = 2;
  o.surrogate.model = small_model(dir);
  o.surrogate.window_jobs = 64;
  o.surrogate.context_jobs = 16;
  const auto r = optimize(spec, o);
  CHECK(r.scored > 12);
  CHECK(r.scored <= 18);
  REQUIRE(r.verified.size() == 2);
  CHECK(r.verified[0].predicted <= r.verified[1].predicted);  // best predicted first
  // Each verified value is what a replay of that setting gives.
  const Trace trace = load_sweep_trace(spec);
  const auto exact_of = [&](const SweepPoint& p) {
    Site s = load_sweep_site(spec);
    apply_point(s, p);
    return run_replay(s, trace, ReplayOptions{}).metrics.overall.mean;
  };
  CHECK(r.current.exact == exact_of({}));
  for (const auto& c : r.verified) CHECK(c.exact == exact_of(c.point));
  REQUIRE(r.best >= 0);
  const auto& best = r.verified[static_cast<std::size_t>(r.best)];
  for (const auto& c : r.verified) CHECK(best.exact <= c.exact);
  CHECK(r.improvement_pct == doctest::Approx(100 * (r.current.exact - best.exact) / r.current.exact));
  // Deterministic per seed.
  const auto again = optimize(spec, o);
  CHECK(again.verified[0].point == r.verified[0].point);
  CHECK(optimize_markdown(again).find("Verified improvement") != std::string::npos);

  // With replicates, each verified value is the mean of replays with slurmctld started 0 and
  // bf_interval / 2 s before the first submit, and the report gives its standard error.
  auto replicated = spec;
  replicated.replicates = 2;
  const auto r2 = optimize(replicated, o);
  Site site = load_sweep_site(spec);
  ReplayOptions half;
  half.start_offset = site.scheduler.params.bf_interval / 2;
  const double other_phase = run_replay(site, trace, half).metrics.overall.mean;
  CHECK(r2.current.exact == doctest::Approx((exact_of({}) + other_phase) / 2));
  CHECK(r2.current.exact_se == doctest::Approx(std::abs(exact_of({}) - other_phase) / 2));
  const auto md = optimize_markdown(r2);
  CAPTURE(md);
  CHECK(md.find(fmt::format("{:.6g} ± ", r2.current.exact)) != std::string::npos);
  if (r2.best >= 0) CHECK(md.find("two standard errors") != std::string::npos);
}

}  // namespace slurmtwin::experiments

namespace slurmtwin::experiments {

TEST_CASE("surrogate update: a sweep's exact per-job waits become training data, and fine-tuning fits them") {
  const auto dir = testing::scratch_dir("surrogate_update");
  const auto spec_path = day_spec(dir,
                                  "parameters:\n  PriorityWeightAge: [0, 8000]\n"
                                  "  PriorityWeightFairshare: [0, 9000]\n"
                                  "objectives:\n  - {metric: wait_mean}\njob_waits: true\n"
                                  "current_settings: false\n");
  const auto spec = load_sweep_spec(spec_path);
  const auto db = (dir / "sweep.db").string();
  SweepRunOptions ro;
  ro.check_invariants = true;
  ro.jobs = 2;
  REQUIRE(run_sweep_spec(spec, db, ro).evaluated == 4);
  const auto model_path = small_model(dir);
  const auto model = surrogate::Surrogate::load(model_path);
  const Trace trace = load_sweep_trace(spec);
  const auto rows = SweepStore(db).rows(true);
  const auto d = dataset_from_sweep(load_sweep_site(spec), trace, rows, model.schema(), model.axes(), 64, 16);
  REQUIRE(d.setting_count() == 4);
  CHECK(d.axes == model.axes());
  REQUIRE(!d.windows.empty());
  // Each row's setting on the model's axes, and its stored waits at the windows' target jobs.
  for (std::size_t s = 0; s < 4; ++s) {
    const auto point = YAML::Load(rows[s].params_json);
    CHECK(d.settings[s][0] == point["PriorityWeightAge"].as<double>());
    CHECK(d.settings[s][1] == point["PriorityWeightFairshare"].as<double>());
    const auto waits = decode_job_waits(rows[s].job_waits);
    const auto& w = d.windows[0];
    for (std::size_t i = 0; i < w.jobs; ++i)
      if (w.target[i]) CHECK(d.waits[0][s * w.jobs + i] == static_cast<float>(waits[w.job_index[i]]));
  }
  // Mean |error| of log1p(wait) over every target of the new data, before and after `surrogate update`.
  const auto error = [&](const surrogate::Surrogate& m) {
    double sum = 0;
    std::size_t n = 0;
    std::vector<std::vector<float>> settings;
    for (std::size_t s = 0; s < 4; ++s) settings.push_back(d.encoded_setting(s));
    for (std::size_t w = 0; w < d.windows.size(); ++w) {
      const auto q = m.predict(d.windows[w], settings);
      for (std::size_t s = 0; s < 4; ++s)
        for (std::size_t i = 0; i < d.windows[w].jobs; ++i)
          if (const float y = d.waits[w][s * d.windows[w].jobs + i]; !std::isnan(y)) {
            sum += std::abs(q[s][i][1] - std::log1p(y));
            ++n;
          }
    }
    return sum / static_cast<double>(n);
  };
  const auto out = (dir / "updated.ckpt").string();
  const auto r = testing::run_cli(fmt::format(
      "surrogate update --model {} --spec {} --db {} -o {} --window-jobs 64 --context-jobs 16 --steps 40 "
      "--lr 3e-3 --eval-every 10 --threads 1",
      model_path, spec_path, db, out));
  CHECK(r.code == 0);
  CHECK(r.out.find("4 exact sweep results") != std::string::npos);
  const double before = error(model), after = error(surrogate::Surrogate::load(out));
  MESSAGE("mean |error| of log1p(wait): ", before, " before, ", after, " after the update");
  CHECK(after < before);
}

}  // namespace slurmtwin::experiments
