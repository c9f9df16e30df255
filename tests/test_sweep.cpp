// What-if sweeps: spec errors, designs, the SQLite store, resume, determinism across thread counts,
// the Pareto front, a sweep killed with SIGKILL and resumed; Sobol, constraints, trace windows,
// per-job waits, shards + merge, the emitted Slurm array script, and MPI.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <thread>

#include "experiments/replay/replay.hpp"
#include "experiments/report/report_html.hpp"
#include "experiments/sweep/feasibility.hpp"
#include "experiments/sweep/sweep.hpp"
#include "experiments/sweep/sweep_sobol.hpp"
#include "experiments/sweep/sweep_spec.hpp"
#include "experiments/sweep/sweep_store.hpp"
#include "tests/scenario_support.hpp"
#include "tests/test_support.hpp"
#include "traces/default_site.hpp"
#include "traces/read_report.hpp"
#include "traces/site_yaml.hpp"
#include "traces/synthetic.hpp"
#include "traces/text.hpp"

namespace slurmtwin::experiments {
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
  // The bounds of the one settings table, as slurmctld's: no backfill test budget of 0, no window
  // under a minute (bf_window in minutes, as slurm.conf).
  CHECK_THROWS_WITH_AS(apply_setting(site, "bf_max_job_test", 0),
                       "bf_max_job_test: 0 is outside [1, 1000000]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(apply_setting(site, "bf_window", 0), "bf_window: 0 s is outside [60 s, 2592000 s]",
                       std::invalid_argument);
  apply_setting(site, "bf_window", 2);
  CHECK(site.scheduler.params.bf_window == 120);
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
  one.check_invariants = true;
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
  two.check_invariants = true;
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

TEST_CASE("sweep keys: the hash of the resolved site's YAML, also when sections are reused") {
  // A store's keys must not change between versions (resuming finds its rows by them): the key is
  // FNV-1a 64 of site_to_yaml + "\n", then of the trace fingerprint.
  const Site base = default_site();
  const auto key_of = [](const Site& s) {
    return fmt::format("{:016x}", fnv1a64("fp", fnv1a64(site_to_yaml(s) + "\n")));
  };
  CHECK(point_key(base, "fp") == key_of(base));
  std::string yaml;
  for (std::size_t i = 0; i < kSiteSections; ++i)
    if (const auto text = site_yaml_section(base, SiteSection(i)); !text.empty()) yaml += text + "\n";
  CHECK(yaml == site_to_yaml(base));
  // The keyer writes only the sections that differ from its base; every change of section gives
  // the same key as writing the whole site, and a key of its own.
  const PointKeyer keyer(base, "fp");
  CHECK(keyer(base) == key_of(base));
  std::set<std::string> keys = {keyer(base)};
  for (const auto& point :
       std::vector<SweepPoint>{{{"PriorityWeightAge", 1234}},
                               {{"QOS/normal/Priority", 77}},
                               {{"PriorityWeightAge", 1234}, {"QOS/normal/Priority", 77}}}) {
    Site site = base;
    apply_point(site, point);
    CHECK(keyer(site) == key_of(site));
    keys.insert(keyer(site));
  }
  Site renamed = base;
  renamed.nodes.front().name += "x";
  CHECK(keyer(renamed) == key_of(renamed));
  keys.insert(keyer(renamed));
  CHECK(keys.size() == 5);
  CHECK(PointKeyer(base, "other")(base) != keyer(base));
}

TEST_CASE("sweep run: the same trace file through another path gives the same keys, another trace not") {
  const auto dir = testing::scratch_dir("sweep_paths");
  // Four SWF jobs; one spec names the file by its absolute path, another reaches it through a linked
  // directory: the points' keys, and so the store's rows, are shared.
  std::filesystem::create_directory_symlink(dir, dir / "alias");
  const std::string swf =
      "1 0 0 100 4 -1 -1 4 600 -1 1 1 1 -1 -1 -1 -1 -1\n2 10 0 50 4 -1 -1 4 600 -1 1 2 1 -1 -1 -1 -1 -1\n"
      "3 20 0 80 8 -1 -1 8 600 -1 1 1 1 -1 -1 -1 -1 -1\n4 30 0 40 2 -1 -1 2 600 -1 1 2 1 -1 -1 -1 -1 -1\n";
  std::ofstream(dir / "jobs.swf") << swf;
  const std::string body =
      "parameters:\n  PriorityWeightAge: [0, 1000]\nobjectives:\n  - {metric: wait_mean}\n";
  std::ofstream(dir / "a.yaml") << "trace: {path: " << (dir / "jobs.swf").string() << ", format: swf}\n"
                                << body;
  std::ofstream(dir / "b.yaml") << "trace: {path: jobs.swf, format: swf}\n" << body;
  const auto a = load_sweep_spec((dir / "a.yaml").string());
  const auto b = load_sweep_spec((dir / "alias" / "b.yaml").string());
  CHECK(load_sweep_trace(a).source != load_sweep_trace(b).source);  // read through different paths
  const auto before = trace_fingerprint(load_sweep_trace(a));
  CHECK(before == trace_fingerprint(load_sweep_trace(b)));
  SweepRunOptions o;
  o.jobs = 1;
  const auto db = (dir / "s.db").string();
  CHECK(run_sweep_spec(a, db, o).evaluated == 2);
  const auto again = run_sweep_spec(b, db, o);
  CHECK(again.evaluated == 0);
  CHECK(again.skipped == 2);
  // A fifth job: another trace, other keys.
  std::ofstream(dir / "jobs.swf") << swf << "5 40 0 40 2 -1 -1 2 600 -1 1 2 1 -1 -1 -1 -1 -1\n";
  CHECK(trace_fingerprint(load_sweep_trace(a)) != before);
  CHECK(run_sweep_spec(a, db, o).evaluated == 2);
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

TEST_CASE("sweep run: a metric group the site lacks fails before anything runs, with the nearest name") {
  // Issue 24: `wait_p90@qos:hgh` was accepted and 0 at every point, so a sweep optimised a constant.
  const auto dir = testing::scratch_dir("sweep_badgroup");
  const auto spec =
      load_sweep_spec(write_spec(dir,
                                 "trace: {synthetic: {days: 1}}\nparameters:\n  PriorityWeightAge: [1, "
                                 "2]\nobjectives:\n  - {metric: wait_mean}\n  - {metric: "
                                 "wait_p90@qos:hgh}\nconstraints:\n  - wait_max@partition:cpu < 1e9\n"));
  const auto db = (dir / "s.db").string();
  CHECK_THROWS_WITH_AS(
      run_sweep_spec(spec, db, {}),
      doctest::Contains(":6: metric: 'wait_p90@qos:hgh': the site has no QOS 'hgh' (did you mean high?)"),
      InputError);
  CHECK_FALSE(std::filesystem::exists(db));
  // A constraint's group too (a partition of another site); no suggestion when nothing is near.
  auto other = spec;
  other.objectives.pop_back();
  other.constraints.front().metric = "wait_max@partition:bigmemory";
  CHECK_THROWS_WITH_AS(
      run_sweep_spec(other, db, {}),
      doctest::Contains(":8: metric: 'wait_max@partition:bigmemory': the site has no partition "
                        "'bigmemory'"),
      InputError);
  // Every group of the default site is accepted.
  const auto site = default_site();
  for (const auto* ok : {"wait_mean@partition:gpu", "bsld_mean@account:root", "jobs_started@qos:low"})
    CHECK_NOTHROW(check_metric_group(ok, site, "f", 1));
  // GPU utilisation only where nodes have GPUs (the default site's gpu nodes do); else -1 everywhere.
  CHECK_NOTHROW(check_metric_group("gpu_utilisation", site, "f", 1));
  auto no_gpus = site;
  for (auto& n : no_gpus.nodes) n.gres.clear();
  CHECK_THROWS_WITH_AS(check_metric_group("gpu_utilisation", no_gpus, "f", 3),
                       "f:3: metric: 'gpu_utilisation': the site's nodes have no GPUs", InputError);
  CHECK_NOTHROW(check_metric_group("memory_utilisation", no_gpus, "f", 1));
}

TEST_CASE("sweep run: killed with SIGKILL and rerun, the table has every point exactly once") {
  const auto dir = testing::scratch_dir("sweep_kill");
  const auto spec_path = write_spec(
      dir,
      "trace:\n  synthetic: {seed: 5, days: 2}\nparameters:\n  PriorityWeightAge: {range: [0, 10000]}\n"
      "  PriorityWeightFairshare: {range: [0, 10000]}\ndesign: {type: lhs, points: 24, seed: 2}\n"
      "objectives:\n  - {metric: wait_mean}\n");
  const auto db = (dir / "s.db").string();
  const auto expected = plan_sweep(load_sweep_spec(spec_path)).tasks.size();  // with the current settings
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

}  // namespace slurmtwin::experiments

// --- Sobol, constraints, windows, per-job waits, shards and merge, MPI ---------------------------

namespace slurmtwin::experiments {

TEST_CASE("Sobol: the first points are the published ones (Joe & Kuo, scipy scramble=False)") {
  // scipy.stats.qmc.Sobol(d=3, scramble=False).random(8), the same as Joe & Kuo's sobol.cc.
  const double expected[8][3] = {{0, 0, 0},
                                 {0.5, 0.5, 0.5},
                                 {0.75, 0.25, 0.25},
                                 {0.25, 0.75, 0.75},
                                 {0.375, 0.375, 0.625},
                                 {0.875, 0.875, 0.125},
                                 {0.625, 0.125, 0.875},
                                 {0.125, 0.625, 0.375}};
  SobolSequence s(3);
  for (const auto& row : expected) {
    const auto p = s.next();
    REQUIRE(p.size() == 3);
    CHECK(p[0] == row[0]);
    CHECK(p[1] == row[1]);
    CHECK(p[2] == row[2]);
  }
  // Dimension 4 (s=3, a=1, m=1,3,1) by hand: V = .1, .11, .001 (binary); Gray-code order flips
  // V1 V2 V1 V3 V1 V2 V1 -> .5 .25 .75 .875 .375 .625 .125.
  SobolSequence four(4);
  const double dim4[8] = {0, 0.5, 0.25, 0.75, 0.875, 0.375, 0.625, 0.125};
  for (double v : dim4) CHECK(four.next()[3] == v);
  CHECK_THROWS_AS(SobolSequence(0), std::invalid_argument);
  CHECK_THROWS_AS(SobolSequence(kSobolMaxDimensions + 1), std::invalid_argument);
}

TEST_CASE("Sobol: 2^m points put one point in each of 2^m strata of every dimension, 1-2 form a net") {
  for (const std::uint64_t shift : {std::uint64_t{0}, std::uint64_t{77}}) {
    CAPTURE(shift);
    constexpr std::size_t kN = 64;
    SobolSequence s(kSobolMaxDimensions, shift);
    std::vector<std::vector<double>> pts;
    for (std::size_t i = 0; i < kN; ++i) pts.push_back(s.next());
    for (std::size_t d = 0; d < kSobolMaxDimensions; ++d) {
      std::set<int> strata;
      for (const auto& p : pts) strata.insert(static_cast<int>(p[d] * kN));
      CHECK_MESSAGE(strata.size() == kN, "dimension " << d + 1);
    }
    // (0, 6, 2)-net in dimensions 1 and 2: every 8x8 box (and 2x32, 32x2) holds exactly one point.
    for (const auto& [a, b] : {std::pair{8, 8}, std::pair{2, 32}, std::pair{32, 2}}) {
      std::set<std::pair<int, int>> boxes;
      for (const auto& p : pts) boxes.insert({static_cast<int>(p[0] * a), static_cast<int>(p[1] * b)});
      CHECK(boxes.size() == kN);
    }
    if (shift) CHECK(pts[0][0] != 0);  // the shift moves the origin point
  }
}

TEST_CASE("sweep design sobol: values from the sequence, scrambling per seed, errors") {
  const std::string yaml =
      "parameters:\n  PriorityWeightTRES/cpu: {range: [0, 8]}\n  PriorityWeightTRES/mem: {range: [0, 8]}\n"
      "design: {type: sobol, points: 8SCRAMBLE}\n" +
      std::string(kObjectives);
  auto plain_yaml = yaml;
  plain_yaml.replace(plain_yaml.find("SCRAMBLE"), 8, "");
  const auto plain = design_points(parse_sweep_spec(plain_yaml, "s.yaml"));
  REQUIRE(plain.size() == 8);
  const double cpu[8] = {0, 4, 6, 2, 3, 7, 5, 1};  // 8 x the first Sobol dimension
  const double mem[8] = {0, 4, 2, 6, 3, 7, 1, 5};  // 8 x the second
  for (std::size_t i = 0; i < 8; ++i) {
    CHECK(plain[i].at("PriorityWeightTRES/cpu") == cpu[i]);
    CHECK(plain[i].at("PriorityWeightTRES/mem") == mem[i]);
  }
  auto scrambled_yaml = yaml;
  scrambled_yaml.replace(scrambled_yaml.find("SCRAMBLE"), 8, ", scramble: true, seed: 5");
  const auto scrambled = design_points(parse_sweep_spec(scrambled_yaml, "s.yaml"));
  REQUIRE(scrambled.size() == 8);
  CHECK(scrambled != plain);
  std::set<int> strata;
  for (const auto& p : scrambled) strata.insert(static_cast<int>(p.at("PriorityWeightTRES/cpu")));
  CHECK(strata.size() == 8);  // still one point per stratum
  CHECK(design_points(parse_sweep_spec(scrambled_yaml, "s.yaml")) == scrambled);

  check_error(std::string("parameters:\n  PriorityWeightAge: [1]\ndesign: {type: sobol}\n") + kObjectives, 3,
              "points", "need points");
  check_error(
      std::string("parameters:\n  PriorityWeightAge: [1]\ndesign: {type: lhs, points: 4, scramble: true}\n") +
          kObjectives,
      3, "scramble", "for sobol");
}

TEST_CASE("sweep constraints: parsed with their line, checked, errors name the line") {
  const auto spec = parse_sweep_spec("parameters:\n  PriorityWeightAge: [1]\n" + std::string(kObjectives) +
                                         "constraints:\n  - fairness >= 0.8\n  - "
                                         "wait_p95@partition:gpu<=3600\n  - preemptions@qos:high < 3\n",
                                     "c.yaml");
  REQUIRE(spec.constraints.size() == 3);
  const auto& fair = spec.constraints[0];
  CHECK(fair.metric == "fairness");
  CHECK(fair.op == ConstraintOp::kGreaterEqual);
  CHECK(fair.bound == 0.8);
  CHECK(fair.line == 6);
  CHECK(spec.constraints[1].text == "wait_p95@partition:gpu <= 3600");
  CHECK(spec.constraints[2].op == ConstraintOp::kLess);
  CHECK(constraint_holds(fair, 0.8));
  CHECK_FALSE(constraint_holds(fair, 0.79));
  CHECK_FALSE(constraint_holds(fair, std::nan("")));
  CHECK(constraint_holds(spec.constraints[2], 2));
  CHECK_FALSE(constraint_holds(spec.constraints[2], 3));

  const auto base = "parameters:\n  PriorityWeightAge: [1]\n" + std::string(kObjectives) + "constraints:\n";
  check_error(base + "  - fairness >= 0.8\n  - nosuch <= 3\n", 7, "constraints", "unknown metric");
  check_error(base + "  - fairness = 0.8\n", 6, "constraints", "OP one of");
  check_error(base + "  - fairness >= high\n", 6, "constraints", "not a number");
  check_error("parameters:\n  PriorityWeightAge: [1]\n" + std::string(kObjectives) + "constraints: 3\n", 5,
              "constraints", "expected a list");
}

TEST_CASE("sweep metrics: fairness index and per-group preemptions and p95, by hand") {
  sim::ReplayMetrics m;
  CHECK(fairness_index(m) == 1);  // no accounts: nothing to be unfair about
  // usage shares 0.6 / 0.3 / 0.1 against targets 0.5 / 0.25 / 0.25: distance 0.1+0.05+0.15 = 0.3
  m.fairness = {{"a", {0.6, 0.5}}, {"b", {0.3, 0.25}}, {"c", {0.1, 0.25}}};
  CHECK(fairness_index(m) == doctest::Approx(0.85));
  CHECK(metric_value(m, "fairness") == doctest::Approx(0.85));
  m.preemptions = 7;
  m.preemptions_by_qos["high"] = 4;
  m.preemptions_by_partition["gpu"] = 2;
  CHECK(metric_value(m, "preemptions") == 7);
  CHECK(metric_value(m, "preemptions@qos:high") == 4);
  CHECK(metric_value(m, "preemptions@partition:gpu") == 2);
  CHECK(metric_value(m, "preemptions@partition:cpu") == 0);
  CHECK_FALSE(metric_is_known("preemptions@account:x"));
  CHECK_FALSE(metric_is_known("fairness@partition:gpu"));
  m.by_partition["gpu"].p95 = 1234;
  CHECK(metric_value(m, "wait_p95@partition:gpu") == 1234);
}

TEST_CASE("fairness counts the top-level accounts that have jobs in the trace, and every run they used") {
  // Issue 24: accounts that submit nothing kept their targets, so on the ub_medium trace the index was
  // 0.132 at every point and a constraint like fairness >= 0.8 could never hold.
  // Two 4-CPU nodes; top-level accounts a1 (1 share), a2 (1 share), idle (2 shares, no jobs).
  auto site = testing::small_site(2, 4);
  site.accounts = {{"root", "", {1, false}, 0, {}, "", {}},
                   {"a1", "root", {1, false}, 0, {}, "", {}},
                   {"a2", "root", {1, false}, 0, {}, "", {}},
                   {"idle", "root", {2, false}, 0, {}, "", {}}};
  site.associations.clear();
  site.users.clear();
  for (const auto& [user, account] : {std::pair{"alice", "a1"}, std::pair{"bob", "a2"}}) {
    site.users.push_back({user, account, "None"});
    site.associations.push_back({user, account, "", {1, false}, 0, {}, "", {}});
  }
  // alice: 4 CPUs for 100 s; bob: 4 CPUs for 300 s, both at once.
  auto trace = testing::make_trace({{0, 1, 4, 100, 3600, -1, "alice"}, {0, 1, 4, 300, 3600, -1, "bob"}});
  trace.jobs[0].account = trace.accounts.intern("a1");
  trace.jobs[1].account = trace.accounts.intern("a2");
  ReplayOptions o;
  o.check_invariants = true;
  const auto r = run_replay(site, trace, o);
  REQUIRE(r.metrics.started == 2);
  // Usage 400 vs 1,200 CPU-s: 0.25 / 0.75 against targets 0.5 / 0.5 ("idle" is not counted).
  REQUIRE(r.metrics.fairness.size() == 2);
  CHECK(r.metrics.fairness.at("a1") == std::pair{0.25, 0.5});
  CHECK(r.metrics.fairness.at("a2") == std::pair{0.75, 0.5});
  // 1 - (0.25 + 0.25) / 2; with "idle" owed half the machine it was 0.5.
  CHECK(metric_value(r.metrics, "fairness") == doctest::Approx(0.75));
}

TEST_CASE("units: waits in s, min, h or d by size, and the goal as an arrow") {
  // Issue 24: "wait_mean (min) 115182" read as 115,182 minutes; it was seconds, and "(min)" the goal.
  CHECK(metric_unit("wait_mean") == "s");
  CHECK(metric_unit("wait_p90@qos:supporters") == "s");
  CHECK(metric_unit("start_error_mean@partition:cpu") == "s");
  CHECK(metric_unit("wait_mean_deviation") == "");  // relative
  CHECK(metric_unit("bsld_mean") == "");
  CHECK(metric_unit("utilisation") == "");
  // Parameter axes: seconds for times, minutes for bf_window (as slurm.conf), none for weights,
  // counts, flags and QOS priorities.
  for (const char* s :
       {"PriorityMaxAge", "PriorityDecayHalfLife", "bf_interval", "bf_resolution", "sched_interval"})
    CHECK_MESSAGE(setting_unit(s) == "s", s);
  CHECK(setting_unit("bf_window") == "min");
  for (const char* none : {"PriorityWeightAge", "PriorityWeightTRES/gres/gpu", "QOS/high/Priority",
                           "PriorityFavorSmall", "bf_max_job_test", "default_queue_depth"})
    CHECK_MESSAGE(setting_unit(none) == "", none);
  CHECK(readable_time_unit(119).name == "s");
  CHECK(readable_time_unit(120).name == "min");
  CHECK(readable_time_unit(7199).name == "min");
  CHECK(readable_time_unit(7200).name == "h");
  CHECK(readable_time_unit(115182).name == "h");  // 32 h, not 1.33 d
  CHECK(readable_time_unit(172800).name == "d");
  CHECK(readable_time_unit(172800).seconds == 86400);
  CHECK(goal_arrow(Goal::kMin) == "↓");
  CHECK(goal_arrow(Goal::kMax) == "↑");
}

TEST_CASE("sweep trace window: relative and absolute bounds keep the jobs submitted from `from` up to `to`") {
  const auto spec = parse_sweep_spec(
      "trace:\n  synthetic: {seed: 3, days: 4}\n  window: {from: '+1-00:00:00', to: '+2-12:00:00'}\n"
      "parameters:\n  PriorityWeightAge: [1]\n" +
          std::string(kObjectives),
      "w.yaml");
  CHECK(spec.window_from.relative);
  CHECK(spec.window_from.value == 86400);
  CHECK(spec.window_to.value == 2 * 86400 + 12 * 3600);
  auto config = default_synthetic_config();
  config.seed = 3;
  config.days = 4;
  const auto full = generate_synthetic(config);
  Seconds first = full.jobs.front().submit;
  for (const auto& j : full.jobs) first = std::min(first, j.submit);
  std::size_t inside = 0;
  for (const auto& j : full.jobs)
    inside += (j.submit >= first + 86400 && j.submit < first + 2 * 86400 + 12 * 3600) ? 1 : 0;
  const auto cut = load_sweep_trace(spec);
  CHECK(cut.jobs.size() == inside);
  CHECK(inside > 0);
  CHECK(inside < full.jobs.size());
  for (const auto& j : cut.jobs) {
    CHECK(j.submit >= first + 86400);
    CHECK(j.submit < first + 2 * 86400 + 12 * 3600);
  }
  // Absolute bounds: the same window written as timestamps.
  auto abs = spec;
  abs.window_from = {true, false, first + 86400};
  abs.window_to = {true, false, first + 2 * 86400 + 12 * 3600};
  CHECK(load_sweep_trace(abs).jobs.size() == inside);
  abs.window_from = {true, false, first + 100 * 86400};
  abs.window_to = {};
  try {
    (void)load_sweep_trace(abs);
    FAIL("no error for a window that keeps no job");
  } catch (const InputError& e) {
    CHECK(e.line() == 3);  // the window's line in the spec
    CHECK(e.field() == "window");
  }

  const auto tail = "parameters:\n  PriorityWeightAge: [1]\n" + std::string(kObjectives);
  check_error("trace:\n  window: {from: yesterday}\n" + tail, 2, "from", "expected YYYY-MM-DD");
  check_error("trace:\n  window: {from: '+2-00:00:00', to: '+1-00:00:00'}\n" + tail, 2, "window",
              "empty window");
  check_error("trace:\n  window: {}\n" + tail, 2, "window", "give from, to or both");
}

namespace {

/// Runs a shell command, returns its exit status and (via `output`) what it printed.
int shell(const std::string& command, std::string& output) {
  output.clear();
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  while (const auto n = fread(buffer, 1, sizeof(buffer), pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE(
    "sweep store claims: one run per point, expired or orphaned claims taken over, stored points done") {
  const auto path = (testing::scratch_dir("store_claims") / "c.db").string();
  std::filesystem::remove(path);
  SweepStore store(path);
  using Claim = SweepStore::Claim;
  CHECK(store.claim("a", "r1", 1000, 300) == Claim::kMine);
  CHECK(store.claim("a", "r1", 1001, 300) == Claim::kMine);  // its own again
  CHECK(store.claim("a", "r2", 1100, 300) == Claim::kBusy);
  CHECK(store.claim("a", "r2", 1301, 300) == Claim::kMine);  // r1's lease ended at 1301
  CHECK(store.claim("a", "r1", 1400, 300) == Claim::kBusy);  // now r2's until 1601
  // A heartbeat extends every claim of its run.
  store.renew_claims("r2", 1500, 300);
  CHECK(store.claim("a", "r1", 1700, 300) == Claim::kBusy);  // until 1800
  // An owner said to be gone loses its claim before it expires; one said alive keeps it.
  CHECK(store.claim("a", "r1", 1700, 300, [](const std::string& o) { return o != "r2"; }) == Claim::kMine);
  CHECK(store.claim("a", "r2", 1700, 300, [](const std::string&) { return true; }) == Claim::kBusy);
  store.release_claim("a", "r1");
  CHECK(store.claim("a", "r2", 1700, 300) == Claim::kMine);
  store.release_claims("r2");
  CHECK(store.claim("a", "r3", 1700, 300) == Claim::kMine);
  // A point whose exact values are stored is done, whoever claims it.
  SweepObjective o;
  o.metric = "wait_mean";
  store.add_objectives({o});
  SweepRow row;
  row.key = "a";
  row.params_json = "{\"PriorityWeightAge\": 1}";
  row.metrics_json = "{}";
  row.engine = "exact";
  row.objectives = {1.0};
  REQUIRE(store.insert(row, {o}));
  CHECK(store.claim("a", "r4", 1700, 300) == Claim::kDone);
  CHECK(store.claim("a", "r3", 1700, 300) == Claim::kDone);
}

TEST_CASE("per-job waits: the blob round-trips and matches the stored metrics") {
  const std::vector<std::int64_t> waits = {0, 5, -1, 86400, 1LL << 40};
  CHECK(decode_job_waits(encode_job_waits(waits)) == waits);
  CHECK(decode_job_waits(encode_job_waits({})).empty());
  CHECK_THROWS(decode_job_waits("not zlib"));

  const auto dir = testing::scratch_dir("sweep_waits");
  auto text =
      std::string(kTinySpec) + "job_waits: true\nconstraints:\n  - utilisation >= 0.5\n  - wait_max < 1e12\n";
  text.replace(text.find("{metric: wait_mean, goal: min}"), 30,
               "{metric: wait_mean, goal: min}\n  - {metric: jobs_started}");
  const auto spec = load_sweep_spec(write_spec(dir, text));
  const auto db = (dir / "w.db").string();
  const auto summary = run_sweep_spec(spec, db, {});
  REQUIRE(summary.evaluated == 4);
  SweepStore store(db);
  const auto rows = store.rows(/*with_job_waits=*/true);
  REQUIRE(rows.size() == 4);
  REQUIRE(store.constraints().size() == 2);
  std::size_t feasible = 0;
  const auto trace = load_sweep_trace(spec);
  for (const auto& r : rows) {
    const auto w = decode_job_waits(r.job_waits);
    REQUIRE(w.size() == trace.jobs.size());
    double sum = 0;
    std::size_t started = 0;
    for (auto x : w)
      if (x >= 0) {
        sum += static_cast<double>(x);
        ++started;
      }
    // objectives: wait_mean, jobs_started, utilisation
    CHECK(static_cast<double>(started) == r.objectives[1]);
    CHECK(sum / static_cast<double>(started) == doctest::Approx(r.objectives[0]));
    CHECK(r.constraint_values[0] == r.objectives[2]);  // utilisation, in one shared column
    feasible += r.constraint_values[0] >= 0.5 ? 1 : 0;
  }
  CHECK(summary.feasible == feasible);
  CHECK(store.rows().front().job_waits.empty());  // only read when asked

  // New constraints on the same points (on metrics that have columns): nothing is rerun,
  // feasibility follows the latest spec.
  std::vector<std::pair<double, std::string>> by_wait;
  for (const auto& r : rows) by_wait.emplace_back(r.objectives[0], r.key);
  std::sort(by_wait.begin(), by_wait.end());
  REQUIRE(by_wait[1].first < by_wait[2].first);
  const double bound = (by_wait[1].first + by_wait[2].first) / 2;
  auto text2 = text.substr(0, text.find("constraints:")) +
               fmt::format("constraints:\n  - wait_mean <= {:.17g}\n  - wait_max < 1e12\n", bound);
  const auto spec2 = load_sweep_spec(write_spec(dir, text2));
  const auto again = run_sweep_spec(spec2, db, {});
  CHECK(again.evaluated == 0);
  CHECK(again.feasible == 2);
  std::string out;
  REQUIRE(shell(fmt::format("'{}' sweep show --db {} --csv", SLURMTWIN_BINARY, db), out) == 0);
  CAPTURE(out);
  std::istringstream csv(out);
  std::string header;
  std::getline(csv, header);
  const auto current = SweepStore(db).current();
  CHECK(header.ends_with(",wait_mean,jobs_started,utilisation,wait_max,feasible,pareto,run_seconds" +
                         std::string(current ? ",current" : "")));
  const auto columns = text::split(header, ',');
  const auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(columns.begin(), columns.end(), name) - columns.begin());
  };
  std::set<std::string> feasible_keys, current_keys;
  for (std::string line; std::getline(csv, line);) {
    const auto fields = text::split(line, ',');
    REQUIRE(fields.size() == columns.size());
    if (fields[column("feasible")] == "1") feasible_keys.insert(std::string(fields[0]));
    if (current && fields[column("current")] == "1") current_keys.insert(std::string(fields[0]));
  }
  CHECK(feasible_keys == std::set<std::string>{by_wait[0].second, by_wait[1].second});
  // "You are here": the one row of the site's own settings, when the sweep recorded them.
  if (current) CHECK(current_keys == std::set<std::string>{current->key});
  REQUIRE(shell(fmt::format("'{}' sweep show --db {}", SLURMTWIN_BINARY, db), out) == 0);
  CHECK(out.find("2 of 4 points feasible") != std::string::npos);
}

TEST_CASE("sweep replicates: each point's values are means over replays at spread timer phases") {
  check_error(std::string("parameters:\n  PriorityWeightAge: [1]\nreplicates: 0\n") + kObjectives, 3,
              "replicates", "expected 1..64");
  check_error(std::string("parameters:\n  PriorityWeightAge: [1]\nreplicates: 65\n") + kObjectives, 3,
              "replicates", "expected 1..64");
  check_error(std::string("parameters:\n  PriorityWeightAge: [1]\nreplicates: two\n") + kObjectives, 3,
              "replicates", "bad type");

  // Controller start offsets: bf_interval / phases apart (at least 1 s), from the base offset.
  Site site = default_site();
  site.scheduler.params.bf_interval = 120;
  CHECK(phase_offsets(site, 4) == std::vector<Seconds>{0, 30, 60, 90});
  CHECK(phase_offsets(site, 4, 5) == std::vector<Seconds>{5, 35, 65, 95});
  CHECK(phase_offsets(site, 1) == std::vector<Seconds>{0});
  site.scheduler.params.bf_interval = 2;
  CHECK(phase_offsets(site, 4) == std::vector<Seconds>{0, 1, 2, 3});
  // Mean 3; sample variance (4 + 1 + 0 + 9) / 3; standard error sqrt(14 / 3) / 2.
  const auto [mean, se] = mean_and_standard_error({1, 2, 3, 6});
  CHECK(mean == 3);
  CHECK(se == doctest::Approx(std::sqrt(14.0 / 3) / 2));
  CHECK(std::isnan(mean_and_standard_error({5}).second));

  const auto dir = testing::scratch_dir("sweep_replicates");
  const auto spec =
      load_sweep_spec(write_spec(dir, std::string(kTinySpec) + "replicates: 3\njob_waits: true\n"));
  REQUIRE(spec.replicates == 3);
  const auto db = (dir / "r.db").string();
  REQUIRE(run_sweep_spec(spec, db, {}).evaluated == 4);
  const auto plan = plan_sweep(spec);
  const auto rows = SweepStore(db).rows(/*with_job_waits=*/true);
  REQUIRE(rows.size() == 4);
  bool phases_differ = false;
  for (const auto& task : plan.tasks) {
    CAPTURE(task.key);
    const auto row =
        std::find_if(rows.begin(), rows.end(), [&](const SweepRow& r) { return r.key == task.key; });
    REQUIRE(row != rows.end());
    CHECK(row->replicates == 3);
    // Three replays of the point, by hand: the default site's bf_interval is 30 s, so slurmctld starts
    // 0, 10 and 20 s before the first submit.
    REQUIRE(task.site.scheduler.params.bf_interval == 30);
    std::vector<double> wait_mean, utilisation;
    std::vector<std::int64_t> wait_sum(plan.trace.jobs.size(), 0), started(plan.trace.jobs.size(), 0);
    for (const Seconds offset : {0, 10, 20}) {
      ReplayOptions ro;
      ro.start_offset = offset;
      const auto r = run_replay(task.site, plan.trace, ro);
      wait_mean.push_back(metric_value(r.metrics, "wait_mean"));
      utilisation.push_back(metric_value(r.metrics, "utilisation"));
      for (const auto& j : r.state->jobs)
        if (j.start != kUnsetTime) {
          wait_sum[j.trace_index] += j.start - j.submit;
          ++started[j.trace_index];
        }
    }
    phases_differ = phases_differ || wait_mean[0] != wait_mean[1] || wait_mean[0] != wait_mean[2];
    const double m = (wait_mean[0] + wait_mean[1] + wait_mean[2]) / 3;
    double sq = 0;
    for (double v : wait_mean) sq += (v - m) * (v - m);
    CHECK(row->objectives[0] == doctest::Approx(m));
    REQUIRE(row->standard_errors.size() == 2);
    CHECK(row->standard_errors[0] == doctest::Approx(std::sqrt(sq / 2 / 3)));
    CHECK(row->objectives[1] == doctest::Approx((utilisation[0] + utilisation[1] + utilisation[2]) / 3));
    // Per-job waits: each job's mean over the three, rounded to the second; -1 unless it always started.
    const auto waits = decode_job_waits(row->job_waits);
    REQUIRE(waits.size() == plan.trace.jobs.size());
    for (std::size_t i = 0; i < waits.size(); ++i)
      CHECK(waits[i] == (started[i] == 3 ? std::llround(static_cast<double>(wait_sum[i]) / 3) : -1));
    CHECK(row->metrics_json.starts_with("{\"start_offsets\": [0, 10, 20], \"replicates\": ["));
  }
  CHECK(phases_differ);  // else this test would not tell a mean from one replay

  // One replay per point keeps the keys of stores written before replicates existed; replicated points
  // are other measurements, with other keys.
  auto single = spec;
  single.replicates = 1;
  const auto plan1 = plan_sweep(single);
  for (std::size_t i = 0; i < plan.tasks.size(); ++i) {
    CHECK(plan1.tasks[i].key == point_key(plan1.tasks[i].site, plan1.fingerprint));
    CHECK(plan1.tasks[i].key != plan.tasks[i].key);
  }
  std::string out;
  REQUIRE(shell(fmt::format("'{}' sweep show --db {}", SLURMTWIN_BINARY, db), out) == 0);
  CAPTURE(out);
  CHECK(out.find("(standard error, 3 replicates)") != std::string::npos);
  // The HTML report's front table gives each value with its standard error.
  const auto html = sweep_report_html(db, {});
  CHECK(html.find("means over up to 3 replays at spread timer phases") != std::string::npos);
  // Waits in the unit their median reads best in (readable_time_unit), named in the header.
  std::vector<double> waits;
  for (const auto& r : rows) waits.push_back(r.objectives[0]);
  std::nth_element(waits.begin(), waits.begin() + static_cast<std::ptrdiff_t>(waits.size() / 2), waits.end());
  const auto unit = readable_time_unit(waits[waits.size() / 2]);
  CHECK(html.find(fmt::format("<th>wait_mean ({}) ↓</th>", unit.name)) != std::string::npos);
  std::size_t shown = 0;  // points of the front table (the best mean wait's at least)
  for (const auto& r : rows)
    shown += html.find(fmt::format("<td>{:.6g} ± {:.3g}</td>", r.objectives[0] / unit.seconds,
                                   r.standard_errors[0] / unit.seconds)) != std::string::npos;
  CHECK(shown >= 1);
  // Its plots draw the standard errors as error bars: on the Pareto plot (both objectives) and on each
  // sensitivity plot (the objective), one per point and direction whose error is above zero.
  std::size_t bars = 0, nonzero = 0;
  for (auto p = html.find("class=\"error-bar\""); p != std::string::npos;
       p = html.find("class=\"error-bar\"", p + 1))
    ++bars;
  for (const auto& r : rows) nonzero += (r.standard_errors[0] > 0) + (r.standard_errors[1] > 0);
  CHECK(nonzero > 0);
  CHECK(bars >= nonzero);
  REQUIRE(shell(fmt::format("'{}' sweep show --db {} --csv", SLURMTWIN_BINARY, db), out) == 0);
  CHECK(
      out.starts_with("key,PriorityWeightAge,PriorityWeightFairshare,wait_mean,utilisation,se_wait_mean,se_"
                      "utilisation,replicates,"
                      "feasible,pareto,run_seconds,current\n"));
}

TEST_CASE("sweep shards: --shard i/N split the points, merge is idempotent and equals one run") {
  const auto dir = testing::scratch_dir("sweep_shards");
  const auto spec = load_sweep_spec(write_spec(dir, kTinySpec));
  const auto whole = (dir / "whole.db").string();
  SweepRunOptions one;
  one.check_invariants = true;
  one.jobs = 1;
  REQUIRE(run_sweep_spec(spec, whole, one).evaluated == 4);
  std::vector<std::string> shard_dbs;
  std::size_t total = 0;
  for (std::uint32_t i = 0; i < 3; ++i) {
    SweepRunOptions o = one;
    o.shard = i;
    o.shards = 3;
    shard_dbs.push_back((dir / fmt::format("shard{}.db", i)).string());
    const auto s = run_sweep_spec(spec, shard_dbs.back(), o);
    CHECK(s.total == (i == 0 ? 2u : 1u));  // points 0 and 3 / 1 / 2
    CHECK(s.evaluated == s.total);
    total += s.evaluated;
  }
  CHECK(total == 4);
  const auto merged = (dir / "merged.db").string();
  {
    SweepStore m(merged);
    std::size_t added = 0;
    for (const auto& s : shard_dbs) added += m.merge_from(s);
    CHECK(added == 4);
    for (const auto& s : shard_dbs) CHECK(m.merge_from(s) == 0);  // idempotent
    CHECK(m.merge_from(whole) == 0);
  }
  const auto a = SweepStore(whole).rows();
  const auto b = SweepStore(merged).rows();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].key == b[i].key);
    CHECK(a[i].metrics_json == b[i].metrics_json);
    CHECK(a[i].objectives == b[i].objectives);
  }
  CHECK(SweepStore(merged).objectives().size() == 2);
}

TEST_CASE("sweep --emit-sbatch refuses line breaks in what it writes and never writes through a link") {
  // Issue 27, D2: a line break in --time (or in the spec's or the folder's name) became a line of its
  // own in the script, a command when it ran; a symlink at sweep.sbatch was written through, and its
  // target made executable.
  const auto dir = testing::scratch_dir("sweep_sbatch_hostile");
  const auto spec_path = write_spec(dir, kTinySpec);
  const auto jobs = dir / "jobs";
  const auto marker = dir / "ran";
  std::string out;
  CHECK(shell(fmt::format("'{}' sweep {} --emit-sbatch '{}' --time '1:00:00\ntouch {}'", SLURMTWIN_BINARY,
                          spec_path, jobs.string(), marker.string()),
              out) == 2);
  CHECK(out.find("--time '1:00:00\ntouch") != std::string::npos);
  CHECK(out.find("control character") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(jobs / "sweep.sbatch"));
  const auto odd = dir / "odd\nname.yaml";
  std::filesystem::copy_file(spec_path, odd);
  CHECK(shell(fmt::format("'{}' sweep \"{}\" --emit-sbatch '{}'", SLURMTWIN_BINARY, odd.string(),
                          jobs.string()),
              out) == 2);
  CHECK(out.find("the spec path") != std::string::npos);
  // A link where a script goes is replaced by the script; what it pointed to is left alone.
  std::filesystem::create_directories(jobs);
  const auto victim = dir / "victim.txt";
  std::ofstream(victim) << "keep\n";
  std::filesystem::create_symlink(victim, jobs / "sweep.sbatch");
  REQUIRE(shell(fmt::format("'{}' sweep {} --emit-sbatch '{}'", SLURMTWIN_BINARY, spec_path, jobs.string()),
                out) == 0);
  CHECK(testing::slurp(victim) == "keep\n");
  CHECK((std::filesystem::status(victim).permissions() & std::filesystem::perms::owner_exec) ==
        std::filesystem::perms::none);
  CHECK_FALSE(std::filesystem::is_symlink(jobs / "sweep.sbatch"));
  CHECK((std::filesystem::status(jobs / "sweep.sbatch").permissions() & std::filesystem::perms::owner_exec) ==
        std::filesystem::perms::owner_exec);
  CHECK(testing::slurp(jobs / "sweep.sbatch").rfind("#!/bin/bash\n", 0) == 0);
  CHECK_FALSE(std::filesystem::exists(marker));
}

TEST_CASE("sweep --emit-sbatch: the array script's tasks, run as Slurm would, then merge.sbatch") {
  const auto dir = testing::scratch_dir("sweep_sbatch");
  const auto spec_path = write_spec(dir, kTinySpec);
  // A space and a quote in the folder: the scripts must quote every path they hand to bash.
  const auto jobs = (dir / "jobs it's").string();
  const std::string cd = "cd \"" + jobs + "\"";
  std::string out;
  REQUIRE(shell(fmt::format("'{}' sweep {} --emit-sbatch \"{}\" --shards 3 --cpus-per-task 1 --time 1:00:00",
                            SLURMTWIN_BINARY, spec_path, jobs),
                out) == 0);
  CAPTURE(out);
  std::ifstream in(jobs + "/sweep.sbatch");
  const std::string script((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(script.find("#SBATCH --array=0-2\n") != std::string::npos);
  CHECK(script.find("#SBATCH --cpus-per-task=1\n") != std::string::npos);
  CHECK(script.find("#SBATCH --time=1:00:00\n") != std::string::npos);
  // sbatch splits #SBATCH lines at white space and takes quotes as grouping (an unmatched one is fatal):
  // each is escaped there (get_argument in src/sbatch/opt.c).
  CHECK(script.find("#SBATCH --output=" + (dir / "jobs\\ it\\'s").string() + "/shard-%a.log\n") !=
        std::string::npos);
  // Each array task as Slurm would start it (twice for task 1: a rerun resumes and adds nothing).
  for (const int task : {0, 1, 2, 1}) {
    REQUIRE(
        shell(fmt::format("{} && SLURM_ARRAY_TASK_ID={} SLURM_CPUS_PER_TASK=1 bash sweep.sbatch", cd, task),
              out) == 0);
  }
  CHECK(out.find("0 evaluated now, 1 from earlier runs") != std::string::npos);
  // One database per task, named by its id (the id once stayed inside single quotes, unexpanded, and
  // every task wrote the same file; found by submitting the array to real Slurm, tests/oracle/array.sh).
  CHECK(SweepStore(jobs + "/shard-0.db").rows().size() == 2);  // points 0 and 3
  CHECK(SweepStore(jobs + "/shard-1.db").rows().size() == 1);
  CHECK(SweepStore(jobs + "/shard-2.db").rows().size() == 1);
  REQUIRE(shell(cd + " && bash merge.sbatch", out) == 0);
  CHECK(out.find("4 points added") != std::string::npos);
  REQUIRE(shell(cd + " && bash merge.sbatch", out) == 0);  // idempotent
  CHECK(out.find("0 points added") != std::string::npos);
  const auto rows = SweepStore(jobs + "/sweep.db").rows();
  CHECK(rows.size() == 4);
}

#ifdef SLURMTWIN_MPIEXEC
TEST_CASE("sweep --mpi: mpirun -np 2 splits the points over ranks, rank 0's table equals a local run") {
  const auto dir = testing::scratch_dir("sweep_mpi");
  const auto spec_path = write_spec(
      dir,
      "trace:\n  synthetic: {seed: 5, days: 2}\nparameters:\n  PriorityWeightAge: [0, 1000, 10000]\n"
      "  PriorityWeightFairshare: [100, 10000]\nobjectives:\n  - {metric: wait_mean}\nreplicates: 2\n");
  const auto db = (dir / "mpi.db").string();
  std::string out;
  // Leak checking is off for this child: OpenMPI's own allocations are reported as leaks under ASan.
  const auto command = fmt::format(
      "ASAN_OPTIONS=detect_leaks=0 OMPI_MCA_rmaps_base_oversubscribe=1 '{}' --allow-run-as-root "
      "--oversubscribe -np 2 '{}' sweep run {} --db {} --mpi -j 1",
      SLURMTWIN_MPIEXEC, SLURMTWIN_BINARY, spec_path, db);
  const int rc = shell(command, out);
  CAPTURE(out);
  REQUIRE(rc == 0);
  CHECK(out.find("6 evaluated now on 2 MPI ranks") != std::string::npos);
  // "(a + b)": points per rank; rank 1 must have done some.
  const auto open = out.find("MPI ranks (");
  REQUIRE(open != std::string::npos);
  const auto plus = out.find(" + ", open);
  REQUIRE(plus != std::string::npos);
  CHECK(std::stoi(out.substr(plus + 3)) >= 1);

  const auto local = (dir / "local.db").string();
  run_sweep_spec(load_sweep_spec(spec_path), local, {});
  const auto a = SweepStore(db).rows();
  const auto b = SweepStore(local).rows();
  REQUIRE(a.size() == 6);
  REQUIRE(b.size() == 6);
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].key == b[i].key);
    CHECK(a[i].metrics_json == b[i].metrics_json);
    CHECK(a[i].replicates == 2);  // the replicates' standard errors travel with the row
    CHECK(a[i].replicates == b[i].replicates);
    REQUIRE(a[i].standard_errors.size() == 1);
    CHECK(a[i].standard_errors == b[i].standard_errors);
  }
  // A rerun under MPI finds everything stored and evaluates nothing.
  REQUIRE(shell(command, out) == 0);
  CHECK(out.find("0 evaluated now") != std::string::npos);
}
#else
TEST_CASE("sweep --mpi: SKIPPED, this build has no MPI") {
  MESSAGE("SKIPPED: MPI not found at configure time (apt-get install libopenmpi-dev openmpi-bin)");
}
#endif

TEST_CASE("reading a sweep database never creates or changes a file: absent or foreign ones are bad input") {
  // Issue 27, D4: `sweep show --db nosuch.db` created an empty database and exited 0, and show/report on
  // another SQLite file added tables to it and switched it to WAL.
  const auto dir = testing::scratch_dir("sweep_read_only");
  const auto missing = (dir / "nosuch.db").string();
  CHECK_THROWS_WITH_AS(SweepStore(missing, StoreAccess::kRead), doctest::Contains("no such sweep database"),
                       InputError);
  CHECK_FALSE(std::filesystem::exists(missing));
  // A file that is not a sweep database is refused, and left as it was.
  const auto foreign = (dir / "other.db").string();
  const auto bytes = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  std::ofstream(foreign, std::ios::binary | std::ios::trunc) << "SQLite format 3";  // not even a database
  const auto before = bytes(foreign);
  CHECK_THROWS_WITH_AS(SweepStore(foreign, StoreAccess::kRead), doctest::Contains("not a sweep database"),
                       InputError);
  CHECK(bytes(foreign) == before);
  // A sweep's own database reads the same rows read-only as read-write, and is left unchanged.
  const auto spec = load_sweep_spec(write_spec(dir, kTinySpec));
  const auto db = (dir / "s.db").string();
  REQUIRE(run_sweep_spec(spec, db, {}).evaluated == 4);
  const auto written = bytes(db);
  const auto read = SweepStore(db, StoreAccess::kRead).rows();
  CHECK(read.size() == 4);
  CHECK(bytes(db) == written);
  CHECK(read.front().key == SweepStore(db).rows().front().key);
}

TEST_CASE("a damaged sweep database is bad input named by file, point and field, never a crash") {
  // Issue 27, D7: a string in a point's params escaped as a bare yaml-cpp error, replicates = 1e300
  // wrapped in an unchecked cast, and either exited 1 ("a failure found") instead of 2.
  const auto dir = testing::scratch_dir("sweep_damaged");
  const auto spec = load_sweep_spec(write_spec(dir, kTinySpec));
  const auto db = (dir / "s.db").string();
  REQUIRE(run_sweep_spec(spec, db, {}).evaluated == 4);
  const auto key = SweepStore(db).rows().front().key;
  const auto damage = [&](const std::string& sql) {
    const auto copy = (dir / "damaged.db").string();
    std::filesystem::copy_file(db, copy, std::filesystem::copy_options::overwrite_existing);
    sqlite3* h = nullptr;
    REQUIRE(sqlite3_open(copy.c_str(), &h) == SQLITE_OK);
    REQUIRE(sqlite3_exec(h, fmt::format(fmt::runtime(sql), key).c_str(), nullptr, nullptr, nullptr) ==
            SQLITE_OK);
    sqlite3_close(h);
    return copy;
  };
  const auto refused = [&](const std::string& sql) {
    const auto copy = damage(sql);
    try {
      SweepStore(copy, StoreAccess::kRead).rows();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refused("UPDATE points SET params = '{{\"PriorityWeightAge\": \"lots\"}}' WHERE key = '{}'") ==
        fmt::format("{}/damaged.db: params: point {}: PriorityWeightAge is not a number", dir.string(), key));
  CHECK(refused("UPDATE points SET params = '[1, 2' WHERE key = '{}'").find("params: point " + key) !=
        std::string::npos);
  CHECK(refused("UPDATE points SET params = '\"x\"' WHERE key = '{}'").find("not an object") !=
        std::string::npos);
  CHECK(
      refused("UPDATE points SET replicates = 1e300 WHERE key = '{}'") ==
      fmt::format("{}/damaged.db: replicates: point {}: 1e+300 is not a replicate count", dir.string(), key));
  CHECK(refused("UPDATE points SET replicates = 2.5 WHERE key = '{}'").find("not a replicate count") !=
        std::string::npos);
  // Through the binary: exit 2, and the message names the database.
  std::string out;
  CHECK(shell(fmt::format("'{}' sweep show --db '{}'", SLURMTWIN_BINARY,
                          damage("UPDATE points SET replicates = 5e9 WHERE key = '{}'")),
              out) == 2);
  CHECK(out.find("damaged.db: replicates: point " + key) != std::string::npos);
  // An undamaged row still reads: its settings come back as numbers.
  const auto rows = SweepStore(db, StoreAccess::kRead).rows();
  CHECK(rows.front().params.size() == spec.parameters.size());
}

TEST_CASE("you are here: the site's current settings, read from the site in the sweep's units") {
  const Site site = default_site();  // traces/default_site.cpp: the values below
  CHECK(current_setting(site, "PriorityWeightAge") == 1000);
  CHECK(current_setting(site, "PriorityWeightFairshare") == 10000);
  CHECK(current_setting(site, "PriorityWeightTRES/GRES/gpu") == 100);  // TRES names: any case
  CHECK(current_setting(site, "PriorityWeightTRES/mem") == 0);         // not weighted
  CHECK(current_setting(site, "bf_window") == 1440);                   // minutes, as slurm.conf and sweeps
  CHECK(current_setting(site, "QOS/high/Priority") == 100);
  CHECK_THROWS_AS(current_setting(site, "QOS/nosuch/Priority"), std::invalid_argument);
  // Applying the current value changes nothing: the current point's site is the base site.
  for (const char* name :
       {"PriorityWeightAge", "bf_window", "PriorityWeightTRES/GRES/gpu", "PriorityMaxAge"}) {
    Site copy = site;
    apply_setting(copy, name, current_setting(site, name));
    CHECK(site_to_yaml(copy) == site_to_yaml(site));
  }
}

TEST_CASE("resolved: two points differ by more than two standard errors of the difference, by hand") {
  SweepRow a, b;
  a.objectives = {100};
  b.objectives = {108};
  CHECK_FALSE(resolved(a, b, 0).has_value());  // one replay each: no standard error, no verdict
  a.standard_errors = {3};
  b.standard_errors = {4};            // the difference's standard error: sqrt(9 + 16) = 5
  CHECK(resolved(a, b, 0) == false);  // 8 <= 2 x 5
  b.objectives = {111};
  CHECK(resolved(a, b, 0) == true);  // 11 > 10
  CHECK(resolved(b, a, 0) == true);
}

TEST_CASE("you are here: the current settings are one more point (unless the design has them), shown") {
  const auto dir = testing::scratch_dir("sweep_current");
  const std::string head = "trace:\n  synthetic: {seed: 11, days: 1}\nparameters:\n";
  const std::string objectives =
      "objectives:\n  - {metric: wait_mean, goal: min}\n  - {metric: utilisation, goal: max}\n";
  // The default site has age 1000 and fair share 10000.
  auto plan = plan_sweep(load_sweep_spec(write_spec(
      dir, head + "  PriorityWeightAge: [0, 9000]\n  PriorityWeightFairshare: [100, 10000]\n" + objectives)));
  REQUIRE(plan.tasks.size() == 5);
  CHECK(plan.current == 4u);
  CHECK(plan.current_added);
  CHECK(plan.tasks[4].point == SweepPoint{{"PriorityWeightAge", 1000}, {"PriorityWeightFairshare", 10000}});
  plan = plan_sweep(load_sweep_spec(write_spec(
      dir, head + "  PriorityWeightAge: [0, 1000]\n  PriorityWeightFairshare: [100, 10000]\n" + objectives)));
  REQUIRE(plan.tasks.size() == 4);
  CHECK(plan.current == 3u);  // (1000, 10000): the design's last point
  CHECK_FALSE(plan.current_added);
  plan = plan_sweep(load_sweep_spec(
      write_spec(dir, head + "  PriorityWeightAge: [0, 9000]\n" + objectives + "current_settings: false\n")));
  CHECK(plan.tasks.size() == 2);
  CHECK_FALSE(plan.current);

  // Run, then show: the current point's values against the best, and where it stands.
  const auto spec_path = write_spec(
      dir, head + "  PriorityWeightAge: [0, 9000]\n" + objectives + "constraints:\n  - wait_mean < 1e12\n");
  const auto db = (dir / "s.db").string();
  const auto summary = run_sweep_spec(load_sweep_spec(spec_path), db, {});
  CHECK(summary.total == 3);
  const auto current = SweepStore(db, StoreAccess::kRead).current();
  REQUIRE(current);
  CHECK(current->params == SweepPoint{{"PriorityWeightAge", 1000}});
  const auto rows = SweepStore(db, StoreAccess::kRead).rows();
  REQUIRE(rows.size() == 3);
  std::vector<std::size_t> all = {0, 1, 2};
  const auto standing =
      assess_current(rows, current->key, SweepStore(db).constraints(), all, {Goal::kMin, Goal::kMax});
  REQUIRE(standing.row);
  CHECK(rows[*standing.row].params == current->params);
  CHECK(standing.broken.empty());
  // By hand from the three rows: how many are at least as good in both objectives and better in one.
  std::size_t better = 0;
  const auto& h = rows[*standing.row].objectives;
  for (const auto& r : rows) {
    const bool ge = r.objectives[0] <= h[0] && r.objectives[1] >= h[1];
    better += ge && (r.objectives[0] < h[0] || r.objectives[1] > h[1]) ? 1 : 0;
  }
  CHECK(standing.better == better);
  std::string out;
  REQUIRE(shell(fmt::format("'{}' sweep show --db {}", SLURMTWIN_BINARY, db), out) == 0);
  CAPTURE(out);
  CHECK(out.find(fmt::format("you are here (the site's current settings): PriorityWeightAge=1000  key {}\n",
                             current->key)) != std::string::npos);
  CHECK(out.find(fmt::format("  wait_mean ↓: {:.6g} s", h[0])) != std::string::npos);
  CHECK(out.find("  meets every constraint; ") != std::string::npos);
  // The report marks it on the front's chart and has its section.
  const auto html = sweep_report_html(db, {});
  CHECK(html.find("id=\"current\"") != std::string::npos);
  CHECK(html.find("you are here (current settings)") != std::string::npos);

  // Merging shards keeps the current point; a store written before it existed has none.
  const auto merged = (dir / "merged.db").string();
  SweepStore(merged).merge_from(db);
  CHECK(SweepStore(merged, StoreAccess::kRead).current()->key == current->key);
  const auto old = (dir / "old.db").string();
  SweepStore(old).merge_from(db);
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(old.c_str(), &raw) == SQLITE_OK);
  REQUIRE(sqlite3_exec(raw, "DROP TABLE meta", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(raw);
  CHECK_FALSE(SweepStore(old, StoreAccess::kRead).current());
  REQUIRE(shell(fmt::format("'{}' sweep show --db {}", SLURMTWIN_BINARY, old), out) == 0);
  CHECK(out.find("you are here") == std::string::npos);
}

}  // namespace slurmtwin::experiments
