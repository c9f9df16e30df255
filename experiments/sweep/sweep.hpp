#pragma once
// Running a sweep: load the base site and trace once, evaluate every design point not yet in the
// store with a pool of worker threads (each an independent replay on the shared read-only trace),
// and write each result to the store as it finishes.
#include <array>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "experiments/replay/progress.hpp"
#include "experiments/sweep/sweep_spec.hpp"
#include "experiments/sweep/sweep_store.hpp"
#include "sim/metrics.hpp"
#include "traces/site.hpp"
#include "traces/site_yaml.hpp"
#include "traces/trace.hpp"

namespace slurmtwin::experiments {

struct ReplayResult;  // experiments/replay.hpp

/// The spec's base site (site YAML, slurm.conf import, or the built-in default).
Site load_sweep_site(const SweepSpec& spec);
/// The spec's trace (files, or the built-in synthetic workload with the spec's seed and days), cut to
/// the spec's time window when it has one.
Trace load_sweep_trace(const SweepSpec& spec);
/// Keeps the jobs submitted in [from, to) (relative bounds count from the first submit); throws
/// InputError naming the spec when no job is left.
void apply_trace_window(Trace& trace, const SweepSpec& spec);
/// 16 hex digits: FNV-1a 64 of the trace's native encoding without its source, so that the same jobs
/// read through another path (a spec run from another directory) give the same keys.
std::string trace_fingerprint(const Trace& trace);
/// 16 hex digits: FNV-1a 64 of the resolved site (as site YAML) and the trace fingerprint.
std::string point_key(const Site& resolved_site, const std::string& trace_fingerprint);

/// point_key of sites that differ from one base site in a few sections, as a sweep's points do:
/// the YAML of every section equal to the base's is written once (yaml-cpp writes a large site in
/// milliseconds, which made planning 1,000 points of ub_medium take 4.5 s).
class PointKeyer {
 public:
  /// `replicates` > 1 (spec replicates) gives other keys: the stored values are means over that many replays.
  PointKeyer(Site base, std::string trace_fingerprint, std::uint32_t replicates = 1);
  std::string operator()(const Site& resolved_site) const;

 private:
  Site base_;
  std::array<std::string, kSiteSections> base_sections_;
  std::string fingerprint_;
  std::uint32_t replicates_;
};

/// A sweep ready to run: the base site and trace loaded once, every design point resolved to a site
/// and a store key (the trace is shared read-only by every replay).
struct SweepPlan {
  struct Task {
    SweepPoint point;
    Site site;        // the base site with the point applied
    std::string key;  // store key (point_key)
  };
  Trace trace;
  std::string fingerprint;             // trace_fingerprint(trace)
  std::vector<Task> tasks;             // in design order, then the site's current settings (spec
                                       // current_settings) when no design point has them
  std::optional<std::size_t> current;  // the task of the site's current settings ("you are here")
  bool current_added = false;          // ... added after the design's (no design point has them)
  bool check_invariants = false;       // every replay checks resources, job states and conservation
};

/// Loads and resolves the spec; a point that does not apply (a QOS the site lacks) throws InputError
/// naming the spec line, before anything runs. With spec current_settings, the base site's own values
/// of the swept settings are a task too, so that every answer can say where the site stands today.
SweepPlan plan_sweep(const SweepSpec& spec);
/// Records in `store` what the sweep declares: its objectives, its constraints and which point is the
/// site's current settings (when the plan has them).
void describe_sweep(SweepStore& store, const SweepSpec& spec, const SweepPlan& plan);
/// The exact replays of one point: `replicates` of them, slurmctld started phase_offsets(site,
/// replicates) before the first submit; calls `each(offset, result)` for every one, in phase order.
void replay_replicates(const Site& site, const Trace& trace, std::uint32_t replicates, bool check_invariants,
                       const std::function<void(Seconds, ReplayResult&)>& each);
/// Replays task `index` of the plan (replay_replicates, spec.replicates times) and returns its store row:
/// objectives and constraint values in spec order, each the mean over the replicates with its standard error;
/// per-job waits (their means) when the spec asks.
SweepRow evaluate_task(const SweepSpec& spec, const SweepPlan& plan, std::size_t index);
/// The mean of `values` and its standard error (sample standard deviation / sqrt(n); NaN below 2).
std::pair<double, double> mean_and_standard_error(const std::vector<double>& values);
/// True when task `index` belongs to shard `shard` of `shards` (index % shards == shard).
inline bool in_shard(std::size_t index, std::uint32_t shard, std::uint32_t shards) {
  return shards <= 1 || index % shards == shard;
}

/// Which engine scores the points: the exact simulator, the trained surrogate, or the surrogate for
/// every point and the exact simulator for those that matter (docs/sweeps.md, "Engines").
enum class SweepEngine { kExact, kSurrogate, kHybrid };
SweepEngine parse_sweep_engine(const std::string& name);

/// What the surrogate predicts for one design point.
struct SurrogatePrediction {
  /// Metrics of the schedule in which every job waits its predicted 10%, 50% and 90% quantile. Of the
  /// 10% and 90% schedules only the spec's objectives and constraints are read: their time series
  /// is built only when one of those reads it (metric_reads_series).
  std::array<sim::ReplayMetrics, 3> metrics;
  /// Predicted median wait (s) of each trace job, in trace order; -1 for jobs the site rejects or that
  /// never start in the exact replay of the base site.
  std::vector<double> median_waits;
  double seconds = 0;  // wall time of this point's share of the prediction
};

/// A prediction of one point (the surrogate's, or the response surface's): per objective then per
/// constraint metric (the spec's orders), the median and the 80% interval.
struct PointPrediction {
  std::vector<double> mid, lo, hi;
};

/// Exact values (objectives, then constraints, in the spec's order) of the points `part` (indices),
/// evaluated by the exact simulator where needed.
using ExactEvaluator = std::function<std::vector<std::vector<double>>(const std::vector<std::size_t>& part)>;

/// The surrogate side of the surrogate and hybrid engines (experiments/learn/surrogate_sweep.hpp): the
/// runner calls it to score points without replaying them and to choose which to replay; it knows
/// nothing else of the surrogate.
class PointScorer {
 public:
  virtual ~PointScorer() = default;
  /// False when there is no trained model: a hybrid sweep then screens with exact values alone.
  virtual bool has_model() const = 0;
  /// Sets up for the plan's points on `threads` threads (with a model: loads it and replays the base
  /// site once); what the user should know goes to `warnings`. Returns how many points to predict at once.
  virtual std::size_t prepare(const SweepSpec& spec, const SweepPlan& plan, unsigned threads,
                              std::vector<std::string>& warnings) = 0;
  /// Predictions for the plan's tasks `tasks`, in that order (after prepare, with a model).
  virtual std::vector<SurrogatePrediction> predict(const std::vector<std::size_t>& tasks) const = 0;
  /// Hybrid: which of the plan's tasks `tasks` (with their stored predictions, NaN where none) to
  /// evaluate exactly, in the order chosen; `evaluate` takes indices into `tasks`.
  virtual std::vector<std::size_t> choose_exact(const SweepSpec& spec, const SweepPlan& plan,
                                                const std::vector<std::size_t>& tasks,
                                                const std::vector<PointPrediction>& predictions,
                                                const ExactEvaluator& evaluate) const = 0;
};

struct SweepRunOptions {
  unsigned jobs = 0;                 // worker threads (0 = hardware threads)
  double progress_interval_s = 10;   // kLines: seconds between progress lines
  std::ostream* progress = nullptr;  // where progress goes (nullptr = none)
  ProgressStyle progress_style = ProgressStyle::kLines;
  std::uint32_t shard = 0;   // run only the design points of shard `shard` ...
  std::uint32_t shards = 1;  // ... of `shards` (job arrays: --shard i/N)
  SweepEngine engine = SweepEngine::kExact;
  PointScorer* scorer = nullptr;                 // engines surrogate and hybrid (required by them; not owned)
  std::vector<std::string>* warnings = nullptr;  // receives the surrogate's warnings (nullptr = drop)
  bool check_invariants = false;  // exact replays check invariants after every event (sim/conservation.hpp)
};

struct SweepRunSummary {
  std::size_t total = 0;      // distinct design points (of this shard)
  std::size_t skipped = 0;    // in the store already, or replayed meanwhile by another run sharing it
  std::size_t evaluated = 0;  // replayed and inserted by this run
  std::size_t feasible = 0;   // points in the store (of this spec) that meet every constraint
  std::size_t predicted = 0;  // scored by the surrogate in this run
  std::size_t verified = 0;   // hybrid: points chosen for exact evaluation, the site's current settings
                              // always among them (some may have been exact already)
  double surrogate_seconds = 0, exact_seconds = 0;  // wall time of each engine's phase in this run
};

/// " (shard I/N)" for a run of one shard of the design, else "" (for the summary lines).
std::string shard_note(const SweepRunOptions& options);

/// Runs the sweep into the SQLite database `db`. The spec is checked against the site (every point
/// applies) before any replay; the first replay error stops the workers and is rethrown.
SweepRunSummary run_sweep_spec(const SweepSpec& spec, const std::string& db, const SweepRunOptions& options);

}  // namespace slurmtwin::experiments
