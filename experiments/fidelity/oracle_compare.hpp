#pragma once
// The simulator against real Slurm (docs/fidelity.md): reads what tests/oracle/oracle.sh recorded
// from one run of a scenario on real slurmctld 22.05 (sacct, sampled sprio/sshare, decay-tick
// instants), replays the same scenario from the same time origin and timer phases, and measures
// how far apart two schedules are (per-job start/end, start-order Kendall tau, scheduling pass, end
// states) and whether the priority factors agree at the sampled instants.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "experiments/replay/replay.hpp"
#include "traces/job_record.hpp"
#include "traces/trace.hpp"

namespace slurmtwin::experiments {

/// One line of a scenario's jobs.csv: what was submitted (sbatch options) and how long it sleeps.
struct ScenarioJob {
  // jNNN, the sbatch --job-name (NNN = 1-based line among the jobs); a task of an array line is
  // jNNN_TASK (sacct: JobName jNNN, JobID ID_TASK)
  std::string name;
  std::string array_of;          // a task of an array line: that line's jNNN; empty otherwise
  std::int32_t array_task = -1;  // its task id
  std::uint32_t array_cap = 0;   // the line's --array=...%N; 0: none
  Seconds offset = 0;            // submit offset after the trace start, s
  std::string user, account, partition, qos;
  std::uint32_t nodes = 0;           // -N; 0: not given (empty cell or no column)
  std::uint32_t cpus = 1;            // -n, tasks (nodes * tasks_per_node when -n was not given)
  bool cpus_given = true;            // false: the cpus cell was empty, -n was not passed
  std::uint32_t tasks_per_node = 0;  // --ntasks-per-node; 0: not given
  std::uint32_t cpus_per_task = 1;   // -c (cpus_per_task column); 1: not given
  std::int64_t mem_mb = -1;          // --mem (MB per node) or --mem-per-cpu (MB per CPU); -1: neither
  bool mem_per_cpu = false;          // mem_mb is --mem-per-cpu
  std::vector<GresRequest> gres;     // --gres (per node), at most one entry
  std::string constraint;            // --constraint, as given; empty: none
  Seconds time_limit = 0;            // -t, s (whole minutes)
  Seconds runtime = 0;               // sleep, s
  std::string dependency;       // --dependency with jobs named by jNNN (optional column), e.g. afterok:j001
  Seconds cancel = kUnsetTime;  // scancel at this offset after the trace start if still pending (cancel_s)
  std::string reservation;      // --reservation (optional column); empty: none
  bool exclusive = false;       // --exclusive (exclusive column 1)
  std::int32_t nice = 0;        // --nice=N (nice column); 0: not given
  Seconds begin = kUnsetTime;   // --begin at this offset after the trace start (begin_s); unset: none
  std::string licenses;         // -L (licenses column: name[:count] joined by ';'); empty: none
};

/// Reads a scenario jobs.csv. Columns are found by the header's names, in any order (the format is
/// documented at the top of tests/oracle/oracle.sh): offset, user, account, partition, qos, cpus,
/// limit_min, runtime_s are required; nodes, ntasks_per_node, cpus_per_task, mem_mb, mem_per_cpu_mb, gres,
/// constraint, dependency, cancel_s, reservation, array, exclusive, nice, begin_s, licenses are optional, and
/// an empty cell means the option was not given. An array line gives one job per task. Lines starting with #
/// are skipped (as the harness does). Unknown columns, quoted fields and bad fields throw InputError naming
/// file, line and column.
std::vector<ScenarioJob> read_scenario_jobs(const std::string& path);

/// The request of a scenario job as a trace record (no ids or times): nodes 0 when -N was not given
/// (the scheduler decides), tasks and req_cpus from -n, tasks_per_node, mem_mb per node or per CPU
/// (-1: no memory option), gres, and the job name and constraint interned in `trace`.
JobRecord scenario_job_request(const ScenarioJob& job, Trace& trace);

/// One run (sacct -D record) of a job, times relative to the trace start (s).
struct RunOutcome {
  Seconds submit = kUnsetTime, start = kUnsetTime, end = kUnsetTime;
  std::string state;  // COMPLETED, TIMEOUT, PREEMPTED, CANCELLED, PENDING, ...
  SchedulerPass pass = SchedulerPass::kUnknown;
  std::string nodes;  // hostlist of the run's nodes ("n[1,4]"); empty when it never started or unknown
};

/// Every job's runs by job name, in order.
using Schedule = std::map<std::string, std::vector<RunOutcome>>;

/// A sprio row: job id, partition and normalized factors (weighted priority in `priority`).
struct RealSprioRow {
  std::uint64_t job_id = 0;
  std::string partition;
  double priority = 0, age = 0, fairshare = 0, job_size = 0, partition_factor = 0, qos = 0;
};
/// A pending job's squeue row: its job id and Reason (array tasks, "17_0", are left out).
struct RealSqueueRow {
  std::uint64_t job_id = 0;
  std::string reason;
};
struct RealSshareRow {
  std::string account, user;
  std::uint32_t depth = 0;  // indentation of Account (0 = root)
  double norm_shares = 0, raw_usage = 0, effectv_usage = 0, fairshare = -1;  // -1: not shown
  double level_fs = -1;  // -1: not shown (Fairshare=parent users); +inf: no usage
};

/// Whether Fair Tree's ranking in this sshare sample hinges on a near-tie: two siblings whose
/// LevelFS differ, but by less than `relative` of the larger one. Their order then follows
/// sub-second differences in when jobs ran, and the FairShare factors of the sample are not judged.
bool near_tie(const std::vector<RealSshareRow>& rows, double relative = 0.02);
template <typename Row>
struct Sampled {
  double at = 0;  // epoch s (sub-second) of the sample
  std::vector<Row> rows;
};

/// A slurmctld loop that runs about once a second (the background loop's main pass, the backfill
/// cycle): run k at anchor + k * period (epoch s). Each run sleeps a fixed time after its work, so the
/// period is a little over 1 s and the loop's sub-second phase drifts later.
struct LoopPhase {
  double anchor = 0, period = 1;
  /// The instant (epoch s) of the loop's run within whole second `second`, if one falls in it.
  std::optional<double> in_second(Seconds second) const;
};

/// The loop that most of `instants` (epoch s of log lines it wrote) lie on within `tolerance` s, with
/// a period in [1, 1.02] s, refined by least squares over those lines; nullopt when fewer than three
/// lie on one (lines of other origins, e.g. a pass a job end triggered, are left out).
std::optional<LoopPhase> fit_loop(const std::vector<double>& instants, double tolerance = 0.02);

/// How long before sbatch returned (as the harness records it, submits.txt) slurmctld had taken the
/// job, at least (s): 29-63 ms in the runs whose log kept slurmctld's submit lines (17, run3).
inline constexpr double kSbatchReturnLag = 0.03;

/// From a job's start line to its "_job_complete: ... done" line, beyond its sleep (s): 0.06-0.24 s,
/// median 0.15, over the 22 completed jobs of the run whose log kept both (17, run3). Estimates the end
/// instants of recordings from before the harness kept the end lines.
inline constexpr double kJobEndLag = 0.15;

/// What oracle.sh recorded in one run directory.
struct RecordedRun {
  std::filesystem::path dir;
  Seconds trace_start = 0;                        // epoch s of submit offset 0
  double controller_start = 0;                    // epoch s ("Running as primary controller")
  std::vector<double> ticks;                      // epoch s of every decay-thread run
  std::vector<double> limit_timeouts;             // epoch s of every "Time limit exhausted" (when logged)
  Seconds cred_expire = 120;                      // AuthInfo cred_expire of its slurm.conf (requeue delay)
  std::vector<ScenarioJob> jobs;                  // the scenario
  std::map<std::string, std::uint64_t> job_ids;   // name -> Slurm job id (an array's, for its tasks)
  std::map<std::string, Seconds> submit_times;    // name -> sacct Submit of the first run (epoch s)
  std::set<std::string> refused;                  // jobs sbatch refused (submits.txt: REFUSED)
  std::map<std::string, double> submit_returned;  // name -> epoch s at which sbatch returned
  std::map<std::uint64_t, double> submit_logged;  // Slurm job id -> epoch s of slurmctld's submit line
  std::vector<double> main_starts;      // epoch s of every "sched: Allocate" (a main pass started a job)
  std::vector<double> backfill_starts;  // epoch s of every "sched/backfill: _start_job"
  // Slurm job id -> epoch s of its starts, and of its "_job_complete: ... done"; an array task by its
  // own job id, which the log gives beside its array's ("JobId=5_0(9)": task_ids[{5, 0}] = 9).
  std::map<std::uint64_t, std::vector<double>> started_logged;
  std::map<std::uint64_t, std::vector<double>> ended_logged;
  std::map<std::pair<std::uint64_t, std::int32_t>, std::uint64_t> task_ids;
  std::map<std::string, std::string> never_started;  // job -> its pending reason when cancelled
                                                     // (never-started.txt)
  Schedule schedule;  // real outcome; a refused job: one run, "REJECTED" (the simulator's word), no
                      // start; a never-started one: its sacct run as "PENDING", no start or end
  std::vector<Sampled<RealSprioRow>> sprio;
  std::vector<Sampled<RealSshareRow>> sshare;
  std::vector<Sampled<RealSqueueRow>> squeue;  // pending jobs only
};

/// Reads a run directory written by `oracle.sh run`.
RecordedRun read_recorded_run(const std::filesystem::path& dir);

/// The instants (epoch s, ascending) at which jobs ended in `run`: slurmctld's end lines where the log
/// kept them, else a completed job's last start line plus its sleep and kJobEndLag.
std::vector<double> end_instants(const RecordedRun& run);

/// The oracle replay's ReplayOptions::backfill_end_lag_below, in backfill cycles (× bf_interval s):
/// the cycle's sub-second phase drifts later by about a millisecond a cycle (its own duration: the
/// thread sleeps bf_interval after each), a job it started ends ~0.06-0.1 s past that phase, so the
/// cycle still comes first for some tens of cycles. Between the longest recorded run whose
/// backfill-to-backfill hand-over came a second late (40 cycles of 1 s) and the shortest that came in
/// the same second (75); scenario 24 (bf_interval=30) hands over 3 cycles (90 s) late.
inline constexpr Seconds kBackfillEndLagCycles = 60;

/// The simulator's replay of a recorded run: same site (its slurm.conf + accounts.sacctmgr), same
/// submit instants, same controller start and decay-tick phase.
struct SimulatedRun {
  Schedule schedule;
  std::vector<PrioritySample> samples;  // at floor(t) of every real sprio sample instant
  ReplayOptions options;                // as replayed (phases)
};
SimulatedRun simulate_recorded_run(const RecordedRun& run);

/// Kendall's tau-b of two paired samples (ties in either count as neither concordant nor
/// discordant); 1 when fewer than two pairs or when one side is all ties.
double kendall_tau_b(const std::vector<double>& a, const std::vector<double>& b);

/// How far schedule `b` is from reference `a`.
struct ScheduleDiff {
  std::size_t jobs = 0;            // jobs started in both (first runs compared)
  std::size_t only_one = 0;        // jobs started in one schedule only
  double mean_abs_start = 0;       // mean |Δ first start|, s
  Seconds max_abs_start = 0;       // s
  double mean_abs_end = 0;         // mean |Δ final end| over jobs ended in both, s
  double tau = 1;                  // Kendall tau-b of the first-start order
  std::size_t pass_known = 0;      // jobs whose first run's pass is known in both
  std::size_t pass_equal = 0;      // ... and equal (main vs backfill)
  std::size_t nodes_known = 0;     // jobs whose first run has a node list in both (started in both)
  std::size_t nodes_equal = 0;     // ... and the same nodes (reported, not judged: on identical nodes
                                   // real Slurm's own choice follows sub-second order)
  std::size_t state_equal = 0;     // jobs whose sequence of run end states is equal
  std::size_t state_jobs = 0;      // jobs compared for states
  std::vector<std::string> worst;  // "jNNN Δstart" of the largest differences (up to 5)
};
ScheduleDiff compare_schedules(const Schedule& a, const Schedule& b);

/// Priority factors of the simulator against sprio/sshare at the real sample instants.
struct FactorDiff {
  std::size_t samples = 0;  // real samples compared (between ticks)
  std::size_t skipped_near_tick = 0;
  std::size_t job_rows = 0;                // (sample, job, partition) rows pending in both
  std::size_t job_rows_bad = 0;            // any normalized factor off by more than the tolerance
  std::size_t only_one = 0;                // rows pending in one side only (the schedules differ there)
  std::size_t share_rows = 0;              // (sample, user association) rows
  std::size_t share_rows_bad = 0;          // FairShare off by more than the tolerance
  std::size_t share_samples_near_tie = 0;  // sshare samples not judged (near_tie)
  std::size_t share_rows_runs_differ = 0;  // rows not judged: the real runs differ there (RealRunsDiffer)
  // squeue's Reason of a job pending on a QOS, association or memory limit (is_limit_reason in
  // oracle_compare.cpp) against the simulator's at the same instant (reported, not judged).
  std::size_t reason_rows = 0;
  std::size_t reason_rows_bad = 0;
  double max_factor_diff = 0;
  double max_share_diff = 0;          // FairShare
  double max_usage_diff = 0;          // EffectvUsage (reported only: it follows sub-second start times)
  std::vector<std::string> examples;  // first few disagreements, human readable
};
/// sshare rows (index of the sample in RecordedRun::sshare, account, user) whose FairShare differs
/// between the real runs of a scenario: another run's sample nearest in offset from the trace start,
/// within `window` s, shows the same association more than `tolerance` away. Real Slurm itself gives
/// either value there (its schedules differ by sub-second races), so no replay can match both.
using RealRunsDiffer = std::set<std::tuple<std::size_t, std::string, std::string>>;
RealRunsDiffer real_runs_differ(const std::vector<RecordedRun>& runs, std::size_t k, double tolerance = 1e-3,
                                double window = 1.0);

/// Compares factors at real sample instants that are more than `guard` s away from any real decay
/// tick (around a tick the sample may see either side of it); sshare rows in `differ` are counted, not
/// judged.
FactorDiff compare_factors(const RecordedRun& run, const SimulatedRun& sim, double tolerance = 1e-3,
                           double guard = 1.5, const RealRunsDiffer& differ = {});

/// One scenario: its two (or more) real runs, the simulator against each, and the verdict.
struct ScenarioResult {
  std::string name;
  std::string title;  // first comment line of sched.conf
  std::size_t runs = 0;
  ScheduleDiff real_vs_real;                 // run1 vs run2: the spread the acceptance margins add to
  std::vector<ScheduleDiff> later_vs_first;  // run 3, 4, ... vs run 1: reported, not judged
  std::vector<ScheduleDiff> sim_vs_real;     // simulator replaying run k vs run k
  std::vector<FactorDiff> factors;           // per run
  double sim_mean_abs_start = 0;             // mean over runs of sim_vs_real mean |Δstart|
  double sim_tau = 1;                        // mean over runs of sim_vs_real tau
  bool start_ok = false, tau_ok = false, factors_ok = false;
  bool accepted() const { return start_ok && tau_ok && factors_ok; }
};

/// The acceptance margins (stated in docs/fidelity.md).
struct Acceptance {
  double start_margin_s = 5.0;  // sim mean |Δstart| <= real-vs-real + this
  double tau_margin = 0.05;     // sim tau >= real-vs-real tau - this
  double factor_tolerance = 1e-3;
};

/// Evaluates the scenario directory `dir` (run1, run2, ... inside).
ScenarioResult evaluate_scenario(const std::filesystem::path& dir, const Acceptance& acceptance);

/// docs/fidelity.md: the measured tables, then `notes` (hand-written: what differs and why).
std::string fidelity_report(const std::vector<ScenarioResult>& results, const Acceptance& acceptance,
                            const std::string& notes);

}  // namespace slurmtwin::experiments
