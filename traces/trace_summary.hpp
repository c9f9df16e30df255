#pragma once
// What `slurmtwin trace info` prints: counts, time span, names, request distributions, recorded waits.
#include <string>

#include "traces/read_report.hpp"
#include "traces/trace.hpp"

namespace slurmtwin {

struct Distribution {
  double min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
  double p95 = 0;
  std::uint64_t count = 0;
};
/// Quantiles (linear interpolation) of `values`; all zero when empty.
Distribution distribution(std::vector<double> values);

/// The quantiles of distribution() alone, by selection rather than a sort (O(n) each; `values` is
/// reordered): for many groups' summaries. All zero when empty.
struct Quantiles {
  double p50 = 0, p90 = 0, p95 = 0, p99 = 0;
};
Quantiles quantiles(std::vector<double>& values);

struct TraceSummary {
  std::uint64_t jobs = 0;
  Seconds first_submit = kUnsetTime, last_submit = kUnsetTime;
  std::size_t users = 0, accounts = 0, partitions = 0, qos = 0;
  std::map<std::string, std::uint64_t> jobs_by_partition, jobs_by_qos, jobs_by_state;
  Distribution cpus, nodes, time_limit_s, runtime_s, gpus;
  std::uint64_t with_recorded_start = 0;
  Distribution recorded_wait_s;  // start - submit, jobs with a recorded start
};

TraceSummary summarize_trace(const Trace& trace);
/// Human-readable report of the summary plus the read report (skipped records by reason).
std::string format_trace_summary(const TraceSummary& summary, const ReadReport& report);

}  // namespace slurmtwin
