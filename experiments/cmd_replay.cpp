#include <stdexcept>

#include "experiments/cli.hpp"

namespace slurmtwin::cli {

int run_replay(const Args& args) {
  return guarded([&]() -> int {
    parse("slurmtwin replay", po::options_description("options"), args);
    throw std::runtime_error("'replay' is not implemented yet");
  });
}

}  // namespace slurmtwin::cli
