#include "traces/node_order.hpp"

#include <algorithm>
#include <cctype>

namespace slurmtwin {
namespace {

// The character at `i`, '\0' past the end (strnatcmp walks C strings).
char at(std::string_view s, std::size_t i) {
  return i < s.size() ? s[i] : '\0';
}

bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

bool is_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

// Two runs of digits without leading zeros: the longer run is the larger number; of two runs of one
// length, the first digit that differs decides.
int compare_numbers(std::string_view a, std::size_t i, std::string_view b, std::size_t j) {
  int bias = 0;
  for (;; ++i, ++j) {
    const char ca = at(a, i), cb = at(b, j);
    if (!is_digit(ca) && !is_digit(cb)) return bias;
    if (!is_digit(ca)) return -1;
    if (!is_digit(cb)) return 1;
    if (bias == 0 && ca != cb) bias = ca < cb ? -1 : 1;
  }
}

// Two runs of digits where one starts with '0': compared as fractions, the first differing digit
// decides and a run that ends first is the smaller.
int compare_fractions(std::string_view a, std::size_t i, std::string_view b, std::size_t j) {
  for (;; ++i, ++j) {
    const char ca = at(a, i), cb = at(b, j);
    if (!is_digit(ca) && !is_digit(cb)) return 0;
    if (!is_digit(ca)) return -1;
    if (!is_digit(cb)) return 1;
    if (ca != cb) return ca < cb ? -1 : 1;
  }
}

}  // namespace

int natural_compare(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  for (;;) {
    while (is_space(at(a, i))) ++i;
    while (is_space(at(b, j))) ++j;
    const char ca = at(a, i), cb = at(b, j);
    if (is_digit(ca) && is_digit(cb)) {
      const int r = (ca == '0' || cb == '0') ? compare_fractions(a, i, b, j) : compare_numbers(a, i, b, j);
      if (r != 0) return r;
    }
    if (ca == '\0' && cb == '\0') return 0;
    if (ca != cb) return ca < cb ? -1 : 1;
    ++i;
    ++j;
  }
}

void order_nodes_as_slurmctld(Site& site) {
  std::stable_sort(site.nodes.begin(), site.nodes.end(),
                   [](const Node& x, const Node& y) { return natural_compare(x.name, y.name) < 0; });
}

bool nodes_in_slurmctld_order(const Site& site) {
  return std::is_sorted(site.nodes.begin(), site.nodes.end(),
                        [](const Node& x, const Node& y) { return natural_compare(x.name, y.name) < 0; });
}

}  // namespace slurmtwin
