#include "experiments/check/check.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <set>

#include "experiments/replay/replay.hpp"
#include "experiments/replay/yaml_reader.hpp"
#include "experiments/sweep/sweep.hpp"
#include "traces/file_io.hpp"
#include "traces/read_report.hpp"
#include "traces/text.hpp"

namespace slurmtwin::experiments {
namespace {

Tolerance parse_tolerance(const YamlReader& r, const YAML::Node& n, Tolerance base) {
  r.check_map(n, "tolerance", {"rel", "abs"});
  if (n["rel"]) base.rel = r.non_negative(n["rel"], "rel");
  if (n["abs"]) base.abs = r.non_negative(n["abs"], "abs");
  return base;
}

CheckScenario parse_scenario(const YamlReader& r, const YAML::Node& n, const Tolerance& suite_tolerance) {
  r.check_map(n, "scenario",
              {"name", "site", "trace", "window", "settings", "tolerance", "metrics", "optional"});
  CheckScenario s;
  s.line = YamlReader::line_of(n);
  s.inputs.file = r.file();
  if (!n["name"]) r.fail(n, "name", "a scenario needs a name");
  s.name = r.str(n["name"], "name");
  if (s.name.empty() || s.name.find_first_of(" \t\n\"'<>&|") != std::string::npos)
    r.fail(n["name"], "name", "expected a non-empty name without spaces, quotes, <, >, & or |");
  if (n["site"]) parse_site_section(r, n["site"], s.inputs);
  // The site and trace sections read as a sweep spec's (docs/sweeps.md), without the trace window.
  if (n["trace"]) parse_trace_section(r, n["trace"], s.inputs, /*window_allowed=*/false);
  if (const auto w = n["window"]; w) {
    r.check_map(w, "window", {"from", "length"});
    if (w["from"]) s.window.from = r.duration(w["from"], "from");
    if (w["length"]) {
      s.window.length = r.duration(w["length"], "length");
      if (s.window.length == 0) r.fail(w["length"], "length", "a window needs a positive length");
    }
  }
  if (const auto settings = n["settings"]; settings) {
    if (!settings.IsMap()) r.fail(settings, "settings", "expected a map of setting: value");
    for (const auto& kv : settings) {
      const auto name = r.key(kv.first, "settings");
      bool integer = true;
      if (!setting_is_known(name, integer))
        r.fail(kv.first, name, "unknown setting (see docs/sweeps.md for the settings that may be set)");
      const double v = r.non_negative(kv.second, name);
      if (integer && v != std::floor(v)) r.fail(kv.second, name, fmt::format("{} is not an integer", v));
      s.settings[name] = v;
    }
  }
  Tolerance tolerance = suite_tolerance;
  if (n["tolerance"]) tolerance = parse_tolerance(r, n["tolerance"], suite_tolerance);
  if (n["optional"]) s.optional = r.boolean(n["optional"], "optional");
  const auto metrics = n["metrics"];
  if (!metrics) r.fail(n, "metrics", "a scenario needs metrics to hold");
  if (!metrics.IsMap() || metrics.size() == 0)
    r.fail(metrics, "metrics", "expected a non-empty map of metric: {rel, abs, goal}");
  for (const auto& kv : metrics) {
    CheckMetric m;
    m.metric = r.key(kv.first, "metrics");
    m.line = YamlReader::line_of(kv.first);
    if (!metric_is_known(m.metric))
      r.fail(kv.first, m.metric, "unknown metric (see docs/sweeps.md, Metrics)");
    m.tolerance = tolerance;
    if (!kv.second.IsNull()) {
      r.check_map(kv.second, m.metric, {"rel", "abs", "goal"});
      if (kv.second["rel"]) m.tolerance.rel = r.non_negative(kv.second["rel"], "rel");
      if (kv.second["abs"]) m.tolerance.abs = r.non_negative(kv.second["abs"], "abs");
      if (const auto g = kv.second["goal"]; g) {
        const auto goal = r.str(g, "goal");
        if (goal == "min")
          m.goal = CheckGoal::kMin;
        else if (goal == "max")
          m.goal = CheckGoal::kMax;
        else if (goal != "any")
          r.fail(g, "goal", fmt::format("goal '{}': expected min, max or any", goal));
      }
    }
    for (const auto& other : s.metrics)
      if (other.metric == m.metric) r.fail(kv.first, m.metric, "metric given twice");
    s.metrics.push_back(std::move(m));
  }
  return s;
}

/// Every input file a scenario reads.
std::vector<std::string> input_files(const SweepSpec& in) {
  std::vector<std::string> files = in.trace_paths;
  for (const auto& p : in.site_files.paths()) files.push_back(p);
  for (const auto* p : {&in.site_yaml, &in.users_from})
    if (!p->empty()) files.push_back(*p);
  return files;
}

Trace window_of(Trace trace, const TraceWindow& w) {
  Seconds first = kUnlimited;
  for (const auto& j : trace.jobs)
    if (j.submit != kUnsetTime) first = std::min(first, j.submit);
  if (first == kUnlimited || (w.from == 0 && w.length == 0)) return trace;
  const Seconds lo = first + w.from;
  const Seconds hi = w.length > 0 ? lo + w.length : kUnlimited;
  std::erase_if(trace.jobs, [&](const JobRecord& j) {
    return j.submit == kUnsetTime || j.submit < lo || j.submit >= hi;
  });
  return trace;
}

std::string goal_text(CheckGoal g) {
  return g == CheckGoal::kMin ? "lower is better" : g == CheckGoal::kMax ? "higher is better" : "either way";
}

std::string tolerance_text(const Tolerance& t) {
  if (t.rel > 0 && t.abs > 0) return fmt::format("±max({:g}%, {:g})", 100 * t.rel, t.abs);
  if (t.rel > 0) return fmt::format("±{:g}%", 100 * t.rel);
  return fmt::format("±{:g}", t.abs);
}

std::string change_text(double value, double baseline) {
  const double d = value - baseline;
  if (baseline != 0) return fmt::format("{:+.4g} ({:+.2f}%)", d, 100 * d / std::abs(baseline));
  return fmt::format("{:+.4g}", d);
}

}  // namespace

CheckSuite parse_check_suite(const std::string& content, const std::string& file_name) {
  YamlReader r(file_name);
  YAML::Node root;
  try {
    root = YAML::Load(content);
  } catch (const YAML::Exception& e) {
    throw InputError(file_name, static_cast<std::uint64_t>(std::max(e.mark.line + 1, 0)), "", e.msg);
  }
  r.check_map(root, "scenarios file", {"baseline", "tolerance", "scenarios"});
  CheckSuite suite;
  suite.file = file_name;
  const auto stem = std::filesystem::path(file_name).stem().string();
  suite.baseline_path = (std::filesystem::path(file_name).parent_path() / (stem + ".baseline.yaml")).string();
  if (root["baseline"]) suite.baseline_path = r.path(root["baseline"], "baseline");
  Tolerance tolerance;  // default: exact, both ways (the simulator is deterministic)
  if (root["tolerance"]) tolerance = parse_tolerance(r, root["tolerance"], tolerance);
  const auto scenarios = root["scenarios"];
  if (!scenarios) r.fail(root, "scenarios", "expected a list of scenarios");
  if (!scenarios.IsSequence() || scenarios.size() == 0)
    r.fail(scenarios, "scenarios", "expected a non-empty list");
  for (const auto& n : scenarios) {
    auto s = parse_scenario(r, n, tolerance);
    for (const auto& other : suite.scenarios)
      if (other.name == s.name) r.fail(n["name"], "name", fmt::format("scenario '{}' given twice", s.name));
    suite.scenarios.push_back(std::move(s));
  }
  return suite;
}

CheckSuite load_check_suite(const std::string& path) {
  return parse_check_suite(read_input_file(path), path);
}

Baseline parse_baseline(const std::string& content, const std::string& file_name) {
  YamlReader r(file_name);
  YAML::Node root;
  try {
    root = YAML::Load(content);
  } catch (const YAML::Exception& e) {
    throw InputError(file_name, static_cast<std::uint64_t>(std::max(e.mark.line + 1, 0)), "", e.msg);
  }
  Baseline b;
  if (root.IsNull()) return b;
  r.check_map(root, "baseline", {"format", "scenarios"});
  if (!root["format"] || r.str(root["format"], "format") != "slurmtwin-check-baseline/1")
    r.fail(root, "format", "expected format: slurmtwin-check-baseline/1");
  const auto scenarios = root["scenarios"];
  if (!scenarios || scenarios.IsNull()) return b;
  if (!scenarios.IsMap()) r.fail(scenarios, "scenarios", "expected a map of scenario name -> entry");
  for (const auto& kv : scenarios) {
    const auto name = r.key(kv.first, "scenarios");
    r.check_map(kv.second, name, {"inputs", "metrics"});
    BaselineEntry e;
    if (kv.second["inputs"]) e.inputs_key = r.str(kv.second["inputs"], "inputs");
    if (const auto m = kv.second["metrics"]; m) {
      if (!m.IsMap()) r.fail(m, "metrics", "expected a map of metric -> value");
      for (const auto& mv : m) {
        const auto metric = r.key(mv.first, "metrics");
        e.metrics[metric] = r.number(mv.second, metric);
      }
    }
    b[name] = std::move(e);
  }
  return b;
}

std::string baseline_to_yaml(const Baseline& baseline) {
  std::string out =
      "# slurmtwin check baseline: written by `slurmtwin check --update-baseline`; edit with care.\n"
      "# inputs: hash of the resolved site (with settings) and the windowed trace the values came from.\n"
      "format: slurmtwin-check-baseline/1\n";
  out += baseline.empty() ? "scenarios: {}\n" : "scenarios:\n";
  for (const auto& [name, e] : baseline) {
    out += fmt::format("  \"{}\":\n    inputs: \"{}\"\n    metrics:\n", name, e.inputs_key);
    for (const auto& [metric, v] : e.metrics) out += fmt::format("      \"{}\": {:.17g}\n", metric, v);
  }
  return out;
}

bool metric_holds(double value, double baseline, const Tolerance& tolerance, CheckGoal goal,
                  double& allowed) {
  allowed = std::max(tolerance.abs, tolerance.rel * std::abs(baseline));
  const double d = value - baseline;
  if (std::isnan(value) != std::isnan(baseline)) return false;
  if (std::isnan(value)) return true;
  switch (goal) {
    case CheckGoal::kMin:
      return d <= allowed;
    case CheckGoal::kMax:
      return -d <= allowed;
    case CheckGoal::kAny:
      return std::abs(d) <= allowed;
  }
  return false;
}

ScenarioOutcome run_check_scenario(const CheckScenario& scenario, const Baseline& baseline) {
  ScenarioOutcome out;
  out.name = scenario.name;
  for (const auto& f : input_files(scenario.inputs)) {
    if (std::filesystem::exists(f)) continue;
    if (!scenario.optional)
      throw InputError(
          scenario.inputs.file, scenario.line, scenario.name,
          fmt::format("input file '{}' does not exist (mark the scenario optional: true to skip it "
                      "when absent)",
                      f));
    out.skipped = true;
    out.skip_reason = fmt::format("input absent: {}", f);
    for (const auto& m : scenario.metrics) out.metrics.push_back({m, 0, 0, 0, CheckStatus::kSkipped});
    return out;
  }
  const auto t0 = std::chrono::steady_clock::now();
  Site site = load_sweep_site(scenario.inputs);
  for (const auto& m : scenario.metrics) check_metric_group(m.metric, site, scenario.inputs.file, m.line);
  try {
    apply_point(site, scenario.settings);
  } catch (const std::invalid_argument& e) {
    throw InputError(scenario.inputs.file, scenario.line, "settings", e.what());
  }
  const Trace trace = window_of(load_sweep_trace(scenario.inputs), scenario.window);
  if (trace.jobs.empty())
    throw InputError(scenario.inputs.file, scenario.line, "window", "no job is submitted inside the window");
  out.jobs = trace.jobs.size();
  out.inputs_key = point_key(site, trace_fingerprint(trace));
  const auto result = run_replay(std::move(site), trace, ReplayOptions{});
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const auto base = baseline.find(scenario.name);
  if (base != baseline.end()) out.inputs_changed = base->second.inputs_key != out.inputs_key;
  for (const auto& m : scenario.metrics) {
    MetricOutcome o{m, metric_value(result.metrics, m.metric), 0, 0, CheckStatus::kNoBaseline};
    if (base != baseline.end()) {
      if (const auto it = base->second.metrics.find(m.metric); it != base->second.metrics.end()) {
        o.baseline = it->second;
        o.status = metric_holds(o.value, o.baseline, m.tolerance, m.goal, o.allowed)
                       ? CheckStatus::kPass
                       : CheckStatus::kRegression;
      }
    }
    out.metrics.push_back(std::move(o));
  }
  return out;
}

std::string check_junit_xml(const std::vector<ScenarioOutcome>& outcomes) {
  std::size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  std::string body;
  for (const auto& s : outcomes) {
    std::size_t f = 0, e = 0, k = 0;
    std::string cases;
    for (const auto& m : s.metrics) {
      cases += fmt::format("    <testcase classname=\"slurmtwin.check.{}\" name=\"{}\"",
                           text::xml_escape(s.name), text::xml_escape(m.spec.metric));
      switch (m.status) {
        case CheckStatus::kPass:
          cases += "/>\n";
          break;
        case CheckStatus::kSkipped:
          ++k;
          cases += fmt::format(">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                               text::xml_escape(s.skip_reason));
          break;
        case CheckStatus::kNoBaseline:
          ++e;
          cases += fmt::format(
              ">\n      <error message=\"no baseline value (run slurmtwin check --update-baseline)\">value "
              "{:.17g}</error>\n    </testcase>\n",
              m.value);
          break;
        case CheckStatus::kRegression:
          ++f;
          cases += fmt::format(
              ">\n      <failure message=\"{} = {:.6g}, baseline {:.6g}: change {} exceeds {} ({})\">value "
              "{:.17g}\nbaseline {:.17g}\nallowed move {:.17g} ({})</failure>\n    </testcase>\n",
              text::xml_escape(m.spec.metric), m.value, m.baseline,
              text::xml_escape(change_text(m.value, m.baseline)),
              text::xml_escape(tolerance_text(m.spec.tolerance)), goal_text(m.spec.goal), m.value, m.baseline,
              m.allowed, goal_text(m.spec.goal));
          break;
      }
    }
    body +=
        fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">\n{}",
                    text::xml_escape(s.name), s.metrics.size(), f, e, k, cases);
    body += "  </testsuite>\n";
    tests += s.metrics.size();
    failures += f;
    errors += e;
    skipped += k;
  }
  return fmt::format(
             "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"slurmtwin check\" tests=\"{}\" "
             "failures=\"{}\" errors=\"{}\" skipped=\"{}\">\n",
             tests, failures, errors, skipped) +
         body + "</testsuites>\n";
}

std::string check_markdown(const std::vector<ScenarioOutcome>& outcomes) {
  std::size_t pass = 0, fail = 0, missing = 0, skipped = 0;
  std::string rows;
  std::string notes;
  for (const auto& s : outcomes) {
    if (s.skipped) notes += fmt::format("- `{}` skipped: {}\n", s.name, s.skip_reason);
    if (s.inputs_changed)
      notes += fmt::format("- `{}`: the inputs (site, settings or trace window) differ from the baseline's\n",
                           s.name);
    for (const auto& m : s.metrics) {
      std::string status, value = "", base = "", change = "";
      switch (m.status) {
        case CheckStatus::kPass:
          status = "✅ pass";
          ++pass;
          break;
        case CheckStatus::kRegression:
          status = "❌ **regression**";
          ++fail;
          break;
        case CheckStatus::kNoBaseline:
          status = "⚠️ no baseline";
          ++missing;
          break;
        case CheckStatus::kSkipped:
          status = "⏭️ skipped";
          ++skipped;
          break;
      }
      if (m.status != CheckStatus::kSkipped) value = fmt::format("{:.6g}", m.value);
      if (m.status == CheckStatus::kPass || m.status == CheckStatus::kRegression) {
        base = fmt::format("{:.6g}", m.baseline);
        change = change_text(m.value, m.baseline);
      }
      rows += fmt::format("| {} | `{}` | {} | {} | {} | {} ({}) | {} |\n", s.name, m.spec.metric, base, value,
                          change, tolerance_text(m.spec.tolerance), goal_text(m.spec.goal), status);
    }
  }
  std::string head =
      fail > 0      ? fmt::format("### ❌ slurmtwin check: {} regression(s)\n\n", fail)
      : missing > 0 ? fmt::format("### ⚠️ slurmtwin check: {} metric(s) without a baseline\n\n", missing)
                    : std::string("### ✅ slurmtwin check: all metrics hold\n\n");
  head += fmt::format("{} pass, {} regression, {} without baseline, {} skipped ({} scenarios).\n\n", pass,
                      fail, missing, skipped, outcomes.size());
  head +=
      "| scenario | metric | baseline | value | change | tolerance | status |\n"
      "|---|---|---:|---:|---:|---|---|\n";
  return head + rows + (notes.empty() ? "" : "\n" + notes);
}

}  // namespace slurmtwin::experiments
