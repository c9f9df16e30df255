#pragma once
// What only the libtorch build runs (slurmtwin-torch, experiments/learn_cli): the surrogate's commands
// and sweep engines, registered when it starts. slurmtwin itself links no libtorch, so a replay, a
// check or an exact sweep starts in milliseconds, not a second, in megabytes, not 167 MB
// (docs/benchmarks.md); where it meets one of these it runs slurmtwin-torch, found beside it, with the
// same arguments.
#include <functional>
#include <map>
#include <string>

#include "experiments/cli/cli.hpp"
#include "experiments/sweep/sweep.hpp"

namespace slurmtwin::cli {

inline constexpr const char* kTorchBinary = "slurmtwin-torch";

struct TorchHooks {
  std::map<std::string, std::function<int(const Args&)>> commands;  // by command name
  /// `sweep run --engine surrogate|hybrid`: runs the sweep (options in `vm`, the rest set in `options`)
  /// and prints its summary.
  std::function<int(const po::variables_map& vm, const SweepSpec& spec, const std::string& db,
                    SweepRunOptions options)>
      sweep_engines;
  std::function<std::string()> torch_summary;  // what libtorch can run on (slurmtwin version)
};
/// Empty in slurmtwin; filled by register_torch_hooks() in slurmtwin-torch.
TorchHooks& torch_hooks();

/// Replaces this process with slurmtwin-torch from this binary's folder, given the arguments this
/// process was given (run_main); returns kExitFailure, saying why, when it cannot.
int run_torch_binary();

}  // namespace slurmtwin::cli
