#include "experiments/cli/surrogate_options.hpp"

#include <algorithm>

namespace slurmtwin::cli {

void add_surrogate_options(po::options_description& o, bool model_required) {
  auto model = po::value<std::string>();
  if (model_required)
    model->required();
  else
    model->default_value("");
  o.add_options()("model", model, "surrogate checkpoint (slurmtwin surrogate train)")(
      "window-jobs", po::value<std::uint32_t>()->default_value(384),
      "surrogate: target jobs per window (as in the model's dataset)")(
      "context-jobs", po::value<std::uint32_t>()->default_value(128),
      "surrogate: context jobs before each window (as in the model's dataset)")(
      "point-batch", po::value<std::size_t>()->default_value(8),
      "surrogate: points predicted together per window (larger batches need more memory, not always faster)");
}

SurrogateEngineOptions surrogate_options(const po::variables_map& vm) {
  SurrogateEngineOptions s;
  s.model = vm["model"].as<std::string>();
  s.window_jobs = vm["window-jobs"].as<std::uint32_t>();
  s.context_jobs = vm["context-jobs"].as<std::uint32_t>();
  s.point_batch = std::max<std::size_t>(1, vm["point-batch"].as<std::size_t>());
  if (s.window_jobs == 0) throw po::error("--window-jobs must be at least 1");
  return s;
}

}  // namespace slurmtwin::cli
