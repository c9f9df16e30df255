#include <stdexcept>

#include "experiments/cli.hpp"

namespace slurmtwin::cli {

int run_trace(const Args& args) {
  return guarded([&]() -> int {
    parse("slurmtwin trace", po::options_description("options"), args);
    throw std::runtime_error("'trace' is not implemented yet");
  });
}

}  // namespace slurmtwin::cli
