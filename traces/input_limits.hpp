#pragma once
// Sanity limits on input: values no real Slurm job or site can have (negative durations, 10^9 nodes,
// time limits beyond 100 years) are bad input, not something to simulate. Every trace reader checks
// each record before accepting it, and the site importers cap the node count, so nothing is ever
// sized from an absurd value.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "traces/job_record.hpp"
#include "traces/read_report.hpp"

namespace slurmtwin {

/// Most nodes in one site (slurm.conf, site YAML): the largest Slurm clusters have ~10^4-10^5 nodes.
inline constexpr std::size_t kMaxSiteNodes = 1'000'000;
/// topology.conf switches: the node choice keeps a switches x switches hop table (4096: 64 MiB; a
/// 10,000-node fat tree has a few hundred).
inline constexpr std::size_t kMaxSwitches = 4096;
/// Most nodes one job may request or be given (the largest Slurm clusters have ~10^5 nodes).
inline constexpr std::uint32_t kMaxJobNodes = 1'000'000;
/// Most CPUs (or tasks) one job may request or be given.
inline constexpr std::uint32_t kMaxJobCpus = 100'000'000;
/// Longest time limit or run time: 100 years of 365.25 days, in seconds.
inline constexpr Seconds kMaxJobDuration = 100LL * 36525 * 864;
/// Latest absolute time: 2200-01-01T00:00:00Z (epoch s); absolute times may not be negative.
inline constexpr Seconds kMaxEpochTime = 7'258'118'400;
/// Most memory one job may request, in MB (per node or per CPU): 2^32 MB = 4 PiB.
inline constexpr std::int64_t kMaxJobMemMb = std::int64_t{1} << 32;
/// Most units of one GRES one job may request.
inline constexpr std::int64_t kMaxGresCount = 1'000'000;
/// Largest magnitude a reader converts from a decimal number in its input (seconds, MB) before the
/// record checks above: 10^12 s is ~31,700 years, and sums of a few such values stay far inside
/// int64, so the conversions (llround, casts) are defined. Beyond it the field is damaged.
inline constexpr double kMaxParsedNumber = 1e12;
/// Largest |--nice| sbatch takes (NICE_OFFSET - 3; a negative one is for administrators only).
inline constexpr std::int64_t kMaxNice = 2'147'483'645;

/// What is wrong with a record: the field (as JobRecord names it) and why.
struct RecordLimitProblem {
  std::string field;   // e.g. "time_limit"
  std::string detail;  // e.g. "time limit 4000000000 s is beyond 100 years"
};

/// The first value of `job` outside the limits above, or nullopt when all are plausible. Unset
/// values (kUnsetTime, -1 memory) and kUnlimited time limits are plausible.
std::optional<RecordLimitProblem> record_limit_problem(const JobRecord& job);

/// For readers: true when `job` is within the limits; otherwise rejects the record through `sink`
/// (reason "absurd FIELD"; throws InputError in strict mode) and returns false.
bool accept_within_limits(const JobRecord& job, std::uint64_t line, RejectSink& sink, std::string_view text);

}  // namespace slurmtwin
