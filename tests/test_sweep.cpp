// What-if sweeps: spec errors, designs, the SQLite store, resume, determinism across thread counts,
// the Pareto front, and a sweep killed with SIGKILL and resumed.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <thread>

#include "experiments/sweep.hpp"
#include "experiments/sweep_spec.hpp"
#include "experiments/sweep_store.hpp"
#include "tests/test_support.hpp"
#include "traces/default_site.hpp"
#include "traces/read_report.hpp"

namespace slurmtwin::cli {
namespace {

void check_error(const std::string& yaml, std::uint64_t line, const std::string& field,
                 const std::string& fragment) {
  CAPTURE(yaml);
  try {
    (void)parse_sweep_spec(yaml, "spec.yaml");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.file() == "spec.yaml");
    CHECK(e.line() == line);
    CHECK(e.field() == field);
    CHECK(std::string(e.what()).find(fragment) != std::string::npos);
  }
}

const char* kObjectives = "objectives:\n  - {metric: wait_mean}\n";

}  // namespace

TEST_CASE("sweep spec: invalid specs fail naming file:line and key") {
  check_error(
      std::string("parameters:\n  PriorityWeightAge: [1, 2]\n  PriorityWeightBogus: [1]\n") + kObjectives, 3,
      "PriorityWeightBogus", "unknown setting");
  check_error(
      std::string("parameters:\n  PriorityWeightAge:\n    range: [5, 5]\n    count: 2\n") + kObjectives, 3,
      "PriorityWeightAge", "empty range");
  check_error(std::string("parameters:\n  PriorityWeightAge: {values: []}\n") + kObjectives, 2,
              "PriorityWeightAge", "empty list");
  check_error(std::string("parameters:\n  bf_interval: [30, abc]\n") + kObjectives, 2, "bf_interval",
              "bad type");
  check_error(std::string("parameters:\n  PriorityWeightAge: [1.5]\n") + kObjectives, 2, "PriorityWeightAge",
              "bad type");
  check_error(std::string("parameters:\n  PriorityWeightAge: {range: [0, 10]}\n") + kObjectives, 2,
              "PriorityWeightAge", "count");
  check_error(
      "parameters:\n  PriorityWeightAge: [1]\nobjectives:\n  - {metric: wait_mean}\n  - {metric: nope}\n", 5,
      "metric", "unknown metric");
  check_error(std::string("parameters:\n  PriorityWeightAge: [1]\ndesign: {type: lhs}\n") + kObjectives, 3,
              "points", "need points");
  check_error(std::string("parameters:\n  PriorityWeightAge: [1]\nbogus: 1\n") + kObjectives, 3, "bogus",
              "unknown key");
  check_error(
      std::string("parameters:\n  PriorityWeightAge: {range: [0, 10], scale: log, count: 2}\n") + kObjectives,
      2, "PriorityWeightAge", "log scale needs lo > 0");
}

TEST_CASE("sweep spec: settings, paths and a QOS priority apply to a site") {
  const auto spec = parse_sweep_spec(
      "site: {yaml: site.yaml}\ntrace: {paths: [a.stt, /abs/b.stt], format: native}\n"
      "parameters:\n  PriorityWeightTRES/GRES/gpu: [0.5]\n  bf_window: [2880]\n  QOS/normal/Priority: [7]\n"
      "objectives:\n  - {metric: wait_p90@partition:gpu, goal: min}\n  - {metric: utilisation, goal: max}\n",
      "dir/spec.yaml");
  CHECK(spec.site_yaml == "dir/site.yaml");
  CHECK(spec.trace_paths == std::vector<std::string>{"dir/a.stt", "/abs/b.stt"});
  CHECK(spec.parameters.size() == 3);
  CHECK_FALSE(spec.parameters[0].integer);
  CHECK(spec.objectives[1].goal == Goal::kMax);
  Site site = default_site();
  REQUIRE(site.find_qos("normal"));
  apply_point(site, {{"PriorityWeightTRES/GRES/gpu", 0.5},
                     {"bf_window", 2880},
                     {"QOS/normal/Priority", 7},
                     {"PriorityWeightAge", 1000},
                     {"PriorityFavorSmall", 1}});
  CHECK(site.scheduler.weight_tres.at("gres/gpu") == 0.5);
  CHECK(site.scheduler.params.bf_window == 2880 * 60);
  CHECK(site.find_qos("normal")->priority == 7);
  CHECK(site.scheduler.weight_age == 1000);
  CHECK(site.scheduler.favor_small);
  CHECK_THROWS_AS(apply_setting(site, "QOS/nosuchqos/Priority", 1), std::invalid_argument);
  CHECK_THROWS_AS(apply_setting(site, "PriorityWeightAge", -1), std::invalid_argument);
}

TEST_CASE("sweep designs: grid order, LHS strata, determinism per seed") {
  auto grid = parse_sweep_spec(
      "parameters:\n  PriorityWeightAge: [0, 10]\n  PriorityWeightFairshare: {range: [1, 100], scale: log, "
      "count: 3}\n" +
          std::string(kObjectives),
      "g.yaml");
  const auto g = design_points(grid);
  REQUIRE(g.size() == 6);
  const double fs[3] = {1, 10, 100};
  for (std::size_t i = 0; i < 6; ++i) {
    CHECK(g[i].at("PriorityWeightAge") == (i < 3 ? 0 : 10));  // the first parameter varies slowest
    CHECK(g[i].at("PriorityWeightFairshare") == fs[i % 3]);
  }

  const std::string lhs_yaml =
      "parameters:\n  PriorityWeightTRES/cpu: {range: [0, 10]}\n  PriorityWeightTRES/mem: {range: [1, "
      "100000], "
      "scale: log}\n  PriorityWeightAge: {range: [0, 1000]}\ndesign: {type: lhs, points: 10, seed: SEED}\n" +
      std::string(kObjectives);
  const auto with_seed = [&](int seed) {
    auto y = lhs_yaml;
    y.replace(y.find("SEED"), 4, std::to_string(seed));
    return design_points(parse_sweep_spec(y, "l.yaml"));
  };
  const auto a = with_seed(3);
  REQUIRE(a.size() == 10);
  std::set<int> linear, logs, ints;
  for (const auto& p : a) {
    linear.insert(static_cast<int>(std::floor(p.at("PriorityWeightTRES/cpu"))));  // 10 strata of 1
    logs.insert(
        static_cast<int>(std::floor(2 * std::log10(p.at("PriorityWeightTRES/mem")))));  // half-decades
    const double age = p.at("PriorityWeightAge");
    CHECK(age == std::round(age));  // integer settings are rounded
    ints.insert(static_cast<int>(std::floor(age / 100)));
  }
  CHECK(linear.size() == 10);
  CHECK(logs.size() == 10);
  CHECK(ints.size() >= 9);  // rounding may move a point across a stratum boundary by at most 0.5
  CHECK(with_seed(3) == a);
  CHECK(with_seed(4) != a);

  auto random = parse_sweep_spec(
      "parameters:\n  PriorityWeightAge: {range: [5, 50]}\n  PriorityWeightQOS: [1, 2, 3]\n"
      "design: {type: random, points: 20, seed: 9}\n" +
          std::string(kObjectives),
      "r.yaml");
  const auto r = design_points(random);
  CHECK(r.size() <= 20);
  CHECK(r.size() >= 15);  // duplicates after rounding removed
  for (const auto& p : r) {
    CHECK(p.at("PriorityWeightAge") >= 5);
    CHECK(p.at("PriorityWeightAge") <= 50);
    CHECK(std::set<double>{1, 2, 3}.count(p.at("PriorityWeightQOS")) == 1);
  }
  CHECK(design_points(random) == r);
}

TEST_CASE("sweep pareto front, by hand") {
  // objectives: wait (min), utilisation (max)
  const std::vector<std::vector<double>> rows = {
      {100, 0.5},  // 0: front
      {120, 0.5},  // 1: dominated by 0
      {80, 0.4},   // 2: front
      {80, 0.3},   // 3: dominated by 2
      {200, 0.9},  // 4: front
      {100, 0.5},  // 5: equal to 0: neither dominates, both on the front
      {210, 0.8},  // 6: dominated by 4
  };
  CHECK(pareto_front(rows, {Goal::kMin, Goal::kMax}) == std::vector<std::size_t>{0, 2, 4, 5});
  CHECK(pareto_front(rows, {Goal::kMin}) == std::vector<std::size_t>{2, 3});
  CHECK(pareto_front({}, {Goal::kMin}).empty());
}

namespace {

const char* kTinySpec =
    "trace:\n  synthetic: {seed: 11, days: 1}\n"
    "parameters:\n  PriorityWeightAge: [0, 1000]\n  PriorityWeightFairshare: [100, 10000]\n"
    "objectives:\n  - {metric: wait_mean, goal: min}\n  - {metric: utilisation, goal: max}\n";

std::string write_spec(const std::filesystem::path& dir, const std::string& text) {
  const auto path = (dir / "spec.yaml").string();
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("sweep run: resume skips finished points, -j1 and -j2 store the same results") {
  const auto dir = testing::scratch_dir("sweep_run");
  const auto spec = load_sweep_spec(write_spec(dir, kTinySpec));
  SweepRunOptions one;
  one.jobs = 1;
  const auto db1 = (dir / "j1.db").string();
  const auto first = run_sweep_spec(spec, db1, one);
  CHECK(first.total == 4);
  CHECK(first.evaluated == 4);
  CHECK(first.skipped == 0);
  const auto again = run_sweep_spec(spec, db1, one);
  CHECK(again.evaluated == 0);
  CHECK(again.skipped == 4);

  SweepRunOptions two;
  two.jobs = 2;
  const auto db2 = (dir / "j2.db").string();
  CHECK(run_sweep_spec(spec, db2, two).evaluated == 4);
  const auto r1 = SweepStore(db1).rows();
  const auto r2 = SweepStore(db2).rows();
  REQUIRE(r1.size() == 4);
  REQUIRE(r2.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(r1[i].key == r2[i].key);
    CHECK(r1[i].params_json == r2[i].params_json);
    CHECK(r1[i].metrics_json == r2[i].metrics_json);
    CHECK(r1[i].objectives == r2[i].objectives);
    CHECK(r1[i].engine == "exact");
    CHECK(r1[i].trace_fingerprint.size() == 16);
  }
  const auto objectives = SweepStore(db1).objectives();
  REQUIRE(objectives.size() == 2);
  CHECK(objectives[1].metric == "utilisation");
  CHECK(objectives[1].goal == Goal::kMax);
  // Different settings give different results (the sweep really varies the site).
  std::set<std::string> metrics;
  for (const auto& r : r1) metrics.insert(r.metrics_json);
  CHECK(metrics.size() > 1);
}

TEST_CASE("sweep run: a QOS the site lacks fails before anything runs, naming the line") {
  const auto dir = testing::scratch_dir("sweep_badqos");
  const auto spec = load_sweep_spec(write_spec(
      dir,
      "trace: {synthetic: {days: 1}}\nparameters:\n  QOS/nosuch/Priority: [1]\nobjectives:\n  - {metric: "
      "wait_mean}\n"));
  const auto db = (dir / "s.db").string();
  try {
    run_sweep_spec(spec, db, {});
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.line() == 3);
    CHECK(e.field() == "QOS/nosuch/Priority");
  }
  CHECK_FALSE(std::filesystem::exists(db));
}

TEST_CASE("sweep run: killed with SIGKILL and rerun, the table has every point exactly once") {
  const auto dir = testing::scratch_dir("sweep_kill");
  const auto spec_path = write_spec(
      dir,
      "trace:\n  synthetic: {seed: 5, days: 2}\nparameters:\n  PriorityWeightAge: {range: [0, 10000]}\n"
      "  PriorityWeightFairshare: {range: [0, 10000]}\ndesign: {type: lhs, points: 24, seed: 2}\n"
      "objectives:\n  - {metric: wait_mean}\n");
  const auto db = (dir / "s.db").string();
  const auto expected = design_points(load_sweep_spec(spec_path)).size();
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const auto log = (dir / "run.log").string();
    if (freopen(log.c_str(), "w", stderr) == nullptr || freopen(log.c_str(), "a", stdout) == nullptr)
      _exit(3);
    execl(SLURMTWIN_BINARY, SLURMTWIN_BINARY, "sweep", "run", spec_path.c_str(), "--db", db.c_str(), "-j",
          "2", static_cast<char*>(nullptr));
    _exit(127);
  }
  // Kill as soon as the first rows are in (or after 60 s at worst).
  std::size_t seen = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!std::filesystem::exists(db)) continue;
    try {
      seen = SweepStore(db).keys().size();
    } catch (const std::exception&) {
      continue;  // the table is being created
    }
    if (seen >= 2) break;
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  const auto after_kill = SweepStore(db).keys().size();
  CHECK(after_kill >= 2);
  MESSAGE(fmt::format("killed with {} of {} points stored", after_kill, expected));

  const auto rerun = run_sweep_spec(load_sweep_spec(spec_path), db, {});
  CHECK(rerun.skipped == after_kill);
  CHECK(rerun.evaluated == expected - after_kill);
  const auto rows = SweepStore(db).rows();
  CHECK(rows.size() == expected);
  std::set<std::string> keys;
  for (const auto& r : rows) keys.insert(r.key);
  CHECK(keys.size() == expected);
}

}  // namespace slurmtwin::cli
