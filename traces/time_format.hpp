#pragma once
// Slurm's time and duration notations.
#include <optional>
#include <string>
#include <string_view>

#include "traces/job_record.hpp"

namespace slurmtwin {

/// Parses a Slurm duration as used by Timelimit / MaxTime / -t:
/// "MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS" -> seconds;
/// "UNLIMITED" / "INFINITE" -> kUnlimited; "Partition_Limit" -> kUnsetTime (the partition's MaxTime).
/// nullopt on junk. Also accepts sacct's fractional form "MM:SS.mmm" (Elapsed/TotalCPU).
std::optional<Seconds> parse_slurm_duration(std::string_view text);
/// Formats seconds the way sacct prints Timelimit/Elapsed: "[D-]HH:MM:SS" (UNLIMITED for kUnlimited).
std::string format_slurm_duration(Seconds s);

/// Parses "YYYY-MM-DDTHH:MM:SS" or "YYYY-MM-DD HH:MM:SS" (taken as UTC) -> epoch seconds.
/// "Unknown", "None", "" -> kUnsetTime. nullopt on junk.
std::optional<Seconds> parse_timestamp(std::string_view text);
/// Formats epoch seconds as sacct does ("YYYY-MM-DDTHH:MM:SS", UTC); "Unknown" for kUnsetTime.
std::string format_timestamp(Seconds t);

}  // namespace slurmtwin
