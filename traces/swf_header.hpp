#pragma once
// The header directives of a Standard Workload Format file ("; Key: value" comment lines).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "traces/job_record.hpp"

namespace slurmtwin {

/// What an SWF header says about its machine and log (SWF 2.2, Parallel Workloads Archive).
/// Typed fields hold the directives the simulator can use; `entries` keeps every directive.
struct SwfHeader {
  std::optional<Seconds> unix_start_time;     // UnixStartTime: epoch s (UTC) that submit times count from
  std::optional<Seconds> time_zone;           // TimeZone: offset of the site's local time from UTC, s
  std::string time_zone_string;               // TimeZoneString, e.g. "Europe/Stockholm"
  std::string version;                        // Version, e.g. "2.2"
  std::string computer;                       // Computer
  std::string installation;                   // Installation
  std::optional<std::int64_t> max_jobs;       // MaxJobs
  std::optional<std::int64_t> max_records;    // MaxRecords
  std::optional<std::int64_t> max_nodes;      // MaxNodes
  std::optional<std::int64_t> max_procs;      // MaxProcs
  std::optional<Seconds> max_runtime;         // MaxRuntime, s
  std::optional<std::int64_t> max_memory_kb;  // MaxMemory, KB
  std::vector<std::string> queues;            // each Queue: directive, as given ("1 [fque:1]")
  std::vector<std::string> partitions;        // each Partition: directive, as given ("1 DEFAULT")
  std::vector<std::string> notes;             // each Note:, continuation lines appended with a space
  /// Every directive in file order (key as written, value trimmed), typed ones included.
  std::vector<std::pair<std::string, std::string>> entries;
};

/// Reads the header directives of SWF `content` (every line starting with ';'). A directive that should
/// be an integer but is not throws InputError(file, line, key, ...).
SwfHeader parse_swf_header(std::string_view content, const std::string& file = "<swf>");

}  // namespace slurmtwin
