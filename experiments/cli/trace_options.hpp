#pragma once
// The trace-reading options shared by `trace` and `replay`: format, strictness, rejects file,
// the events format's time origin and default accounts.
#include <string>
#include <vector>

#include "experiments/cli/cli.hpp"
#include "traces/trace_io.hpp"

namespace slurmtwin::cli {

/// Adds --format, --strict, --rejects, --sacct-columns, --origin, --users-from to `options`.
void add_trace_read_options(po::options_description& options);
/// Builds TraceReadOptions from parsed options (reads the sacctmgr script given by --users-from).
TraceReadOptions trace_read_options(const po::variables_map& vm);
/// Reads the traces, prints the input accounting to stderr, and writes --rejects when asked.
/// `for_replay`: refuse input that lacks columns a replay needs (ReadReport::missing_columns), and
/// input too many of whose job records were rejected (require_usable_trace, at --max-rejected where the
/// command has it).
Trace load_traces(const std::vector<std::string>& paths, const po::variables_map& vm, ReadReport& report,
                  bool for_replay = true);

}  // namespace slurmtwin::cli
