#include "surrogate/device.hpp"

#include <torch/torch.h>

#include <string>

#include "surrogate/openmp_waits.hpp"

namespace slurmtwin::surrogate {

std::string torch_summary() {
  return std::string("libtorch ") + TORCH_VERSION + ", CUDA available: " +
         (torch::cuda::is_available() ? "yes (" + std::to_string(torch::cuda::device_count()) + " devices)"
                                      : "no") +
         ", CPU threads: " + std::to_string(torch::get_num_threads()) +
         ", OpenMP waits: " + openmp_wait_policy();
}

}  // namespace slurmtwin::surrogate
