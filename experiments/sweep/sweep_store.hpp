#pragma once
// The durable result store of a sweep: an SQLite database in WAL mode with one row per evaluated
// point (table `points`) and the objectives the sweep declared (table `objectives`). Each point is
// inserted in its own transaction with INSERT OR IGNORE, so a sweep killed at any instant and rerun
// neither loses nor duplicates a point. See docs/sweeps.md for the schema.
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "experiments/sweep/sweep_spec.hpp"

struct sqlite3;

namespace slurmtwin::experiments {

/// One row of `points`.
struct SweepRow {
  std::string key;                        // 16 hex digits: hash of the resolved site + trace fingerprint
  std::string params_json;                // {"setting": value, ...}
  SweepPoint params;                      // params_json read back (SweepStore::rows fills it)
  std::string metrics_json;               // sim::metrics_to_json of the replay
  std::string engine = "exact";           // "exact" = the discrete-event simulator
  double run_seconds = 0;                 // wall time of the replay, s
  std::string version;                    // slurmtwin version that computed it
  std::string trace_fingerprint;          // 16 hex digits: hash of the trace's native encoding
  std::string created;                    // UTC, YYYY-MM-DDTHH:MM:SS
  std::vector<double> objectives;         // one per objective, in the store's objectives() order
  std::vector<double> constraint_values;  // one per constraint, in the store's constraints() order
  std::uint32_t replicates = 1;           // exact replays at spread timer phases averaged into the values
  std::vector<double> standard_errors;    // per objective, then per constraint: the standard error of
                                          // the mean over the replicates; empty or NaN for one replay
  /// standard_errors[k], NaN where there is none.
  double standard_error(std::size_t k) const {
    return k < standard_errors.size() ? standard_errors[k] : std::numeric_limits<double>::quiet_NaN();
  }
  std::string job_waits;  // zlib blob of per-job waits (encode_job_waits), or empty
  // The surrogate's prediction, where it ran on this point (whatever engine produced the values
  // above): per objective, then per constraint, the median and the 80% interval; empty or NaN where it
  // did not run. `engine` says which engine produced `objectives`; a point the exact simulator
  // re-evaluated keeps the surrogate's prediction here, so both values are stored.
  std::vector<double> predicted, predicted_lo, predicted_hi;
  double predicted_seconds = std::numeric_limits<double>::quiet_NaN();  // the surrogate's time for it, s
  std::string predicted_job_waits;  // zlib blob of the predicted median waits, or empty
  bool has_prediction() const { return !std::isnan(predicted_seconds); }
};

/// Which engines have evaluated a stored point.
struct PointStatus {
  bool exact = false;      // the row's values come from the exact simulator
  bool predicted = false;  // the surrogate's prediction is stored
};

/// Per-job waits (s, start - submit; -1 for a job that never started), one per trace job in trace
/// order, as a zlib stream of little-endian int64.
std::string encode_job_waits(const std::vector<std::int64_t>& waits);
/// The inverse of encode_job_waits; throws std::runtime_error on a corrupt blob.
std::vector<std::int64_t> decode_job_waits(const std::string& blob);

/// The column of `points` that holds metric `metric` of an objective or a constraint ("obj_" + metric,
/// other chars -> '_').
std::string objective_column(const std::string& metric);
/// The columns of the surrogate's median, 10% and 90% prediction of `metric` ("sur_", "sur_lo_",
/// "sur_hi_" + metric, other chars -> '_').
std::array<std::string, 3> prediction_columns(const std::string& metric);
/// The column of the standard error of `metric` over a point's replicates ("se_" + metric, other
/// chars -> '_').
std::string standard_error_column(const std::string& metric);

/// The site's current settings of the swept parameters, as the sweep that wrote a store found them in
/// its base site ("you are here"): the key of that point's row and its settings.
struct CurrentPoint {
  std::string key;
  SweepPoint params;
};

/// How a command opens a sweep database: to write results (created when absent, schema brought up to
/// date, WAL journal) or only to read them (show, report, a merge's inputs: the file is left as it is).
enum class StoreAccess : std::uint8_t { kWrite, kRead };

class SweepStore {
 public:
  /// kWrite: opens, creating when absent, the database at `path`; std::runtime_error naming it.
  /// kRead: opens an existing sweep database read-only; InputError naming it when it is absent or has
  /// no points table (not a sweep database).
  explicit SweepStore(const std::string& path, StoreAccess access = StoreAccess::kWrite);
  ~SweepStore();
  SweepStore(const SweepStore&) = delete;
  SweepStore& operator=(const SweepStore&) = delete;

  /// Records the objectives and adds their columns when missing (existing rows get NULL there).
  void add_objectives(const std::vector<SweepObjective>& objectives);
  /// Every objective recorded, in the order first added.
  std::vector<SweepObjective> objectives() const;
  /// Replaces the recorded constraints with `constraints` (the latest spec's) and adds their metric
  /// columns when missing.
  void set_constraints(const std::vector<SweepConstraint>& constraints);
  /// The recorded constraints, in spec order.
  std::vector<SweepConstraint> constraints() const;
  /// Keys of every stored point.
  std::set<std::string> keys() const;
  /// Which engines have evaluated each stored point.
  std::map<std::string, PointStatus> status() const;
  /// Stores one point in its own transaction: a new key is inserted; for a key already there, an
  /// exact row replaces the values of a row the exact simulator had not produced, and a prediction
  /// is added where none was stored; anything else leaves the row unchanged (returns false).
  /// `row.objectives` and the medians of `row.predicted` follow `objectives`, `row.constraint_values`
  /// follows `constraints` (both must have been added; `row.predicted` continues with them).
  bool insert(const SweepRow& row, const std::vector<SweepObjective>& objectives,
              const std::vector<SweepConstraint>& constraints = {});
  /// Every row, by key; objectives in objectives() order, constraint values in constraints() order
  /// (NaN where NULL); job_waits only when `with_job_waits`.
  std::vector<SweepRow> rows(bool with_job_waits = false) const;

  /// Records which point is the site's current settings (replacing what an earlier sweep recorded).
  void set_current(const std::string& key, const SweepPoint& params);
  /// The recorded current point, if a sweep recorded one (stores written before it existed have none).
  std::optional<CurrentPoint> current() const;

  /// Claims on points, so that runs sharing one database (two `sweep run`s, array tasks without
  /// --shard) do not replay a point twice. A claim is a run's (`owner`: host, pid and a random tag)
  /// until `expires` (s since the epoch); the run renews it while the replay goes on, and a claim that
  /// expired (its run was killed) is anyone's.
  enum class Claim : std::uint8_t {
    kMine,  // claimed for `owner` now: replay it
    kDone,  // the store has the point's exact values already
    kBusy,  // another run's claim has not expired: its values will come
  };
  /// `alive`, when given, says whether another claim's owner still runs: a claim of one that does not
  /// is taken over before it expires (a run killed on this host).
  Claim claim(const std::string& key, const std::string& owner, std::int64_t now, std::int64_t lease_s,
              const std::function<bool(const std::string& owner)>& alive = {});
  /// Extends every claim of `owner` to now + lease_s.
  void renew_claims(const std::string& owner, std::int64_t now, std::int64_t lease_s);
  /// Drops the claim of `owner` on `key` (its row is stored).
  void release_claim(const std::string& key, const std::string& owner);
  /// Drops every claim of `owner` (its run stops, by an error or a signal).
  void release_claims(const std::string& owner);

  /// Copies every row, objective and constraint of the store at `other` into this one, in one
  /// transaction; rows whose key is already here are left unchanged, as is a current point already
  /// recorded here. Returns the rows added.
  /// Idempotent: merging the same store twice adds nothing the second time.
  std::size_t merge_from(const std::string& other);

 private:
  // Ends the open transaction, if SQLite has not ended it already; never throws.
  void rollback() const noexcept;
  void exec(const std::string& sql) const;
  /// Adds the value and prediction columns of `metric` that `columns` (the table's) lacks.
  void add_metric_columns(const std::string& metric, std::set<std::string>& columns) const;
  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace slurmtwin::experiments
