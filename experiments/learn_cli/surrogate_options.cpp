#include "experiments/learn_cli/surrogate_options.hpp"

#include <algorithm>

namespace slurmtwin::cli {

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
