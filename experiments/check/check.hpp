#pragma once
// `slurmtwin check`: the regression run a site keeps in its CI next to its slurm.conf. A scenarios
// file (YAML) names, per scenario, a site, a trace window, optional setting overrides and the metrics
// to hold; a baseline file stores each metric's value. A metric holds while it stays within its
// tolerance of the baseline. See docs/check.md for both file formats.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "experiments/sweep/sweep_spec.hpp"

namespace slurmtwin::experiments {

/// How far a metric may move from its baseline: |value - baseline| <= max(abs, rel * |baseline|).
struct Tolerance {
  double rel = 0;  // fraction of |baseline|
  double abs = 0;  // in the metric's unit
};

/// Which moves count as a regression.
enum class CheckGoal {
  kAny,  // a move either way beyond the tolerance
  kMin,  // lower is better: only an increase beyond the tolerance
  kMax,  // higher is better: only a decrease beyond the tolerance
};

struct CheckMetric {
  std::string metric;  // a sweep objective metric (metric_is_known), e.g. "wait_p90@partition:gpu"
  Tolerance tolerance;
  CheckGoal goal = CheckGoal::kAny;
  std::uint64_t line = 0;  // in the scenarios file (1-based)
};

/// The part of the trace a scenario replays: jobs submitted in [first + from, first + from + length),
/// `first` being the trace's first submit time.
struct TraceWindow {
  Seconds from = 0;    // s after the first submit
  Seconds length = 0;  // s; 0 = to the end of the trace
};

struct CheckScenario {
  std::string name;
  std::uint64_t line = 0;  // in the scenarios file (1-based)
  SweepSpec inputs;        // site and trace fields only (same keys as a sweep spec)
  SweepPoint settings;     // setting overrides applied to the site (sweep setting names)
  TraceWindow window;
  bool optional = false;  // skipped (not an error) when one of its input files is absent
  std::vector<CheckMetric> metrics;
};

struct CheckSuite {
  std::string file;           // the scenarios file
  std::string baseline_path;  // `baseline:` (relative to the file), default <file stem>.baseline.yaml
  std::vector<CheckScenario> scenarios;
};

/// Parses a scenarios file; every error throws InputError naming file:line and the key.
CheckSuite parse_check_suite(const std::string& content, const std::string& file_name);
CheckSuite load_check_suite(const std::string& path);

/// Stored values: scenario -> (inputs key, metric -> value).
struct BaselineEntry {
  std::string inputs_key;  // 16 hex digits: hash of the resolved site and the windowed trace
  std::map<std::string, double> metrics;
};
using Baseline = std::map<std::string, BaselineEntry>;

/// Parses a baseline file (InputError with file:line on bad content).
Baseline parse_baseline(const std::string& content, const std::string& file_name);
/// The baseline file's text: YAML, sorted by scenario and metric, values exact (%.17g).
std::string baseline_to_yaml(const Baseline& baseline);

/// True when `value` holds against `baseline`; `allowed` gets the largest move allowed.
bool metric_holds(double value, double baseline, const Tolerance& tolerance, CheckGoal goal, double& allowed);

enum class CheckStatus { kPass, kRegression, kNoBaseline, kSkipped };

struct MetricOutcome {
  CheckMetric spec;
  double value = 0;
  double baseline = 0;  // meaningful unless kNoBaseline / kSkipped
  double allowed = 0;   // largest move allowed (metric unit)
  CheckStatus status = CheckStatus::kPass;
};

struct ScenarioOutcome {
  std::string name;
  bool skipped = false;
  std::string skip_reason;
  std::string inputs_key;
  bool inputs_changed = false;  // the baseline was taken on other inputs (site, settings or trace)
  double seconds = 0;           // wall time of the replay (s)
  std::uint64_t jobs = 0;       // jobs in the window
  std::vector<MetricOutcome> metrics;
};

/// Replays one scenario (or skips it when optional and an input is absent) and computes its metrics;
/// compares them with `baseline` when it has the scenario.
ScenarioOutcome run_check_scenario(const CheckScenario& scenario, const Baseline& baseline);

/// JUnit XML: one testsuite per scenario, one testcase per metric (deterministic: no timings).
std::string check_junit_xml(const std::vector<ScenarioOutcome>& outcomes);
/// A Markdown summary (headline + one table row per scenario x metric) for a pull-request comment.
std::string check_markdown(const std::vector<ScenarioOutcome>& outcomes);

}  // namespace slurmtwin::experiments
