#pragma once
// The command-line options of the surrogate engine (`sweep run`, `compare`, `optimize`), declared
// here so that the libtorch-free slurmtwin lists and accepts them; experiments/learn_cli reads them.
#include "experiments/cli/cli.hpp"

namespace slurmtwin::cli {

/// Adds --model (required when `model_required`), --window-jobs, --context-jobs and --point-batch.
void add_surrogate_options(po::options_description& options, bool model_required);

}  // namespace slurmtwin::cli
