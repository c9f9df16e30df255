#include "experiments/learn_cli/torch_commands.hpp"

#include <fmt/format.h>

#include <iostream>

#include "experiments/cli/torch_hooks.hpp"
#include "experiments/learn/surrogate_sweep.hpp"
#include "experiments/learn_cli/surrogate_options.hpp"
#include "surrogate/device.hpp"

namespace slurmtwin::cli {
namespace {

/// `sweep run --engine surrogate|hybrid` (options checked by sweep run): the surrogate scores the points,
/// the hybrid engine also chooses which the simulator re-evaluates.
int sweep_engines(const po::variables_map& vm, const SweepSpec& spec, const std::string& db,
                  SweepRunOptions ro) {
  const auto surrogate = surrogate_options(vm);
  HybridOptions hybrid;
  hybrid.top_k = vm["top-k"].as<std::size_t>();
  hybrid.verify_width = vm["verify-width"].as<double>();
  hybrid.max_exact = vm["max-exact"].as<double>();
  hybrid.calibrate = vm["calibrate"].as<double>();
  hybrid.model_first = vm["model-first"].as<double>();
  hybrid.round = vm["round"].as<std::size_t>();
  SurrogateScorer scorer(surrogate, hybrid);
  ro.scorer = &scorer;
  const auto s = run_sweep_spec(spec, db, ro);
  std::cout << fmt::format(
      "sweep: {} points{}: {}{}; {} feasible; results in {}\n", s.total, shard_note(ro),
      surrogate.model.empty()
          ? std::string("screened by the response surface")
          : fmt::format("{} predicted now by the surrogate ({:.1f} s)", s.predicted, s.surrogate_seconds),
      ro.engine == SweepEngine::kHybrid
          ? fmt::format("; {} chosen for the exact simulator: {} evaluated now ({:.1f} s), {} already exact",
                        s.verified, s.evaluated, s.exact_seconds, s.verified - s.evaluated)
          : std::string(),
      s.feasible, db);
  return kExitOk;
}

}  // namespace

void register_torch_hooks() {
  auto& hooks = torch_hooks();
  hooks.commands = {
      {"compare", command_compare}, {"optimize", command_optimize}, {"surrogate", command_surrogate}};
  hooks.sweep_engines = sweep_engines;
  hooks.torch_summary = [] { return surrogate::torch_summary(); };
}

}  // namespace slurmtwin::cli
