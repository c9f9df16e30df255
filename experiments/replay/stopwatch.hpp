#pragma once
// Wall time for the figures commands report (replay speed, engine phases, per-point costs).
#include <chrono>

namespace slurmtwin::experiments {

/// Seconds of wall time (steady clock) since `t0`.
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace slurmtwin::experiments
