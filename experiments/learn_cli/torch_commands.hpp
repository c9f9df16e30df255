#pragma once
// The commands and sweep engines that link libtorch, registered into slurmtwin's hooks
// (experiments/cli/torch_hooks.hpp) by slurmtwin-torch and by the tests.
#include "experiments/cli/cli.hpp"

namespace slurmtwin::cli {

int command_compare(const Args& args);
int command_optimize(const Args& args);
int command_surrogate(const Args& args);

/// Fills torch_hooks(): the three commands, `sweep run --engine surrogate|hybrid` and libtorch's summary.
void register_torch_hooks();

}  // namespace slurmtwin::cli
