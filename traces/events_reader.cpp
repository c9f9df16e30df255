// Slurm-simulator events (UB CCR slurm_sim_tools): one job per line,
//   -dt 10.50 -e submit_batch_job | -sim-walltime 84805.00 --uid=user001 -J jobid_00001 -N 1 -n 32
//   -t 3-00:00:00 -q general-compute -p general-compute --mem=500G pseudo.job
// The part before '|' is the event (submit offset -dt in s, event type -e); the part after it holds
// sbatch options plus the simulator's -sim-walltime / -cancel-in, then the batch script name.
// Blank lines and '#' comment lines are not records. Options take "--opt=value", "--opt value",
// "-N 1", "-N1"; single and double quotes group words. A repeated option replaces the earlier value
// (as sbatch does).
//
// Decisions:
//  - submit = trace.origin + floor(-dt); -dt must be >= 0. job_id = -jid N (the simulator's own job id,
//    as the UB toolkit's micro-cluster traces give it; a second line with the same id is rejected),
//    else one past the largest id so far (1, 2, ... in line order for a trace without -jid).
//  - -sim-walltime (real run time, s, rounded to the nearest second) >= 0; 0 is allowed (the job ends
//    at once). -1 means "runs until its time limit" (the simulator's convention) and is stored as
//    runtime = kUnlimited, so the simulator ends it as TIMEOUT. Any other negative value is rejected.
//  - -cancel-in S: the toolkit runs `scancel` S seconds after the submit (run_slurm.py inserts a
//    cancel_job event at dt + S), whatever the job's state then: cancel = trace.origin + floor(dt + S),
//    so a job still pending leaves the queue and a running one ends CANCELLED (JobRecord::cancel).
//  - tasks = -n; without -n, N * --ntasks-per-node when that is given, else max(N, 1) (Slurm gives
//    every allocated node at least one CPU). req_cpus = tasks * cpus_per_task.
//  - -N "min-max" keeps the minimum. --exclusive (and =user / =mcs, approximated) sets exclusive.
//  - --mem and --mem-per-cpu are MB by default (K/M/G/T suffixes), mutually exclusive as in sbatch.
//  - --gres "gpu", "gpu:2", "gpu:type:2", comma lists: per node.
//  - --array=SPEC (-a): one job per task id, all with the line's job id, each task counted as a record
//    (as sacct lists them); %MAX caps the tasks running at once. At most 100,001 tasks a line and
//    200,000 a file (a line past that is rejected by reason).
//  - -L/--licenses=name[:count],... (checked as slurmctld reads it; the site's counts at replay).
//  - --nice[=N] (alone: 100), --reservation=NAME; --begin=now[+N[unit]] sets eligible = submit + the
//    delay (a date or clock time is rejected: it would name the day the toolkit ran, not a trace time).
//  - account: -A, else user_default_accounts[user], else the line is rejected.
//  - unknown options are rejected ("unknown option --foo"), and so is a second positional argument.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "traces/array_spec.hpp"
#include "traces/csv.hpp"
#include "traces/dependency.hpp"
#include "traces/input_limits.hpp"
#include "traces/licenses.hpp"
#include "traces/readers.hpp"
#include "traces/text.hpp"
#include "traces/time_format.hpp"

namespace slurmtwin {
namespace {

/// Splits a line on whitespace; '...' and "..." group words (the quotes are removed).
std::vector<std::string> tokenize(std::string_view line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i >= line.size()) break;
    std::string tok;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) {
      const char c = line[i++];
      if (c == '"' || c == '\'') {
        const auto close = line.find(c, i);
        if (close == std::string_view::npos) throw std::invalid_argument("unclosed quote");
        tok.append(line.substr(i, close - i));
        i = close + 1;
      } else {
        tok += c;
      }
    }
    out.push_back(std::move(tok));
  }
  return out;
}

enum class Opt {
  kNodes,
  kNtasks,
  kNtasksPerNode,
  kCpusPerTask,
  kMem,
  kMemPerCpu,
  kGres,
  kTime,
  kPartition,
  kQos,
  kAccount,
  kUid,
  kJobName,
  kConstraint,
  kExclusive,
  kDependency,
  kNice,
  kBegin,
  kReservation,
  kLicenses,
  kArray,
  kSimWalltime,
  kCancelIn,
  kJid,
};

struct OptSpec {
  Opt opt;
  const char* long_name;  // without dashes
  char short_name;        // 0 = none
  bool single_dash;       // the simulator's own "-sim-walltime", "-cancel-in", "-jid"
  bool value_optional;    // "--exclusive" or "--exclusive=user"
};

constexpr OptSpec kOptions[] = {
    {Opt::kNodes, "nodes", 'N', false, false},
    {Opt::kNtasks, "ntasks", 'n', false, false},
    {Opt::kNtasksPerNode, "ntasks-per-node", 0, false, false},
    {Opt::kCpusPerTask, "cpus-per-task", 'c', false, false},
    {Opt::kMem, "mem", 0, false, false},
    {Opt::kMemPerCpu, "mem-per-cpu", 0, false, false},
    {Opt::kGres, "gres", 0, false, false},
    {Opt::kTime, "time", 't', false, false},
    {Opt::kPartition, "partition", 'p', false, false},
    {Opt::kQos, "qos", 'q', false, false},
    {Opt::kAccount, "account", 'A', false, false},
    {Opt::kUid, "uid", 0, false, false},
    {Opt::kJobName, "job-name", 'J', false, false},
    {Opt::kConstraint, "constraint", 'C', false, false},
    {Opt::kExclusive, "exclusive", 0, false, true},
    {Opt::kDependency, "dependency", 'd', false, false},
    {Opt::kNice, "nice", 0, false, true},
    {Opt::kBegin, "begin", 'b', false, false},
    {Opt::kReservation, "reservation", 0, false, false},
    {Opt::kLicenses, "licenses", 'L', false, false},
    {Opt::kArray, "array", 'a', false, false},
    {Opt::kSimWalltime, "sim-walltime", 0, true, false},
    {Opt::kCancelIn, "cancel-in", 0, true, false},
    {Opt::kJid, "jid", 0, true, false},
};

constexpr std::int64_t kMaxJid = 0xFFFFFFFF;  // Slurm job ids are 32-bit
// Most tasks one --array line may name: a MaxArraySize of 100,001 is already far above Slurm's default
// (1,001); more from one line of a trace is taken for a typo, not millions of jobs. And most tasks all
// the --array lines of one file may name, so that a file's jobs stay in proportion to its size (about
// 50 MiB for 200,000 tasks; the UB toolkit's traces have a few thousand jobs).
constexpr std::size_t kMaxEventArrayTasks = 100'001;
constexpr std::uint64_t kMaxEventArrayTasksPerFile = 200'000;

/// A rejected line: counting key, field and detail.
struct Bad {
  std::string reason;
  std::string field;
  std::string detail;
};

/// Everything the option part of one line says.
struct Options {
  std::optional<std::string> nodes, ntasks, ntasks_per_node, cpus_per_task, mem, mem_per_cpu, gres, time,
      partition, qos, account, uid, job_name, constraint, exclusive, dependency, nice, begin, reservation,
      licenses, array, sim_walltime, cancel_in, jid;
  std::optional<std::string> script;

  std::optional<std::string>& slot(Opt o) {
    switch (o) {
      case Opt::kNodes:
        return nodes;
      case Opt::kNtasks:
        return ntasks;
      case Opt::kNtasksPerNode:
        return ntasks_per_node;
      case Opt::kCpusPerTask:
        return cpus_per_task;
      case Opt::kMem:
        return mem;
      case Opt::kMemPerCpu:
        return mem_per_cpu;
      case Opt::kGres:
        return gres;
      case Opt::kTime:
        return time;
      case Opt::kPartition:
        return partition;
      case Opt::kQos:
        return qos;
      case Opt::kAccount:
        return account;
      case Opt::kUid:
        return uid;
      case Opt::kJobName:
        return job_name;
      case Opt::kConstraint:
        return constraint;
      case Opt::kExclusive:
        return exclusive;
      case Opt::kDependency:
        return dependency;
      case Opt::kNice:
        return nice;
      case Opt::kBegin:
        return begin;
      case Opt::kReservation:
        return reservation;
      case Opt::kLicenses:
        return licenses;
      case Opt::kArray:
        return array;
      case Opt::kSimWalltime:
        return sim_walltime;
      case Opt::kCancelIn:
        return cancel_in;
      case Opt::kJid:
        return jid;
    }
    return script;  // unreachable
  }
};

/// Parses the sbatch/simulator options after '|'; returns the problem, if any.
std::optional<Bad> parse_options(const std::vector<std::string>& toks, std::size_t from, Options& o) {
  for (std::size_t i = from; i < toks.size(); ++i) {
    const std::string& t = toks[i];
    const OptSpec* spec = nullptr;
    std::optional<std::string> value;
    std::string shown;  // the option as the user wrote it, for messages
    if (t.starts_with("--")) {
      const auto eq = t.find('=');
      const auto name = std::string_view(t).substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      for (const auto& s : kOptions) {
        if (!s.single_dash && name == s.long_name) spec = &s;
      }
      shown = fmt::format("--{}", name);
      if (!spec)
        return Bad{"unknown option " + shown, shown, fmt::format("'{}' is not a supported option", t)};
      if (eq != std::string::npos) value = t.substr(eq + 1);
    } else if (t.size() >= 2 && t[0] == '-') {
      for (const auto& s : kOptions) {
        if (s.single_dash && std::string_view(t).substr(1) == s.long_name) spec = &s;
      }
      if (!spec) {
        for (const auto& s : kOptions) {
          if (s.short_name == t[1]) spec = &s;
        }
        if (spec && t.size() > 2) value = t.substr(2);  // "-N1"
      }
      shown = spec && !spec->single_dash ? fmt::format("-{}", t[1]) : t;
      if (!spec) return Bad{"unknown option " + t, t, fmt::format("'{}' is not a supported option", t)};
    } else {
      if (o.script)
        return Bad{"unexpected argument", "", fmt::format("'{}' after the script '{}'", t, *o.script)};
      o.script = t;
      continue;
    }
    if (!value && !spec->value_optional) {
      if (i + 1 >= toks.size())
        return Bad{"missing option value", shown, fmt::format("{} needs a value", shown)};
      value = toks[++i];
    }
    o.slot(spec->opt) = value.value_or("");
  }
  return std::nullopt;
}

/// --begin as a trace can give it: "now" or "now+N[unit]" (sbatch's parse_time: seconds by default, or
/// seconds, minutes, hours, days, weeks, singular or plural) -> the delay after submission, s.
std::optional<Seconds> begin_delay(std::string_view s) {
  if (!text::iequals(s.substr(0, 3), "now")) return std::nullopt;
  s.remove_prefix(3);
  if (s.empty()) return 0;
  if (s.front() != '+') return std::nullopt;
  s.remove_prefix(1);
  std::size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') ++digits;
  const auto n = text::parse_int(s.substr(0, digits));
  if (!n || *n < 0 || *n > kMaxParsedNumber) return std::nullopt;
  auto unit = std::string(s.substr(digits));
  if (unit.size() > 1 && (unit.back() == 's' || unit.back() == 'S')) unit.pop_back();
  static constexpr std::pair<const char*, Seconds> kUnits[] = {
      {"", 1}, {"second", 1}, {"minute", 60}, {"hour", 3600}, {"day", 86400}, {"week", 7 * 86400}};
  for (const auto& [name, scale] : kUnits)
    if (text::iequals(unit, name)) return *n * scale;
  return std::nullopt;
}

/// Whole positive integer up to 2^31 (counts of nodes, tasks, CPUs), else nullopt.
std::optional<std::uint32_t> positive_count(std::string_view s) {
  const auto v = text::parse_int(s);
  if (!v || *v < 1 || *v > (std::int64_t{1} << 31)) return std::nullopt;
  return static_cast<std::uint32_t>(*v);
}

/// --gres list -> requests; nullopt on a malformed item.
std::optional<std::vector<GresRequest>> parse_gres(std::string_view s) {
  std::vector<GresRequest> out;
  for (auto item : text::split(s, ',')) {
    item = text::trim(item);
    if (item.starts_with("gres:") || item.starts_with("gres/")) item.remove_prefix(5);
    const auto parts = text::split(item, ':');
    GresRequest g;
    g.name = std::string(parts[0]);
    g.count = 1;
    g.per_node = true;
    if (g.name.empty() || parts.size() > 3) return std::nullopt;
    if (parts.size() == 2) {
      if (const auto n = text::parse_int(parts[1])) {
        g.count = *n;
      } else {
        g.type = std::string(parts[1]);
      }
    } else if (parts.size() == 3) {
      g.type = std::string(parts[1]);
      const auto n = text::parse_int(parts[2]);
      if (!n) return std::nullopt;
      g.count = *n;
    }
    if (g.count < 1 || (parts.size() >= 2 && parts[1].empty())) return std::nullopt;
    out.push_back(std::move(g));
  }
  return out;
}

/// Parses one record line into `j`; returns the problem, if any.
std::optional<Bad> parse_line(std::string_view line, Trace& trace,
                              const std::map<std::string, std::string>& user_default_accounts, JobRecord& j,
                              bool& exclusive_approx, std::optional<ArraySpec>& array) {
  std::vector<std::string> toks;
  try {
    toks = tokenize(line);
  } catch (const std::invalid_argument& e) {
    return Bad{"unclosed quote", "", e.what()};
  }
  std::size_t bar = 0;
  while (bar < toks.size() && toks[bar] != "|") ++bar;
  if (bar == toks.size()) return Bad{"missing '|'", "", "no '|' between the event and the job options"};

  // Event part: -dt <s> -e <event>
  std::optional<std::string> dt, event;
  for (std::size_t i = 0; i < bar; ++i) {
    if ((toks[i] == "-dt" || toks[i] == "-e") && i + 1 < bar) {
      (toks[i] == "-dt" ? dt : event) = toks[i + 1];
      ++i;
    } else if (toks[i] == "-dt" || toks[i] == "-e") {
      return Bad{"missing option value", toks[i], fmt::format("{} needs a value", toks[i])};
    } else {
      return Bad{"unknown option " + toks[i], toks[i], fmt::format("'{}' in the event part", toks[i])};
    }
  }
  if (!dt) return Bad{"missing -dt", "-dt", "no submit offset -dt"};
  if (!event) return Bad{"missing -e", "-e", "no event type -e"};
  if (*event != "submit_batch_job")
    return Bad{"unsupported event " + *event, "-e",
               fmt::format("event '{}' is not submit_batch_job", *event)};
  const auto dt_s = text::parse_double(*dt);
  if (!dt_s || *dt_s < 0 || *dt_s > kMaxParsedNumber)
    return Bad{"bad -dt", "-dt", fmt::format("'{}' is not an offset >= 0 s", *dt)};

  Options o;
  if (auto bad = parse_options(toks, bar + 1, o)) return bad;

  if (!o.uid || o.uid->empty()) return Bad{"missing --uid", "--uid", "no --uid (user)"};
  if (!o.sim_walltime) return Bad{"missing -sim-walltime", "-sim-walltime", "no -sim-walltime (run time)"};
  const auto wall = text::parse_double(*o.sim_walltime);
  if (!wall || (*wall < 0 && *wall != -1) || *wall > kMaxParsedNumber)
    return Bad{"bad -sim-walltime", "-sim-walltime",
               fmt::format("'{}' is not a run time >= 0 s or -1", *o.sim_walltime)};

  j.submit = trace.origin + static_cast<Seconds>(std::floor(*dt_s));
  j.runtime = *wall == -1 ? kUnlimited : static_cast<Seconds>(std::llround(*wall));

  if (o.nodes) {
    auto n = std::string_view(*o.nodes);
    if (const auto dash = n.find('-'); dash != std::string_view::npos) n = n.substr(0, dash);  // "min-max"
    const auto v = positive_count(n);
    if (!v) return Bad{"bad --nodes", "--nodes", fmt::format("'{}' is not a node count", *o.nodes)};
    j.nodes = *v;
  }
  if (o.cpus_per_task) {
    const auto v = positive_count(*o.cpus_per_task);
    if (!v)
      return Bad{"bad --cpus-per-task", "--cpus-per-task",
                 fmt::format("'{}' is not a CPU count", *o.cpus_per_task)};
    j.cpus_per_task = *v;
  }
  if (o.ntasks_per_node) {
    const auto v = positive_count(*o.ntasks_per_node);
    if (!v)
      return Bad{"bad --ntasks-per-node", "--ntasks-per-node",
                 fmt::format("'{}' is not a task count", *o.ntasks_per_node)};
    j.tasks_per_node = *v;
  }
  std::uint64_t tasks = std::max<std::uint32_t>(j.nodes, 1);
  if (o.ntasks) {
    const auto v = positive_count(*o.ntasks);
    if (!v) return Bad{"bad --ntasks", "--ntasks", fmt::format("'{}' is not a task count", *o.ntasks)};
    tasks = *v;
  } else if (j.tasks_per_node > 0) {
    tasks = std::uint64_t{std::max<std::uint32_t>(j.nodes, 1)} * j.tasks_per_node;
  }
  const std::uint64_t cpus = tasks * j.cpus_per_task;
  if (tasks > UINT32_MAX || cpus > UINT32_MAX)
    return Bad{"bad --ntasks", "--ntasks",
               fmt::format("{} tasks x {} CPUs is out of range", tasks, j.cpus_per_task)};
  j.tasks = static_cast<std::uint32_t>(tasks);
  j.req_cpus = static_cast<std::uint32_t>(cpus);

  if (o.mem && o.mem_per_cpu)
    return Bad{"conflicting --mem and --mem-per-cpu", "--mem", "both --mem and --mem-per-cpu given"};
  if (o.mem) {
    const auto v = text::parse_memory_mb(*o.mem, 'M');
    if (!v) return Bad{"bad --mem", "--mem", fmt::format("'{}' is not a memory size", *o.mem)};
    j.mem_mb = *v;
  } else if (o.mem_per_cpu) {
    const auto v = text::parse_memory_mb(*o.mem_per_cpu, 'M');
    if (!v)
      return Bad{"bad --mem-per-cpu", "--mem-per-cpu",
                 fmt::format("'{}' is not a memory size", *o.mem_per_cpu)};
    j.mem_mb = *v;
    j.mem_per_cpu = true;
  }
  if (o.gres) {
    auto g = parse_gres(*o.gres);
    if (!g)
      return Bad{"bad --gres", "--gres",
                 fmt::format("'{}' is not a GRES list (name[:type][:count],...)", *o.gres)};
    j.gres = std::move(*g);
  }
  if (o.time) {
    const auto v = parse_slurm_duration(*o.time);
    if (!v || *v == kUnsetTime)
      return Bad{"bad --time", "--time", fmt::format("'{}' is not a time limit", *o.time)};
    j.time_limit = *v;
  }
  if (o.exclusive) {
    if (!o.exclusive->empty() && *o.exclusive != "user" && *o.exclusive != "mcs" &&
        *o.exclusive != "exclusive")
      return Bad{"bad --exclusive", "--exclusive",
                 fmt::format("'{}' is not user, mcs or empty", *o.exclusive)};
    j.exclusive = true;
    exclusive_approx = *o.exclusive == "user" || *o.exclusive == "mcs";
  }
  if (o.jid) {
    const auto v = text::parse_int(*o.jid);
    if (!v || *v < 1 || *v > kMaxJid)
      return Bad{"bad -jid", "-jid", fmt::format("'{}' is not a job id >= 1", *o.jid)};
    j.job_id = static_cast<std::uint64_t>(*v);
  }
  if (o.cancel_in) {
    const auto v = text::parse_double(*o.cancel_in);
    if (!v || *v < 0 || *v > kMaxParsedNumber)
      return Bad{"bad -cancel-in", "-cancel-in", fmt::format("'{}' is not a delay >= 0 s", *o.cancel_in)};
    j.cancel = trace.origin + static_cast<Seconds>(std::floor(*dt_s + *v));
  }
  if (o.nice) {
    // sbatch: --nice alone is 100.
    const auto v = o.nice->empty() ? std::optional<std::int64_t>(100) : text::parse_int(*o.nice);
    if (!v || *v < -kMaxNice || *v > kMaxNice)
      return Bad{"bad --nice", "--nice",
                 fmt::format("'{}' is not a nice value (|N| <= {})", *o.nice, kMaxNice)};
    j.nice = static_cast<std::int32_t>(*v);
  }
  if (o.begin) {
    const auto v = begin_delay(*o.begin);
    if (!v)
      return Bad{"bad --begin", "--begin",
                 fmt::format("'{}' is not now or now+N[seconds|minutes|hours|days|weeks] (a date or a clock "
                             "time has no meaning against a trace's offsets)",
                             *o.begin)};
    j.eligible = j.submit + *v;
  }
  if (o.array) {
    array = parse_array_spec(*o.array);
    if (!array)
      return Bad{"bad --array", "--array", fmt::format("'{}' is not N[-M[:STEP]][,...][%MAX]", *o.array)};
    if (array->tasks.size() > kMaxEventArrayTasks)
      return Bad{"bad --array", "--array",
                 fmt::format("'{}' names {} tasks, more than {}", *o.array, array->tasks.size(),
                             kMaxEventArrayTasks)};
    j.array_max_running = array->max_running;
  }
  if (o.reservation) {
    if (o.reservation->empty()) return Bad{"bad --reservation", "--reservation", "empty reservation name"};
    j.reservation = trace.strings.intern(*o.reservation);
  }
  std::string account;
  if (o.account) {
    account = *o.account;
  } else if (const auto it = user_default_accounts.find(*o.uid); it != user_default_accounts.end()) {
    account = it->second;
  } else {
    return Bad{"unknown default account for user", "--uid",
               fmt::format("no -A and no default account for user '{}'", *o.uid)};
  }
  j.user = trace.users.intern(*o.uid);
  j.account = trace.accounts.intern(account);
  if (o.partition) j.partition = trace.partitions.intern(*o.partition);
  if (o.qos) j.qos = trace.qos.intern(*o.qos);
  if (o.job_name) j.name = trace.strings.intern(*o.job_name);
  if (o.constraint) j.constraints = trace.strings.intern(*o.constraint);
  if (o.licenses) {
    try {
      parse_licenses(*o.licenses);  // whether the site has them is the replay's question
    } catch (const std::invalid_argument& e) {
      return Bad{"bad --licenses", "--licenses", e.what()};
    }
    j.licenses = trace.strings.intern(*o.licenses);
  }
  if (o.dependency) {
    try {
      parse_dependency(*o.dependency);
    } catch (const std::invalid_argument& e) {
      return Bad{"bad --dependency", "--dependency", e.what()};
    }
    j.dependency = trace.strings.intern(*o.dependency);
  }
  return std::nullopt;
}

}  // namespace

void read_events(std::string_view content, const std::string& file, Trace& trace, RejectSink& sink,
                 const std::map<std::string, std::string>& user_default_accounts) {
  auto& report = sink.report();
  if (report.file.empty()) report.file = file;
  csv::require_text(content, file, "events");
  const csv::CallCounts counts(report);
  trace.source = trace.source.empty() ? file : trace.source + "," + file;
  std::uint64_t exclusive_approx_count = 0;
  std::uint64_t array_tasks = 0;  // named by the --array lines accepted so far
  // Job ids: -jid's, else one past the largest so far (1, 2, ... for a trace without -jid).
  std::uint64_t next_id = 1;
  std::unordered_set<std::uint64_t> ids;
  for (const auto& j : trace.jobs) {
    next_id = std::max(next_id, j.job_id + 1);
    ids.insert(j.job_id);
  }
  std::uint64_t line_no = 0;
  for (const auto raw : text::split(content, '\n')) {
    ++line_no;
    const auto line = text::trim(raw);
    if (line.empty() || line.starts_with('#')) continue;
    ++report.records;
    JobRecord j;
    bool exclusive_approx = false;
    std::optional<ArraySpec> array;
    if (auto bad = parse_line(line, trace, user_default_accounts, j, exclusive_approx, array)) {
      sink.reject(line_no, bad->field, bad->reason, bad->detail, line);
      continue;
    }
    j.source_line = line_no;
    if (j.job_id == 0) {
      j.job_id = next_id;
    } else if (!ids.insert(j.job_id).second) {
      sink.reject(line_no, "-jid", "duplicate -jid",
                  fmt::format("job id {} is given on an earlier line", j.job_id), line);
      continue;
    }
    // An --array line is one record per task (each a job, as sacct lists them), all of the line's id.
    if (array) {
      if (array_tasks + array->tasks.size() > kMaxEventArrayTasksPerFile) {
        sink.reject(line_no, "--array", "too many array tasks",
                    fmt::format("{} more array tasks would make more than {} in this file",
                                array->tasks.size(), kMaxEventArrayTasksPerFile),
                    line);
        continue;
      }
      array_tasks += array->tasks.size();
      report.records += array->tasks.size() - 1;
    }
    const std::vector<std::int32_t> tasks = array ? std::move(array->tasks) : std::vector<std::int32_t>{-1};
    bool any = false;
    for (const auto task : tasks) {
      auto t = j;
      t.array_task = task;
      if (!accept_within_limits(t, line_no, sink, line)) continue;
      trace.jobs.push_back(std::move(t));
      ++report.accepted;
      exclusive_approx_count += exclusive_approx;
      any = true;
    }
    if (!any) continue;
    ids.insert(j.job_id);
    next_id = std::max(next_id, j.job_id + 1);
  }
  if (exclusive_approx_count > 0)
    report.warnings.push_back(
        fmt::format("{}: {} job(s) have --exclusive=user/mcs; modelled as whole-node --exclusive", file,
                    exclusive_approx_count));
  counts.finish(file, "events");
}

}  // namespace slurmtwin
