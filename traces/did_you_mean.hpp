#pragma once
// "Did you mean ...?" for names a user typed: the known name nearest by edit distance, when close
// enough to be a typo of it.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace slurmtwin {

/// Levenshtein distance, letters compared without case.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The name of `known` nearest to `typed` when at most a third of it differs; "" otherwise.
std::string nearest_name(const std::vector<std::string_view>& known, std::string_view typed);

}  // namespace slurmtwin
