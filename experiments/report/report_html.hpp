#pragma once
// `slurmtwin report`: one self-contained HTML file (inline SVG and CSS, no network, no script needed)
// from a replay output directory (jobs.csv + metrics.json, as `slurmtwin replay` writes them) or from
// a sweep database (experiments/sweep_store.hpp, read only).
#include <cstdint>
#include <string>

#include "traces/job_record.hpp"

namespace slurmtwin::experiments {

struct ReportOptions {
  std::string title;             // "" = from the input's name
  std::string gantt_from;        // YYYY-MM-DDTHH:MM:SS or +SECONDS after the first submit; "" = busiest day
  Seconds gantt_length = 86400;  // length of the Gantt view (s)
  std::size_t gantt_max_nodes = 160;       // at most this many node rows (the first by name)
  std::string gantt_colour = "partition";  // what the bars' colour tells: partition, qos or account
};

/// The report of a replay output directory. Throws InputError naming the file (and line) when
/// jobs.csv or metrics.json is absent or malformed.
std::string replay_report_html(const std::string& run_dir, const ReportOptions& options);

/// The report of a sweep database: objectives, Pareto front, parameter sensitivity, and the
/// surrogate-vs-exact scatter when the database has rows of both engines.
std::string sweep_report_html(const std::string& db_path, const ReportOptions& options);

}  // namespace slurmtwin::experiments
