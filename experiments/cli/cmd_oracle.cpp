// slurmtwin oracle: the simulator against recorded runs of real Slurm (docs/fidelity.md).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>

#include "experiments/cli/cli.hpp"
#include "experiments/fidelity/oracle_compare.hpp"
#include "traces/file_io.hpp"
#include "traces/read_report.hpp"

namespace slurmtwin::cli {
namespace {

void add_acceptance_options(po::options_description& o) {
  const Acceptance a;
  o.add_options()("start-margin", po::value<double>()->default_value(a.start_margin_s),
                  "accepted: sim mean |Δstart| <= real-vs-real + this (s)")(
      "tau-margin", po::value<double>()->default_value(a.tau_margin),
      "accepted: sim Kendall tau >= real-vs-real tau - this")(
      "tolerance", po::value<double>()->default_value(a.factor_tolerance),
      "accepted: every sampled priority factor within this of sprio/sshare");
}

Acceptance acceptance_of(const po::variables_map& vm) {
  Acceptance a;
  a.start_margin_s = vm["start-margin"].as<double>();
  a.tau_margin = vm["tau-margin"].as<double>();
  a.factor_tolerance = vm["tolerance"].as<double>();
  return a;
}

/// Scenario directories (those holding run1/) under `root`, or `root` itself, sorted by name.
std::vector<std::filesystem::path> scenario_dirs(const std::filesystem::path& root) {
  std::vector<std::filesystem::path> out;
  if (std::filesystem::exists(root / "run1" / "meta.txt")) return {root};
  if (!std::filesystem::is_directory(root))
    throw InputError(root.string(), 0, "directory", "no such recordings directory");
  for (const auto& e : std::filesystem::directory_iterator(root))
    if (std::filesystem::exists(e.path() / "run1" / "meta.txt")) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  if (out.empty())
    throw InputError(root.string(), 0, "run1", "no recorded scenario (DIR/NAME/run1/meta.txt)");
  return out;
}

int oracle_report(const Args& args) {
  po::options_description o("oracle report options");
  o.add_options()("recorded", po::value<std::string>()->default_value("tests/oracle/recorded"),
                  "recordings: DIR/SCENARIO/runK as written by tests/oracle/oracle.sh, or one SCENARIO dir")(
      "notes", po::value<std::string>()->default_value(""),
      "markdown appended to the report (what differs and why)")(
      "out,o", po::value<std::string>()->default_value(""), "write the report here (default: stdout)")(
      "check", po::bool_switch(), "exit 1 when a scenario is not accepted");
  add_acceptance_options(o);
  po::positional_options_description pos;
  pos.add("recorded", 1);
  const auto vm = parse("slurmtwin oracle report [DIR] [--notes FILE] [-o FILE] [--check]", o, args, pos);
  const auto acceptance = acceptance_of(vm);
  std::vector<ScenarioResult> results;
  for (const auto& dir : scenario_dirs(vm["recorded"].as<std::string>())) {
    results.push_back(evaluate_scenario(dir, acceptance));
    const auto& r = results.back();
    std::string sim;
    for (const auto& d : r.sim_vs_real) sim += fmt::format(" {:.1f}s/{:.3f}", d.mean_abs_start, d.tau);
    std::cerr << fmt::format("{:<26} real-vs-real {:.1f}s/{:.3f}  sim-vs-real{}  factors {}  {}\n", r.name,
                             r.real_vs_real.mean_abs_start, r.real_vs_real.tau, sim,
                             r.factors_ok ? "ok" : "DIFFER", r.accepted() ? "pass" : "FAIL");
    if (r.accepted()) continue;
    // What differed, where a log is all one gets (CI): the largest start differences and factor rows.
    for (std::size_t k = 0; k < r.sim_vs_real.size(); ++k) {
      std::string worst;
      for (const auto& w : r.sim_vs_real[k].worst) worst += (worst.empty() ? "" : ", ") + w;
      std::cerr << fmt::format("  sim vs run {}: largest |Δstart| {}\n", k + 1,
                               worst.empty() ? "none" : worst);
      for (const auto& e : r.factors[k].examples) std::cerr << "    " << e << "\n";
    }
  }
  const auto& notes_path = vm["notes"].as<std::string>();
  const auto report =
      fidelity_report(results, acceptance, notes_path.empty() ? "" : read_input_file(notes_path));
  if (const auto& out = vm["out"].as<std::string>(); !out.empty()) {
    write_file_atomic(out, report);
  } else {
    std::cout << report;
  }
  const bool all = std::all_of(results.begin(), results.end(), [](const auto& r) { return r.accepted(); });
  return vm["check"].as<bool>() && !all ? kExitFailure : kExitOk;
}

const char* pass_name(SchedulerPass p) {
  return p == SchedulerPass::kMain ? "main" : p == SchedulerPass::kBackfill ? "bf" : "-";
}

/// The simulator's associations at every sample where they changed: LevelFS (and users' FairShare), and
/// the smallest relative LevelFS gap between two users of one account (what `near_tie` judges in
/// the real sample; a gap under ~2-3% makes the sample's Fair Tree order a matter of sub-second timing).
void print_sim_shares(const RecordedRun& run, const SimulatedRun& sim) {
  std::string previous;
  for (const auto& s : sim.samples) {
    std::string line;
    double closest = std::numeric_limits<double>::infinity();
    std::string pair;
    for (std::size_t i = 0; i < s.shares.size(); ++i) {
      const auto& a = s.shares[i];
      if (a.user.empty()) {  // an account: its LevelFS among its siblings (no FairShare of its own)
        if (a.account != "root") line += fmt::format(" {} {:.4f}", a.account, a.level_fs);  // root: none
        continue;
      }
      line += fmt::format(" {}/{} {:.4f} {:.4f}", a.account, a.user, a.level_fs, a.fairshare);
      for (std::size_t k = i + 1; k < s.shares.size(); ++k) {
        const auto& b = s.shares[k];
        if (b.user.empty() || b.account != a.account || std::isinf(a.level_fs) || std::isinf(b.level_fs))
          continue;
        const double larger = std::max(a.level_fs, b.level_fs);
        const double gap = larger > 0 ? std::abs(a.level_fs - b.level_fs) / larger : 0.0;
        if (gap < closest) {
          closest = gap;
          pair = fmt::format("{}/{}~{}", a.account, a.user, b.user);
        }
      }
    }
    if (line == previous) continue;
    previous = line;
    std::cout << fmt::format("sim t+{}:{}  closest {} {:.2f}%\n", s.at - run.trace_start, line,
                             pair.empty() ? "-" : pair, 100 * closest);
  }
}

/// One recorded run against its replay, job by job (times after the trace start, s).
int oracle_compare(const Args& args) {
  po::options_description o("oracle compare options");
  o.add_options()("run", po::value<std::string>(), "a run directory written by tests/oracle/oracle.sh run")(
      "shares", po::bool_switch(),
      "also print the simulator's associations (LevelFS; users' FairShare) whenever they change, with the "
      "closest pair of sibling users (to design scenarios whose Fair Tree order has no near-tie)");
  po::positional_options_description pos;
  pos.add("run", 1);
  const auto vm = parse("slurmtwin oracle compare RUN_DIR [--shares]", o, args, pos);
  if (!vm.count("run")) throw po::error("give a run directory");
  const auto run = read_recorded_run(vm["run"].as<std::string>());
  const auto sim = simulate_recorded_run(run);
  std::cout << fmt::format("controller start {:.3f} (trace start {}), decay phase {} s, start offset {} s\n",
                           run.controller_start, run.trace_start, sim.options.decay_phase,
                           sim.options.start_offset);
  std::cout << fmt::format("{:<4} | {:<52} | {}\n", "job", "real: submit start end state pass nodes",
                           "sim: submit start end state pass nodes");
  for (const auto& j : run.jobs) {
    const auto show = [](const Schedule& s, const std::string& name) {
      std::string out;
      const auto it = s.find(name);
      if (it == s.end()) return std::string("(none)");
      for (const auto& r : it->second)
        out += fmt::format("{}{} {} {} {} {}{}", out.empty() ? "" : " / ", r.submit,
                           r.start == kUnsetTime ? -1 : r.start, r.end == kUnsetTime ? -1 : r.end, r.state,
                           pass_name(r.pass), r.nodes.empty() ? "" : " " + r.nodes);
      return out;
    };
    std::cout << fmt::format("{} | {:<52} | {}\n", j.name, show(run.schedule, j.name),
                             show(sim.schedule, j.name));
  }
  const auto d = compare_schedules(run.schedule, sim.schedule);
  const auto f = compare_factors(run, sim);
  std::cout << fmt::format(
      "mean |Δstart| {:.1f} s, tau {:.3f}, pass {}/{}, nodes {}/{}, states {}/{}; sprio bad {}/{}, sshare "
      "bad {}/{}, limit reasons bad {}/{}\n",
      d.mean_abs_start, d.tau, d.pass_equal, d.pass_known, d.nodes_equal, d.nodes_known, d.state_equal,
      d.state_jobs, f.job_rows_bad, f.job_rows, f.share_rows_bad, f.share_rows, f.reason_rows_bad,
      f.reason_rows);
  for (const auto& e : f.examples) std::cout << "  " << e << "\n";
  if (vm["shares"].as<bool>()) print_sim_shares(run, sim);
  return kExitOk;
}

}  // namespace

int command_oracle(const Args& args) {
  return run_subcommand(
      "oracle",
      "usage: slurmtwin oracle report [DIR] ...   (the simulator against recorded real Slurm runs;\n"
      "       recordings come from tests/oracle/oracle.sh; see docs/fidelity.md)\n",
      args, {{"report", oracle_report}, {"compare", oracle_compare}});
}

}  // namespace slurmtwin::cli
