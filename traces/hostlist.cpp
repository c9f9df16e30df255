#include "traces/hostlist.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "traces/text.hpp"

namespace slurmtwin {
namespace {

// Splits on commas that are outside brackets.
std::vector<std::string_view> split_top_level(std::string_view s) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t from = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '[') ++depth;
    if (s[i] == ']') --depth;
    if (depth < 0) throw std::invalid_argument(fmt::format("unbalanced ']' in hostlist '{}'", s));
    if (s[i] == ',' && depth == 0) {
      out.push_back(s.substr(from, i - from));
      from = i + 1;
    }
  }
  if (depth != 0) throw std::invalid_argument(fmt::format("unbalanced '[' in hostlist '{}'", s));
  out.push_back(s.substr(from));
  return out;
}

void expand_one(std::string_view item, std::string prefix, std::vector<std::string>& out, std::size_t max) {
  const auto open = item.find('[');
  if (open == std::string_view::npos) {
    out.push_back(prefix + std::string(item));
    if (out.size() > max)
      throw std::invalid_argument(fmt::format("hostlist expands to more than {} names", max));
    return;
  }
  const auto close = item.find(']', open);
  if (close == std::string_view::npos) throw std::invalid_argument(fmt::format("missing ']' in '{}'", item));
  prefix += std::string(item.substr(0, open));
  const auto rest = item.substr(close + 1);
  for (auto range : text::split(item.substr(open + 1, close - open - 1), ',')) {
    const auto dash = range.find('-');
    const auto lo_s = range.substr(0, dash);
    const auto hi_s = dash == std::string_view::npos ? lo_s : range.substr(dash + 1);
    const auto lo = text::parse_int(lo_s), hi = text::parse_int(hi_s);
    if (!lo || !hi || *lo < 0 || *hi < *lo || lo_s.empty())
      throw std::invalid_argument(fmt::format("bad range '{}' in hostlist '{}'", range, item));
    if (static_cast<std::size_t>(*hi - *lo) > max)
      throw std::invalid_argument(fmt::format("hostlist expands to more than {} names", max));
    const auto width = lo_s.size();
    for (auto v = *lo; v <= *hi; ++v) expand_one(rest, prefix + fmt::format("{:0{}}", v, width), out, max);
  }
}

struct Split {
  std::string prefix;
  std::string digits;  // empty when the name has no numeric suffix
};

Split split_suffix(const std::string& name) {
  auto i = name.size();
  while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') --i;
  return {name.substr(0, i), name.substr(i)};
}

}  // namespace

std::vector<std::string> expand_hostlist(std::string_view expr, std::size_t max_names) {
  std::vector<std::string> out;
  expr = text::trim(expr);
  if (expr.empty()) return out;
  for (auto item : split_top_level(expr)) {
    item = text::trim(item);
    if (item.empty()) throw std::invalid_argument(fmt::format("empty name in hostlist '{}'", expr));
    expand_one(item, "", out, max_names);
  }
  return out;
}

std::string compress_hostlist(const std::vector<std::string>& names) {
  std::string out;
  std::size_t i = 0;
  while (i < names.size()) {
    const auto head = split_suffix(names[i]);
    if (head.digits.empty()) {
      out += (out.empty() ? "" : ",") + names[i];
      ++i;
      continue;
    }
    // Collect following names with the same prefix and digit width.
    std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
    std::size_t j = i;
    while (j < names.size()) {
      const auto s = split_suffix(names[j]);
      if (s.prefix != head.prefix || s.digits.size() != head.digits.size()) break;
      const auto v = *text::parse_int(s.digits);
      if (!ranges.empty() && v == ranges.back().second + 1) {
        ranges.back().second = v;
      } else {
        ranges.emplace_back(v, v);
      }
      ++j;
    }
    const auto w = head.digits.size();
    if (j - i == 1) {
      out += (out.empty() ? "" : ",") + names[i];
    } else {
      std::string body;
      for (auto [lo, hi] : ranges) {
        if (!body.empty()) body += ',';
        body += lo == hi ? fmt::format("{:0{}}", lo, w) : fmt::format("{:0{}}-{:0{}}", lo, w, hi, w);
      }
      out += (out.empty() ? "" : ",") + head.prefix + "[" + body + "]";
    }
    i = j;
  }
  return out;
}

}  // namespace slurmtwin
