#pragma once
// One replay, as a library call: resolve the trace against the site, run the controller with the
// Slurm policy, and collect results. Used by `slurmtwin replay`, `bench` and the tests.
#include <array>
#include <atomic>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/controller.hpp"
#include "sim/metrics.hpp"
#include "sim/sim_state.hpp"
#include "traces/site.hpp"
#include "traces/time_zone.hpp"
#include "traces/trace.hpp"

namespace slurmtwin::experiments {

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
  // Timer phases relative to controller start (s; kUnsetTime = Slurm's default) and the requeue delay
  // (AuthInfo cred_expire), to align a replay with a recorded slurmctld (docs/fidelity.md).
  Seconds timeout_phase = 0;
  Seconds backfill_phase = kUnsetTime;
  Seconds sched_phase = kUnsetTime;
  Seconds requeue_delay = 120;
  // A requeued job keeps the priority of its last recalculation until the next decay run (real
  // Slurm 22.05; policies::SlurmPolicyOptions::requeue_keeps_priority).
  bool requeue_keeps_priority = true;
  // A time-limit check in the same second as a decay run comes after it
  // (sim::ControllerOptions::limit_check_after_decay).
  bool limit_check_after_decay = false;
  // A short job started by the backfill pass ends after that second's backfill cycle
  // (sim::ControllerOptions::backfill_end_lag_below; s, 0 = off).
  Seconds backfill_end_lag_below = 0;
  // Submissions that came after their second's main pass or both passes, by job id
  // (sim::ControllerOptions::submit_order).
  std::unordered_map<std::uint64_t, sim::SubmitOrder> submit_order;
  std::vector<Seconds> sample_at;  // absolute instants of sprio/sshare-like samples (ascending)
  bool submit_factors = false;     // record every job's normalized priority factors at its submit
};

/// One pending job's priority as sprio shows it (factors normalized to [0, 1], as of the last
/// recalculation: its submit or the last decay tick).
struct SprioSample {
  std::uint64_t job_id = 0;
  std::string partition;
  std::uint32_t priority = 0;  // the stored priority the scheduler sorts by
  double age = 0, fairshare = 0, job_size = 0, partition_factor = 0, qos = 0;
  sim::PendingReason reason = sim::PendingReason::kNone;  // squeue's Reason after the last pass
};

/// One association as sshare -l shows it.
struct SshareSample {
  std::string account;
  std::string user;  // "" for accounts
  double norm_shares = 0, raw_usage = 0, effectv_usage = 0, level_fs = 0, fairshare = 0;
};

/// The state after every event at `at` (absolute s).
struct PrioritySample {
  Seconds at = 0;
  std::vector<SprioSample> jobs;
  std::vector<SshareSample> shares;
};

struct ReplayResult {
  Site site;  // the site as replayed (with any associations added)
  std::size_t associations_added = 0;
  std::unique_ptr<sim::SimState> state;
  sim::ReplayMetrics metrics;
  std::uint64_t events = 0;
  std::string snapshot;                 // text of the snapshot, when one was asked for
  std::vector<PrioritySample> samples;  // one per ReplayOptions::sample_at
  /// Per trace job (ReplayOptions::submit_factors): its normalized fair-share, job size, partition,
  /// QOS and association factors as computed at its submit, in its first partition (zeros for jobs
  /// rejected at submit). The surrogate's reference features.
  std::vector<std::array<float, 5>> submit_factors;
};

ReplayResult run_replay(Site site, const Trace& trace, const ReplayOptions& options);

/// Controller start offsets (s) of `phases` replays of one setting: base + k × max(1, bf_interval /
/// phases), k = 0 … phases − 1, so that the backfill cycle (the timer that moves waits most, 94.6% of
/// the ub_medium week's jobs start by backfill) falls at evenly spread phases. One phase: {base}.
std::vector<Seconds> phase_offsets(const Site& site, std::uint32_t phases, Seconds base = 0);

/// Per-job results as CSV (one row per input job, in input order).
/// A job's NodeList as sacct prints it: `nodes` (indices into site.nodes, in any order) in node-table
/// order, compressed ("n[1-3],m4"); "" when empty. slurmctld keeps a job's nodes as a bitmap, so its
/// NodeList lists them by index, not in the order they were chosen.
std::string slurm_nodelist(const Site& site, std::vector<std::uint32_t> nodes);

std::string jobs_csv(const ReplayResult& r, const Trace& trace);
/// Per-job results as sacct --parsable2.
/// The reasons most jobs were refused at submit for (at most `top`), each with its count and up to
/// three of the names it concerns (partitions, QOS, users or job ids), one line each.
std::string rejection_examples(const ReplayResult& r, const Trace& trace, std::size_t top);
std::string jobs_sacct(const ReplayResult& r, const Trace& trace, const TimeZone* zone = nullptr);

}  // namespace slurmtwin::experiments
