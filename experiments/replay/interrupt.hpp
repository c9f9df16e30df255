#pragma once
// Clean stops on SIGINT/SIGTERM: the handler only raises a flag; long-running work polls it and
// unwinds with Interrupted, which guarded() turns into exit code 130 and a one-line message. Outputs
// are written only after the work finished (write_file_atomic), so a stopped run leaves no partial
// file that looks complete.
#include <atomic>
#include <stdexcept>
#include <string>

namespace slurmtwin::experiments {

/// Exit code of a command stopped by SIGINT or SIGTERM (128 + SIGINT, as shells report it).
inline constexpr int kExitInterrupted = 130;

/// Thrown by work that saw the stop flag; what() says where it stopped.
class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(const std::string& what) : std::runtime_error(what) {}
};

/// While alive, SIGINT and SIGTERM set the flag returned by flag() instead of killing the process;
/// the previous handlers come back on destruction. One at a time per process.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  /// The flag: true once a signal arrived.
  const std::atomic<bool>& flag() const;
  /// Name of the signal that arrived ("SIGINT"), or "" when none.
  static std::string signal_name();
};

}  // namespace slurmtwin::experiments
