#pragma once
// sbatch's --array syntax: task ids as N, N-M or N-M:STEP joined by ',', then an optional %MAX (at
// most MAX tasks of the array run at once), e.g. "0-9%2", "1-5:2,8". sacct prints the pending tasks of
// an array the same way ("123_[2-5%2]").
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace slurmtwin {

struct ArraySpec {
  std::vector<std::int32_t> tasks;  // ascending, each once
  std::uint32_t max_running = 0;    // %MAX; 0 = none
};

/// Most task ids one spec may name (Slurm's MaxArraySize is at most 4,000,001).
inline constexpr std::size_t kMaxArrayTasks = 4'000'001;

/// Parses an --array spec; nullopt when it is not of that form (or names more than kMaxArrayTasks
/// ids, a STEP or MAX of 0, or a range whose end is below its start).
std::optional<ArraySpec> parse_array_spec(std::string_view spec);

}  // namespace slurmtwin
