#pragma once
// What-if sweeps: the sweep specification (YAML), the scheduler settings a sweep may vary, the designs
// that turn a parameter space into points, and the objectives read from a replay's metrics.
// See docs/sweeps.md for the file format.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/metrics.hpp"
#include "traces/site.hpp"
#include "traces/site_import.hpp"
#include "traces/trace_window.hpp"

namespace YAML {
class Node;
}

namespace slurmtwin::experiments {

enum class SweepScale { kLinear, kLog };
enum class SweepDesign { kGrid, kRandom, kLhs, kSobol };
enum class Goal { kMin, kMax };
enum class ConstraintOp { kLess, kLessEqual, kGreater, kGreaterEqual };

/// One swept setting: an explicit list of values, or a range [lo, hi] (with `count` levels for a grid).
struct SweepParameter {
  std::string name;            // setting name, e.g. "PriorityWeightAge" (see setting_is_known)
  std::vector<double> values;  // explicit values; empty when a range is given
  double lo = 0, hi = 0;       // range bounds (inclusive), in the setting's unit
  SweepScale scale = SweepScale::kLinear;
  std::uint32_t count = 0;  // grid levels of a range (0 = not given)
  bool integer = true;      // the setting takes integer values: points are rounded
  std::uint64_t line = 0;   // line of the parameter in the spec file (1-based)
};

struct SweepObjective {
  std::string metric;  // e.g. "wait_mean", "wait_p90@partition:gpu" (see metric_value)
  Goal goal = Goal::kMin;
  std::uint64_t line = 0;  // line in the spec file (1-based)
};

/// A constraint on a replay's metrics, e.g. "fairness >= 0.8": points that break one are infeasible
/// (kept in the store, left out of `sweep show`'s best points and Pareto front).
struct SweepConstraint {
  std::string metric;  // as an objective's metric
  ConstraintOp op = ConstraintOp::kLessEqual;
  double bound = 0;        // in the metric's unit
  std::string text;        // normalised "metric op bound", e.g. "fairness >= 0.8"
  std::uint64_t line = 0;  // line in the spec file (1-based)
};

struct SweepSpec {
  std::string file;  // the spec file (for messages)
  // base site: site_yaml, or the site's files (site_files.cluster names slurm.conf and/or scontrol
  // output), or neither (the built-in default site)
  std::string site_yaml;
  SiteFiles site_files;
  std::uint32_t default_cpu_nodes = 64;
  // trace: paths (read with format/users_from), or none (the built-in synthetic workload)
  std::vector<std::string> trace_paths;
  std::string trace_format = "auto";
  std::string users_from;
  std::uint64_t synthetic_seed = 42;
  double synthetic_days = 7.0;             // days of synthetic workload
  WindowBound window_from, window_to;      // keep jobs submitted in [from, to) (unset = open)
  std::uint64_t window_line = 0;           // line of trace.window in the spec (for messages)
  std::vector<SweepParameter> parameters;  // in spec order
  SweepDesign design = SweepDesign::kGrid;
  std::uint32_t points = 0;  // random / lhs: number of points
  std::uint64_t seed = 1;    // random / lhs / sobol: design seed (sobol: of the scrambling)
  bool scramble = false;     // sobol: random digital shift per seed
  std::vector<SweepObjective> objectives;
  std::vector<SweepConstraint> constraints;
  bool job_waits = false;  // store each point's per-job waits (zlib blob) too
  // Evaluate the base site's own values of the swept settings too (one more point unless the design
  // has them), so that answers can say where the site stands today ("you are here").
  bool current_settings = true;
  // Exact replays per point, the controller started at phases spread over the point's bf_interval
  // (replay.hpp, phase_offsets): its values are their means, with standard errors. Timer phase alone
  // moves a week's mean wait by a few percent (docs/sweeps.md, "Replicates").
  std::uint32_t replicates = 1;
};
inline constexpr std::uint32_t kMaxReplicates = 64;

/// A point of the space: setting name -> value (in the setting's unit).
using SweepPoint = std::map<std::string, double>;

/// Parses a spec; relative paths are taken relative to the spec's directory. Every error (unknown key
/// or setting, empty range, bad type, unknown metric) throws InputError naming file:line and the key.
SweepSpec parse_sweep_spec(const std::string& content, const std::string& file_name);
class YamlReader;
/// The `site:` section of a sweep spec or a check file (docs/sweeps.md): a site YAML path, or a map of
/// yaml / slurm_conf / scontrol_config / scontrol_nodes / scontrol_partitions / gres_conf / qos_dump /
/// sacctmgr / sacctmgr_dump / assoc_dump / default_cpu_nodes.
void parse_site_section(const YamlReader& r, const YAML::Node& site, SweepSpec& spec);
/// The `trace:` section likewise: a path, or a map of path / paths / format / users_from / synthetic
/// {seed, days} and, where `window_allowed` (sweeps), window {from, to}.
void parse_trace_section(const YamlReader& r, const YAML::Node& trace, SweepSpec& spec, bool window_allowed);
SweepSpec load_sweep_spec(const std::string& path);

/// True when `name` is a setting a sweep may vary; `integer` tells whether it takes integer values.
/// Names: PriorityWeight{Age,Fairshare,JobSize,Partition,QOS,Assoc}, PriorityWeightTRES/<tres>,
/// PriorityMaxAge (s), PriorityDecayHalfLife (s), PriorityFavorSmall (0/1), bf_interval (s),
/// bf_window (min, as slurm.conf), bf_resolution (s), bf_max_job_test, bf_max_job_user,
/// default_queue_depth, sched_interval (s), QOS/<name>/Priority, Licenses/<name> (the site's count).
bool setting_is_known(const std::string& name, bool& integer);
/// Sets one setting on `site`; throws std::invalid_argument for an unknown setting, a QOS or licence
/// the site lacks, or a value out of the setting's range.
void apply_setting(Site& site, const std::string& name, double value);
/// The value `site` has for a setting, in the unit apply_setting takes (bf_window: minutes;
/// PriorityWeightTRES/x: 0 when the site weights no x); throws as apply_setting.
double current_setting(const Site& site, const std::string& name);
/// {"setting": value, ...} with values printed exactly (%.17g).
std::string point_json(const SweepPoint& point);
/// The unit of a setting's values in a sweep (traces' setting_unit): "s" for durations, "min" for
/// bf_window, "" for weights, counts, flags and QOS priorities.
std::string_view setting_unit(const std::string& name);
/// Applies every setting of `point`.
void apply_point(Site& site, const SweepPoint& point);

/// How many points the design has before duplicates are removed (grid: the product of the levels),
/// without expanding it.
std::uint64_t design_size(const SweepSpec& spec);

/// The points of the spec's design, duplicates (after integer rounding) removed, first occurrence
/// kept. Grid: cartesian product, the first parameter varying slowest. Random / LHS: `points` points,
/// deterministic per seed; LHS puts exactly one point in each of `points` equal-probability strata
/// of every dimension (of the log of the value for log scales). Sobol: the first `points` points of
/// the Joe-Kuo Sobol sequence (sweep_sobol.hpp), one dimension per parameter in spec order.
std::vector<SweepPoint> design_points(const SweepSpec& spec);

/// The value of parameter `p` at u in [0, 1]: lo at 0, hi at 1 (on its scale; rounded when it takes
/// integers), or for a value list the value of the n equal slices of [0, 1) that u falls in.
double parameter_value(const SweepParameter& p, double u);

/// True when `metric` names a metric_value() knows.
bool metric_is_known(const std::string& metric);
/// True when metric_value() reads `metric` from the replay's time series (compute_metrics' `series`):
/// metrics computed without it are right for every other metric.
bool metric_reads_series(const std::string& metric);

/// The unit a metric's values are in: "s" for waits and start errors, "" for the rest (counts, 0..1
/// fractions, slowdowns, relative deviations).
std::string_view metric_unit(const std::string& metric);

/// A unit a person reads seconds in, for values around `typical_seconds`: s, min, h or d (the largest
/// that keeps the value at 2 or more).
struct TimeUnit {
  std::string_view name;
  double seconds = 1;
};
TimeUnit readable_time_unit(double typical_seconds);

/// An arrow that says which way a goal points (↓ lower is better, ↑ higher), never read as a unit.
std::string_view goal_arrow(Goal goal);

/// Checks that the group of a metric ("wait_p90@qos:x") is a partition, account or QOS of `site`: a
/// misspelt one would be 0 at every point. Throws InputError (file, line, "metric") naming the nearest
/// name of that kind.
void check_metric_group(const std::string& metric, const Site& site, const std::string& file,
                        std::uint64_t line);

/// check_metric_group on a spec's objectives and constraints.
void check_metric_groups(const SweepSpec& spec, const Site& site);
/// A metric of a replay: wait_mean, wait_median, wait_p90, wait_p95, wait_p99, wait_max (s),
/// bsld_mean, jobs_started (these optionally @partition:NAME, @account:NAME or @qos:NAME; 0 when the
/// group has no started job), utilisation, memory_utilisation, gpu_utilisation (0..1; GPUs only on a
/// site with GPUs), preemptions (optionally @partition:NAME or
/// @qos:NAME), mean_queue_length, never_started, fairness (0..1, see fairness_index); against the
/// starts a trace recorded: start_error_mean (s) and wait_mean_deviation (relative), optionally
/// @partition:NAME or @qos:NAME (std::invalid_argument when the trace recorded no start).
double metric_value(const sim::ReplayMetrics& m, const std::string& metric);
/// 1 - (1/2) * sum over top-level accounts of |usage share - target share| of delivered CPU time
/// (1 = every top-level account got exactly its fair-share target; 0 = all went elsewhere); 1 when
/// the site has no accounts.
double fairness_index(const sim::ReplayMetrics& m);
/// True when `value` satisfies the constraint (NaN never does).
bool constraint_holds(const SweepConstraint& c, double value);
/// True for < and <= (the constraint bounds its metric from above).
bool bounds_above(ConstraintOp op);
/// "<=", "<", ">=", ">".
const char* to_string(ConstraintOp op);
/// Parses "METRIC OP NUMBER" (OP one of <=, <, >=, >); throws std::invalid_argument saying why.
SweepConstraint parse_constraint(const std::string& text);

/// Indices of the rows no other row dominates (better or equal in every objective, better in one),
/// in input order. `rows[i][k]` is objective k of row i.
std::vector<std::size_t> pareto_front(const std::vector<std::vector<double>>& rows,
                                      const std::vector<Goal>& goals);

/// FNV-1a 64-bit hash.
std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t hash = 0xcbf29ce484222325ull);

}  // namespace slurmtwin::experiments
