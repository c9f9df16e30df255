#include "traces/memory_guard.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "traces/job_record.hpp"

namespace slurmtwin {
namespace {

constexpr std::uint64_t kMiB = 1ull << 20;
/// Per-job bytes of a replay beyond the loaded trace: simulated job, queue entries and metric samples
/// (~480 B measured: the 1M-job year peaks at 981 MiB against 503 MiB once loaded, docs/benchmarks.md)
/// plus the output text (jobs.csv and jobs.sacct rows, ~300 B).
constexpr std::uint64_t kReplayBytesPerJob = 768;
/// Per-node bytes: NodeState, name, per-node GRES and the backfill map's per-node columns.
constexpr std::uint64_t kReplayBytesPerNode = 4096;

std::string source_of_limit() {
  return std::getenv("SLURMTWIN_MEMORY_LIMIT_MB") ? "SLURMTWIN_MEMORY_LIMIT_MB"
                                                  : "MemAvailable in /proc/meminfo";
}

}  // namespace

std::optional<std::uint64_t> available_memory_bytes() {
  if (const char* env = std::getenv("SLURMTWIN_MEMORY_LIMIT_MB")) {
    char* end = nullptr;
    const auto mb = std::strtoull(env, &end, 10);
    if (end != env && *end == '\0') return mb * kMiB;
  }
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    std::uint64_t kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
}

void require_memory(std::uint64_t needed_bytes, const std::string& what,
                    std::optional<std::uint64_t> available) {
  if (!available || needed_bytes <= *available) return;
  throw ResourceError(fmt::format("{} needs about {} MiB but only {} MiB are available ({})", what,
                                  (needed_bytes + kMiB - 1) / kMiB, *available / kMiB, source_of_limit()));
}

std::uint64_t trace_read_bytes(std::uint64_t content_bytes, std::uint64_t lines) {
  // The content stays in memory while parsing; each line may become a record plus its names.
  return content_bytes + lines * (sizeof(JobRecord) + 64);
}

std::uint64_t replay_bytes(std::uint64_t jobs, std::uint64_t nodes) {
  return jobs * kReplayBytesPerJob + nodes * kReplayBytesPerNode;
}

}  // namespace slurmtwin
