#pragma once
// The durable result store of a sweep: an SQLite database in WAL mode with one row per evaluated
// point (table `points`) and the objectives the sweep declared (table `objectives`). Each point is
// inserted in its own transaction with INSERT OR IGNORE, so a sweep killed at any instant and rerun
// neither loses nor duplicates a point. See docs/sweeps.md for the schema.
#include <set>
#include <string>
#include <vector>

#include "experiments/sweep_spec.hpp"

struct sqlite3;

namespace slurmtwin::cli {

/// One row of `points`.
struct SweepRow {
  std::string key;                        // 16 hex digits: hash of the resolved site + trace fingerprint
  std::string params_json;                // {"setting": value, ...}
  std::string metrics_json;               // sim::metrics_to_json of the replay
  std::string engine = "exact";           // "exact" = the discrete-event simulator
  double run_seconds = 0;                 // wall time of the replay, s
  std::string version;                    // slurmtwin version that computed it
  std::string trace_fingerprint;          // 16 hex digits: hash of the trace's native encoding
  std::string created;                    // UTC, YYYY-MM-DDTHH:MM:SS
  std::vector<double> objectives;         // one per objective, in the store's objectives() order
  std::vector<double> constraint_values;  // one per constraint, in the store's constraints() order
  std::string job_waits;                  // zlib blob of per-job waits (encode_job_waits), or empty
};

/// Per-job waits (s, start - submit; -1 for a job that never started), one per trace job in trace
/// order, as a zlib stream of little-endian int64.
std::string encode_job_waits(const std::vector<std::int64_t>& waits);
/// The inverse of encode_job_waits; throws std::runtime_error on a corrupt blob.
std::vector<std::int64_t> decode_job_waits(const std::string& blob);

/// The column of `points` that holds metric `metric` of an objective or a constraint ("obj_" + metric,
/// other chars -> '_').
std::string objective_column(const std::string& metric);

class SweepStore {
 public:
  /// Opens (creating when absent) the database at `path`; throws std::runtime_error naming it.
  explicit SweepStore(const std::string& path);
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
  /// Inserts one point in its own transaction; false when the key was already there (row unchanged).
  /// `row.objectives` follow `objectives` and `row.constraint_values` follow `constraints` (both
  /// must have been added).
  bool insert(const SweepRow& row, const std::vector<SweepObjective>& objectives,
              const std::vector<SweepConstraint>& constraints = {});
  /// Every row, by key; objectives in objectives() order, constraint values in constraints() order
  /// (NaN where NULL); job_waits only when `with_job_waits`.
  std::vector<SweepRow> rows(bool with_job_waits = false) const;

  /// Copies every row, objective and constraint of the store at `other` into this one, in one
  /// transaction; rows whose key is already here are left unchanged. Returns the rows added.
  /// Idempotent: merging the same store twice adds nothing the second time.
  std::size_t merge_from(const std::string& other);

 private:
  void exec(const std::string& sql) const;
  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace slurmtwin::cli
