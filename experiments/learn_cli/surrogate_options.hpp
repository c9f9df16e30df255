#pragma once
// The surrogate engine's command-line options (declared by experiments/cli/engine_options.hpp) as
// SurrogateEngineOptions, shared by `sweep run`, `compare` and `optimize`.
#include "experiments/cli/engine_options.hpp"
#include "experiments/learn/surrogate_engine.hpp"

namespace slurmtwin::cli {

/// The options as SurrogateEngineOptions; throws po::error for a window of 0 jobs.
SurrogateEngineOptions surrogate_options(const po::variables_map& vm);

}  // namespace slurmtwin::cli
