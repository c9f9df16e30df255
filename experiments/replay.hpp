#pragma once
// One replay, as a library call: resolve the trace against the site, run the controller with the
// Slurm policy, and collect results. Used by `slurmtwin replay`, `bench` and the tests.
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "sim/metrics.hpp"
#include "sim/sim_state.hpp"
#include "traces/site.hpp"
#include "traces/trace.hpp"

namespace slurmtwin::cli {

struct ReplayOptions {
  bool add_missing_associations = true;  // users/accounts the site lacks get Fairshare=1 associations
  bool check_invariants = false;  // after every event, and job conservation at the end (sim/conservation.hpp)
  Seconds decay_phase = 0;        // first PriorityCalcPeriod tick this long after controller start (s)
  Seconds start_offset = 0;       // controller starts this long before the first submit (s)
  Seconds snapshot_at = kUnsetTime;  // absolute time of a sprio/sshare-like snapshot
  double bf_tests_per_second = 0;    // backfill cycle cost model (0 = off: cycles take no time)
  /// When set, the replay polls it at every simulated-time step and throws Interrupted once it is
  /// true (experiments/interrupt.hpp: SIGINT/SIGTERM).
  const std::atomic<bool>* stop = nullptr;
  /// When set, called with (jobs ended, jobs in the replay) after every `progress_every` job ends.
  std::function<void(std::size_t, std::size_t)> on_progress;
  std::size_t progress_every = 1000;
};

struct ReplayResult {
  Site site;  // the site as replayed (with any associations added)
  std::size_t associations_added = 0;
  std::unique_ptr<sim::SimState> state;
  sim::ReplayMetrics metrics;
  std::uint64_t events = 0;
  std::string snapshot;  // text of the snapshot, when one was asked for
};

ReplayResult run_replay(Site site, const Trace& trace, const ReplayOptions& options);

/// Per-job results as CSV (one row per input job, in input order).
std::string jobs_csv(const ReplayResult& r, const Trace& trace);
/// Per-job results as sacct --parsable2.
std::string jobs_sacct(const ReplayResult& r, const Trace& trace);

}  // namespace slurmtwin::cli
