#pragma once
// What changes a site's capacity over time, read from the files its admins have: advanced
// reservations (`scontrol show reservation`, or the accounting history `sacctmgr -P show
// reservation`) and node outages (`sacctmgr -P show event`). Both print local wall-clock time.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "traces/site.hpp"
#include "traces/time_zone.hpp"

namespace slurmtwin {

/// How the replay treats a reservation flag Slurm 22.05 prints (reservation_flags_string).
enum class FlagModel {
  kModelled,     // MAINT, FLEX, OVERLAP
  kNoEffect,     // no effect on which job runs where once the reservation exists (IGNORE_JOBS, ...)
  kNotModelled,  // affects scheduling but is not replayed: a warning names its effect
};
/// nullopt for a word that is no reservation flag (a typo); `effect` receives what a not-modelled
/// flag changes.
std::optional<FlagModel> reservation_flag_model(std::string_view flag, std::string* effect = nullptr);

/// `scontrol show reservation` (multi-line or -o) or `sacctmgr -P show reservation` (with a Name,
/// TimeStart, TimeEnd and NodeName column; Flags optional): the reservations, times converted from
/// `zone` to UTC. The accounting history names no users or accounts: such a reservation admits any
/// job that asks for it (a recorded job that ran in it was admitted). Throws InputError (file, line,
/// field) on anything else, an unknown flag included; flags that are not modelled, partial-node
/// (CoreCnt) and repeating reservations add a warning.
std::vector<Reservation> read_reservations(std::string_view content, const std::string& file_name,
                                           const TimeZone& zone, std::vector<std::string>& warnings);

/// `sacctmgr -P show event` (default columns or any set with NodeName, TimeStart, TimeEnd and
/// State): one outage per node event in state DOWN, DRAIN or FAIL (suffixes such as `*` or `$`
/// dropped), sorted by start. Cluster events (no NodeName) are skipped; an event still open (TimeEnd
/// `Unknown`) lasts for ever. Throws InputError on any other state or a malformed line.
std::vector<NodeOutage> read_node_events(std::string_view content, const std::string& file_name,
                                         const TimeZone& zone);

/// The entry of Site::reservations in force at `t` among those named like entry `index` (one entry per
/// period of a reservation), or nullptr when none is.
const Reservation* active_period(const Site& site, std::size_t index, Seconds t);

/// Checks reservations and outages against the site's nodes (names known, end after start, a
/// reservation named once per period); throws std::invalid_argument naming the first problem.
void validate_site_events(const Site& site);

}  // namespace slurmtwin
