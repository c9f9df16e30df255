#include "experiments/fidelity/oracle_compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>

#include "sim/sim_job.hpp"
#include "traces/array_spec.hpp"
#include "traces/csv.hpp"
#include "traces/file_io.hpp"
#include "traces/input_limits.hpp"
#include "traces/licenses.hpp"
#include "traces/read_report.hpp"
#include "traces/sacct_common.hpp"
#include "traces/site_import.hpp"
#include "traces/text.hpp"
#include "traces/time_format.hpp"

namespace slurmtwin::experiments {
namespace {

std::string file_of(const std::filesystem::path& p) {
  return p.string();
}

std::int64_t int_field(const csv::Record& r, std::size_t k, const std::string& file, const char* column) {
  const auto v = k < r.fields.size() ? text::parse_int(text::trim(r.fields[k])) : std::nullopt;
  if (!v || *v < 0) throw InputError(file, r.line, column, "expected a non-negative integer");
  return *v;
}

std::string text_field(const csv::Record& r, std::size_t k, const std::string& file, const char* column) {
  if (k >= r.fields.size() || text::trim(r.fields[k]).empty())
    throw InputError(file, r.line, column, "empty");
  return std::string(text::trim(r.fields[k]));
}

/// Lines of a text file, without line ends.
std::vector<std::string> lines_of(const std::filesystem::path& p) {
  const auto content = read_input_file(p.string());
  std::vector<std::string> out;
  for (auto l : text::split(content, '\n'))
    if (!text::trim(l).empty()) out.emplace_back(l);
  return out;
}

double parse_epoch(std::string_view v, const std::string& file, std::uint64_t line, const char* field) {
  const auto d = text::parse_double(text::trim(v));
  if (!d) throw InputError(file, line, field, "expected epoch seconds");
  return *d;
}

SchedulerPass pass_of(std::string_view flags) {
  for (auto f : text::split(flags, ',')) {
    if (text::iequals(f, "SchedMain")) return SchedulerPass::kMain;
    if (text::iequals(f, "SchedBackfill")) return SchedulerPass::kBackfill;
    if (text::iequals(f, "SchedSubmit")) return SchedulerPass::kSubmit;
  }
  return SchedulerPass::kUnknown;
}

/// sacct's time columns: a timestamp, or Unknown/None when the event did not happen.
Seconds sacct_time(std::string_view v, const std::string& file, std::uint64_t line, const char* field) {
  v = text::trim(v);
  if (v.empty() || v == "Unknown" || v == "None") return kUnsetTime;
  const auto t = parse_timestamp(v);
  if (!t) throw InputError(file, line, field, fmt::format("bad time '{}'", v));
  return *t;
}

/// "@ EPOCH" / "@ EPOCH =" blocks (oracle.sh sampler); "=" repeats the previous block.
template <typename Row, typename Parse>
std::vector<Sampled<Row>> read_samples(const std::filesystem::path& p, Parse parse) {
  std::vector<Sampled<Row>> out;
  if (!std::filesystem::exists(p)) return out;
  const auto file = file_of(p);
  const auto content = read_input_file(p.string());
  std::uint64_t line_no = 0;
  for (auto l : text::split(content, '\n')) {
    ++line_no;
    if (text::trim(l).empty()) continue;
    if (l.front() == '@') {
      const auto parts = text::split_ws(l.substr(1));
      if (parts.empty()) throw InputError(file, line_no, "@", "sample without a time");
      Sampled<Row> s;
      s.at = parse_epoch(parts[0], file, line_no, "@");
      if (parts.size() > 1 && parts[1] == "=" && !out.empty()) s.rows = out.back().rows;
      out.push_back(std::move(s));
      continue;
    }
    if (out.empty()) throw InputError(file, line_no, "@", "row before the first sample time");
    if (auto row = parse(l, file, line_no)) out.back().rows.push_back(std::move(*row));
  }
  return out;
}

std::optional<RealSprioRow> parse_sprio(std::string_view l, const std::string& file, std::uint64_t line) {
  // %i|%r|%u|%Y|%a|%A|%f|%F|%j|%J|%p|%P|%q|%Q|%N
  const auto f = text::split(l, '|');
  if (f.size() < 15) throw InputError(file, line, "sprio", "expected 15 '|'-separated fields");
  const auto num = [&](std::size_t k, const char* name) {
    const auto d = text::parse_double(text::trim(f[k]));
    if (!d) throw InputError(file, line, name, fmt::format("bad number '{}'", f[k]));
    return *d;
  };
  RealSprioRow r;
  const auto id = text::parse_int(text::trim(f[0]));
  if (!id) throw InputError(file, line, "JOBID", "bad job id");
  r.job_id = static_cast<std::uint64_t>(*id);
  r.partition = std::string(text::trim(f[1]));
  r.priority = num(3, "PRIORITY");
  r.age = num(4, "AGE");
  r.fairshare = num(6, "FAIRSHARE");
  r.job_size = num(8, "JOBSIZE");
  r.partition_factor = num(10, "PARTITION");
  r.qos = num(12, "QOS");
  return r;
}

std::optional<RealSqueueRow> parse_squeue(std::string_view l, const std::string& file, std::uint64_t line) {
  // %i|%j|%T|%r|%Q
  const auto f = text::split(l, '|');
  if (f.size() < 5) throw InputError(file, line, "squeue", "expected 5 '|'-separated fields");
  if (text::trim(f[2]) != "PENDING") return std::nullopt;
  const auto id = text::parse_int(text::trim(f[0]));
  if (!id) return std::nullopt;  // an array task or a pending array ("17_0", "17_[1-5%2]")
  return RealSqueueRow{static_cast<std::uint64_t>(*id), std::string(text::trim(f[3]))};
}

std::optional<RealSshareRow> parse_sshare(std::string_view l, const std::string& file, std::uint64_t line) {
  // Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|LevelFS|FairShare
  if (text::starts_with_i(l, "Account|")) return std::nullopt;
  const auto f = text::split(l, '|');
  if (f.size() < 9) throw InputError(file, line, "sshare", "expected 9 '|'-separated fields");
  const auto num = [&](std::size_t k) {
    const auto v = text::trim(f[k]);
    if (v.empty() || v == "inf") return -1.0;
    const auto d = text::parse_double(v);
    return d ? *d : -1.0;
  };
  RealSshareRow r;
  const auto indent = f[0].find_first_not_of(' ');
  r.depth = indent == std::string_view::npos ? 0 : static_cast<std::uint32_t>(indent);
  {
    const auto v = text::trim(f[7]);
    r.level_fs = v == "inf" ? std::numeric_limits<double>::infinity() : v.empty() ? -1.0 : num(7);
  }
  r.account = std::string(text::trim(f[0]));
  r.user = std::string(text::trim(f[1]));
  r.norm_shares = num(3);
  r.raw_usage = num(4);
  r.effectv_usage = num(6);
  r.fairshare = num(8);
  return r;
}

Seconds cred_expire_of(const std::filesystem::path& slurm_conf) {
  // AuthInfo=cred_expire=N (other AuthInfo options may come before or after, comma separated).
  for (const auto& l : lines_of(slurm_conf)) {
    const auto t = text::trim(l);
    if (!text::starts_with_i(t, "AuthInfo=")) continue;
    for (auto opt : text::split(t.substr(9), ',')) {
      opt = text::trim(opt);
      if (text::starts_with_i(opt, "cred_expire="))
        if (const auto v = text::parse_int(opt.substr(12))) return *v;
    }
  }
  return 120;  // Slurm's default
}

/// Whether sshare row `b` is association `a` (a real row or the simulator's): account, user and
/// shares, since a user with a partition's own association has two rows under the account (sshare -a
/// shows no partition) that only their shares tell apart.
template <class Row>
bool same_association(const Row& a, const RealSshareRow& b) {
  return a.account == b.account && a.user == b.user && std::abs(a.norm_shares - b.norm_shares) < 1e-5;
}

}  // namespace

bool near_tie(const std::vector<RealSshareRow>& rows, double relative) {
  // Siblings: rows whose nearest preceding row one level up is the same (sshare -a lists the tree
  // top-down, children indented by one space under their account).
  std::vector<std::size_t> parent(rows.size(), rows.size());
  std::vector<std::size_t> last_at_depth;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto d = rows[i].depth;
    if (d > 0 && d - 1 < last_at_depth.size()) parent[i] = last_at_depth[d - 1];
    if (last_at_depth.size() <= d) last_at_depth.resize(d + 1, rows.size());
    last_at_depth[d] = i;
    last_at_depth.resize(d + 1);
  }
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t k = i + 1; k < rows.size(); ++k) {
      if (parent[i] != parent[k] || parent[i] == rows.size()) continue;
      const double a = rows[i].level_fs, b = rows[k].level_fs;
      if (a < 0 || b < 0 || std::isinf(a) || std::isinf(b) || a == b) continue;
      if (std::abs(a - b) < relative * std::max(a, b)) return true;
    }
  return false;
}

namespace {

/// A scenario's gres cell: one request name[:type]:count, per node.
GresRequest scenario_gres(std::string_view v, const std::string& file, std::uint64_t line) {
  const auto parts = text::split(v, ':');
  const auto bad = [&]() {
    return InputError(file, line, "gres", fmt::format("'{}' is not name[:type]:count", v));
  };
  if (parts.size() < 2 || parts.size() > 3) throw bad();
  const auto word = [](std::string_view w, bool type) {
    return !w.empty() && std::all_of(w.begin(), w.end(), [&](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (type && (c == '.' || c == '-'));
    });
  };
  const auto count = text::parse_int(parts.back());
  if (!word(parts[0], false) || (parts.size() == 3 && !word(parts[1], true)) || !count || *count < 1 ||
      parts.back().front() == '+')
    throw bad();
  return GresRequest{std::string(parts[0]), parts.size() == 3 ? std::string(parts[1]) : std::string(), *count,
                     true};
}

}  // namespace

std::vector<ScenarioJob> read_scenario_jobs(const std::string& path) {
  const auto content = read_input_file(path);
  csv::Reader reader(content, path);
  csv::Record r;
  // Lines starting with # are skipped (as oracle.sh does); quotes are refused (oracle.sh splits at
  // every comma).
  const auto next = [&]() {
    while (reader.next(r)) {
      if (text::trim(r.text).starts_with('#')) continue;
      if (r.text.find('"') != std::string_view::npos)
        throw InputError(path, r.line, "line",
                         "quoted fields are not supported (oracle.sh splits at commas)");
      return true;
    }
    return false;
  };
  if (!next()) throw InputError(path, 1, "header", "empty scenario");
  static const std::set<std::string> kColumns = {"offset",
                                                 "user",
                                                 "account",
                                                 "partition",
                                                 "qos",
                                                 "nodes",
                                                 "cpus",
                                                 "cpus_per_task",
                                                 "ntasks_per_node",
                                                 "mem_mb",
                                                 "mem_per_cpu_mb",
                                                 "limit_min",
                                                 "runtime_s",
                                                 "gres",
                                                 "constraint",
                                                 "dependency",
                                                 "cancel_s",
                                                 "reservation",
                                                 "array",
                                                 "exclusive",
                                                 "nice",
                                                 "begin_s",
                                                 "licenses"};
  {
    std::set<std::string> seen;
    for (const auto& name : r.fields) {
      const auto n = std::string(text::trim(name));
      if (!kColumns.count(n)) throw InputError(path, r.line, n, "unknown column");
      if (!seen.insert(n).second) throw InputError(path, r.line, n, "column given twice");
    }
  }
  const csv::Header header(r.fields);
  const auto c_off = header.require("offset", path, r.line), c_user = header.require("user", path, r.line),
             c_acct = header.require("account", path, r.line),
             c_part = header.require("partition", path, r.line), c_qos = header.require("qos", path, r.line),
             c_cpus = header.require("cpus", path, r.line), c_lim = header.require("limit_min", path, r.line),
             c_run = header.require("runtime_s", path, r.line);
  const auto c_nodes = header.find("nodes"), c_tpn = header.find("ntasks_per_node"),
             c_cpt = header.find("cpus_per_task"), c_mem = header.find("mem_mb"),
             c_mpc = header.find("mem_per_cpu_mb"), c_gres = header.find("gres"),
             c_cons = header.find("constraint"), c_dep = header.find("dependency"),
             c_cancel = header.find("cancel_s"), c_resv = header.find("reservation"),
             c_array = header.find("array"), c_excl = header.find("exclusive"), c_nice = header.find("nice"),
             c_begin = header.find("begin_s"), c_lic = header.find("licenses");
  // An optional column's cell, trimmed; empty when the column or the cell is absent.
  const auto cell = [&](std::optional<std::size_t> c) {
    return c && *c < r.fields.size() ? std::string(text::trim(r.fields[*c])) : std::string();
  };
  const auto number = [&](const std::string& v, const char* column, std::int64_t min) {
    const auto n = text::parse_int(v);
    if (!n || *n < min || v.front() == '+')
      throw InputError(path, r.line, column, fmt::format("'{}' is not an integer >= {}", v, min));
    return *n;
  };
  constexpr std::int64_t kMaxCount = 1'000'000;
  std::vector<ScenarioJob> jobs;
  std::size_t lines = 0;
  while (next()) {
    if (r.fields.size() > header.size())
      throw InputError(path, r.line, "line",
                       fmt::format("{} fields, the header has {}", r.fields.size(), header.size()));
    ScenarioJob j;
    j.name = fmt::format("j{:03d}", ++lines);
    j.offset = int_field(r, c_off, path, "offset");
    j.user = text_field(r, c_user, path, "user");
    j.account = text_field(r, c_acct, path, "account");
    j.partition = text_field(r, c_part, path, "partition");
    j.qos = text_field(r, c_qos, path, "qos");
    for (const auto& [v, column] :
         {std::pair{j.user, "user"}, {j.account, "account"}, {j.partition, "partition"}, {j.qos, "qos"}})
      if (std::any_of(v.begin(), v.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }))
        throw InputError(path, r.line, column, "no blanks inside a field");
    if (const auto v = cell(c_nodes); !v.empty()) j.nodes = static_cast<std::uint32_t>(number(v, "nodes", 1));
    if (const auto v = cell(c_tpn); !v.empty())
      j.tasks_per_node = static_cast<std::uint32_t>(number(v, "ntasks_per_node", 1));
    if (const auto v = cell(c_cpus); !v.empty()) {
      j.cpus = static_cast<std::uint32_t>(number(v, "cpus", 1));
    } else if (j.nodes > 0 && j.tasks_per_node > 0) {
      j.cpus_given = false;  // sbatch without -n: nodes x ntasks-per-node tasks
      j.cpus = j.nodes * j.tasks_per_node;
    } else {
      throw InputError(path, r.line, "cpus", "empty (allowed only with nodes and ntasks_per_node)");
    }
    if (const auto v = cell(c_cpt); !v.empty())
      j.cpus_per_task = static_cast<std::uint32_t>(number(v, "cpus_per_task", 1));
    if (j.nodes > kMaxCount || j.tasks_per_node > kMaxCount ||
        static_cast<std::int64_t>(j.cpus) * j.cpus_per_task > kMaxCount)
      throw InputError(path, r.line, "cpus", "more than a million nodes or CPUs");
    if (j.nodes > 0 && j.cpus < j.nodes) throw InputError(path, r.line, "cpus", "needs cpus >= nodes");
    const auto mem = cell(c_mem), mpc = cell(c_mpc);
    if (!mem.empty() && !mpc.empty())
      throw InputError(path, r.line, "mem_per_cpu_mb", "give mem_mb or mem_per_cpu_mb, not both");
    if (!mem.empty()) j.mem_mb = number(mem, "mem_mb", 0);
    if (!mpc.empty()) {
      j.mem_mb = number(mpc, "mem_per_cpu_mb", 1);
      j.mem_per_cpu = true;
    }
    if (const auto v = cell(c_gres); !v.empty()) j.gres.push_back(scenario_gres(v, path, r.line));
    j.constraint = cell(c_cons);
    if (std::any_of(j.constraint.begin(), j.constraint.end(),
                    [](char c) { return std::isspace(static_cast<unsigned char>(c)); }))
      throw InputError(path, r.line, "constraint", "no blanks inside a field");
    j.time_limit = 60 * number(cell(c_lim), "limit_min", 1);
    j.runtime = int_field(r, c_run, path, "runtime_s");
    j.dependency = cell(c_dep);
    j.reservation = cell(c_resv);
    if (const auto v = cell(c_cancel); !v.empty()) {
      j.cancel = number(v, "cancel_s", 0);
      if (j.cancel < j.offset) throw InputError(path, r.line, "cancel_s", "before the job's offset");
    }
    if (const auto v = cell(c_excl); !v.empty() && v != "0") {
      if (v != "1") throw InputError(path, r.line, "exclusive", fmt::format("'{}' is not 1, 0 or empty", v));
      j.exclusive = true;
    }
    if (const auto v = cell(c_nice); !v.empty()) {
      const auto n = number(v, "nice", 0);
      if (n > kMaxNice) throw InputError(path, r.line, "nice", fmt::format("more than {}", kMaxNice));
      j.nice = static_cast<std::int32_t>(n);
    }
    if (const auto v = cell(c_begin); !v.empty()) {
      j.begin = number(v, "begin_s", 0);
      if (j.begin < j.offset) throw InputError(path, r.line, "begin_s", "before the job's offset");
    }
    if (const auto v = cell(c_lic); !v.empty()) {
      try {
        parse_licenses(v);
      } catch (const std::invalid_argument& e) {
        throw InputError(path, r.line, "licenses", e.what());
      }
      j.licenses = v;
    }
    if (const auto v = cell(c_array); !v.empty()) {
      const auto spec = parse_array_spec(v);
      if (!spec || spec->tasks.size() > kMaxCount)
        throw InputError(path, r.line, "array", fmt::format("'{}' is not N[-M[:STEP]][,...][%MAX]", v));
      for (const auto task : spec->tasks) {
        auto t = j;
        t.name = fmt::format("{}_{}", j.name, task);
        t.array_of = j.name;
        t.array_task = task;
        t.array_cap = spec->max_running;
        jobs.push_back(std::move(t));
      }
      continue;
    }
    jobs.push_back(std::move(j));
  }
  return jobs;
}

std::optional<double> LoopPhase::in_second(Seconds second) const {
  const double at = anchor + std::ceil((static_cast<double>(second) - anchor) / period) * period;
  if (at < static_cast<double>(second + 1)) return at;
  return std::nullopt;  // the loop's phase crossed a whole second: it skipped this one
}

std::optional<LoopPhase> fit_loop(const std::vector<double>& instants, double tolerance) {
  constexpr double kMinPeriod = 1.0, kMaxPeriod = 1.02;
  std::vector<double> t = instants;
  std::sort(t.begin(), t.end());
  // Lines of one run of the loop (several jobs started by one pass) count once.
  t.erase(std::unique(t.begin(), t.end(), [&](double a, double b) { return b - a <= tolerance; }), t.end());
  const auto on_loop = [&](const LoopPhase& l) {
    std::vector<std::pair<double, double>> fit;  // (run number, instant)
    for (const double x : t) {
      const double k = std::round((x - l.anchor) / l.period);
      if (std::abs(x - (l.anchor + k * l.period)) <= tolerance) fit.emplace_back(k, x);
    }
    return fit;
  };
  // Every pair of lines at least 2 s apart, with every whole number of runs between them that gives
  // a period in range, proposes a loop; the one most lines lie on wins (the earlier proposal on ties).
  std::optional<LoopPhase> best;
  std::size_t best_n = 0;
  for (std::size_t i = 0; i < t.size(); ++i)
    for (std::size_t j = i + 1; j < t.size(); ++j) {
      const double d = t[j] - t[i];
      if (d < 2) continue;
      for (auto n = std::ceil(d / kMaxPeriod); n <= std::floor(d / kMinPeriod); ++n) {
        const LoopPhase l{t[i], d / n};
        if (const auto fit = on_loop(l); fit.size() > best_n) {
          best_n = fit.size();
          best = l;
        }
      }
    }
  if (best_n < 3) return std::nullopt;
  // Least squares of instant = anchor + k * period over the lines on the loop.
  const auto fit = on_loop(*best);
  double sk = 0, sx = 0, skk = 0, skx = 0;
  for (const auto& [k, x] : fit) {
    sk += k;
    sx += x - fit.front().second;  // relative to the first line, for precision
    skk += k * k;
    skx += k * (x - fit.front().second);
  }
  const double n = static_cast<double>(fit.size()), det = n * skk - sk * sk;
  if (det <= 0) return best;
  const double period = (n * skx - sk * sx) / det;
  const double anchor = fit.front().second + (sx - period * sk) / n;
  return LoopPhase{anchor, period};
}

RecordedRun read_recorded_run(const std::filesystem::path& dir) {
  RecordedRun run;
  run.dir = dir;
  const auto meta = dir / "meta.txt";
  std::uint64_t line_no = 0;
  for (const auto& l : lines_of(meta)) {
    ++line_no;
    const auto f = text::split_ws(l);
    if (f.size() < 2) continue;
    if (f[0] == "trace_start")
      run.trace_start = static_cast<Seconds>(parse_epoch(f[1], file_of(meta), line_no, "trace_start"));
    if (f[0] == "controller_start")
      run.controller_start = parse_epoch(f[1], file_of(meta), line_no, "controller_start");
  }
  if (run.trace_start == 0 || run.controller_start == 0)
    throw InputError(file_of(meta), 1, "trace_start", "meta.txt needs trace_start and controller_start");
  line_no = 0;
  for (const auto& l : lines_of(dir / "ticks.txt"))
    run.ticks.push_back(parse_epoch(l, file_of(dir / "ticks.txt"), ++line_no, "tick"));
  run.cred_expire = cred_expire_of(dir / "slurm.conf");
  run.jobs = read_scenario_jobs((dir / "jobs.csv").string());
  // "[2026-11-21T17:16:11.945] Time limit exhausted for JobId=1" (LogTimeFormat=iso8601_ms, UTC), the
  // lines of the passes that started jobs, slurmctld's submit lines and the end of each job; recordings
  // from before the harness kept a kind of line have none of it.
  if (const auto events = dir / "slurmctld-events.log"; std::filesystem::exists(events)) {
    // What each kept line says: where its instant goes, and the job id after its marker if any.
    enum class Kind { kTimeout, kMainStart, kBackfillStart, kSubmit, kEnd };
    static constexpr std::pair<std::string_view, Kind> kMarkers[] = {
        {"] Time limit exhausted for JobId=", Kind::kTimeout},
        {"] sched: Allocate JobId=", Kind::kMainStart},
        {"] sched/backfill: _start_job: Started JobId=", Kind::kBackfillStart},
        {"] _slurm_rpc_submit_batch_job: JobId=", Kind::kSubmit},
        {"] _job_complete: JobId=", Kind::kEnd},
    };
    line_no = 0;
    for (const auto& l : lines_of(events)) {
      ++line_no;
      const auto marker = std::find_if(std::begin(kMarkers), std::end(kMarkers),
                                       [&](const auto& m) { return l.find(m.first) != std::string::npos; });
      if (marker == std::end(kMarkers)) continue;
      const auto rest = std::string_view(l).substr(l.find(marker->first) + marker->first.size());
      // "_job_complete: JobId=6 done" ends the job; its other lines (WTERMSIG 15, ...) come before.
      if (marker->second == Kind::kEnd && rest.substr(rest.find(' ') + 1) != "done") continue;
      const auto whole = l.size() < 25 || l[0] != '[' ? kUnsetTime
                                                      : sacct_time(std::string_view(l).substr(1, 19),
                                                                   file_of(events), line_no, "timestamp");
      const auto ms = whole == kUnsetTime ? std::nullopt : text::parse_int(std::string_view(l).substr(21, 3));
      if (whole == kUnsetTime || l[20] != '.' || !ms)
        throw InputError(file_of(events), line_no, "timestamp", "expected [YYYY-MM-DDTHH:MM:SS.mmm]");
      const double at = static_cast<double>(whole) + static_cast<double>(*ms) / 1000.0;
      // "5", or an array task "5_0(9)": array 5, task 0, its own id 9 (the key of the maps below).
      auto word = rest.substr(0, rest.find(' '));
      std::optional<std::int64_t> task, own;
      if (const auto us = word.find('_'); us != std::string_view::npos) {
        const auto open = word.find('(', us);
        if (open == std::string_view::npos || word.back() != ')')
          throw InputError(file_of(events), line_no, "JobId", "expected ID or ID_TASK(ID)");
        task = text::parse_int(word.substr(us + 1, open - us - 1));
        own = text::parse_int(word.substr(open + 1, word.size() - open - 2));
        if (!task || !own || *task < 0 || *task > std::numeric_limits<std::int32_t>::max() || *own <= 0)
          throw InputError(file_of(events), line_no, "JobId", "expected ID_TASK(ID)");
        word = word.substr(0, us);
      }
      const auto id = text::parse_int(word);
      if (!id || *id <= 0) throw InputError(file_of(events), line_no, "JobId", "expected a job id");
      const auto job = static_cast<std::uint64_t>(own ? *own : *id);
      if (task) run.task_ids[{static_cast<std::uint64_t>(*id), static_cast<std::int32_t>(*task)}] = job;
      switch (marker->second) {
        case Kind::kTimeout:
          run.limit_timeouts.push_back(at);
          break;
        case Kind::kMainStart:
          run.main_starts.push_back(at);
          run.started_logged[job].push_back(at);
          break;
        case Kind::kBackfillStart:
          run.backfill_starts.push_back(at);
          run.started_logged[job].push_back(at);
          break;
        case Kind::kSubmit:
          run.submit_logged[job] = at;
          break;
        case Kind::kEnd:
          run.ended_logged[job].push_back(at);
          break;
      }
    }
  }

  // The tasks of each array line, by the line's jNNN.
  std::map<std::string, std::vector<const ScenarioJob*>> tasks_of;
  for (const auto& j : run.jobs)
    if (!j.array_of.empty()) tasks_of[j.array_of].push_back(&j);
  // sacct -D -X -P: one record per run; JobName is the scenario's jNNN, JobID ID or, for an array
  // task, ID_TASK (ID_[TASKS] for tasks that never started).
  const auto sacct = dir / "sacct.txt";
  const auto content = read_input_file(sacct.string());
  csv::Reader reader(content, file_of(sacct), '|');
  csv::Record r;
  if (!reader.next(r)) throw InputError(file_of(sacct), 1, "header", "empty sacct output");
  const csv::Header h(r.fields);
  const auto f = file_of(sacct);
  const auto c_id = h.require("JobID", f, r.line), c_name = h.require("JobName", f, r.line),
             c_submit = h.require("Submit", f, r.line), c_start = h.require("Start", f, r.line),
             c_end = h.require("End", f, r.line), c_state = h.require("State", f, r.line),
             c_flags = h.require("Flags", f, r.line);
  const auto c_nodes = h.find("NodeList");  // optional: older recordings lack it
  while (reader.next(r)) {
    if (r.fields.size() < h.size()) throw InputError(f, r.line, "record", "too few fields");
    const auto id = sacct_detail::parse_sacct_job_id(text::trim(r.fields[c_id]));
    if (!id || !id->step.empty() || id->het_component >= 0)
      throw InputError(f, r.line, "JobID", "bad job id");
    std::vector<std::string> names;  // the scenario jobs the record is of
    if (id->array_task >= 0) {
      names.push_back(fmt::format("{}_{}", r.fields[c_name], id->array_task));
    } else if (id->pending_array) {
      const auto inner = text::trim(r.fields[c_id]);
      const auto spec =
          parse_array_spec(inner.substr(inner.find('[') + 1, inner.size() - inner.find('[') - 2));
      if (!spec) throw InputError(f, r.line, "JobID", "bad array task list");
      for (const auto task : spec->tasks) names.push_back(fmt::format("{}_{}", r.fields[c_name], task));
    } else {
      names.push_back(r.fields[c_name]);
    }
    RunOutcome o;
    const auto submit = sacct_time(r.fields[c_submit], f, r.line, "Submit");
    const auto rel = [&](Seconds t) { return t == kUnsetTime ? kUnsetTime : t - run.trace_start; };
    o.submit = rel(submit);
    o.start = rel(sacct_time(r.fields[c_start], f, r.line, "Start"));
    o.end = rel(sacct_time(r.fields[c_end], f, r.line, "End"));
    o.state =
        std::string(text::split_ws(r.fields[c_state]).empty() ? "" : text::split_ws(r.fields[c_state])[0]);
    o.pass = pass_of(r.fields[c_flags]);
    if (c_nodes && o.start != kUnsetTime) o.nodes = r.fields[*c_nodes];
    run.job_ids[r.fields[c_name]] = id->job_id;
    for (const auto& name : names) {
      run.job_ids[name] = id->job_id;
      if (!run.submit_times.count(name) || submit < run.submit_times[name]) run.submit_times[name] = submit;
      run.schedule[name].push_back(o);
    }
  }
  for (auto& [name, runs] : run.schedule)
    std::stable_sort(runs.begin(), runs.end(),
                     [](const auto& a, const auto& b) { return a.submit < b.submit; });
  // Jobs sbatch refused ("jNNN REFUSED EPOCH OFFSET" in submits.txt). Slurm 22.05 still writes a
  // FAILED record with Start = End = Submit for most refusals ("Requested node configuration is not
  // available"), none for others ("Invalid feature specification"): either way the job never ran.
  if (const auto submits = dir / "submits.txt"; std::filesystem::exists(submits)) {
    line_no = 0;
    for (const auto& l : lines_of(submits)) {
      ++line_no;
      const auto w = text::split_ws(l);
      if (w.size() < 3)
        throw InputError(file_of(submits), line_no, "line", "expected NAME ID EPOCH [OFFSET]");
      const auto at = parse_epoch(w[2], file_of(submits), line_no, "epoch");
      // An array line's sbatch submitted all its tasks.
      std::vector<std::string> names{std::string(w[0])};
      if (const auto it = tasks_of.find(names[0]); it != tasks_of.end()) {
        names.clear();
        for (const auto* t : it->second) names.push_back(t->name);
      }
      for (const auto& name : names) {
        if (w[1] != "REFUSED") {
          run.submit_returned[name] = at;
          continue;
        }
        run.refused.insert(name);
        const auto it = run.submit_times.find(name);
        const Seconds submit =
            it != run.submit_times.end() ? it->second : static_cast<Seconds>(std::floor(at));
        run.schedule[name] = {RunOutcome{
            submit - run.trace_start, kUnsetTime, kUnsetTime, "REJECTED", SchedulerPass::kUnknown, {}}};
      }
    }
  }
  // Jobs the harness cancelled because they could never start ("jNNN ID REASON" in never-started.txt):
  // pending, not cancelled, as far as the scheduler is concerned.
  if (const auto never = dir / "never-started.txt"; std::filesystem::exists(never)) {
    line_no = 0;
    for (const auto& l : lines_of(never)) {
      ++line_no;
      const auto w = text::split_ws(l);
      if (w.size() < 2) throw InputError(file_of(never), line_no, "line", "expected NAME ID [REASON]");
      const auto name = std::string(w[0]);
      const auto reason = w.size() > 2 ? std::string(w[2]) : std::string();
      // An array line ("j005 5_[2-3] REASON"): its tasks that never started.
      if (const auto tasks = tasks_of.find(name); tasks != tasks_of.end()) {
        for (const auto* t : tasks->second) {
          auto& runs = run.schedule[t->name];
          if (!runs.empty() && runs.back().start != kUnsetTime && runs.back().end != runs.back().start)
            continue;          // this task ran
          if (runs.empty()) {  // no sacct record (sacct lists a remnant as ID_[TASKS]): its array's submit
            RunOutcome pending;
            for (const auto* o : tasks->second)
              if (const auto it = run.schedule.find(o->name); it != run.schedule.end() && !it->second.empty())
                pending.submit = it->second.front().submit;
            runs.push_back(pending);
          }
          runs.back().start = runs.back().end = kUnsetTime;
          runs.back().state = "PENDING";
          run.never_started[t->name] = reason;
        }
        continue;
      }
      const auto it = run.schedule.find(name);
      if (it == run.schedule.end() || it->second.empty())
        throw InputError(file_of(never), line_no, "NAME", fmt::format("{} has no sacct record", name));
      auto& last = it->second.back();
      if (last.start != kUnsetTime && last.end != last.start)
        throw InputError(file_of(never), line_no, "NAME",
                         fmt::format("{} ran ({} to {})", name, last.start, last.end));
      last.start = last.end = kUnsetTime;
      last.state = "PENDING";
      run.never_started[name] = reason;
    }
  }
  run.sprio = read_samples<RealSprioRow>(dir / "sprio.txt", parse_sprio);
  run.sshare = read_samples<RealSshareRow>(dir / "sshare.txt", parse_sshare);
  if (std::filesystem::exists(dir / "squeue.txt"))
    run.squeue = read_samples<RealSqueueRow>(dir / "squeue.txt", parse_squeue);
  return run;
}

namespace {

// A scenario's dependency with each jNNN replaced by the job id sbatch gave that job in the run.
std::string real_dependency(const std::string& named, const std::map<std::string, std::uint64_t>& ids) {
  std::string out;
  for (std::size_t i = 0; i < named.size();) {
    if (named[i] == 'j' && i + 4 <= named.size() && std::isdigit(static_cast<unsigned char>(named[i + 1]))) {
      const auto name = named.substr(i, 4);
      const auto it = ids.find(name);
      if (it == ids.end())
        throw std::invalid_argument("dependency on " + name + ", which has no job id in the run");
      out += std::to_string(it->second);
      i += 4;
    } else {
      out += named[i++];
    }
  }
  return out;
}

}  // namespace

JobRecord scenario_job_request(const ScenarioJob& j, Trace& trace) {
  JobRecord rec;
  rec.user = trace.users.intern(j.user);
  rec.account = trace.accounts.intern(j.account);
  rec.partition = trace.partitions.intern(j.partition);
  rec.qos = trace.qos.intern(j.qos);
  rec.name = trace.strings.intern(j.name);
  rec.runtime = j.runtime;
  rec.time_limit = j.time_limit;
  rec.nodes = j.nodes;  // 0: no -N, the scheduler decides
  rec.tasks = j.cpus;
  rec.tasks_per_node = j.tasks_per_node;
  rec.cpus_per_task = j.cpus_per_task;
  rec.req_cpus = j.cpus * j.cpus_per_task;
  rec.mem_mb = j.mem_mb;  // -1: no memory option
  rec.mem_per_cpu = j.mem_per_cpu;
  rec.gres = j.gres;
  if (!j.constraint.empty()) rec.constraints = trace.strings.intern(j.constraint);
  if (!j.reservation.empty()) rec.reservation = trace.strings.intern(j.reservation);
  rec.array_task = j.array_task;
  rec.array_max_running = j.array_cap;
  rec.exclusive = j.exclusive;
  rec.nice = j.nice;
  if (!j.licenses.empty()) rec.licenses = trace.strings.intern(j.licenses);
  return rec;
}

namespace {

/// When slurmctld took job `name` (Slurm id `id`) in (epoch s): its submit log line, else the
/// instant sbatch returned less kSbatchReturnLag; nullopt when neither was recorded.
std::optional<double> submit_instant(const RecordedRun& run, const std::string& name, std::uint64_t id) {
  if (const auto it = run.submit_logged.find(id); it != run.submit_logged.end()) return it->second;
  if (const auto it = run.submit_returned.find(name); it != run.submit_returned.end())
    return it->second - kSbatchReturnLag;
  return std::nullopt;
}

}  // namespace

std::vector<double> end_instants(const RecordedRun& run) {
  std::vector<double> ends;
  for (const auto& job : run.jobs) {
    const auto found = run.job_ids.find(job.name);
    if (found == run.job_ids.end()) continue;
    // An array task is logged by its own job id.
    auto key = found->second;
    if (job.array_task >= 0) {
      const auto own = run.task_ids.find({key, job.array_task});
      if (own == run.task_ids.end()) continue;
      key = own->second;
    }
    if (const auto it = run.ended_logged.find(key); it != run.ended_logged.end()) {
      ends.insert(ends.end(), it->second.begin(), it->second.end());
      continue;
    }
    const auto started = run.started_logged.find(key);
    const auto runs = run.schedule.find(job.name);
    if (started != run.started_logged.end() && runs != run.schedule.end() && !runs->second.empty() &&
        runs->second.back().state == "COMPLETED")
      ends.push_back(started->second.back() + static_cast<double>(job.runtime) + kJobEndLag);
  }
  std::sort(ends.begin(), ends.end());
  return ends;
}

SimulatedRun simulate_recorded_run(const RecordedRun& run) {
  std::vector<std::string> warnings;
  // The recorded gres.conf (a scenario with GRES), as slurmd read it.
  const auto gres_conf = run.dir / "gres.conf";
  auto files =
      SiteFiles::conf_and_script((run.dir / "slurm.conf").string(), (run.dir / "accounts.sacctmgr").string(),
                                 std::filesystem::exists(gres_conf) ? gres_conf.string() : std::string());
  // The reservations and node events of the run, as its admin files list them (UTC: oracle.sh runs
  // Slurm's commands with TZ=UTC).
  files.time_zone = "UTC";
  for (const auto& [name, field] : {std::pair{"scontrol-show-reservation.txt", &files.reservations},
                                    std::pair{"sacctmgr-show-event.txt", &files.node_events}})
    if (const auto p = run.dir / "admin" / name; std::filesystem::exists(p)) *field = p.string();
  Site site = import_site(files, warnings);
  Trace trace;
  trace.source = (run.dir / "jobs.csv").string();
  std::uint64_t next_id = 1;
  for (const auto& [name, id] : run.job_ids) next_id = std::max(next_id, id + 1);
  for (const auto& j : run.jobs) {
    JobRecord rec = scenario_job_request(j, trace);
    const auto id = run.job_ids.find(j.name);
    rec.job_id = id != run.job_ids.end() ? id->second : next_id++;  // refused by sbatch: no record
    const auto submit = run.submit_times.find(j.name);
    rec.submit = submit != run.submit_times.end() ? submit->second : run.trace_start + j.offset;
    // sbatch --begin: not eligible before the trace start + begin_s (a whole second).
    rec.eligible = j.begin != kUnsetTime ? std::max(rec.submit, run.trace_start + j.begin) : rec.submit;
    // The harness runs scancel at the trace start + cancel_s on a job still pending (cancels.txt).
    if (j.cancel != kUnsetTime) rec.cancel = std::max(rec.submit, run.trace_start + j.cancel);
    if (!j.dependency.empty())
      rec.dependency = trace.strings.intern(real_dependency(j.dependency, run.job_ids));
    trace.jobs.push_back(rec);
  }
  std::stable_sort(trace.jobs.begin(), trace.jobs.end(), [](const auto& a, const auto& b) {
    return std::tie(a.submit, a.job_id) < std::tie(b.submit, b.job_id);
  });

  SimulatedRun out;
  auto& o = out.options;
  // The controller (and its timers) started at the whole second of "Running as primary controller";
  // the decay thread's first run is the first recorded tick.
  const auto origin = static_cast<Seconds>(std::floor(run.controller_start));
  Seconds first_submit = kUnlimited;
  for (const auto& j : trace.jobs) first_submit = std::min(first_submit, j.submit);
  o.start_offset = first_submit - origin;
  o.decay_phase = run.ticks.empty() ? 0 : static_cast<Seconds>(std::floor(run.ticks.front())) - origin;
  // The background loop (time-limit checks every 30 s) starts with the decay thread, whose first run
  // is the first recorded tick; the scheduling timers (1 s here) need no phase at whole seconds.
  o.timeout_phase = o.decay_phase;
  o.requeue_delay = run.cred_expire;
  // Which of the two threads ran first when a time-limit check fell in the second of a decay run:
  // their sub-second phases drift, so the recorded order is replayed (the last such second decides).
  for (const double c : run.limit_timeouts)
    for (const double t : run.ticks)
      if (std::floor(t) == std::floor(c)) o.limit_check_after_decay = t < c;
  // A job an accounting limit ended (TIMEOUT before its time limit: GrpTRESMins used up; slurmctld
  // logs no "Time limit exhausted" for it) in the second of a decay run, which found the limit used
  // up: that second's check ran after the decay thread.
  for (const auto& job : run.jobs) {
    const auto it = run.schedule.find(job.name);
    if (it == run.schedule.end()) continue;
    for (const auto& r : it->second)
      if (r.state == "TIMEOUT" && r.start != kUnsetTime && r.end != kUnsetTime &&
          r.end < r.start + job.time_limit)
        for (const double t : run.ticks)
          if (static_cast<Seconds>(std::floor(t)) - run.trace_start == r.end)
            o.limit_check_after_decay = true;
  }
  // A job the backfill pass started frees its nodes for the backfill pass of the second it ends in
  // only when it ran long enough for the cycle's phase to drift past its end (docs/fidelity.md,
  // item 6: every recorded backfill-to-backfill hand-over after 20-40 s came a second later, every
  // one after 75-150 s in the same second).
  o.backfill_end_lag_below = kBackfillEndLagCycles * std::max<Seconds>(1, site.scheduler.params.bf_interval);
  // Where each submission fell among the events of its second (docs/fidelity.md, item 7): before a
  // job end of that second (the pass the end triggers sees it), else after the passes that ran before.
  const auto main_loop = fit_loop(run.main_starts), backfill_loop = fit_loop(run.backfill_starts);
  const auto ends = end_instants(run);
  for (const auto& rec : trace.jobs) {
    const auto at = submit_instant(run, std::string(trace.strings.name(rec.name)), rec.job_id);
    if (!at || static_cast<Seconds>(std::floor(*at)) != rec.submit) continue;
    const auto next_end = std::upper_bound(ends.begin(), ends.end(), *at);
    if (next_end != ends.end() && static_cast<Seconds>(std::floor(*next_end)) == rec.submit) {
      o.submit_order[rec.job_id] = sim::SubmitOrder::kBeforeEnds;
      continue;
    }
    const auto passed = [&](const std::optional<LoopPhase>& loop) {
      const auto pass = loop ? loop->in_second(rec.submit) : std::nullopt;
      return pass && *pass < *at;
    };
    if (passed(main_loop))
      o.submit_order[rec.job_id] =
          passed(backfill_loop) ? sim::SubmitOrder::kAfterPasses : sim::SubmitOrder::kAfterMain;
  }
  for (const auto& s : run.sprio) o.sample_at.push_back(static_cast<Seconds>(std::floor(s.at)));
  std::sort(o.sample_at.begin(), o.sample_at.end());
  o.sample_at.erase(std::unique(o.sample_at.begin(), o.sample_at.end()), o.sample_at.end());
  auto result = run_replay(std::move(site), trace, o);
  out.samples = std::move(result.samples);

  const auto rel = [&](Seconds t) { return t == kUnsetTime ? kUnsetTime : t - run.trace_start; };
  const auto state_name = [](JobState s) { return std::string(to_string(s)); };
  for (const auto& j : result.state->jobs) {
    const auto name = trace.strings.name(trace.jobs[j.trace_index].name);
    auto& runs = out.schedule[name];
    const auto hostlist = [&](const auto& nodes, const auto& node_of) {
      std::vector<std::uint32_t> indices;
      for (const auto& n : nodes) indices.push_back(node_of(n));
      return slurm_nodelist(result.site, std::move(indices));
    };
    for (const auto& p : j.past_runs)
      runs.push_back({rel(p.submit), rel(p.start), rel(p.end), "PREEMPTED", p.started_by,
                      hostlist(p.nodes, [](std::uint32_t n) { return n; })});
    std::string state = j.state == sim::SimJobState::kDone       ? state_name(j.end_state)
                        : j.state == sim::SimJobState::kRejected ? std::string("REJECTED")
                        : j.start != kUnsetTime                  ? std::string("RUNNING")
                                                                 : std::string("PENDING");
    runs.push_back({rel(j.submit), rel(j.start), rel(j.end), state, j.started_by,
                    hostlist(j.alloc, [](const sim::NodeAlloc& a) { return a.node; })});
  }
  return out;
}

double kendall_tau_b(const std::vector<double>& a, const std::vector<double>& b) {
  assert(a.size() == b.size());
  std::int64_t concordant = 0, discordant = 0, ties_a = 0, ties_b = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t k = i + 1; k < a.size(); ++k) {
      const double da = a[i] - a[k], db = b[i] - b[k];
      if (da == 0 && db == 0) continue;  // tied in both: counts in neither denominator term
      if (da == 0) {
        ++ties_a;
      } else if (db == 0) {
        ++ties_b;
      } else if ((da > 0) == (db > 0)) {
        ++concordant;
      } else {
        ++discordant;
      }
    }
  const double n1 = static_cast<double>(concordant + discordant + ties_a);
  const double n2 = static_cast<double>(concordant + discordant + ties_b);
  if (n1 == 0 || n2 == 0) return 1.0;
  return static_cast<double>(concordant - discordant) / std::sqrt(n1 * n2);
}

ScheduleDiff compare_schedules(const Schedule& a, const Schedule& b) {
  ScheduleDiff d;
  std::vector<double> sa, sb;
  std::vector<std::pair<Seconds, std::string>> deltas;
  double sum_start = 0, sum_end = 0;
  std::size_t ends = 0;
  for (const auto& [name, runs_a] : a) {
    const auto it = b.find(name);
    if (it == b.end() || runs_a.empty() || it->second.empty()) continue;
    const auto& runs_b = it->second;
    const auto& fa = runs_a.front();
    const auto& fb = runs_b.front();
    ++d.state_jobs;
    bool same_states = runs_a.size() == runs_b.size();
    for (std::size_t k = 0; same_states && k < runs_a.size(); ++k)
      same_states = runs_a[k].state == runs_b[k].state;
    d.state_equal += same_states ? 1 : 0;
    if ((fa.start == kUnsetTime) != (fb.start == kUnsetTime)) ++d.only_one;
    if (fa.start == kUnsetTime || fb.start == kUnsetTime) continue;
    ++d.jobs;
    const Seconds ds = fb.start - fa.start;
    sum_start += static_cast<double>(std::abs(ds));
    d.max_abs_start = std::max(d.max_abs_start, std::abs(ds));
    deltas.emplace_back(std::abs(ds), fmt::format("{} {:+d} s", name, ds));
    sa.push_back(static_cast<double>(fa.start));
    sb.push_back(static_cast<double>(fb.start));
    const auto& la = runs_a.back();
    const auto& lb = runs_b.back();
    if (la.end != kUnsetTime && lb.end != kUnsetTime) {
      sum_end += static_cast<double>(std::abs(lb.end - la.end));
      ++ends;
    }
    if (fa.pass != SchedulerPass::kUnknown && fb.pass != SchedulerPass::kUnknown) {
      ++d.pass_known;
      d.pass_equal += fa.pass == fb.pass ? 1 : 0;
    }
    if (!fa.nodes.empty() && !fb.nodes.empty()) {
      ++d.nodes_known;
      d.nodes_equal += fa.nodes == fb.nodes ? 1 : 0;
    }
  }
  d.mean_abs_start = d.jobs > 0 ? sum_start / static_cast<double>(d.jobs) : 0.0;
  d.mean_abs_end = ends > 0 ? sum_end / static_cast<double>(ends) : 0.0;
  d.tau = kendall_tau_b(sa, sb);
  std::stable_sort(deltas.begin(), deltas.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  for (std::size_t k = 0; k < deltas.size() && k < 5 && deltas[k].first > 0; ++k)
    d.worst.push_back(deltas[k].second);
  return d;
}

RealRunsDiffer real_runs_differ(const std::vector<RecordedRun>& runs, std::size_t k, double tolerance,
                                double window) {
  RealRunsDiffer differ;
  const auto& run = runs[k];
  for (std::size_t i = 0; i < run.sshare.size(); ++i) {
    const double t = run.sshare[i].at - static_cast<double>(run.trace_start);
    for (std::size_t o = 0; o < runs.size(); ++o) {
      if (o == k || runs[o].sshare.empty()) continue;
      const auto& other = runs[o];
      const auto offset = [&](const auto& x) { return x.at - static_cast<double>(other.trace_start); };
      const auto nearest = std::min_element(
          other.sshare.begin(), other.sshare.end(),
          [&](const auto& a, const auto& b) { return std::abs(offset(a) - t) < std::abs(offset(b) - t); });
      if (std::abs(offset(*nearest) - t) > window) continue;
      for (const auto& r : run.sshare[i].rows) {
        if (r.user.empty() || r.fairshare < 0) continue;
        const auto it = std::find_if(nearest->rows.begin(), nearest->rows.end(),
                                     [&](const RealSshareRow& x) { return same_association(x, r); });
        if (it != nearest->rows.end() && it->fairshare >= 0 &&
            std::abs(it->fairshare - r.fairshare) > tolerance)
          differ.insert({i, r.account, r.user});
      }
    }
  }
  return differ;
}

namespace {

// squeue Reasons of a QOS, association or memory limit (WAIT_QOS_*, WAIT_ASSOC_*, the per-account
// Max* words, MaxMemPerLimit) or of licences (WAIT_LICENSES), which do not follow the sub-second order
// of passes.
bool is_limit_reason(std::string_view reason) {
  return reason.rfind("QOS", 0) == 0 || reason.rfind("Assoc", 0) == 0 || reason.rfind("Max", 0) == 0 ||
         reason == "Licenses";
}

}  // namespace

FactorDiff compare_factors(const RecordedRun& run, const SimulatedRun& sim, double tolerance, double guard,
                           const RealRunsDiffer& differ) {
  FactorDiff d;
  const auto near_tick = [&](double t) {
    return std::any_of(run.ticks.begin(), run.ticks.end(),
                       [&](double k) { return std::abs(t - k) <= guard; });
  };
  const auto sim_at = [&](double t) -> const PrioritySample* {
    const auto s = static_cast<Seconds>(std::floor(t));
    const auto it = std::lower_bound(sim.samples.begin(), sim.samples.end(), s,
                                     [](const PrioritySample& p, Seconds v) { return p.at < v; });
    return it != sim.samples.end() && it->at == s ? &*it : nullptr;
  };
  const auto note = [&](std::string what) {
    if (d.examples.size() < 6) d.examples.push_back(std::move(what));
  };
  for (const auto& real : run.sprio) {
    if (near_tick(real.at)) {
      ++d.skipped_near_tick;
      continue;
    }
    const auto* s = sim_at(real.at);
    if (!s) continue;
    ++d.samples;
    const double t_rel = real.at - static_cast<double>(run.trace_start);
    std::set<std::pair<std::uint64_t, std::string>> seen;
    for (const auto& r : real.rows) {
      const auto it = std::find_if(s->jobs.begin(), s->jobs.end(), [&](const SprioSample& x) {
        return x.job_id == r.job_id && x.partition == r.partition;
      });
      if (it == s->jobs.end()) {
        ++d.only_one;
        continue;
      }
      seen.insert({r.job_id, r.partition});
      ++d.job_rows;
      const double diffs[] = {std::abs(it->age - r.age), std::abs(it->fairshare - r.fairshare),
                              std::abs(it->job_size - r.job_size),
                              std::abs(it->partition_factor - r.partition_factor), std::abs(it->qos - r.qos)};
      const double worst = *std::max_element(std::begin(diffs), std::end(diffs));
      d.max_factor_diff = std::max(d.max_factor_diff, worst);
      if (worst > tolerance) {
        ++d.job_rows_bad;
        note(fmt::format(
            "t+{:.1f} job {} {}: sim age/fs/size/part/qos {:.4f}/{:.4f}/{:.4f}/{:.4f}/{:.4f} vs sprio "
            "{:.4f}/{:.4f}/{:.4f}/{:.4f}/{:.4f}",
            t_rel, r.job_id, r.partition, it->age, it->fairshare, it->job_size, it->partition_factor, it->qos,
            r.age, r.fairshare, r.job_size, r.partition_factor, r.qos));
      }
    }
    for (const auto& x : s->jobs)
      if (!seen.count({x.job_id, x.partition})) ++d.only_one;
  }
  for (std::size_t i = 0; i < run.sshare.size(); ++i) {
    const auto& real = run.sshare[i];
    if (near_tick(real.at)) continue;
    const auto* s = sim_at(real.at);
    if (!s) continue;
    if (near_tie(real.rows)) {
      ++d.share_samples_near_tie;
      continue;
    }
    const double t_rel = real.at - static_cast<double>(run.trace_start);
    for (const auto& r : real.rows) {
      if (r.user.empty() || r.fairshare < 0) continue;  // accounts: sshare shows no FairShare
      const auto it = std::find_if(s->shares.begin(), s->shares.end(),
                                   [&](const SshareSample& x) { return same_association(x, r); });
      if (it == s->shares.end()) continue;  // root's own user association: not in the model
      if (differ.count({i, r.account, r.user})) {
        ++d.share_rows_runs_differ;
        continue;
      }
      ++d.share_rows;
      // FairShare is the priority factor; EffectvUsage follows every sub-second difference in when
      // jobs ran (the simulator's clock has whole seconds), so it is reported, not judged.
      const double fs = std::abs(it->fairshare - r.fairshare);
      if (r.effectv_usage >= 0)
        d.max_usage_diff = std::max(d.max_usage_diff, std::abs(it->effectv_usage - r.effectv_usage));
      d.max_share_diff = std::max(d.max_share_diff, fs);
      if (fs > tolerance) {
        ++d.share_rows_bad;
        note(
            fmt::format("t+{:.1f} {}/{}: sim FairShare {:.6f} EffectvUsage {:.6f} RawUsage {:.0f} vs sshare "
                        "{:.6f} {:.6f} {:.0f}",
                        t_rel, r.account, r.user, it->fairshare, it->effectv_usage, it->raw_usage,
                        r.fairshare, r.effectv_usage, r.raw_usage));
      }
    }
  }
  // A job real Slurm held on a limit: the simulator's reason for it at that instant. Priority,
  // Resources and the like follow which pass ran last within the second, so only limits are compared.
  for (const auto& real : run.squeue) {
    const auto* s = sim_at(real.at);
    if (!s) continue;
    const double t_rel = real.at - static_cast<double>(run.trace_start);
    for (const auto& r : real.rows) {
      if (!is_limit_reason(r.reason)) continue;
      const auto it = std::find_if(s->jobs.begin(), s->jobs.end(),
                                   [&](const SprioSample& x) { return x.job_id == r.job_id; });
      if (it == s->jobs.end()) continue;  // not pending in the simulator then: the schedules differ
      ++d.reason_rows;
      if (r.reason != sim::to_string(it->reason)) {
        ++d.reason_rows_bad;
        note(fmt::format("t+{:.1f} job {}: sim reason {} vs squeue {}", t_rel, r.job_id,
                         sim::to_string(it->reason), r.reason));
      }
    }
  }
  return d;
}

ScenarioResult evaluate_scenario(const std::filesystem::path& dir, const Acceptance& acceptance) {
  ScenarioResult res;
  res.name = dir.filename().string();
  std::vector<RecordedRun> runs;
  for (int k = 1;; ++k) {
    const auto p = dir / fmt::format("run{}", k);
    if (!std::filesystem::exists(p / "meta.txt")) break;
    runs.push_back(read_recorded_run(p));
  }
  if (runs.empty()) throw InputError(dir.string(), 0, "run1", "no recorded run (run1/meta.txt)");
  res.runs = runs.size();
  {  // the first comment of the scenario's sched.conf (its lines joined), after oracle.sh's marker line
     // (its nodes.conf, when it has one, comes earlier under a marker of its own)
    const auto conf = lines_of(runs.front().dir / "slurm.conf");
    auto it = std::find_if(conf.begin(), conf.end(), [](const auto& l) {
      return l.rfind("# ---- scenario", 0) == 0 && text::trim(l).ends_with(": sched.conf");
    });
    if (it != conf.end())
      for (++it; it != conf.end() && it->rfind("# ", 0) == 0; ++it)
        res.title += (res.title.empty() ? "" : " ") + it->substr(2);
  }
  if (runs.size() >= 2) res.real_vs_real = compare_schedules(runs[0].schedule, runs[1].schedule);
  for (std::size_t k = 2; k < runs.size(); ++k)
    res.later_vs_first.push_back(compare_schedules(runs[0].schedule, runs[k].schedule));
  bool factors_ok = true;
  double sum_start = 0, sum_tau = 0;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const auto& run = runs[k];
    const auto sim = simulate_recorded_run(run);
    res.sim_vs_real.push_back(compare_schedules(run.schedule, sim.schedule));
    res.factors.push_back(compare_factors(run, sim, acceptance.factor_tolerance, 1.5,
                                          real_runs_differ(runs, k, acceptance.factor_tolerance)));
    sum_start += res.sim_vs_real.back().mean_abs_start;
    sum_tau += res.sim_vs_real.back().tau;
    factors_ok = factors_ok && res.factors.back().job_rows_bad == 0 && res.factors.back().share_rows_bad == 0;
  }
  res.sim_mean_abs_start = sum_start / static_cast<double>(runs.size());
  res.sim_tau = sum_tau / static_cast<double>(runs.size());
  const double rr_start = runs.size() >= 2 ? res.real_vs_real.mean_abs_start : 0.0;
  const double rr_tau = runs.size() >= 2 ? res.real_vs_real.tau : 1.0;
  res.start_ok = res.sim_mean_abs_start <= rr_start + acceptance.start_margin_s;
  res.tau_ok = res.sim_tau >= rr_tau - acceptance.tau_margin;
  res.factors_ok = factors_ok;
  return res;
}

std::string fidelity_report(const std::vector<ScenarioResult>& results, const Acceptance& acceptance,
                            const std::string& notes) {
  std::string out =
      "# Fidelity against real Slurm 22.05\n\n"
      "<!-- @generated by `make oracle-report` (slurmtwin oracle report); edit "
      "tests/oracle/fidelity-notes.md "
      "instead -->\n\n";
  std::size_t fewest = results.empty() ? 0 : results.front().runs, most = fewest;
  for (const auto& r : results) {
    fewest = std::min(fewest, r.runs);
    most = std::max(most, r.runs);
  }
  const auto times = [](std::size_t n) {
    return n == 1 ? std::string("once") : n == 2 ? std::string("twice") : fmt::format("{} times", n);
  };
  out += fmt::format(
      "Every scenario of `tests/oracle/scenarios/` ran {} on real Slurm on one machine "
      "(`tests/oracle/oracle.sh`, recordings in `tests/oracle/recorded/`); the simulator replays each "
      "recorded run from the same submit instants, controller start and decay-tick phase. "
      "**Acceptance** (per scenario): simulator-vs-real mean |Δstart| (mean over the runs) ≤ real-vs-real "
      "+ {:.0f} s; start-order Kendall τ-b ≥ real-vs-real − {:.2f}; every priority factor (sprio: age, "
      "fair-share, job size, partition, QOS; sshare: FairShare) within {:g} at every sampled "
      "instant more than 1.5 s away from a decay tick, for jobs pending on both sides; sshare samples whose "
      "real Fair Tree order hinges on siblings with LevelFS within 2% of each other, and sshare rows whose "
      "FairShare differs between the real runs themselves (another run's sample within 1 s of the same "
      "offset), are counted, not judged.\n\n",
      fewest == most ? times(most) : fmt::format("{} to {} times", fewest, most), acceptance.start_margin_s,
      acceptance.tau_margin, acceptance.factor_tolerance);
  out +=
      "| scenario | jobs | real vs real: mean/max \\|Δstart\\| s, τ | sim vs real (per run): mean/max "
      "\\|Δstart\\| s, "
      "τ | pass equal | nodes equal | end states equal | sprio rows bad/compared | sshare rows bad/compared "
      "| "
      "verdict |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n";
  std::size_t accepted = 0;
  for (const auto& r : results) {
    std::string sim, pass, nodes, states, sprio, sshare;
    for (std::size_t k = 0; k < r.sim_vs_real.size(); ++k) {
      const auto& d = r.sim_vs_real[k];
      const auto& f = r.factors[k];
      const auto sep = k == 0 ? "" : "; ";
      sim += fmt::format("{}{:.1f}/{} {:.3f}", sep, d.mean_abs_start, d.max_abs_start, d.tau);
      pass += fmt::format("{}{}/{}", sep, d.pass_equal, d.pass_known);
      nodes += fmt::format("{}{}/{}", sep, d.nodes_equal, d.nodes_known);
      states += fmt::format("{}{}/{}", sep, d.state_equal, d.state_jobs);
      sprio += fmt::format("{}{}/{}", sep, f.job_rows_bad, f.job_rows);
      sshare += fmt::format("{}{}/{}", sep, f.share_rows_bad, f.share_rows);
    }
    const auto& rr = r.real_vs_real;
    std::string verdict = r.accepted() ? "**pass**" : "**FAIL**";
    if (!r.accepted()) {
      verdict += " (";
      if (!r.start_ok) verdict += "Δstart ";
      if (!r.tau_ok) verdict += "τ ";
      if (!r.factors_ok) verdict += "factors";
      verdict += ")";
    }
    accepted += r.accepted() ? 1 : 0;
    out += fmt::format("| {} | {} | {:.1f}/{} {:.3f} | {} | {} | {} | {} | {} | {} | {} |\n", r.name,
                       r.sim_vs_real.empty() ? 0 : r.sim_vs_real.front().state_jobs, rr.mean_abs_start,
                       rr.max_abs_start, rr.tau, sim, pass, nodes, states, sprio, sshare, verdict);
  }
  out += fmt::format("\n**{} of {} scenarios accepted.**\n\n", accepted, results.size());
  out += "## Per scenario\n\n";
  for (const auto& r : results) {
    out += fmt::format("### {}\n\n{}\n\n", r.name, r.title);
    const auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
      return s.empty() ? std::string("none") : s;
    };
    out += fmt::format("- real run 2 vs run 1, largest |Δstart|: {}\n", join(r.real_vs_real.worst));
    // Not in the margins: the table's real-vs-real spread is run 2's.
    for (std::size_t k = 0; k < r.later_vs_first.size(); ++k) {
      const auto& d = r.later_vs_first[k];
      out += fmt::format(
          "- real run {} vs run 1 (not judged): mean/max |Δstart| {:.1f}/{} s, τ {:.3f}; largest: {}\n",
          k + 3, d.mean_abs_start, d.max_abs_start, d.tau, join(d.worst));
    }
    for (std::size_t k = 0; k < r.sim_vs_real.size(); ++k) {
      const auto& d = r.sim_vs_real[k];
      const auto& f = r.factors[k];
      out += fmt::format(
          "- sim vs run {}: mean |Δend| {:.1f} s; started in one only: {}; largest |Δstart|: {}; factors: {} "
          "samples "
          "({} near a tick skipped), rows pending on one side only {}, max |Δfactor| {:.2g}, max |Δshare| "
          "{:.2g}; limit reasons (squeue) differ {}/{}{}\n",
          k + 1, d.mean_abs_end, d.only_one, join(d.worst), f.samples, f.skipped_near_tick, f.only_one,
          f.max_factor_diff, f.max_share_diff, f.reason_rows_bad, f.reason_rows,
          f.share_rows_runs_differ == 0
              ? std::string()
              : fmt::format("; sshare rows where the real runs differ (not judged): {}",
                            f.share_rows_runs_differ));
      for (const auto& e : f.examples) out += fmt::format("  - {}\n", e);
    }
    out += "\n";
  }
  out += notes;
  return out;
}

}  // namespace slurmtwin::experiments
