#include <stdexcept>

#include "experiments/cli.hpp"

namespace slurmtwin::cli {

int run_bench(const Args& args) {
  return guarded([&]() -> int {
    parse("slurmtwin bench", po::options_description("options"), args);
    throw std::runtime_error("'bench' is not implemented yet");
  });
}

}  // namespace slurmtwin::cli
