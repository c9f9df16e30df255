#pragma once
// Slurm versions as the site model holds them: major * 100 + minor (22.05 -> 2205).
#include <string>
#include <string_view>

namespace slurmtwin {

/// The Slurm whose behaviour the simulator follows by default (real 22.05.8, the oracle's).
inline constexpr int kModelledSlurmVersion = 2205;

/// "22.05.8" -> 2205 (major * 100 + minor); throws std::invalid_argument on anything else.
int parse_slurm_version(std::string_view text);

/// 2002 -> "20.02".
std::string slurm_version_text(int version);

}  // namespace slurmtwin
