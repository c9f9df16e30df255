#pragma once
// Slurm hostlist expressions: "n[001-087],gn[001-002]" <-> explicit node names.
#include <string>
#include <string_view>
#include <vector>

namespace slurmtwin {

/// Expands a hostlist ("n[001-003,7],gpu1") into names, keeping zero padding and order.
/// Several bracket groups in one name ("r[1-2]n[1-2]") expand as a cross product.
/// Throws std::invalid_argument on malformed input or more than `max_names` names.
std::vector<std::string> expand_hostlist(std::string_view expr, std::size_t max_names = 10'000'000);

/// Compresses names into a hostlist, merging runs of equal prefix and consecutive numeric suffixes of
/// equal width: {n001,n002,n003,gn1} -> "n[001-003],gn1". Order of first appearance is kept.
std::string compress_hostlist(const std::vector<std::string>& names);

}  // namespace slurmtwin
