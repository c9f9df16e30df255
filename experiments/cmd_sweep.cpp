// slurmtwin sweep: run a what-if sweep into an SQLite database, show its best points and Pareto front.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <iostream>
#include <set>
#include <thread>

#include "experiments/cli.hpp"
#include "experiments/sweep.hpp"
#include "experiments/sweep_store.hpp"

namespace slurmtwin::cli {
namespace {

const char* kUsage =
    "slurmtwin sweep run SPEC.yaml --db FILE [-j N]\n"
    "       slurmtwin sweep show --db FILE [--csv]";

int sweep_run(const Args& args) {
  po::options_description o("sweep run options");
  o.add_options()("spec", po::value<std::string>()->required(), "sweep specification (YAML; docs/sweeps.md)")(
      "db", po::value<std::string>()->required(),
      "SQLite result database (created when absent; reruns resume)")(
      "jobs,j", po::value<unsigned>()->default_value(std::max(1u, std::thread::hardware_concurrency())),
      "worker threads")("progress-interval", po::value<double>()->default_value(10),
                        "seconds between progress lines on stderr");
  po::positional_options_description pos;
  pos.add("spec", 1);
  const auto vm = parse("slurmtwin sweep run SPEC.yaml --db FILE [-j N]", o, args, pos);
  const auto spec = load_sweep_spec(vm["spec"].as<std::string>());
  SweepRunOptions ro;
  ro.jobs = vm["jobs"].as<unsigned>();
  if (ro.jobs == 0) throw po::error("--jobs must be at least 1");
  ro.progress_interval_s = vm["progress-interval"].as<double>();
  ro.progress = &std::cerr;
  const auto s = run_sweep_spec(spec, vm["db"].as<std::string>(), ro);
  std::cout << fmt::format("sweep: {} points: {} evaluated now, {} from earlier runs; results in {}\n",
                           s.total, s.evaluated, s.skipped, vm["db"].as<std::string>());
  return kExitOk;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

int sweep_show(const Args& args) {
  po::options_description o("sweep show options");
  o.add_options()("db", po::value<std::string>()->required(), "SQLite result database of `sweep run`")(
      "csv", po::bool_switch(), "print every point as CSV (parameters, objectives, pareto 0/1) instead");
  po::positional_options_description pos;
  pos.add("db", 1);
  const auto vm = parse("slurmtwin sweep show --db FILE [--csv]", o, args, pos);
  SweepStore store(vm["db"].as<std::string>());
  const auto objectives = store.objectives();
  const auto rows = store.rows();

  std::vector<std::map<std::string, double>> params;
  std::set<std::string> names;
  for (const auto& r : rows) {
    auto& p = params.emplace_back();
    for (const auto& kv : YAML::Load(r.params_json)) {
      p[kv.first.as<std::string>()] = kv.second.as<double>();
      names.insert(kv.first.as<std::string>());
    }
  }
  // Pareto front over the rows that have every objective.
  std::vector<std::size_t> complete;
  std::vector<std::vector<double>> values;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    bool ok = true;
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
    for (const auto& [n, v] : params[i]) out += fmt::format("{}{}={:g}", out.empty() ? "" : " ", n, v);
    return out;
  };
  if (vm["csv"].as<bool>()) {
    std::string line = "key";
    for (const auto& n : names) line += "," + csv_field(n);
    for (const auto& ob : objectives) line += "," + csv_field(ob.metric);
    std::cout << line << ",pareto,run_seconds\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      line = rows[i].key;
      for (const auto& n : names) {
        const auto it = params[i].find(n);
        line += it == params[i].end() ? std::string(",") : fmt::format(",{:.17g}", it->second);
      }
      for (double v : rows[i].objectives)
        line += std::isnan(v) ? std::string(",") : fmt::format(",{:.17g}", v);
      std::cout << line << fmt::format(",{},{:.3f}\n", on_front[i] ? 1 : 0, rows[i].run_seconds);
    }
    return kExitOk;
  }
  std::cout << fmt::format("{}: {} points\n", vm["db"].as<std::string>(), rows.size());
  for (std::size_t k = 0; k < objectives.size(); ++k) {
    std::size_t best = rows.size();
    for (auto i : complete)
      if (best == rows.size() || (goals[k] == Goal::kMin ? rows[i].objectives[k] < rows[best].objectives[k]
                                                         : rows[i].objectives[k] > rows[best].objectives[k]))
        best = i;
    if (best == rows.size()) continue;
    std::cout << fmt::format("best {} ({}): {:.6g}  key {}  {}\n", objectives[k].metric,
                             goals[k] == Goal::kMin ? "min" : "max", rows[best].objectives[k], rows[best].key,
                             params_text(best));
  }
  std::string header = "key             ";
  for (const auto& ob : objectives) header += fmt::format(" {:>14}", ob.metric);
  std::cout << fmt::format("Pareto front: {} of {} points\n",
                           std::count(on_front.begin(), on_front.end(), true), complete.size())
            << header << "  parameters\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!on_front[i]) continue;
    std::string line = rows[i].key;
    for (double v : rows[i].objectives) line += fmt::format(" {:>14.6g}", v);
    std::cout << line << "  " << params_text(i) << "\n";
  }
  return kExitOk;
}

}  // namespace

int run_sweep(const Args& args) {
  return guarded([&]() -> int {
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
      std::cout << "usage: " << kUsage << "\n";
      return args.empty() ? kExitUsage : kExitOk;
    }
    const Args rest(args.begin() + 1, args.end());
    if (args[0] == "run") return sweep_run(rest);
    if (args[0] == "show") return sweep_show(rest);
    throw po::error(fmt::format("unknown sweep subcommand '{}' (run, show)", args[0]));
  });
}

}  // namespace slurmtwin::cli
