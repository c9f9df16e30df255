#pragma once
// What libtorch can run on here. The only surrogate entry point the CLI needs before a model exists.
#include <string>

namespace slurmtwin::surrogate {

/// e.g. "libtorch 1.13.1, CUDA available: no, CPU threads: 2, OpenMP waits: PASSIVE".
std::string torch_summary();

}  // namespace slurmtwin::surrogate
