#pragma once
// Every trace reader. Each appends the jobs of one input to `trace` and accounts for every input record
// in sink.report(): records = accepted + folded + rejected. Bad records are rejected with a reason
// (or throw InputError in strict mode); a file that is not of the format at all throws InputError.
#include <map>
#include <string>
#include <string_view>

#include "traces/read_report.hpp"
#include "traces/trace.hpp"

namespace slurmtwin {

/// sacct --parsable2 (-P) output, with or without header. `columns` gives the column list when the
/// file has no header (e.g. "JobID,User,..." as passed to --format); empty = first line is the header.
void read_sacct_parsable(std::string_view content, const std::string& file, Trace& trace, RejectSink& sink,
                         std::string_view columns = {});
/// sacct --json (Slurm 21.08+ schema: {"jobs": [...]}).
void read_sacct_json(std::string_view content, const std::string& file, Trace& trace, RejectSink& sink);
/// Standard Workload Format (18 fields, ';' header directives; UnixStartTime sets trace.origin).
void read_swf(std::string_view content, const std::string& file, Trace& trace, RejectSink& sink);
/// Slurm-simulator events ("-dt 10.5 -e submit_batch_job | -sim-walltime 300 --uid=u -N 1 ...").
/// Accounts come from each user's default account in `user_default_accounts` (user -> account) when
/// the line has no -A; times are trace.origin + dt.
void read_events(std::string_view content, const std::string& file, Trace& trace, RejectSink& sink,
                 const std::map<std::string, std::string>& user_default_accounts = {});
/// Graham/Cedar CSV (mila-iqia/slurm-queue-time-pred) with recorded submit/eligible/start/end.
void read_graham_csv(std::string_view content, const std::string& file, Trace& trace, RejectSink& sink);
/// NREL Eagle sacct-derived CSV (job_id,user,account,partition,qos,wallclock_req,...).
void read_eagle_csv(std::string_view content, const std::string& file, Trace& trace, RejectSink& sink);

}  // namespace slurmtwin
