#pragma once
// Licences: slurm.conf's `Licenses=` (the cluster's counts) and a job's `-L`/`--licenses` (what it
// holds while it runs), both "name[:count]" items joined by ',' or ';', as slurmctld's
// _build_license_list (licenses.c, 22.05) reads them.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace slurmtwin {

struct LicenseCount {
  std::string name;
  std::uint32_t count = 1;
  bool operator==(const LicenseCount&) const = default;
};

/// Most licences of one name (a site's count, a job's request): slurmctld keeps 32-bit counts.
inline constexpr std::uint32_t kMaxLicenseCount = 1'000'000'000;

/// Parses a licence list: items split at ',' and ';' (empty items skipped), each "name" (count 1) or
/// "name:count"; a name given twice is one entry with the counts added, in order of first
/// appearance. Throws std::invalid_argument for a blank anywhere, an empty name, a count that is not
/// a whole number (slurmctld: "Invalid license specification"), or a count over kMaxLicenseCount.
std::vector<LicenseCount> parse_licenses(std::string_view spec);

/// "name:count" items joined by ',' (the site YAML's form; slurmctld lists them so in `scontrol show lic`).
std::string format_licenses(const std::vector<LicenseCount>& licenses);

}  // namespace slurmtwin
