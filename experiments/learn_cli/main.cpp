// slurmtwin-torch: slurmtwin with the surrogate (libtorch) linked in; slurmtwin runs it for the
// commands that need it (experiments/cli/torch_hooks.hpp). Every command works here too.
#include "experiments/cli/cli.hpp"
#include "experiments/learn_cli/torch_commands.hpp"
#include "surrogate/openmp_waits.hpp"

int main(int argc, char** argv) {
  slurmtwin::surrogate::reexec_with_passive_openmp_waits(argv);
  slurmtwin::cli::register_torch_hooks();
  return slurmtwin::cli::run_main(argc, argv);
}
