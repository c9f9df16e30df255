#include "experiments/cli/cli.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <thread>

#include "experiments/cli/torch_hooks.hpp"
#include "experiments/replay/interrupt.hpp"
#include "traces/read_report.hpp"

namespace slurmtwin::cli {
namespace {

std::vector<std::string>& invocation() {  // argv of run_main
  static std::vector<std::string> args;
  return args;
}

/// A command of slurmtwin-torch: run where it is registered, else in slurmtwin-torch.
std::function<int(const Args&)> torch_command(const std::string& name) {
  return [name](const Args& args) {
    const auto& hooks = torch_hooks().commands;
    const auto it = hooks.find(name);
    return it != hooks.end() ? it->second(args) : run_torch_binary();
  };
}

void print_help() {
  std::cout << "usage: slurmtwin COMMAND [OPTIONS]   (slurmtwin COMMAND --help lists its options)\n\n"
               "commands:\n";
  for (const auto& c : commands())
    std::cout << "  " << c.name << std::string(10 - c.name.size(), ' ') << c.summary << "\n";
}

}  // namespace

TorchHooks& torch_hooks() {
  static TorchHooks hooks;
  return hooks;
}

int run_torch_binary() {
  if (invocation().empty()) {  // called in a process that run_main did not start (a test, say)
    std::cerr << "slurmtwin: this needs the surrogate, which is not linked into this process\n";
    return kExitFailure;
  }
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) self = invocation().front();
  const auto torch = self.parent_path() / kTorchBinary;
  // One hop at most: slurmtwin-torch itself forwarding means it lacks its registration (a build error).
  if (self.filename() == kTorchBinary) {
    std::cerr << "slurmtwin: " << self.string() << " has no surrogate registered (a build error)\n";
    return kExitFailure;
  }
  if (!std::filesystem::is_regular_file(torch)) {
    std::cerr << "slurmtwin: this runs the surrogate (libtorch), which lives in " << torch.string()
              << ": not there (it is built with slurmtwin, and packaged as slurmtwin-surrogate)\n";
    return kExitFailure;
  }
  std::vector<std::string> args = invocation();
  args.at(0) = torch.string();
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  execv(torch.c_str(), argv.data());
  std::cerr << "slurmtwin: cannot run " << torch.string() << ": " << std::strerror(errno) << "\n";
  return kExitFailure;
}

int run_main(int argc, char** argv) {
  invocation().assign(argv, argv + argc);
  if (argc < 2) {
    print_help();
    return kExitUsage;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_help();
    return kExitOk;
  }
  if (name == "--version") return command_version({});
  for (const auto& c : commands()) {
    if (c.name == name) return c.run(Args(argv + 2, argv + argc));
  }
  std::cerr << "slurmtwin: unknown command '" << name << "' (slurmtwin --help lists them)\n";
  return kExitUsage;
}

const std::vector<Command>& commands() {
  static const std::vector<Command> kCommands = {
      {"replay", "replay a trace on a site model and write per-job results and metrics", command_replay},
      {"trace", "inspect, generate and convert job traces (info, generate, convert)", command_trace},
      {"config",
       "import a site from slurm.conf + sacctmgr files, show or check a site YAML, list the settings",
       command_config},
      {"sweep", "what-if sweeps over scheduler settings into an SQLite database (run, show)", command_sweep},
      {"compare",
       "surrogate vs exact simulator on a sweep's settings: errors, rank agreement, coverage, speed",
       torch_command("compare")},
      {"optimize",
       "search the settings for an objective under constraints over the surrogate, verify exactly",
       torch_command("optimize")},
      {"check", "regression check: replay scenarios, compare metrics with a baseline (exit 1 on regression)",
       command_check},
      {"report", "one self-contained HTML report of a replay output directory or a sweep database",
       command_report},
      {"surrogate", "the transformer surrogate: dataset from the simulator, train, eval (docs/surrogate.md)",
       torch_command("surrogate")},
      {"oracle", "the simulator against recorded runs of real Slurm 22.05 (report)", command_oracle},
      {"bench", "measure load and replay speed and peak memory; append to docs/benchmarks.md", command_bench},
      {"version", "print the version and what libtorch can run on", command_version},
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

po::typed_value<unsigned>* jobs_value() {
  return po::value<unsigned>()->default_value(std::max(1u, std::thread::hardware_concurrency()));
}

unsigned jobs_option(const po::variables_map& vm) {
  const auto jobs = vm["jobs"].as<unsigned>();
  if (jobs == 0) throw po::error("--jobs must be at least 1");
  return jobs;
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

int run_subcommand(const std::string& command, const std::string& usage, const Args& args,
                   const Subcommands& subcommands) {
  return guarded([&]() -> int {
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
      std::cout << usage;
      return args.empty() ? kExitUsage : kExitOk;
    }
    std::string names;
    for (const auto& [name, run] : subcommands) {
      if (name == args[0]) return run(Args(args.begin() + 1, args.end()));
      names += (names.empty() ? "" : ", ") + name;
    }
    throw po::error(fmt::format("unknown {} subcommand '{}' ({})", command, args[0], names));
  });
}

}  // namespace slurmtwin::cli
