#pragma once
// A time window of a trace by submit time: a sweep's `trace: window:` and `trace convert --from/--to`.
#include <optional>
#include <string>
#include <string_view>

#include "traces/trace.hpp"

namespace slurmtwin {

/// One end of a trace time window: an absolute time, or an offset from the trace's first submit.
struct WindowBound {
  bool set = false;
  bool relative = false;  // value is an offset (s) from the first submit, else epoch seconds
  Seconds value = 0;
};

/// The forms parse_window_bound reads, as error messages name them.
inline constexpr const char* kWindowBoundForms = "YYYY-MM-DDTHH:MM:SS or +D-HH:MM:SS";

/// "YYYY-MM-DDTHH:MM:SS" (UTC) or "+D-HH:MM:SS" (any Slurm duration after the '+', an offset from the
/// first submit); nullopt on anything else (a negative offset included).
std::optional<WindowBound> parse_window_bound(std::string_view text);

/// Why two bounds make no window ("" when they do): both of one kind and `from` not before `to`.
std::string window_problem(const WindowBound& from, const WindowBound& to);

/// Keeps the jobs submitted in [from, to) (an unset end is open), in their order, and returns the
/// window's absolute ends for messages. Does not throw: the caller says where an empty result came from.
struct WindowEnds {
  Seconds from, to;
};
WindowEnds keep_submitted_in(Trace& trace, const WindowBound& from, const WindowBound& to);

}  // namespace slurmtwin
