#pragma once
// One entry point for every trace format: detection by content and name, decompression, and
// accounting of every record.
#include <map>
#include <string>
#include <vector>

#include "traces/read_report.hpp"
#include "traces/trace.hpp"

namespace slurmtwin {

enum class TraceFormat { kAuto, kNative, kSacct, kSacctJson, kSwf, kEvents, kGraham, kEagle };
/// "auto", "native", "sacct", "sacct-json", "swf", "events", "graham", "eagle"; throws on others.
TraceFormat parse_trace_format(const std::string& name);
const char* to_string(TraceFormat format);
/// Guesses the format of `content` (already decompressed) named `path`.
TraceFormat detect_trace_format(const std::string& path, const std::string& content);

struct TraceReadOptions {
  TraceFormat format = TraceFormat::kAuto;
  ReadOptions read;
  std::string sacct_columns;                                 // for headerless sacct -P output
  std::map<std::string, std::string> user_default_accounts;  // for the events format
  Seconds origin = 0;  // events format: absolute time of -dt 0 (epoch s)
  // sacct -P prints local time: the zone it was printed in (TimeZone: "UTC", "local", "Europe/Berlin")
  std::string timezone = "UTC";
};

/// Reads one or more files (of one format each) into one trace; `report` accounts for every record.
Trace read_trace(const std::vector<std::string>& paths, const TraceReadOptions& options, ReadReport& report);

}  // namespace slurmtwin
