// slurmtwin check: scenario and baseline files, tolerances, and the command's exit codes and outputs.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "experiments/check/check.hpp"
#include "test_support.hpp"
#include "traces/read_report.hpp"

using namespace slurmtwin;
using namespace slurmtwin::experiments;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// The InputError message of parsing `yaml`, or "" when it parses.
std::string parse_error(const std::string& yaml) {
  try {
    parse_check_suite(yaml, "s.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("check scenarios: defaults, overrides and where the baseline lives") {
  const auto suite = parse_check_suite(
      "tolerance: {rel: 0.05}\n"
      "scenarios:\n"
      "  - name: week\n"
      "    trace: {synthetic: {seed: 3, days: 2}}\n"
      "    window: {from: 12h, length: 1d}\n"
      "    settings: {PriorityWeightAge: 500}\n"
      "    metrics:\n"
      "      wait_mean:\n"
      "      wait_p90@partition:gpu: {abs: 60, goal: min}\n"
      "      utilisation: {rel: 0, abs: 0.01, goal: max}\n",
      "dir/site.check.yaml");
  CHECK(suite.baseline_path == "dir/site.check.baseline.yaml");
  REQUIRE(suite.scenarios.size() == 1);
  const auto& s = suite.scenarios[0];
  CHECK(s.inputs.synthetic_seed == 3);
  CHECK(s.window.from == 12 * 3600);
  CHECK(s.window.length == 86400);
  CHECK(s.settings.at("PriorityWeightAge") == 500);
  REQUIRE(s.metrics.size() == 3);
  CHECK(s.metrics[0].tolerance.rel == 0.05);  // from the file's default
  CHECK(s.metrics[0].goal == CheckGoal::kAny);
  CHECK(s.metrics[1].metric == "wait_p90@partition:gpu");
  CHECK(s.metrics[1].tolerance.rel == 0.05);
  CHECK(s.metrics[1].tolerance.abs == 60);
  CHECK(s.metrics[1].goal == CheckGoal::kMin);
  CHECK(s.metrics[1].line == 9);
  CHECK(s.metrics[2].tolerance.rel == 0);
  CHECK(s.metrics[2].goal == CheckGoal::kMax);
}

TEST_CASE("check scenarios: every error names file, line and key") {
  CHECK(parse_error("scenarios:\n  - name: a\n    metrics: {wait_mean: }\n    colour: red\n")
            .find("s.yaml:4: colour:") != std::string::npos);
  CHECK(parse_error("scenarios:\n  - name: a\n    metrics:\n      wait_avg:\n")
            .find("s.yaml:4: wait_avg: unknown metric") != std::string::npos);
  CHECK(parse_error("scenarios:\n  - name: a\n    window: {length: two days}\n    metrics: {wait_mean: }\n")
            .find("s.yaml:3: length: bad duration") != std::string::npos);
  CHECK(parse_error("scenarios:\n  - name: a\n    metrics:\n      wait_mean: {rel: -1}\n")
            .find("s.yaml:4: rel:") != std::string::npos);
  CHECK(
      parse_error("scenarios:\n  - name: a\n    metrics: {wait_mean: {goal: down}}\n").find("goal 'down'") !=
      std::string::npos);
  CHECK(parse_error(
            "scenarios:\n  - name: a\n    settings: {PriorityWeightColour: 1}\n    metrics: {wait_mean: }\n")
            .find("s.yaml:3: PriorityWeightColour: unknown setting") != std::string::npos);
  CHECK(parse_error(
            "scenarios:\n  - name: a\n    metrics: {wait_mean: }\n  - name: a\n    metrics: {wait_mean: }\n")
            .find("s.yaml:4: name: scenario 'a' given twice") != std::string::npos);
  CHECK(parse_error("scenarios:\n  - name: a\n").find("s.yaml:2: metrics:") != std::string::npos);
  // The trace section reads as a sweep spec's (one parser), but a check scenario has its own window.
  CHECK(parse_error(
            "scenarios:\n  - name: a\n    trace: {synthetic: {seed: 1.5}}\n    metrics: {wait_mean: }\n")
            .find("s.yaml:3: seed: bad type: expected a non-negative integer") != std::string::npos);
  CHECK(parse_error("scenarios:\n  - name: a\n    trace: {path: t.swf, window: {from: +1-00:00:00}}\n"
                    "    metrics: {wait_mean: }\n")
            .find("s.yaml:3: window: unknown key in trace") != std::string::npos);
  CHECK(parse_error("scenarios: [\n").find("s.yaml:") != std::string::npos);
  // A key that is itself a sequence (the sweep spec's fuzz finding, same parser shape): an InputError.
  CHECK(parse_error("scenarios:\n  - name: a\n    [x]: 1\n    metrics: {wait_mean: }\n")
            .find("s.yaml:3: scenario: a key must be a plain name") != std::string::npos);
}

TEST_CASE("a metric holds within max(abs, rel * |baseline|), one-sided for min and max goals") {
  double allowed = 0;
  const Tolerance five_percent{0.05, 0};
  CHECK(metric_holds(104, 100, five_percent, CheckGoal::kAny, allowed));
  CHECK(allowed == doctest::Approx(5));
  CHECK(metric_holds(95, 100, five_percent, CheckGoal::kAny, allowed));
  CHECK_FALSE(metric_holds(106, 100, five_percent, CheckGoal::kAny, allowed));
  CHECK_FALSE(metric_holds(94, 100, five_percent, CheckGoal::kAny, allowed));
  // Lower is better: any improvement holds, a worsening beyond 5 does not.
  CHECK(metric_holds(10, 100, five_percent, CheckGoal::kMin, allowed));
  CHECK_FALSE(metric_holds(106, 100, five_percent, CheckGoal::kMin, allowed));
  // Higher is better: the other way round.
  CHECK(metric_holds(300, 100, five_percent, CheckGoal::kMax, allowed));
  CHECK_FALSE(metric_holds(94, 100, five_percent, CheckGoal::kMax, allowed));
  // A baseline of 0 allows only the absolute tolerance.
  CHECK_FALSE(metric_holds(0.5, 0, five_percent, CheckGoal::kAny, allowed));
  CHECK(metric_holds(0.5, 0, Tolerance{0.05, 1}, CheckGoal::kAny, allowed));
  CHECK(allowed == 1);
  // The larger of the two wins: 2% of 1000 = 20 > 5.
  CHECK(metric_holds(1019, 1000, Tolerance{0.02, 5}, CheckGoal::kAny, allowed));
  CHECK(allowed == doctest::Approx(20));
}

TEST_CASE("baseline files round-trip exactly and reject other formats with a line") {
  Baseline b;
  b["week"].inputs_key = "0123456789abcdef";
  b["week"].metrics["wait_mean"] = 0.1 + 0.2;  // not representable in few digits
  b["week"].metrics["wait_p90@partition:gpu"] = 12345.678901234567;
  b["ub:2days"].metrics["utilisation"] = 1.0 / 3.0;
  const auto again = parse_baseline(baseline_to_yaml(b), "b.yaml");
  REQUIRE(again.size() == 2);
  CHECK(again.at("week").inputs_key == "0123456789abcdef");
  CHECK(again.at("week").metrics.at("wait_mean") == 0.1 + 0.2);
  CHECK(again.at("week").metrics.at("wait_p90@partition:gpu") == 12345.678901234567);
  CHECK(again.at("ub:2days").metrics.at("utilisation") == 1.0 / 3.0);
  CHECK_THROWS_WITH_AS(parse_baseline("format: something-else\nscenarios: {}\n", "b.yaml"),
                       doctest::Contains("b.yaml:1: format:"), InputError);
  CHECK_THROWS_WITH_AS(
      parse_baseline("format: slurmtwin-check-baseline/1\nscenarios:\n  a:\n    metrics: {wait_mean: lots}\n",
                     "b.yaml"),
      doctest::Contains("b.yaml:4: wait_mean:"), InputError);
}

TEST_CASE(
    "slurmtwin check: exit 0 when metrics hold, 1 on a regression, 2 on bad input, with JUnit and Markdown") {
  const auto dir = testing::scratch_dir("check_cli");
  const auto scenarios = (dir / "scenarios.yaml").string();
  // A small cluster and one synthetic day keep the replays short. The optional scenario reads a file
  // that does not exist: it is reported as skipped, never an error.
  std::ofstream(scenarios) << "tolerance: {rel: 0.01}\n"
                              "scenarios:\n"
                              "  - name: small-day\n"
                              "    site: {default_cpu_nodes: 16}\n"
                              "    trace: {synthetic: {seed: 5, days: 1}}\n"
                              "    metrics:\n"
                              "      wait_mean: {goal: min}\n"
                              "      utilisation:\n"
                              "      jobs_started: {rel: 0}\n"
                              "  - name: absent-site\n"
                              "    optional: true\n"
                              "    site: no/such/slurm.conf\n"
                              "    metrics: {wait_mean: }\n";
  const auto baseline = dir / "scenarios.baseline.yaml";

  SUBCASE("without a baseline: exit 2 naming the file and how to create it") {
    const auto r = testing::run_cli("check " + scenarios);
    CHECK(r.code == 2);
    CHECK(r.out.find("scenarios.baseline.yaml: baseline file absent") != std::string::npos);
    CHECK(r.out.find("--update-baseline") != std::string::npos);
  }

  REQUIRE(testing::run_cli("check " + scenarios + " --update-baseline").code == 0);
  const auto stored = parse_baseline(testing::slurp(baseline), baseline.string());
  REQUIRE(stored.count("small-day") == 1);
  CHECK(stored.count("absent-site") == 0);  // skipped: nothing to store
  const double wait = stored.at("small-day").metrics.at("wait_mean");
  const double jobs = stored.at("small-day").metrics.at("jobs_started");
  CHECK(wait > 0);
  CHECK(jobs > 0);

  const auto junit = (dir / "junit.xml").string(), md = (dir / "summary.md").string();
  SUBCASE("same inputs: every metric holds, exit 0") {
    const auto r = testing::run_cli(fmt::format("check {} --junit {} --markdown {}", scenarios, junit, md));
    CHECK(r.code == 0);
    const auto xml = testing::slurp(junit);
    CHECK(
        xml.find(
            "<testsuites name=\"slurmtwin check\" tests=\"4\" failures=\"0\" errors=\"0\" skipped=\"1\">") !=
        std::string::npos);
    CHECK(count(xml, "<testcase ") == 4);
    CHECK(count(xml, "<skipped message=\"input absent: ") == 1);
    const auto summary = testing::slurp(md);
    CHECK(summary.find("all metrics hold") != std::string::npos);
    CHECK(count(summary, "✅ pass |") == 3);
    CHECK(summary.find("`absent-site` skipped: input absent:") != std::string::npos);
  }

  SUBCASE("a baseline the run misses: exit 1, a JUnit failure and a Markdown row per regression") {
    // Baseline wait 10% above the replay's: within tolerance for `min` (an improvement). Jobs started
    // one more than the replay: outside the exact tolerance -> regression. Utilisation 5% off -> regression.
    Baseline edited = stored;
    auto& m = edited.at("small-day").metrics;
    m.at("wait_mean") = wait * 1.10;
    m.at("jobs_started") = jobs + 1;
    m.at("utilisation") *= 1.05;
    std::ofstream(baseline) << baseline_to_yaml(edited);
    const auto r = testing::run_cli(fmt::format("check {} --junit {} --markdown {}", scenarios, junit, md));
    CHECK(r.code == 1);
    const auto xml = testing::slurp(junit);
    CHECK(count(xml, "<failure ") == 2);
    CHECK(xml.find("failures=\"2\"") != std::string::npos);
    const auto summary = testing::slurp(md);
    CHECK(summary.find("2 regression(s)") != std::string::npos);
    CHECK(summary.find("| small-day | `jobs_started` |") != std::string::npos);
    CHECK(count(summary, "❌ **regression**") == 2);
    CHECK(count(summary, "✅ pass |") == 1);
  }

  SUBCASE("a metric missing from the baseline: exit 2 and a JUnit error") {
    Baseline edited = stored;
    edited.at("small-day").metrics.erase("utilisation");
    std::ofstream(baseline) << baseline_to_yaml(edited);
    const auto r = testing::run_cli(fmt::format("check {} --junit {}", scenarios, junit));
    CHECK(r.code == 2);
    CHECK(testing::slurp(junit).find("errors=\"1\"") != std::string::npos);
  }

  SUBCASE("bad input: exit 2 with file:line") {
    const auto bad = (dir / "bad.yaml").string();
    std::ofstream(bad) << "scenarios:\n  - name: x\n    metrics: {wait_mean: {rel: lots}}\n";
    const auto r = testing::run_cli("check " + bad);
    CHECK(r.code == 2);
    CHECK(r.out.find("bad.yaml:3: rel: bad type") != std::string::npos);
    CHECK(testing::run_cli("check " + scenarios + " --scenario nosuch").code == 2);
    CHECK(testing::run_cli("check").code == 2);
  }

  SUBCASE("a non-optional scenario whose input is absent is an input error, exit 2") {
    const auto strict = (dir / "strict.yaml").string();
    std::ofstream(strict) << "scenarios:\n  - name: x\n    trace: gone.events\n    metrics: {wait_mean: }\n";
    const auto r = testing::run_cli(fmt::format("check {} --update-baseline", strict));
    CHECK(r.code == 2);
    CHECK(r.out.find("strict.yaml:2: x: input file") != std::string::npos);
  }
}

TEST_CASE("the project's own check scenarios parse and their baseline covers every metric") {
  const auto file = std::string(SLURMTWIN_SOURCE_DIR) + "/.ci/check/scenarios.yaml";
  const auto suite = load_check_suite(file);
  const auto baseline = parse_baseline(testing::slurp(suite.baseline_path), suite.baseline_path);
  for (const auto& s : suite.scenarios) {
    INFO(s.name);
    REQUIRE(baseline.count(s.name) == 1);
    for (const auto& m : s.metrics) CHECK(baseline.at(s.name).metrics.count(m.metric) == 1);
  }
}
