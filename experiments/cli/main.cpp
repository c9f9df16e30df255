// slurmtwin: what would our Slurm cluster do if...? One binary, one subcommand per task.
#include <iostream>
#include <string>

#include "experiments/cli/cli.hpp"

namespace {

void print_help() {
  std::cout << "usage: slurmtwin COMMAND [OPTIONS]   (slurmtwin COMMAND --help lists its options)\n\n"
               "commands:\n";
  for (const auto& c : slurmtwin::cli::commands())
    std::cout << "  " << c.name << std::string(10 - c.name.size(), ' ') << c.summary << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_help();
    return slurmtwin::cli::kExitUsage;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_help();
    return slurmtwin::cli::kExitOk;
  }
  if (name == "--version") return slurmtwin::cli::run_version({});
  for (const auto& c : slurmtwin::cli::commands()) {
    if (c.name == name) return c.run(slurmtwin::cli::Args(argv + 2, argv + argc));
  }
  std::cerr << "slurmtwin: unknown command '" << name << "' (slurmtwin --help lists them)\n";
  return slurmtwin::cli::kExitUsage;
}
