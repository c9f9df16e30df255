#pragma once
// The command-line options of the surrogate engine, shared by `sweep run`, `compare` and `optimize`.
#include "experiments/cli/cli.hpp"
#include "experiments/learn/surrogate_engine.hpp"

namespace slurmtwin::cli {

/// Adds --model (required when `model_required`), --window-jobs, --context-jobs and --point-batch.
void add_surrogate_options(po::options_description& options, bool model_required);
/// The options as SurrogateEngineOptions; throws po::error for a window of 0 jobs.
SurrogateEngineOptions surrogate_options(const po::variables_map& vm);

}  // namespace slurmtwin::cli
