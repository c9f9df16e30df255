// slurmtwin: what would our Slurm cluster do if...? One binary, one subcommand per task. It links no
// libtorch: the surrogate's commands run slurmtwin-torch (experiments/learn_cli/main.cpp).
#include "experiments/cli/cli.hpp"

int main(int argc, char** argv) {
  return slurmtwin::cli::run_main(argc, argv);
}
