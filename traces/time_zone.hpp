#pragma once
// sacct prints local wall-clock time (no offset); a replay runs on UTC epoch seconds. A TimeZone turns
// one into the other with the zone database (tzdata), daylight-saving changes included.
#include <cstdint>
#include <string>
#include <vector>

#include "traces/job_record.hpp"
#include "traces/trace.hpp"

namespace slurmtwin {

class TimeZone {
 public:
  /// "UTC", "local" (the machine's zone: $TZ, else /etc/localtime, as sacct uses) or a zone database
  /// name ("Europe/Berlin"). Throws std::invalid_argument for a name the database lacks.
  explicit TimeZone(const std::string& name);
  /// Throws as the constructor does for a name the database lacks, without reading the zone's rules
  /// (which takes tens of ms): for checking a user's option before any trace is read.
  static void check_name(const std::string& name);
  const std::string& name() const { return name_; }
  /// Whether no conversion is needed (UTC, or a local zone with offset 0 throughout).
  bool is_utc() const { return transitions_.empty() && base_offset_ == 0; }
  /// UTC offset (s, east positive) in effect at UTC instant `utc`.
  std::int64_t offset_at(Seconds utc) const;
  /// The UTC instants a wall-clock time (given as if it were UTC) names: one, two in the hour repeated
  /// when clocks go back (earlier first), or, in the hour skipped when they go forward, the instant
  /// the same wall time names under the offset before the change.
  std::vector<Seconds> to_utc(Seconds wall) const;

 private:
  static bool names_utc(const std::string& name);
  struct Transition {
    Seconds at;           // UTC instant from which `offset` holds
    std::int64_t offset;  // s east of UTC
  };
  std::string name_;
  std::int64_t base_offset_ = 0;         // before the first transition
  std::vector<Transition> transitions_;  // 1970-2100, sorted by `at`
};

/// Converts the times of jobs [first, end) of `trace` (read as if UTC from a source that printed local
/// time in `zone`) to UTC. Each job's times keep their order: a time in a repeated hour takes the
/// later reading when the earlier one would come before the job's previous time (a start in the
/// second 01:30 after a submit in the first). Run times of jobs cancelled before they started are
/// recomputed (cancel - submit).
void wall_times_to_utc(Trace& trace, std::size_t first, const TimeZone& zone);

}  // namespace slurmtwin
