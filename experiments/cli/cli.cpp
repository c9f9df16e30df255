#include "experiments/cli/cli.hpp"

#include <fmt/format.h>

#include <iostream>

#include "experiments/replay/interrupt.hpp"
#include "traces/read_report.hpp"

namespace slurmtwin::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> kCommands = {
      {"replay", "replay a trace on a site model and write per-job results and metrics", run_replay},
      {"trace", "inspect, generate and convert job traces (info, generate, convert)", run_trace},
      {"config", "import a site from slurm.conf + sacctmgr files, show or check a site YAML", run_config},
      {"sweep", "what-if sweeps over scheduler settings into an SQLite database (run, show)", run_sweep},
      {"compare",
       "surrogate vs exact simulator on a sweep's settings: errors, rank agreement, coverage, speed",
       run_compare},
      {"optimize",
       "search the settings for an objective under constraints over the surrogate, verify exactly",
       run_optimize},
      {"check", "regression check: replay scenarios, compare metrics with a baseline (exit 1 on regression)",
       run_check},
      {"report", "one self-contained HTML report of a replay output directory or a sweep database",
       run_report},
      {"surrogate", "the transformer surrogate: dataset from the simulator, train, eval (docs/surrogate.md)",
       run_surrogate},
      {"oracle", "the simulator against recorded runs of real Slurm 22.05 (report)", run_oracle},
      {"bench", "measure load and replay speed and peak memory; append to docs/benchmarks.md", run_bench},
      {"version", "print the version and what libtorch can run on", run_version},
  };
  return kCommands;
}

po::variables_map parse(const std::string& usage, po::options_description options, const Args& args,
                        const po::positional_options_description& positional) {
  options.add_options()("help,h", "show this help");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
  if (vm.count("help")) {
    std::cout << "usage: " << usage << "\n\n" << options << "\n";
    throw HelpShown{};
  }
  po::notify(vm);
  return vm;
}

int guarded(const std::function<int()>& body) {
  try {
    return body();
  } catch (const HelpShown&) {
    return kExitOk;
  } catch (const Interrupted& e) {
    std::cerr << "slurmtwin: " << e.what() << "\n";
    return kExitInterrupted;
  } catch (const po::error& e) {
    std::cerr << "slurmtwin: " << e.what() << " (see --help)\n";
    return kExitUsage;
  } catch (const InputError& e) {
    std::cerr << "slurmtwin: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::invalid_argument& e) {
    std::cerr << "slurmtwin: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "slurmtwin: error: " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace slurmtwin::cli
