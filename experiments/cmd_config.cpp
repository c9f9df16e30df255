#include <stdexcept>

#include "experiments/cli.hpp"

namespace slurmtwin::cli {

int run_config(const Args& args) {
  return guarded([&]() -> int {
    parse("slurmtwin config", po::options_description("options"), args);
    throw std::runtime_error("'config' is not implemented yet");
  });
}

}  // namespace slurmtwin::cli
