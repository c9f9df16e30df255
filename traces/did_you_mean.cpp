#include "traces/did_you_mean.hpp"

#include <algorithm>
#include <cctype>

namespace slurmtwin {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string nearest_name(const std::vector<std::string_view>& known, std::string_view typed) {
  std::string_view best;
  std::size_t best_d = 0;
  for (const auto k : known) {
    const auto d = edit_distance(k, typed);
    if (best.empty() || d < best_d) {
      best = k;
      best_d = d;
    }
  }
  // A suggestion only when it is plausibly the same word: at most a third of it differs.
  return !best.empty() && best_d * 3 <= std::max(typed.size(), best.size()) ? std::string(best)
                                                                            : std::string();
}

}  // namespace slurmtwin
