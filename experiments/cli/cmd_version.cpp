#include <iostream>

#include "experiments/cli/cli.hpp"
#include "surrogate/device.hpp"

namespace slurmtwin::cli {

int run_version(const Args& args) {
  return guarded([&] {
    parse("slurmtwin version", po::options_description("options"), args);
    std::cout << "slurmtwin " << SLURMTWIN_VERSION << "\n" << surrogate::torch_summary() << "\n";
    return kExitOk;
  });
}

}  // namespace slurmtwin::cli
