#pragma once
// How every command reads a trace, without a command line: the defaults the CLI's trace options show
// (experiments/cli/trace_options.hpp) and the sacctmgr script that gives users' default accounts. A
// sweep or check spec that names a trace reads it exactly as `replay --format F --users-from U` would.
#include <map>
#include <string>

#include "traces/trace_io.hpp"

namespace slurmtwin::experiments {

/// Absolute time of offset 0 for the events format (UTC), and the zone sacct -P printed its local
/// times in, unless a command says otherwise (--origin, --timezone).
inline constexpr const char* kDefaultEventsOrigin = "2026-01-05T00:00:00";
inline constexpr const char* kDefaultSacctTimeZone = "local";

/// Each user's default account (user -> account), from the "add user Name=u DefaultAccount=a ..."
/// lines of a sacctmgr script; other lines are ignored.
std::map<std::string, std::string> read_user_default_accounts(const std::string& sacctmgr_script);

/// The trace options of `replay --format FORMAT [--users-from USERS]` with every other option at its
/// default ("" = no --users-from).
TraceReadOptions default_trace_read_options(const std::string& format, const std::string& users_from);

/// The share of a trace's job records (%) that may be refused — rejected when read, or at submit by
/// the site — before a run on it is an error (`replay --max-rejected`): a run that refuses most of its
/// jobs answers nothing about the site.
inline constexpr double kDefaultMaxRejectedPct = 10;

/// Fails closed on a trace read for a run: InputError (naming the first rejected record's file, line
/// and field, and the count by reason) when no job record survived reading, when there was none, or
/// when more than `max_rejected_pct` % of the job records (accepted + rejected) were rejected.
void require_usable_trace(const ReadReport& report, double max_rejected_pct);

}  // namespace slurmtwin::experiments
