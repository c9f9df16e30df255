// slurmtwin sweep: run a what-if sweep into an SQLite database, show its best points and Pareto front.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <set>

#include "experiments/cli/cli.hpp"
#include "experiments/cli/engine_options.hpp"
#include "experiments/cli/torch_hooks.hpp"
#include "experiments/sweep/feasibility.hpp"
#include "experiments/sweep/sweep.hpp"
#include "experiments/sweep/sweep_mpi.hpp"
#include "experiments/sweep/sweep_sbatch.hpp"
#include "experiments/sweep/sweep_store.hpp"
#include "traces/file_io.hpp"

namespace slurmtwin::cli {
namespace {

const char* kUsage =
    "slurmtwin sweep run SPEC.yaml [--db FILE] [-j N] [--shard I/N | --mpi]\n"
    "       slurmtwin sweep run SPEC.yaml --engine surrogate|hybrid --model CKPT [--top-k K] [--max-exact "
    "N]\n"
    "       slurmtwin sweep SPEC.yaml ...            (the same as sweep run)\n"
    "       slurmtwin sweep run SPEC.yaml --emit-sbatch DIR [--shards N] [--cpus-per-task C]\n"
    "       slurmtwin sweep merge --db FILE SHARD.db...\n"
    "       slurmtwin sweep show --db FILE [--csv]";

/// "I/N" with 0 <= I < N.
std::pair<std::uint32_t, std::uint32_t> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  try {
    if (slash != std::string::npos) {
      std::size_t a = 0, b = 0;
      const auto i = std::stoul(text.substr(0, slash), &a);
      const auto n = std::stoul(text.substr(slash + 1), &b);
      if (a == slash && b == text.size() - slash - 1 && n >= 1 && i < n && n <= 1'000'000)
        return {static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(n)};
    }
  } catch (const std::logic_error&) {
  }
  throw po::error(fmt::format("--shard '{}': expected I/N with 0 <= I < N (e.g. 3/16)", text));
}

int sweep_run(const Args& args) {
  po::options_description o("sweep run options");
  o.add_options()("spec", po::value<std::string>()->required(), "sweep specification (YAML; docs/sweeps.md)")(
      "db", po::value<std::string>(),
      "SQLite result database (created when absent; reruns resume); default: SPEC with .db")(
      "jobs,j", jobs_value(), "worker threads (with --mpi: per rank)")(
      "progress-interval", po::value<double>()->default_value(10),
      "seconds between progress lines when stderr is not a terminal")(
      "shard", po::value<std::string>(),
      "run only shard I/N of the design points (point k is in shard k % N)")(
      "mpi", po::bool_switch(),
      "split the points over MPI ranks (mpirun -np N ...); rank 0 writes the database")(
      "emit-sbatch", po::value<std::string>(),
      "write a Slurm array job (DIR/sweep.sbatch, one task per shard) and DIR/merge.sbatch, run nothing")(
      "shards", po::value<std::uint32_t>()->default_value(8), "--emit-sbatch: array tasks")(
      "cpus-per-task", po::value<unsigned>()->default_value(4),
      "--emit-sbatch: CPUs (worker threads) per task")("time", po::value<std::string>()->default_value(""),
                                                       "--emit-sbatch: #SBATCH --time (empty = none)")(
      "partition", po::value<std::string>()->default_value(""), "--emit-sbatch: #SBATCH --partition")(
      "engine", po::value<std::string>()->default_value("exact"),
      "exact (the simulator), surrogate (a trained model, --model), or hybrid (the simulator re-evaluates "
      "the best and the uncertain points, as scored by a response surface fit on its exact values so far "
      "and, with --model, the surrogate)")(
      "top-k", po::value<std::size_t>()->default_value(10),
      "hybrid: re-evaluate each objective's K best predicted points (per round)")(
      "verify-width", po::value<double>()->default_value(1.0),
      "hybrid: and every point whose 80% interval of an objective is wider than this fraction of its median")(
      "check-invariants", po::bool_switch(),
      "exact replays check resources and job states after every event")(
      "max-exact", po::value<double>()->default_value(0.1),
      "hybrid: at most this many exact evaluations (a fraction of the points when < 1, else a count)")(
      "calibrate", po::value<double>()->default_value(0.3, "0.3"),
      "hybrid: share of the exact budget first spent on points spread over the design, whose exact values "
      "correct the surrogate's before the top points are chosen (0 = off; without --model at least two "
      "points)")(
      "model-first", po::value<double>()->default_value(0, "0"),
      "hybrid with --model: share of the exact budget spent before all else on the model's own best "
      "predictions (then the calibration takes what is left; 0 = off)")(
      "round", po::value<std::size_t>()->default_value(8),
      "hybrid: after the calibration, choose this many points at a time, refitting the response "
      "surface on every exact value between rounds");
  add_surrogate_options(o, false);
  po::positional_options_description pos;
  pos.add("spec", 1);
  const auto vm =
      parse("slurmtwin sweep run SPEC.yaml [--db FILE] [-j N] [--shard I/N | --mpi]", o, args, pos);
  const auto spec_path = vm["spec"].as<std::string>();
  const auto spec = load_sweep_spec(spec_path);
  if (vm.count("emit-sbatch")) {
    const auto shards = vm["shards"].as<std::uint32_t>();
    if (shards == 0) throw po::error("--shards must be at least 1");
    if (vm["cpus-per-task"].as<unsigned>() == 0) throw po::error("--cpus-per-task must be at least 1");
    SbatchOptions so;
    so.shards = shards;
    so.cpus_per_task = vm["cpus-per-task"].as<unsigned>();
    so.time_limit = vm["time"].as<std::string>();
    so.partition = vm["partition"].as<std::string>();
    std::cout << emit_sweep_sbatch(spec_path, vm["emit-sbatch"].as<std::string>(), so)
              << fmt::format("(a design of {} points)\n", design_size(spec));
    return kExitOk;
  }
  const auto db = vm.count("db") ? vm["db"].as<std::string>()
                                 : std::filesystem::path(spec_path).replace_extension(".db").string();
  SweepRunOptions ro;
  ro.jobs = jobs_option(vm);
  ro.progress_interval_s = vm["progress-interval"].as<double>();
  ro.progress = &std::cerr;
  ro.progress_style = progress_style_for(/*fd=*/2);
  if (vm.count("shard")) std::tie(ro.shard, ro.shards) = parse_shard(vm["shard"].as<std::string>());
  try {
    ro.engine = parse_sweep_engine(vm["engine"].as<std::string>());
  } catch (const std::invalid_argument& e) {
    throw po::error(std::string("--") + e.what());
  }
  // The hybrid engine's options are checked whatever the engine (a typo is never silently unused).
  if (vm["round"].as<std::size_t>() == 0) throw po::error("--round must be at least 1");
  if (const auto c = vm["calibrate"].as<double>(); !(c >= 0 && c <= 1))
    throw po::error("--calibrate must be in [0, 1]");
  if (!(vm["max-exact"].as<double>() >= 0)) throw po::error("--max-exact must be >= 0");
  if (const auto f = vm["model-first"].as<double>(); !(f >= 0 && f <= 1))
    throw po::error("--model-first must be in [0, 1]");
  if (vm["model-first"].as<double>() > 0 && vm["model"].as<std::string>().empty())
    throw po::error("--model-first needs --model CHECKPOINT (the model's predictions to verify first)");
  if (ro.engine == SweepEngine::kSurrogate && vm["model"].as<std::string>().empty())
    throw po::error("--engine surrogate needs --model CHECKPOINT");
  ro.check_invariants = vm["check-invariants"].as<bool>();
  if (ro.engine != SweepEngine::kExact) {
    if (vm["mpi"].as<bool>()) throw po::error("--mpi runs the exact engine only");
    const auto& engines = torch_hooks().sweep_engines;
    return engines ? engines(vm, spec, db, ro) : run_torch_binary();
  }
  if (vm["mpi"].as<bool>()) {
    if (vm.count("shard")) throw po::error("--mpi and --shard do not go together");
    const auto s = run_sweep_mpi(spec, db, ro);
    if (!s.rank0) return kExitOk;
    std::cout << fmt::format(
        "sweep: {} points: {} evaluated now on {} MPI ranks ({}), {} from earlier runs; {} feasible; results "
        "in "
        "{}\n",
        s.run.total, s.run.evaluated, s.by_rank.size(), fmt::join(s.by_rank, " + "), s.run.skipped,
        s.run.feasible, db);
    return kExitOk;
  }
  const auto s = run_sweep_spec(spec, db, ro);
  std::cout << fmt::format(
      "sweep: {} points{}: {} evaluated now, {} from earlier runs; {} feasible; results in {}\n", s.total,
      shard_note(ro), s.evaluated, s.skipped, s.feasible, db);
  return kExitOk;
}

int sweep_merge(const Args& args) {
  po::options_description o("sweep merge options");
  o.add_options()("db", po::value<std::string>()->required(), "database to merge into (created when absent)")(
      "inputs", po::value<std::vector<std::string>>()->multitoken(), "shard databases to merge");
  po::positional_options_description pos;
  pos.add("inputs", -1);
  const auto vm = parse("slurmtwin sweep merge --db FILE SHARD.db...", o, args, pos);
  const auto db = vm["db"].as<std::string>();
  const auto inputs =
      vm.count("inputs") ? vm["inputs"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (inputs.empty()) throw po::error("sweep merge: no input database given");
  SweepStore store(db);
  std::size_t added = 0;
  for (const auto& in : inputs) {
    if (!std::filesystem::exists(in)) throw std::runtime_error(fmt::format("{}: no such database", in));
    if (std::filesystem::equivalent(in, db)) continue;
    const auto n = store.merge_from(in);
    std::cout << fmt::format("{}: {} new points\n", in, n);
    added += n;
  }
  std::cout << fmt::format("sweep merge: {} points added; {} now holds {}\n", added, db, store.keys().size());
  return kExitOk;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

/// A value of metric `metric` with its unit, seconds also in the unit a person reads them in.
std::string with_unit(const std::string& metric, double value) {
  const auto unit = metric_unit(metric);
  if (unit.empty()) return fmt::format("{:.6g}", value);
  const auto readable = readable_time_unit(value);
  return fmt::format("{:.6g} {}{}", value, unit,
                     unit != "s" || readable.name == "s"
                         ? std::string()
                         : fmt::format(" ({:.3g} {})", value / readable.seconds, readable.name));
}

/// "You are here": the site's current settings (recorded by the sweep), their values against each
/// objective's best point, and where they stand against the constraints and the other points.
void show_current(const CurrentPoint& current, const Standing& standing, const std::vector<SweepRow>& rows,
                  const std::vector<SweepObjective>& objectives,
                  const std::vector<SweepConstraint>& constraints, const std::vector<bool>& on_front) {
  std::string settings;
  for (const auto& [n, v] : current.params) settings += fmt::format(" {}={:g}", n, v);
  std::cout << fmt::format("you are here (the site's current settings):{}  key {}{}\n", settings, current.key,
                           standing.row ? "" : ": not evaluated yet");
  if (!standing.row) return;
  const auto i = *standing.row;
  for (std::size_t k = 0; k < objectives.size(); ++k) {
    const double v = rows[i].objectives[k];
    const auto best = standing.best[k];
    std::string line =
        fmt::format("  {} {}: {}", objectives[k].metric, goal_arrow(objectives[k].goal),
                    std::isnan(v) ? std::string("no value") : with_unit(objectives[k].metric, v));
    if (best == i) {
      line += " (the best point)";
    } else if (best < rows.size() && !std::isnan(v)) {
      const double b = rows[best].objectives[k];
      line += fmt::format("; best {}", with_unit(objectives[k].metric, b));
      if (v != 0 && b != v)
        line += fmt::format(", {:.1f}% {}", 100 * std::abs(b - v) / std::abs(v), b < v ? "lower" : "higher");
      if (const auto r = resolved(rows[best], rows[i], k))
        line +=
            *r ? " (resolved: more than two standard errors)" : " (not resolved: within two standard errors)";
    }
    std::cout << line << "\n";
  }
  std::vector<std::string> broken;
  for (auto k : standing.broken) broken.push_back(constraints[k].text);
  std::cout << fmt::format("  {}{}\n",
                           constraints.empty() ? std::string()
                           : broken.empty()    ? std::string("meets every constraint; ")
                                               : fmt::format("breaks {}; ", fmt::join(broken, ", ")),
                           on_front[i]           ? std::string("on the Pareto front")
                           : standing.better > 0 ? better_points_text(standing.better)
                           : broken.empty()      ? std::string("not on the Pareto front")
                                                 : std::string("off the front (infeasible)"));
}

int sweep_show(const Args& args) {
  po::options_description o("sweep show options");
  o.add_options()("db", po::value<std::string>()->required(), "SQLite result database of `sweep run`")(
      "csv", po::bool_switch(),
      "print every point as CSV (parameters, objectives, feasible and pareto 0/1, current: 1 on the site's "
      "own "
      "settings) instead");
  po::positional_options_description pos;
  pos.add("db", 1);
  const auto vm = parse("slurmtwin sweep show --db FILE [--csv]", o, args, pos);
  const SweepStore store(vm["db"].as<std::string>(), StoreAccess::kRead);
  const auto objectives = store.objectives();
  const auto constraints = store.constraints();
  const auto rows = store.rows();
  // A row is feasible when it meets every constraint (a NULL value, from before the constraint, fails).
  const auto assessed = assess_constraints(rows, constraints);
  const auto& feasible = assessed.feasible;

  std::set<std::string> names;  // every parameter any row sets
  for (const auto& r : rows)
    for (const auto& [name, value] : r.params) names.insert(name);
  // With both engines in the store, the best points and the front are the exact simulator's
  // (predictions rank candidates; they do not certify them).
  std::size_t exact_rows = 0, predicted_rows = 0;
  for (const auto& r : rows) {
    exact_rows += r.engine == "exact" ? 1 : 0;
    predicted_rows += r.has_prediction() ? 1 : 0;
  }
  const bool exact_only = exact_rows > 0 && exact_rows < rows.size();
  // Pareto front over the feasible rows that have every objective.
  std::vector<std::size_t> complete;
  std::vector<std::vector<double>> values;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    bool ok = feasible[i] && (!exact_only || rows[i].engine == "exact");
    for (double v : rows[i].objectives) ok = ok && !std::isnan(v);
    if (ok) {
      complete.push_back(i);
      values.push_back(rows[i].objectives);
    }
  }
  std::vector<Goal> goals;
  for (const auto& ob : objectives) goals.push_back(ob.goal);
  std::vector<bool> on_front(rows.size(), false);
  for (auto k : pareto_front(values, goals)) on_front[complete[k]] = true;

  const auto params_text = [&](std::size_t i) {
    std::string out;
    for (const auto& [n, v] : rows[i].params) out += fmt::format("{}{}={:g}", out.empty() ? "" : " ", n, v);
    return out;
  };
  // Replicated points (spec replicates) carry the standard error of each objective's mean.
  const bool replicated =
      std::any_of(rows.begin(), rows.end(), [](const SweepRow& r) { return r.replicates > 1; });
  if (vm["csv"].as<bool>()) {
    std::string line = "key";
    for (const auto& n : names) line += "," + csv_field(n);
    for (const auto& ob : objectives) line += "," + csv_field(ob.metric);
    if (replicated)
      for (const auto& ob : objectives) line += "," + csv_field("se_" + ob.metric);
    // Constraint metrics that are not objectives get a column too (once each).
    std::vector<std::size_t> extra;
    std::set<std::string> listed;
    for (const auto& ob : objectives) listed.insert(ob.metric);
    for (std::size_t k = 0; k < constraints.size(); ++k)
      if (listed.insert(constraints[k].metric).second) {
        extra.push_back(k);
        line += "," + csv_field(constraints[k].metric);
      }
    // The engine column only when the store holds more than the exact simulator's rows; the current
    // column (1 on the site's own settings, "you are here") only when the sweep recorded them.
    const bool engines = exact_rows < rows.size();
    const auto current = store.current();
    std::cout << line << (replicated ? ",replicates" : "") << (engines ? ",engine" : "")
              << ",feasible,pareto,run_seconds" << (current ? ",current" : "") << "\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      line = rows[i].key;
      for (const auto& n : names) {
        const auto it = rows[i].params.find(n);
        line += it == rows[i].params.end() ? std::string(",") : fmt::format(",{:.17g}", it->second);
      }
      const auto field = [](double v) {
        return std::isnan(v) ? std::string(",") : fmt::format(",{:.17g}", v);
      };
      for (double v : rows[i].objectives) line += field(v);
      if (replicated)
        for (std::size_t k = 0; k < objectives.size(); ++k) line += field(rows[i].standard_error(k));
      for (auto k : extra) line += field(rows[i].constraint_values[k]);
      std::cout << line << (replicated ? fmt::format(",{}", rows[i].replicates) : std::string())
                << (engines ? "," + rows[i].engine : std::string())
                << fmt::format(",{},{},{:.3f}", feasible[i] ? 1 : 0, on_front[i] ? 1 : 0, rows[i].run_seconds)
                << (current ? (rows[i].key == current->key ? ",1" : ",0") : "") << "\n";
    }
    return kExitOk;
  }
  std::cout << fmt::format("{}: {} points\n", vm["db"].as<std::string>(), rows.size());
  if (predicted_rows > 0)
    std::cout << fmt::format("engines: {} exact, {} by the surrogate only; {} predicted{}\n", exact_rows,
                             rows.size() - exact_rows, predicted_rows,
                             exact_only ? " (best points and front: exact rows only)" : "");
  if (!constraints.empty()) {
    std::vector<std::string> texts;
    for (const auto& c : constraints) texts.push_back(c.text);
    std::cout << fmt::format("constraints: {}; {} of {} points feasible\n", fmt::join(texts, ", "),
                             assessed.count, rows.size());
    for (std::size_t k = 0; k < constraints.size(); ++k) {
      const auto& r = assessed.constraints[k];
      std::cout << fmt::format("  {}: met by {} of {}; {} observed {}\n", constraints[k].text, r.met,
                               rows.size(), constraints[k].metric,
                               std::isnan(r.lo) ? std::string("nowhere (no values)")
                                                : fmt::format("{:.6g} .. {:.6g}", r.lo, r.hi));
    }
    if (assessed.closest) {
      const auto i = *assessed.closest;
      std::vector<std::string> shown;
      for (std::size_t k = 0; k < constraints.size(); ++k)
        shown.push_back(fmt::format("{} {:.6g}", constraints[k].metric, rows[i].constraint_values[k]));
      std::cout << fmt::format(
          "no point meets every constraint (no best point, no front); closest: key {}  {}  ({})\n",
          rows[i].key, params_text(i), fmt::join(shown, ", "));
    }
  }
  const auto current = store.current();
  const auto standing =
      assess_current(rows, current ? current->key : std::string(), constraints, complete, goals);
  for (std::size_t k = 0; k < objectives.size(); ++k) {
    const auto best = standing.best[k];
    if (best == rows.size()) continue;
    const double se = rows[best].standard_error(k);
    // Seconds also in the unit a person reads them in (1.33 d), the goal as an arrow, not a word that
    // reads as a unit ("(min)").
    const auto unit = metric_unit(objectives[k].metric);
    const auto unit_suffix = unit.empty() ? std::string() : fmt::format(" {}", unit);
    std::cout << fmt::format("best {} {}: {}  key {}  {}\n", objectives[k].metric, goal_arrow(goals[k]),
                             with_unit(objectives[k].metric, rows[best].objectives[k]), rows[best].key,
                             params_text(best));
    if (!std::isnan(se))
      std::cout << fmt::format("  ± {:.3g}{} (standard error, {} replicates)\n", se, unit_suffix,
                               rows[best].replicates);
    if (std::isnan(se)) continue;
    // Points whose mean is within two standard errors of the difference: phase noise cannot tell them
    // from the best (about a 95% two-sided test of equal means).
    std::size_t close = 0;
    for (auto i : complete) {
      const auto r = resolved(rows[i], rows[best], k);
      close += (i != best && r && !*r) ? 1 : 0;
    }
    if (close > 0)
      std::cout << fmt::format("  not resolved: {} other point{} within two standard errors of the best\n",
                               close, close == 1 ? " is" : "s are");
  }
  if (current) show_current(*current, standing, rows, objectives, constraints, on_front);
  // Each column as wide as its header (at least 14), counted in characters: the arrow is one.
  std::string header = "key             ";
  std::vector<std::size_t> widths;
  for (std::size_t k = 0; k < objectives.size(); ++k) {
    const auto unit = metric_unit(objectives[k].metric);
    const auto name =
        unit.empty() ? objectives[k].metric : fmt::format("{} ({})", objectives[k].metric, unit);
    const auto cell = fmt::format("{} {}", name, goal_arrow(goals[k]));
    const auto chars = static_cast<std::size_t>(std::count_if(
        cell.begin(), cell.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
    widths.push_back(std::max<std::size_t>(14, chars));
    header += std::string(widths.back() - chars + 1, ' ') + cell;
  }
  std::cout << fmt::format("Pareto front: {} of {} points\n",
                           std::count(on_front.begin(), on_front.end(), true), complete.size())
            << header << "  parameters\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!on_front[i]) continue;
    std::string line = rows[i].key;
    for (std::size_t k = 0; k < rows[i].objectives.size(); ++k)
      line += fmt::format(" {:>{}.6g}", rows[i].objectives[k], widths[k]);
    std::cout << line << "  " << params_text(i) << "\n";
  }
  return kExitOk;
}

}  // namespace

int command_sweep(const Args& args) {
  if (!args.empty() && (args[0].ends_with(".yaml") || args[0].ends_with(".yml")))
    return guarded([&] { return sweep_run(args); });  // sweep SPEC.yaml
  return run_subcommand("sweep", fmt::format("usage: {}\n", kUsage), args,
                        {{"run", sweep_run}, {"show", sweep_show}, {"merge", sweep_merge}});
}

}  // namespace slurmtwin::cli
