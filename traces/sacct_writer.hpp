#pragma once
// Writes a trace as `sacct --parsable2` output, so users can reuse their sacct tooling on simulated
// results. The columns are a subset every sacct version prints; our reader reads them back.
#include <string>
#include <vector>

#include "traces/time_zone.hpp"
#include "traces/trace.hpp"

namespace slurmtwin {

/// Header line of the written columns ('|' separated, no trailing newline).
extern const char* const kSacctWriterColumns;

/// One record per job. `nodelists` (optional, same order as trace.jobs) fills NodeList.
/// `node_counts[i]`: nodes job i got (NNodes; 0 or absent = the nodes it asked for). Times are printed
/// as sacct does, in local time of `zone` (null: UTC).
std::string format_sacct_parsable(const Trace& trace, const std::vector<std::string>* nodelists = nullptr,
                                  const std::vector<std::uint32_t>* node_counts = nullptr,
                                  const TimeZone* zone = nullptr);

}  // namespace slurmtwin
