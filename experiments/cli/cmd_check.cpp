// slurmtwin check: replay a site's regression scenarios and compare their metrics with a stored
// baseline (exit 0: all hold, 1: a regression, 2: usage or input error, or a metric without baseline).
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <set>

#include "experiments/check/check.hpp"
#include "experiments/cli/cli.hpp"
#include "traces/file_io.hpp"

namespace slurmtwin::cli {

int command_check(const Args& args) {
  return guarded([&]() -> int {
    po::options_description o("check options");
    o.add_options()("scenarios", po::value<std::string>()->required(),
                    "scenarios file (YAML; docs/check.md)")(
        "baseline", po::value<std::string>()->default_value(""),
        "baseline file (default: the file's `baseline:`, else <scenarios stem>.baseline.yaml beside it)")(
        "update-baseline", po::bool_switch(),
        "write the metrics of every scenario run as the new baseline (skipped scenarios keep theirs); exit "
        "0")("scenario", po::value<std::vector<std::string>>()->multitoken(),
             "run only these scenarios (by name)")("junit", po::value<std::string>()->default_value(""),
                                                   "write a JUnit XML file (one test case per "
                                                   "scenario x metric)")(
        "markdown", po::value<std::string>()->default_value(""),
        "write the Markdown summary table (for a pull-request comment) to this file");
    po::positional_options_description pos;
    pos.add("scenarios", 1);
    const auto vm = parse(
        "slurmtwin check SCENARIOS.yaml [--update-baseline] [--junit FILE] [--markdown FILE] [--baseline "
        "FILE]",
        o, args, pos);

    const auto suite = load_check_suite(vm["scenarios"].as<std::string>());
    std::string baseline_path = vm["baseline"].as<std::string>();
    if (baseline_path.empty()) baseline_path = suite.baseline_path;
    const bool update = vm["update-baseline"].as<bool>();
    Baseline baseline;
    if (std::filesystem::exists(baseline_path))
      baseline = parse_baseline(read_input_file(baseline_path), baseline_path);
    else if (!update)
      throw std::invalid_argument(
          fmt::format("{}: baseline file absent (create it with slurmtwin check {} --update-baseline)",
                      baseline_path, vm["scenarios"].as<std::string>()));

    std::set<std::string> only;
    if (vm.count("scenario"))
      for (const auto& n : vm["scenario"].as<std::vector<std::string>>()) only.insert(n);
    for (const auto& n : only) {
      bool found = false;
      for (const auto& s : suite.scenarios) found = found || s.name == n;
      if (!found) throw po::error(fmt::format("--scenario {}: no such scenario in {}", n, suite.file));
    }

    std::vector<ScenarioOutcome> outcomes;
    for (const auto& s : suite.scenarios) {
      if (!only.empty() && !only.count(s.name)) continue;
      outcomes.push_back(run_check_scenario(s, baseline));
      const auto& r = outcomes.back();
      if (r.skipped)
        std::cerr << fmt::format("check: {}: SKIPPED ({})\n", r.name, r.skip_reason);
      else
        std::cerr << fmt::format("check: {}: {} jobs replayed in {:.1f} s\n", r.name, r.jobs, r.seconds);
    }

    if (update) {
      Baseline next;
      for (const auto& s : suite.scenarios)
        if (const auto it = baseline.find(s.name); it != baseline.end()) next[s.name] = it->second;
      for (const auto& r : outcomes) {
        if (r.skipped) continue;
        BaselineEntry e;
        e.inputs_key = r.inputs_key;
        for (const auto& m : r.metrics) e.metrics[m.spec.metric] = m.value;
        next[r.name] = std::move(e);
      }
      write_file_atomic(baseline_path, baseline_to_yaml(next));
      std::cout << fmt::format("baseline written: {} ({} scenarios)\n", baseline_path, next.size());
      return kExitOk;
    }

    const auto markdown = check_markdown(outcomes);
    if (const auto& f = vm["junit"].as<std::string>(); !f.empty())
      write_file_atomic(f, check_junit_xml(outcomes));
    if (const auto& f = vm["markdown"].as<std::string>(); !f.empty()) write_file_atomic(f, markdown);
    std::cout << markdown;
    bool regression = false, missing = false;
    for (const auto& r : outcomes)
      for (const auto& m : r.metrics) {
        regression = regression || m.status == CheckStatus::kRegression;
        missing = missing || m.status == CheckStatus::kNoBaseline;
      }
    if (missing) {
      std::cerr << fmt::format(
          "slurmtwin: {}: metrics without a baseline value (run with --update-baseline)\n", baseline_path);
      return kExitUsage;
    }
    return regression ? kExitFailure : kExitOk;
  });
}

}  // namespace slurmtwin::cli
