// slurmtwin optimize: the best setting for an objective under constraints, searched over the
// surrogate and verified by the exact simulator (experiments/optimize.hpp).
#include <fmt/format.h>

#include <iostream>

#include "experiments/cli/cli.hpp"
#include "experiments/learn/optimize.hpp"
#include "experiments/learn_cli/surrogate_options.hpp"
#include "traces/file_io.hpp"

namespace slurmtwin::cli {

int command_optimize(const Args& args) {
  return guarded([&]() -> int {
    po::options_description o("optimize options");
    OptimizeOptions d;
    o.add_options()(
        "spec", po::value<std::string>()->required(),
        "sweep specification: its parameters are the search space, its first objective the goal, its "
        "constraints the constraints (docs/sweeps.md)")(
        "objective", po::value<std::string>()->default_value(""),
        "optimise this objective of the spec instead of the first (its metric name)")(
        "constraint", po::value<std::vector<std::string>>()->multitoken(),
        "an extra constraint, e.g. 'fairness >= 0.8' (repeatable)")(
        "candidates", po::value<std::size_t>()->default_value(d.candidates),
        "first round: Latin-hypercube points")("rounds", po::value<std::size_t>()->default_value(d.rounds),
                                               "rounds of local search")(
        "keep", po::value<std::size_t>()->default_value(d.keep), "local search around the best this many")(
        "per-keep", po::value<std::size_t>()->default_value(d.per_keep), "perturbations per kept candidate")(
        "verify", po::value<std::size_t>()->default_value(d.verify), "candidates replayed exactly")(
        "seed", po::value<std::uint64_t>()->default_value(d.seed),
        "seed of the design and the perturbations")("jobs,j", jobs_value(),
                                                    "exact replays in parallel; libtorch threads")(
        "out,o", po::value<std::string>()->default_value(""),
        "write the Markdown report here (default: stdout)");
    add_surrogate_options(o, true);
    po::positional_options_description pos;
    pos.add("spec", 1);
    const auto vm =
        parse("slurmtwin optimize SPEC.yaml --model CKPT [--objective METRIC] [--constraint 'M >= X']", o,
              args, pos);
    auto spec = load_sweep_spec(vm["spec"].as<std::string>());
    if (const auto& name = vm["objective"].as<std::string>(); !name.empty()) {
      const auto it = std::find_if(spec.objectives.begin(), spec.objectives.end(),
                                   [&](const auto& ob) { return ob.metric == name; });
      if (it == spec.objectives.end())
        throw po::error(fmt::format("--objective {}: not an objective of the spec", name));
      std::rotate(spec.objectives.begin(), it, it + 1);
    }
    if (vm.count("constraint"))
      for (const auto& text : vm["constraint"].as<std::vector<std::string>>()) {
        try {
          spec.constraints.push_back(parse_constraint(text));
        } catch (const std::invalid_argument& e) {
          throw po::error(fmt::format("--constraint '{}': {}", text, e.what()));
        }
      }
    OptimizeOptions opt;
    opt.candidates = vm["candidates"].as<std::size_t>();
    opt.rounds = vm["rounds"].as<std::size_t>();
    opt.keep = vm["keep"].as<std::size_t>();
    opt.per_keep = vm["per-keep"].as<std::size_t>();
    opt.verify = vm["verify"].as<std::size_t>();
    opt.seed = vm["seed"].as<std::uint64_t>();
    opt.jobs = jobs_option(vm);
    opt.surrogate = surrogate_options(vm);
    if (opt.verify == 0 || opt.candidates == 0)
      throw po::error("--verify and --candidates must be at least 1");
    const auto text = optimize_markdown(optimize(spec, opt));
    if (const auto& out = vm["out"].as<std::string>(); out.empty())
      std::cout << text;
    else
      write_file_atomic(out, text);
    return kExitOk;
  });
}

}  // namespace slurmtwin::cli
