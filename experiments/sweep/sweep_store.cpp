#include "experiments/sweep/sweep_store.hpp"

#include <fmt/format.h>
#include <sqlite3.h>
#include <yaml-cpp/yaml.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <variant>

#include "traces/read_report.hpp"

namespace slurmtwin::experiments {
namespace {

/// A prepared statement, finalized on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql, std::string path) : db_(db), path_(std::move(path)) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) fail("prepare");
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  void bind(int i, const std::string& s) {
    if (sqlite3_bind_text(stmt_, i, s.c_str(), static_cast<int>(s.size()), SQLITE_TRANSIENT) != SQLITE_OK)
      fail("bind");
  }
  void bind_int(int i, std::int64_t v) {
    if (sqlite3_bind_int64(stmt_, i, v) != SQLITE_OK) fail("bind");
  }
  void bind_blob(int i, const std::string& bytes) {
    const int rc = bytes.empty() ? sqlite3_bind_null(stmt_, i)
                                 : sqlite3_bind_blob(stmt_, i, bytes.data(), static_cast<int>(bytes.size()),
                                                     SQLITE_TRANSIENT);
    if (rc != SQLITE_OK) fail("bind");
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
  std::string blob(int col) const {
    const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col))) : std::string();
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

std::set<std::string> table_columns(sqlite3* db, const std::string& table, const std::string& path) {
  std::set<std::string> columns;
  Statement s(db, fmt::format("PRAGMA {}", table), path);
  while (s.step()) columns.insert(s.text(1));
  return columns;
}

ConstraintOp parse_op(const std::string& op) {
  if (op == "<") return ConstraintOp::kLess;
  if (op == ">") return ConstraintOp::kGreater;
  if (op == ">=") return ConstraintOp::kGreaterEqual;
  return ConstraintOp::kLessEqual;
}

}  // namespace

std::string encode_job_waits(const std::vector<std::int64_t>& waits) {
  std::string raw(waits.size() * sizeof(std::int64_t), '\0');
  for (std::size_t i = 0; i < waits.size(); ++i) {
    auto v = static_cast<std::uint64_t>(waits[i]);
    for (std::size_t b = 0; b < sizeof(v); ++b, v >>= 8) raw[i * sizeof(v) + b] = static_cast<char>(v & 0xff);
  }
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  std::string out(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(raw.data()),
                static_cast<uLong>(raw.size()), Z_DEFAULT_COMPRESSION) != Z_OK)
    throw std::runtime_error("job waits: zlib compress failed");
  out.resize(size);
  return out;
}

std::vector<std::int64_t> decode_job_waits(const std::string& blob) {
  z_stream z{};
  if (inflateInit(&z) != Z_OK) throw std::runtime_error("job waits: zlib init failed");
  std::string raw;
  char buffer[1 << 14];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(blob.data()));
  z.avail_in = static_cast<uInt>(blob.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof(buffer);
    rc = inflate(&z, Z_NO_FLUSH);
    raw.append(buffer, sizeof(buffer) - z.avail_out);
    if (rc == Z_BUF_ERROR && z.avail_in == 0) break;
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END || raw.size() % sizeof(std::int64_t) != 0)
    throw std::runtime_error("job waits: corrupt blob");
  std::vector<std::int64_t> out(raw.size() / sizeof(std::int64_t));
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint64_t v = 0;
    for (std::size_t b = sizeof(v); b-- > 0;)
      v = (v << 8) | static_cast<unsigned char>(raw[i * sizeof(v) + b]);
    out[i] = static_cast<std::int64_t>(v);
  }
  return out;
}

std::string objective_column(const std::string& metric) {
  std::string out = "obj_";
  for (char c : metric) out += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return out;
}

std::string standard_error_column(const std::string& metric) {
  return "se_" + objective_column(metric).substr(4);
}

std::array<std::string, 3> prediction_columns(const std::string& metric) {
  const auto base = objective_column(metric).substr(4);
  return {"sur_" + base, "sur_lo_" + base, "sur_hi_" + base};
}

SweepStore::SweepStore(const std::string& path, StoreAccess access) : path_(path) {
  const bool read_only = access == StoreAccess::kRead;
  // A reader never creates the file it was asked to read (a typo must not become an empty result).
  if (read_only && !std::filesystem::is_regular_file(path))
    throw InputError(path, 0, "db", "no such sweep database");
  const int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw std::runtime_error(fmt::format("{}: cannot open the sweep database: {}", path, msg));
  }
  sqlite3_busy_timeout(db_, 10'000);
  if (read_only) {
    bool sweep_database = false;
    try {
      sweep_database = !table_columns(db_, "table_info(points)", path_).empty();
    } catch (const std::runtime_error&) {  // not SQLite at all ("file is not a database")
    }
    if (!sweep_database) {
      sqlite3_close(db_);
      throw InputError(path, 0, "db", "not a sweep database (no points table)");
    }
    return;
  }
  try {
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=NORMAL");
    // The schema is made and brought up to date in one write transaction: two processes opening a new
    // store at once (a sweep and a reader of its progress) each saw a column missing and the second
    // ALTER TABLE failed ("duplicate column name"), ending that process.
    exec("BEGIN IMMEDIATE");
    exec(
        "CREATE TABLE IF NOT EXISTS points (key TEXT PRIMARY KEY, params TEXT NOT NULL, metrics TEXT NOT "
        "NULL, engine TEXT NOT NULL, run_seconds REAL NOT NULL, version TEXT NOT NULL, trace_fingerprint "
        "TEXT NOT NULL, created TEXT NOT NULL)");
    exec(
        "CREATE TABLE IF NOT EXISTS objectives (seq INTEGER PRIMARY KEY, metric TEXT UNIQUE NOT NULL, "
        "column_name TEXT NOT NULL, goal TEXT NOT NULL)");
    exec(
        "CREATE TABLE IF NOT EXISTS constraints (seq INTEGER PRIMARY KEY, text TEXT UNIQUE NOT NULL, "
        "metric TEXT NOT NULL, column_name TEXT NOT NULL, op TEXT NOT NULL, bound REAL NOT NULL)");
    // Facts about the sweep rather than a point: "current_key" and "current_params" (set_current).
    exec("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)");
    // Points a run is replaying now (claim()); rows leave when their point is stored.
    exec(
        "CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires INTEGER NOT "
        "NULL)");
    // Stores written before per-job waits existed get the column (NULL in their rows).
    // Likewise for the surrogate's prediction of a point (sweep run --engine surrogate|hybrid).
    const auto columns = table_columns(db_, "table_info(points)", path_);
    if (!columns.count("job_waits")) exec("ALTER TABLE points ADD COLUMN job_waits BLOB");
    if (!columns.count("sur_seconds")) exec("ALTER TABLE points ADD COLUMN sur_seconds REAL");
    if (!columns.count("sur_job_waits")) exec("ALTER TABLE points ADD COLUMN sur_job_waits BLOB");
    // And for replicated points (spec replicates): NULL in older rows means one replay.
    if (!columns.count("replicates")) exec("ALTER TABLE points ADD COLUMN replicates INTEGER");
    exec("COMMIT");
  } catch (...) {
    rollback();
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

void SweepStore::rollback() const noexcept {
  // SQLite ends the transaction itself on some errors (a full disk, an I/O error): a ROLLBACK then
  // fails with "no transaction is active", which must not replace the error that says why.
  if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void SweepStore::add_metric_columns(const std::string& metric, std::set<std::string>& columns) const {
  const auto p = prediction_columns(metric);
  for (const auto& col : {objective_column(metric), standard_error_column(metric), p[0], p[1], p[2]})
    if (columns.insert(col).second) exec(fmt::format("ALTER TABLE points ADD COLUMN \"{}\" REAL", col));
}

void SweepStore::add_objectives(const std::vector<SweepObjective>& objectives) {
  auto columns = table_columns(db_, "table_info(points)", path_);
  exec("BEGIN IMMEDIATE");
  try {
    for (const auto& o : objectives) {
      const auto col = objective_column(o.metric);
      add_metric_columns(o.metric, columns);
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
    rollback();
    throw;
  }
}

std::vector<SweepObjective> SweepStore::objectives() const {
  std::vector<SweepObjective> out;
  Statement s(db_, "SELECT metric, goal FROM objectives ORDER BY seq", path_);
  while (s.step()) out.push_back({s.text(0), s.text(1) == "max" ? Goal::kMax : Goal::kMin});
  return out;
}

void SweepStore::set_constraints(const std::vector<SweepConstraint>& constraints) {
  auto columns = table_columns(db_, "table_info(points)", path_);
  exec("BEGIN IMMEDIATE");
  try {
    exec("DELETE FROM constraints");
    for (std::size_t k = 0; k < constraints.size(); ++k) {
      const auto& c = constraints[k];
      const auto col = objective_column(c.metric);
      add_metric_columns(c.metric, columns);
      Statement s(db_,
                  "INSERT OR IGNORE INTO constraints (seq, text, metric, column_name, op, bound) VALUES "
                  "(?1, ?2, ?3, ?4, ?5, ?6)",
                  path_);
      s.bind_int(1, static_cast<std::int64_t>(k));
      s.bind(2, c.text);
      s.bind(3, c.metric);
      s.bind(4, col);
      s.bind(5, std::string(to_string(c.op)));
      s.bind(6, c.bound);
      s.step();
    }
    exec("COMMIT");
  } catch (...) {
    rollback();
    throw;
  }
}

std::vector<SweepConstraint> SweepStore::constraints() const {
  std::vector<SweepConstraint> out;
  Statement s(db_, "SELECT text, metric, op, bound FROM constraints ORDER BY seq", path_);
  while (s.step()) {
    SweepConstraint c;
    c.text = s.text(0);
    c.metric = s.text(1);
    c.op = parse_op(s.text(2));
    c.bound = s.real(3);
    out.push_back(std::move(c));
  }
  return out;
}

std::set<std::string> SweepStore::keys() const {
  std::set<std::string> out;
  Statement s(db_, "SELECT key FROM points", path_);
  while (s.step()) out.insert(s.text(0));
  return out;
}

std::map<std::string, PointStatus> SweepStore::status() const {
  std::map<std::string, PointStatus> out;
  Statement s(db_, "SELECT key, engine, sur_seconds FROM points", path_);
  while (s.step()) out[s.text(0)] = {s.text(1) == "exact", !std::isnan(s.real(2))};
  return out;
}

bool SweepStore::insert(const SweepRow& row, const std::vector<SweepObjective>& objectives,
                        const std::vector<SweepConstraint>& constraints) {
  // Metric column -> value; a metric both objective and constraint has one column.
  std::map<std::string, double> values, predictions;
  const auto at = [](const std::vector<double>& v, std::size_t k) {
    return k < v.size() ? v[k] : std::numeric_limits<double>::quiet_NaN();
  };
  const auto add = [&](const std::string& metric, double value, std::size_t k) {
    values[objective_column(metric)] = value;
    values[standard_error_column(metric)] = at(row.standard_errors, k);
    if (!row.has_prediction()) return;
    const auto p = prediction_columns(metric);
    predictions[p[0]] = at(row.predicted, k);
    predictions[p[1]] = at(row.predicted_lo, k);
    predictions[p[2]] = at(row.predicted_hi, k);
  };
  for (std::size_t k = 0; k < objectives.size(); ++k) add(objectives[k].metric, at(row.objectives, k), k);
  for (std::size_t k = 0; k < constraints.size(); ++k)
    add(constraints[k].metric, at(row.constraint_values, k), objectives.size() + k);
  if (row.has_prediction()) predictions["sur_seconds"] = row.predicted_seconds;

  // (column, value) lists: a std::string value binds as text, a Blob as a blob, a double as a real.
  struct Blob {
    std::string bytes;
  };
  using Value = std::variant<std::string, double, std::int64_t, Blob>;
  using Columns = std::vector<std::pair<std::string, Value>>;
  Columns main = {{"params", row.params_json},
                  {"metrics", row.metrics_json},
                  {"engine", row.engine},
                  {"run_seconds", row.run_seconds},
                  {"version", row.version},
                  {"trace_fingerprint", row.trace_fingerprint},
                  {"created", row.created},
                  {"job_waits", Blob{row.job_waits}},
                  {"replicates", std::int64_t{row.replicates}}};
  for (const auto& [col, value] : values) main.emplace_back(col, value);
  Columns predicted;
  for (const auto& [col, value] : predictions) predicted.emplace_back(col, value);
  if (row.has_prediction()) predicted.emplace_back("sur_job_waits", Blob{row.predicted_job_waits});
  // Runs `sql` with ?1 = the key and ?2... = `cols` in order; true when it changed a row.
  const auto run = [&](const std::string& sql, const Columns& cols) {
    Statement s(db_, sql, path_);
    s.bind(1, row.key);
    int mark = 2;
    for (const auto& [col, value] : cols) {
      if (const auto* t = std::get_if<std::string>(&value)) s.bind(mark, *t);
      if (const auto* d = std::get_if<double>(&value)) s.bind(mark, *d);
      if (const auto* i = std::get_if<std::int64_t>(&value)) s.bind_int(mark, *i);
      if (const auto* b = std::get_if<Blob>(&value)) s.bind_blob(mark, b->bytes);
      ++mark;
    }
    s.step();
    return sqlite3_changes(db_) > 0;
  };
  const auto assignments = [](const Columns& cols) {
    std::string out;
    int mark = 2;
    for (const auto& [col, value] : cols)
      out += fmt::format("{}\"{}\" = ?{}", out.empty() ? "" : ", ", col, mark++);
    return out;
  };
  Columns all = main;
  all.insert(all.end(), predicted.begin(), predicted.end());
  std::string names = "key", marks = "?1";
  for (std::size_t k = 0; k < all.size(); ++k) {
    names += fmt::format(", \"{}\"", all[k].first);
    marks += fmt::format(", ?{}", k + 2);
  }
  exec("BEGIN IMMEDIATE");
  try {
    bool changed = run(fmt::format("INSERT OR IGNORE INTO points ({}) VALUES ({})", names, marks), all);
    if (!changed && row.engine == "exact")
      changed = run(
          fmt::format("UPDATE points SET {} WHERE key = ?1 AND engine <> 'exact'", assignments(main)), main);
    if (!changed && row.has_prediction())
      changed = run(
          fmt::format("UPDATE points SET {} WHERE key = ?1 AND sur_seconds IS NULL", assignments(predicted)),
          predicted);
    exec("COMMIT");
    return changed;
  } catch (...) {
    rollback();
    throw;
  }
}

namespace {

/// A stored point's settings: a JSON object of numbers, as the sweep wrote it. A database changed by
/// hand or damaged is bad input, named by file, point and field.
std::map<std::string, double> read_params(const std::string& path, const std::string& key,
                                          const std::string& json) {
  std::map<std::string, double> out;
  try {
    const auto node = YAML::Load(json);
    if (!node.IsMap())
      throw InputError(path, 0, "params", fmt::format("point {}: not an object: {}", key, json));
    for (const auto& kv : node) {
      const auto name = kv.first.as<std::string>();
      double value = 0;
      if (!kv.second.IsScalar() || !YAML::convert<double>::decode(kv.second, value) || !std::isfinite(value))
        throw InputError(path, 0, "params", fmt::format("point {}: {} is not a number", key, name));
      out[name] = value;
    }
  } catch (const YAML::Exception& e) {
    throw InputError(path, 0, "params", fmt::format("point {}: {} in {}", key, e.msg, json));
  }
  return out;
}

}  // namespace

std::vector<SweepRow> SweepStore::rows(bool with_job_waits) const {
  const auto objs = objectives();
  const auto cons = constraints();
  std::string cols = "key, params, metrics, engine, run_seconds, version, trace_fingerprint, created";
  cols += with_job_waits ? ", job_waits" : ", NULL";
  cols += with_job_waits ? ", sur_job_waits" : ", NULL";
  cols += ", sur_seconds, replicates";
  std::vector<std::string> metrics;
  for (const auto& o : objs) metrics.push_back(o.metric);
  for (const auto& c : cons) metrics.push_back(c.metric);
  for (const auto& metric : metrics) cols += fmt::format(", \"{}\"", objective_column(metric));
  for (const auto& metric : metrics) cols += fmt::format(", \"{}\"", standard_error_column(metric));
  for (const auto& metric : metrics)
    for (const auto& col : prediction_columns(metric)) cols += fmt::format(", \"{}\"", col);
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
    r.job_waits = s.blob(8);
    r.predicted_job_waits = s.blob(9);
    r.predicted_seconds = s.real(10);
    r.params = read_params(path_, r.key, r.params_json);
    // NULL (NaN): a row from before replicates, one replay. Anything else must be a count a sweep
    // could have written (a corrupted or foreign value wrapped in the cast).
    if (const double n = s.real(11); !std::isnan(n)) {
      if (!(n >= 1 && n <= kMaxReplicates) || n != std::floor(n))
        throw InputError(path_, 0, "replicates",
                         fmt::format("point {}: {} is not a replicate count", r.key, n));
      r.replicates = static_cast<std::uint32_t>(n);
    }
    int col = 12;
    for (std::size_t k = 0; k < objs.size(); ++k) r.objectives.push_back(s.real(col++));
    for (std::size_t k = 0; k < cons.size(); ++k) r.constraint_values.push_back(s.real(col++));
    for (std::size_t k = 0; k < metrics.size(); ++k) r.standard_errors.push_back(s.real(col++));
    if (r.has_prediction())
      for (std::size_t k = 0; k < metrics.size(); ++k) {
        r.predicted.push_back(s.real(col));
        r.predicted_lo.push_back(s.real(col + 1));
        r.predicted_hi.push_back(s.real(col + 2));
        col += 3;
      }
    out.push_back(std::move(r));
  }
  return out;
}

SweepStore::Claim SweepStore::claim(const std::string& key, const std::string& owner, std::int64_t now,
                                    std::int64_t lease_s,
                                    const std::function<bool(const std::string&)>& alive) {
  exec("BEGIN IMMEDIATE");
  try {
    Claim result = Claim::kMine;
    {
      Statement done(db_, "SELECT 1 FROM points WHERE key = ?1 AND engine = 'exact'", path_);
      done.bind(1, key);
      if (done.step()) result = Claim::kDone;
    }
    if (result == Claim::kMine) {
      Statement other(db_, "SELECT owner FROM claims WHERE key = ?1 AND owner <> ?2 AND expires > ?3", path_);
      other.bind(1, key);
      other.bind(2, owner);
      other.bind_int(3, now);
      if (other.step() && (!alive || alive(other.text(0)))) result = Claim::kBusy;
    }
    if (result == Claim::kMine) {
      Statement take(db_, "INSERT OR REPLACE INTO claims (key, owner, expires) VALUES (?1, ?2, ?3)", path_);
      take.bind(1, key);
      take.bind(2, owner);
      take.bind_int(3, now + lease_s);
      take.step();
    }
    exec("COMMIT");
    return result;
  } catch (...) {
    rollback();
    throw;
  }
}

void SweepStore::renew_claims(const std::string& owner, std::int64_t now, std::int64_t lease_s) {
  Statement s(db_, "UPDATE claims SET expires = ?1 WHERE owner = ?2", path_);
  s.bind_int(1, now + lease_s);
  s.bind(2, owner);
  s.step();
}

void SweepStore::release_claim(const std::string& key, const std::string& owner) {
  Statement s(db_, "DELETE FROM claims WHERE key = ?1 AND owner = ?2", path_);
  s.bind(1, key);
  s.bind(2, owner);
  s.step();
}

void SweepStore::release_claims(const std::string& owner) {
  Statement s(db_, "DELETE FROM claims WHERE owner = ?1", path_);
  s.bind(1, owner);
  s.step();
}

void SweepStore::set_current(const std::string& key, const SweepPoint& params) {
  exec("BEGIN IMMEDIATE");
  try {
    for (const auto& [name, value] :
         {std::pair{"current_key", key}, std::pair{"current_params", point_json(params)}}) {
      Statement s(db_, "INSERT OR REPLACE INTO meta (name, value) VALUES (?1, ?2)", path_);
      s.bind(1, std::string(name));
      s.bind(2, value);
      s.step();
    }
    exec("COMMIT");
  } catch (...) {
    rollback();
    throw;
  }
}

std::optional<CurrentPoint> SweepStore::current() const {
  if (table_columns(db_, "table_info(meta)", path_).empty()) return std::nullopt;  // an older store
  std::map<std::string, std::string> meta;
  Statement s(db_, "SELECT name, value FROM meta WHERE name IN ('current_key', 'current_params')", path_);
  while (s.step()) meta[s.text(0)] = s.text(1);
  if (meta.size() != 2) return std::nullopt;
  return CurrentPoint{meta["current_key"], read_params(path_, meta["current_key"], meta["current_params"])};
}

std::size_t SweepStore::merge_from(const std::string& other) {
  {
    // Opening it first checks that it is a sweep store; it is only read.
    SweepStore src(other, StoreAccess::kRead);
    add_objectives(src.objectives());
    auto mine = constraints();
    for (const auto& c : src.constraints()) {
      const bool known =
          std::any_of(mine.begin(), mine.end(), [&](const auto& m) { return m.text == c.text; });
      if (!known) mine.push_back(c);
    }
    set_constraints(mine);
  }
  {
    Statement attach(db_, "ATTACH DATABASE ?1 AS src", path_);
    attach.bind(1, other);
    attach.step();
  }
  std::size_t added = 0;
  try {
    const auto src_columns = table_columns(db_, "src.table_info(points)", path_);
    const auto columns = table_columns(db_, "table_info(points)", path_);
    std::string cols;
    for (const auto& c : src_columns) {
      if (!columns.count(c))
        throw std::runtime_error(fmt::format("{}: merge: column {} of {} is unknown here", path_, c, other));
      cols += fmt::format("{}\"{}\"", cols.empty() ? "" : ", ", c);
    }
    exec("BEGIN IMMEDIATE");
    try {
      exec(fmt::format("INSERT OR IGNORE INTO main.points ({0}) SELECT {0} FROM src.points", cols));
      added = static_cast<std::size_t>(sqlite3_changes(db_));
      if (!table_columns(db_, "src.table_info(meta)", path_).empty())
        exec("INSERT OR IGNORE INTO main.meta (name, value) SELECT name, value FROM src.meta");
      exec("COMMIT");
    } catch (...) {
      rollback();
      throw;
    }
  } catch (...) {
    sqlite3_exec(db_, "DETACH DATABASE src", nullptr, nullptr, nullptr);  // the first error is the one to say
    throw;
  }
  exec("DETACH DATABASE src");
  return added;
}

}  // namespace slurmtwin::experiments
