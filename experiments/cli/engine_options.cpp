#include "experiments/cli/engine_options.hpp"

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

}  // namespace slurmtwin::cli
