#include "traces/trace_window.hpp"

#include <algorithm>
#include <limits>

#include "traces/time_format.hpp"

namespace slurmtwin {

std::optional<WindowBound> parse_window_bound(std::string_view text) {
  WindowBound b;
  b.set = true;
  if (text.starts_with('+')) {
    const auto d = parse_slurm_duration(text.substr(1));
    if (!d || *d < 0 || *d == kUnlimited) return std::nullopt;
    b.relative = true;
    b.value = *d;
    return b;
  }
  const auto t = parse_timestamp(text);
  if (!t || *t == kUnsetTime) return std::nullopt;
  b.value = *t;
  return b;
}

std::string window_problem(const WindowBound& from, const WindowBound& to) {
  if (!from.set && !to.set) return "give from, to or both";
  if (from.set && to.set && from.relative == to.relative && !(from.value < to.value))
    return "empty window: need from < to";
  return "";
}

WindowEnds keep_submitted_in(Trace& trace, const WindowBound& from, const WindowBound& to) {
  Seconds first = kUnsetTime;
  for (const auto& j : trace.jobs)
    if (j.submit != kUnsetTime && (first == kUnsetTime || j.submit < first)) first = j.submit;
  const auto resolve = [&](const WindowBound& b) { return b.relative ? first + b.value : b.value; };
  const WindowEnds ends{from.set ? resolve(from) : std::numeric_limits<Seconds>::min(),
                        to.set ? resolve(to) : std::numeric_limits<Seconds>::max()};
  std::erase_if(trace.jobs, [&](const JobRecord& j) { return j.submit < ends.from || j.submit >= ends.to; });
  return ends;
}

}  // namespace slurmtwin
