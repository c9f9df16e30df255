#include "surrogate/openmp_waits.hpp"

#include <unistd.h>

#include <cstdlib>

namespace slurmtwin::surrogate {

void reexec_with_passive_openmp_waits(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  if (setenv("OMP_WAIT_POLICY", "PASSIVE", 0) != 0) return;
  execv("/proc/self/exe", argv);  // returns only on failure: run on as we are
}

std::string openmp_wait_policy() {
  if (const char* p = std::getenv("OMP_WAIT_POLICY")) return p;
  if (const char* n = std::getenv("GOMP_SPINCOUNT")) return std::string("GOMP_SPINCOUNT=") + n;
  return "libgomp's default (spin, then sleep)";
}

}  // namespace slurmtwin::surrogate
