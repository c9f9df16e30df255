#include "experiments/sweep_store.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace slurmtwin::cli {
namespace {

/// A prepared statement, finalized on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql, const std::string& path) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) fail("prepare");
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  void bind(int i, const std::string& s) {
    if (sqlite3_bind_text(stmt_, i, s.c_str(), static_cast<int>(s.size()), SQLITE_TRANSIENT) != SQLITE_OK)
      fail("bind");
  }
  void bind(int i, double v) {
    const int rc = std::isnan(v) ? sqlite3_bind_null(stmt_, i) : sqlite3_bind_double(stmt_, i, v);
    if (rc != SQLITE_OK) fail("bind");
  }
  /// True while a row is available.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) fail("step");
    return false;
  }
  std::string text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p)) : std::string();
  }
  double real(int col) const {
    if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) return std::numeric_limits<double>::quiet_NaN();
    return sqlite3_column_double(stmt_, col);
  }

 private:
  [[noreturn]] void fail(const char* what) const {
    throw std::runtime_error(fmt::format("{}: sqlite {}: {}", path_, what, sqlite3_errmsg(db_)));
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string path_;
};

}  // namespace

std::string objective_column(const std::string& metric) {
  std::string out = "obj_";
  for (char c : metric) out += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return out;
}

SweepStore::SweepStore(const std::string& path) : path_(path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw std::runtime_error(fmt::format("{}: cannot open the sweep database: {}", path, msg));
  }
  sqlite3_busy_timeout(db_, 10'000);
  try {
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=NORMAL");
    exec(
        "CREATE TABLE IF NOT EXISTS points (key TEXT PRIMARY KEY, params TEXT NOT NULL, metrics TEXT NOT "
        "NULL, engine TEXT NOT NULL, run_seconds REAL NOT NULL, version TEXT NOT NULL, trace_fingerprint "
        "TEXT NOT NULL, created TEXT NOT NULL)");
    exec(
        "CREATE TABLE IF NOT EXISTS objectives (seq INTEGER PRIMARY KEY, metric TEXT UNIQUE NOT NULL, "
        "column_name TEXT NOT NULL, goal TEXT NOT NULL)");
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

SweepStore::~SweepStore() {
  sqlite3_close(db_);
}

void SweepStore::exec(const std::string& sql) const {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string msg = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    throw std::runtime_error(fmt::format("{}: sqlite: {} (in: {})", path_, msg, sql));
  }
}

void SweepStore::add_objectives(const std::vector<SweepObjective>& objectives) {
  std::set<std::string> columns;
  {
    Statement s(db_, "PRAGMA table_info(points)", path_);
    while (s.step()) columns.insert(s.text(1));
  }
  exec("BEGIN IMMEDIATE");
  try {
    for (const auto& o : objectives) {
      const auto col = objective_column(o.metric);
      if (!columns.count(col)) {
        exec(fmt::format("ALTER TABLE points ADD COLUMN \"{}\" REAL", col));
        columns.insert(col);
      }
      Statement s(db_,
                  "INSERT OR REPLACE INTO objectives (seq, metric, column_name, goal) VALUES "
                  "((SELECT seq FROM objectives WHERE metric = ?1), ?1, ?2, ?3)",
                  path_);
      s.bind(1, o.metric);
      s.bind(2, col);
      s.bind(3, std::string(o.goal == Goal::kMin ? "min" : "max"));
      s.step();
    }
    exec("COMMIT");
  } catch (...) {
    exec("ROLLBACK");
    throw;
  }
}

std::vector<SweepObjective> SweepStore::objectives() const {
  std::vector<SweepObjective> out;
  Statement s(db_, "SELECT metric, goal FROM objectives ORDER BY seq", path_);
  while (s.step()) out.push_back({s.text(0), s.text(1) == "max" ? Goal::kMax : Goal::kMin});
  return out;
}

std::set<std::string> SweepStore::keys() const {
  std::set<std::string> out;
  Statement s(db_, "SELECT key FROM points", path_);
  while (s.step()) out.insert(s.text(0));
  return out;
}

bool SweepStore::insert(const SweepRow& row, const std::vector<SweepObjective>& objectives) {
  std::string cols = "key, params, metrics, engine, run_seconds, version, trace_fingerprint, created";
  std::string marks = "?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8";
  for (std::size_t k = 0; k < objectives.size(); ++k) {
    cols += fmt::format(", \"{}\"", objective_column(objectives[k].metric));
    marks += fmt::format(", ?{}", 9 + k);
  }
  exec("BEGIN IMMEDIATE");
  try {
    Statement s(db_, fmt::format("INSERT OR IGNORE INTO points ({}) VALUES ({})", cols, marks), path_);
    s.bind(1, row.key);
    s.bind(2, row.params_json);
    s.bind(3, row.metrics_json);
    s.bind(4, row.engine);
    s.bind(5, row.run_seconds);
    s.bind(6, row.version);
    s.bind(7, row.trace_fingerprint);
    s.bind(8, row.created);
    for (std::size_t k = 0; k < objectives.size(); ++k)
      s.bind(static_cast<int>(9 + k),
             k < row.objectives.size() ? row.objectives[k] : std::numeric_limits<double>::quiet_NaN());
    s.step();
    const bool added = sqlite3_changes(db_) > 0;
    exec("COMMIT");
    return added;
  } catch (...) {
    exec("ROLLBACK");
    throw;
  }
}

std::vector<SweepRow> SweepStore::rows() const {
  const auto objs = objectives();
  std::string cols = "key, params, metrics, engine, run_seconds, version, trace_fingerprint, created";
  for (const auto& o : objs) cols += fmt::format(", \"{}\"", objective_column(o.metric));
  std::vector<SweepRow> out;
  Statement s(db_, fmt::format("SELECT {} FROM points ORDER BY key", cols), path_);
  while (s.step()) {
    SweepRow r;
    r.key = s.text(0);
    r.params_json = s.text(1);
    r.metrics_json = s.text(2);
    r.engine = s.text(3);
    r.run_seconds = s.real(4);
    r.version = s.text(5);
    r.trace_fingerprint = s.text(6);
    r.created = s.text(7);
    for (std::size_t k = 0; k < objs.size(); ++k) r.objectives.push_back(s.real(static_cast<int>(8 + k)));
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace slurmtwin::cli
