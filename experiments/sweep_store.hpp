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
  std::string key;                 // 16 hex digits: hash of the resolved site + trace fingerprint
  std::string params_json;         // {"setting": value, ...}
  std::string metrics_json;        // sim::metrics_to_json of the replay
  std::string engine = "exact";    // "exact" = the discrete-event simulator
  double run_seconds = 0;          // wall time of the replay, s
  std::string version;             // slurmtwin version that computed it
  std::string trace_fingerprint;   // 16 hex digits: hash of the trace's native encoding
  std::string created;             // UTC, YYYY-MM-DDTHH:MM:SS
  std::vector<double> objectives;  // one per objective, in the store's objectives() order
};

/// The column of `points` that holds objective `metric` ("obj_" + metric, other chars -> '_').
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
  /// Keys of every stored point.
  std::set<std::string> keys() const;
  /// Inserts one point in its own transaction; false when the key was already there (row unchanged).
  /// `row.objectives` follow `objectives` (which must have been added).
  bool insert(const SweepRow& row, const std::vector<SweepObjective>& objectives);
  /// Every row, by key; objectives in objectives() order (NaN where NULL).
  std::vector<SweepRow> rows() const;

 private:
  void exec(const std::string& sql) const;
  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace slurmtwin::cli
