#pragma once
// Running a sweep: load the base site and trace once, evaluate every design point not yet in the
// store with a pool of worker threads (each an independent replay on the shared read-only trace),
// and write each result to the store as it finishes.
#include <cstdint>
#include <iosfwd>
#include <string>

#include "experiments/sweep_spec.hpp"
#include "traces/site.hpp"
#include "traces/trace.hpp"

namespace slurmtwin::cli {

/// The spec's base site (site YAML, slurm.conf import, or the built-in default).
Site load_sweep_site(const SweepSpec& spec);
/// The spec's trace (files, or the built-in synthetic workload with the spec's seed and days).
Trace load_sweep_trace(const SweepSpec& spec);
/// 16 hex digits: FNV-1a 64 of the trace's native encoding.
std::string trace_fingerprint(const Trace& trace);
/// 16 hex digits: FNV-1a 64 of the resolved site (as site YAML) and the trace fingerprint.
std::string point_key(const Site& resolved_site, const std::string& trace_fingerprint);
/// {"setting": value, ...} with values printed exactly (%.17g).
std::string point_json(const SweepPoint& point);

struct SweepRunOptions {
  unsigned jobs = 0;                 // worker threads (0 = hardware threads)
  double progress_interval_s = 10;   // seconds between progress lines
  std::ostream* progress = nullptr;  // where progress lines go (nullptr = none)
};

struct SweepRunSummary {
  std::size_t total = 0;      // distinct design points
  std::size_t skipped = 0;    // already in the store
  std::size_t evaluated = 0;  // replayed and inserted by this run
};

/// Runs the sweep into the SQLite database `db`. The spec is checked against the site (every point
/// applies) before any replay; the first replay error stops the workers and is rethrown.
SweepRunSummary run_sweep_spec(const SweepSpec& spec, const std::string& db, const SweepRunOptions& options);

}  // namespace slurmtwin::cli
