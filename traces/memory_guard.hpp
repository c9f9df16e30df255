#pragma once
// Early, clear failure when an input would need more memory than the machine has: estimated from
// counts (bytes of a file, jobs, nodes) before the big allocations, instead of a bad_alloc or the
// OOM killer half-way through.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace slurmtwin {

/// Not enough memory for what was asked; the message says what needs how much and what is available.
class ResourceError : public std::runtime_error {
 public:
  explicit ResourceError(const std::string& what) : std::runtime_error(what) {}
};

/// Bytes available for new allocations: $SLURMTWIN_MEMORY_LIMIT_MB when set (to cap a run on a shared
/// machine), else MemAvailable from /proc/meminfo; nullopt when neither is known (no check).
std::optional<std::uint64_t> available_memory_bytes();

/// Throws ResourceError "WHAT needs about N MiB but only M MiB are available (SOURCE)" when
/// `needed_bytes` exceeds `available` (default: available_memory_bytes(); nullopt = no check).
void require_memory(std::uint64_t needed_bytes, const std::string& what,
                    std::optional<std::uint64_t> available = available_memory_bytes());

/// Estimated peak bytes to parse a text trace of `content_bytes` bytes and `lines` lines into jobs.
std::uint64_t trace_read_bytes(std::uint64_t content_bytes, std::uint64_t lines);

/// Estimated peak bytes of a replay of `jobs` jobs on `nodes` nodes (simulated jobs, per-job results,
/// the event queue and the per-node state).
std::uint64_t replay_bytes(std::uint64_t jobs, std::uint64_t nodes);

}  // namespace slurmtwin
