#include "traces/array_spec.hpp"

#include <algorithm>
#include <limits>

#include "traces/text.hpp"

namespace slurmtwin {

namespace {

// A plain decimal number (no sign, no blanks) within [0, max].
std::optional<std::int64_t> number(std::string_view s, std::int64_t max) {
  if (s.empty() || s.size() > 10 ||
      !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  const auto v = text::parse_int(s);
  if (!v || *v > max) return std::nullopt;
  return v;
}

}  // namespace

std::optional<ArraySpec> parse_array_spec(std::string_view spec) {
  constexpr std::int64_t kMaxId = std::numeric_limits<std::int32_t>::max();
  ArraySpec out;
  if (const auto pct = spec.find('%'); pct != std::string_view::npos) {
    const auto max = number(spec.substr(pct + 1), kMaxArrayTasks);
    if (!max || *max == 0) return std::nullopt;
    out.max_running = static_cast<std::uint32_t>(*max);
    spec = spec.substr(0, pct);
  }
  for (const auto part : text::split(spec, ',')) {
    auto range = part;
    std::int64_t step = 1;
    if (const auto colon = range.find(':'); colon != std::string_view::npos) {
      const auto s = number(range.substr(colon + 1), kMaxId);
      if (!s || *s == 0) return std::nullopt;
      step = *s;
      range = range.substr(0, colon);
    }
    const auto dash = range.find('-');
    const auto first = number(range.substr(0, dash), kMaxId);
    const auto last = dash == std::string_view::npos ? first : number(range.substr(dash + 1), kMaxId);
    if (!first || !last || *last < *first || (dash == std::string_view::npos && step != 1))
      return std::nullopt;
    if (static_cast<std::size_t>((*last - *first) / step) + out.tasks.size() >= kMaxArrayTasks)
      return std::nullopt;
    for (auto t = *first; t <= *last; t += step) out.tasks.push_back(static_cast<std::int32_t>(t));
  }
  std::sort(out.tasks.begin(), out.tasks.end());
  out.tasks.erase(std::unique(out.tasks.begin(), out.tasks.end()), out.tasks.end());
  return out;
}

}  // namespace slurmtwin
