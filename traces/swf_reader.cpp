// Standard Workload Format (SWF 2.2, Parallel Workloads Archive): one job per line, 18 whitespace
// separated fields, -1 = missing; ';' lines are comments and "; Key: value" header directives.
// Also reads the ';'-separated variant of the UB Slurm simulator tools (jobs500.swf), whose user,
// group, queue and partition fields are names ("user5;account2;...;normal;normal;;-1;").
//
// Mapping to JobRecord (decisions):
//  - submit = UnixStartTime (or trace.origin when the header has none) + field 2; the first file read
//    into an empty trace sets trace.origin to its UnixStartTime.
//  - start = submit + wait when wait >= 0; end = start + run time when both are known.
//  - req_cpus = tasks = requested processors, falling back to allocated processors; alloc_cpus =
//    allocated processors; nodes = 0 (SWF counts processors, the scheduler decides the nodes).
//  - time_limit = requested time (s); -1 or 0 = unset (partition default).
//  - mem_mb = ceil(requested memory KB per processor / 1024), per CPU; used memory is not kept.
//  - user "u<uid>", account "g<gid>" (the SWF group), partition "p<partition>", else "q<queue>" when
//    the partition is missing; names in the ';' variant are kept as they are and a named queue also
//    becomes the QOS. Missing ids leave the name unset (kNoName). Executable -> job name "app<n>".
//  - status 1 COMPLETED, 0 FAILED, 5 CANCELLED, -1 unknown. Status 2/3/4 lines are partial executions
//    (checkpoint/swap segments): after the job's summary line they are folded ("partial execution");
//    without one they become a job (2 PREEMPTED, 3 COMPLETED, 4 FAILED).
//  - preceding job / think time (feedback dependencies) are not modelled: the recorded submit time
//    already contains the think time.
//  - rejected: wrong field count, a non-numeric field, negative submit time, a negative value other
//    than -1 where it matters, no run time and no processor count, no processor count.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "traces/csv.hpp"
#include "traces/input_limits.hpp"
#include "traces/readers.hpp"
#include "traces/swf_header.hpp"
#include "traces/text.hpp"

namespace slurmtwin {
namespace {

constexpr std::size_t kSwfFields = 18;
constexpr const char* kFieldNames[kSwfFields] = {"job number",
                                                 "submit time",
                                                 "wait time",
                                                 "run time",
                                                 "allocated processors",
                                                 "average CPU time",
                                                 "used memory",
                                                 "requested processors",
                                                 "requested time",
                                                 "requested memory",
                                                 "status",
                                                 "user id",
                                                 "group id",
                                                 "executable",
                                                 "queue",
                                                 "partition",
                                                 "preceding job",
                                                 "think time"};

enum Field : std::size_t {
  kJob = 0,
  kSubmit,
  kWait,
  kRunTime,
  kAllocProcs,
  kAvgCpu,
  kUsedMem,
  kReqProcs,
  kReqTime,
  kReqMem,
  kStatus,
  kUser,
  kGroup,
  kExecutable,
  kQueue,
  kPartition,
  kPreceding,
  kThinkTime,
};

/// One field: a number, a name (only fields that may hold one), or missing (-1 or empty).
struct Value {
  bool missing = true;
  double number = -1;
  std::string_view name;  // non-empty when the field is a name
  bool present() const { return !missing; }
  std::int64_t integer() const { return std::llround(number); }
};

bool may_be_name(std::size_t field) {
  return field == kUser || field == kGroup || field == kExecutable || field == kQueue || field == kPartition;
}

/// "<prefix><n>" for a numeric id, the name itself for a named one.
std::string id_name(const Value& v, std::string_view prefix) {
  if (!v.name.empty()) return std::string(v.name);
  return fmt::format("{}{}", prefix, v.integer());
}

std::optional<Seconds> header_int(std::string_view value, const std::string& file, std::uint64_t line,
                                  const std::string& key) {
  // Some archives write MaxRuntime etc. with a trailing comment or unit; take the first word.
  const auto words = text::split_ws(value);
  if (words.empty()) return std::nullopt;
  if (const auto v = text::parse_int(words.front());
      v && std::abs(static_cast<double>(*v)) <= kMaxParsedNumber) {
    return *v;
  }
  throw InputError(file, line, key,
                   fmt::format("'{}' is not an integer within +-{:.0e}", value, kMaxParsedNumber));
}

}  // namespace

SwfHeader parse_swf_header(std::string_view content, const std::string& file) {
  SwfHeader h;
  std::uint64_t line_no = 0;
  bool last_was_note = false;
  for (auto line : text::split(content, '\n')) {
    ++line_no;
    line = text::trim(line);
    if (!line.starts_with(';')) continue;
    line = text::trim(line.substr(1));
    const auto colon = line.find(':');
    const auto key = colon == std::string_view::npos ? std::string_view{} : line.substr(0, colon);
    const bool is_key = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
    if (!is_key) {  // a continuation line ("the given submit times ...") or a plain comment
      if (last_was_note && !line.empty()) {
        h.notes.back() += ' ';
        h.notes.back() += line;
        h.entries.back().second += ' ';
        h.entries.back().second += line;
      }
      if (line.empty()) last_was_note = false;
      continue;
    }
    const std::string k(key);
    const auto value = text::trim(line.substr(colon + 1));
    h.entries.emplace_back(k, std::string(value));
    last_was_note = k == "Note";
    if (k == "UnixStartTime") {
      h.unix_start_time = header_int(value, file, line_no, k);
    } else if (k == "TimeZone") {
      h.time_zone = header_int(value, file, line_no, k);
    } else if (k == "TimeZoneString") {
      h.time_zone_string = value;
    } else if (k == "Version") {
      h.version = value;
    } else if (k == "Computer") {
      h.computer = value;
    } else if (k == "Installation") {
      h.installation = value;
    } else if (k == "MaxJobs") {
      h.max_jobs = header_int(value, file, line_no, k);
    } else if (k == "MaxRecords") {
      h.max_records = header_int(value, file, line_no, k);
    } else if (k == "MaxNodes") {
      h.max_nodes = header_int(value, file, line_no, k);
    } else if (k == "MaxProcs") {
      h.max_procs = header_int(value, file, line_no, k);
    } else if (k == "MaxRuntime") {
      h.max_runtime = header_int(value, file, line_no, k);
    } else if (k == "MaxMemory") {
      h.max_memory_kb = header_int(value, file, line_no, k);
    } else if (k == "Queue") {
      h.queues.emplace_back(value);
    } else if (k == "Partition") {
      h.partitions.emplace_back(value);
    } else if (k == "Note") {
      h.notes.emplace_back(value);
    }
  }
  return h;
}

void read_swf(std::string_view content, const std::string& file, Trace& trace, RejectSink& sink) {
  auto& report = sink.report();
  if (report.file.empty()) report.file = file;
  csv::require_text(content, file, "SWF");
  const csv::CallCounts counts(report);
  const auto header = parse_swf_header(content, file);
  if (header.unix_start_time && trace.jobs.empty()) trace.origin = *header.unix_start_time;
  const Seconds base = header.unix_start_time.value_or(trace.origin);
  trace.source = trace.source.empty() ? file : trace.source + "," + file;

  std::unordered_set<std::int64_t> accepted_ids;  // job numbers accepted from this file
  std::uint64_t line_no = 0;
  for (const auto raw : text::split(content, '\n')) {
    ++line_no;
    const auto line = text::trim(raw);
    if (line.empty() || line.starts_with(';')) continue;
    ++report.records;

    std::vector<std::string_view> fields;
    if (line.find(';') != std::string_view::npos) {
      fields = text::split(line, ';');
      if (fields.size() == kSwfFields + 1 && text::trim(fields.back()).empty()) fields.pop_back();
    } else {
      fields = text::split_ws(line);
    }
    if (fields.size() != kSwfFields) {
      sink.reject(line_no, "", "wrong field count", fmt::format("{} fields, SWF has 18", fields.size()),
                  line);
      continue;
    }
    Value v[kSwfFields];
    bool bad = false;
    for (std::size_t i = 0; i < kSwfFields && !bad; ++i) {
      const auto f = text::trim(fields[i]);
      if (f.empty() || f == "-1") continue;
      if (const auto d = text::parse_double(f)) {
        if (*d == -1) continue;  // "-1.0" is missing too
        if (!(std::abs(*d) <= kMaxParsedNumber)) {
          sink.reject(line_no, kFieldNames[i], fmt::format("bad {}", kFieldNames[i]),
                      fmt::format("{} is out of range (+-{:.0e})", f, kMaxParsedNumber), line);
          bad = true;
          break;
        }
        v[i].missing = false;
        v[i].number = *d;
      } else if (may_be_name(i)) {
        v[i].missing = false;
        v[i].name = f;
      } else {
        sink.reject(line_no, kFieldNames[i], fmt::format("bad {}", kFieldNames[i]),
                    fmt::format("'{}' is not a number", f), line);
        bad = true;
      }
    }
    if (bad) continue;
    // Fields whose negative values (other than the -1 "missing") are nonsense.
    for (const auto i : {kJob, kWait, kRunTime, kAllocProcs, kReqProcs, kReqTime, kReqMem}) {
      if (v[i].present() && v[i].number < 0) {
        sink.reject(line_no, kFieldNames[i], fmt::format("bad {}", kFieldNames[i]),
                    fmt::format("negative {} {}", kFieldNames[i], v[i].number), line);
        bad = true;
        break;
      }
    }
    if (bad) continue;
    if (!v[kJob].present()) {
      sink.reject(line_no, kFieldNames[kJob], "bad job number", "missing job number", line);
      continue;
    }
    if (!v[kSubmit].present() || v[kSubmit].number < 0) {
      sink.reject(line_no, kFieldNames[kSubmit], "negative submit time",
                  fmt::format("submit time {}", fields[kSubmit]), line);
      continue;
    }
    std::int64_t procs = -1;
    if (v[kReqProcs].present() && v[kReqProcs].integer() > 0) {
      procs = v[kReqProcs].integer();
    } else if (v[kAllocProcs].present() && v[kAllocProcs].integer() > 0) {
      procs = v[kAllocProcs].integer();
    }
    if (procs < 0 && !v[kRunTime].present()) {
      sink.reject(line_no, kFieldNames[kReqProcs], "no run time and no processor count",
                  "run time, requested and allocated processors are all missing", line);
      continue;
    }
    if (procs < 0) {
      sink.reject(line_no, kFieldNames[kReqProcs], "no processor count",
                  "requested and allocated processors are both missing", line);
      continue;
    }
    if (procs > std::int64_t{UINT32_MAX}) {
      sink.reject(line_no, kFieldNames[kReqProcs], "bad requested processors",
                  fmt::format("{} processors is out of range", procs), line);
      continue;
    }
    JobState state = JobState::kUnknown;
    bool partial = false;
    if (v[kStatus].present()) {
      switch (v[kStatus].integer()) {
        case 0:
          state = JobState::kFailed;
          break;
        case 1:
          state = JobState::kCompleted;
          break;
        case 2:
          state = JobState::kPreempted;
          break;
        case 3:
          state = JobState::kCompleted;
          break;
        case 4:
          state = JobState::kFailed;
          break;
        case 5:
          state = JobState::kCancelled;
          break;
        default:
          sink.reject(line_no, kFieldNames[kStatus], "bad status",
                      fmt::format("status {} is not an SWF status (-1, 0..5)", fields[kStatus]), line);
          continue;
      }
      partial = v[kStatus].integer() >= 2 && v[kStatus].integer() <= 4;
    }
    const auto job_number = v[kJob].integer();
    if (partial && accepted_ids.contains(job_number)) {
      ++report.folded_by_kind["partial execution"];
      continue;
    }

    JobRecord j;
    j.job_id = static_cast<std::uint64_t>(job_number);
    j.source_line = line_no;
    j.submit = base + v[kSubmit].integer();
    if (v[kWait].present()) j.start = j.submit + v[kWait].integer();
    if (v[kRunTime].present()) j.runtime = v[kRunTime].integer();
    if (j.start != kUnsetTime && j.runtime != kUnsetTime) j.end = j.start + j.runtime;
    if (v[kReqTime].present() && v[kReqTime].integer() > 0) j.time_limit = v[kReqTime].integer();
    j.nodes = 0;
    j.req_cpus = static_cast<std::uint32_t>(procs);
    j.tasks = j.req_cpus;
    j.cpus_per_task = 1;
    if (v[kAllocProcs].present()) j.alloc_cpus = static_cast<std::uint32_t>(v[kAllocProcs].integer());
    if (v[kReqMem].present()) {
      j.mem_mb = static_cast<std::int64_t>(std::ceil(v[kReqMem].number / 1024.0));
      j.mem_per_cpu = true;
    }
    j.state = state;
    if (v[kUser].present()) j.user = trace.users.intern(id_name(v[kUser], "u"));
    if (v[kGroup].present()) j.account = trace.accounts.intern(id_name(v[kGroup], "g"));
    if (v[kPartition].present()) {
      j.partition = trace.partitions.intern(id_name(v[kPartition], "p"));
    } else if (v[kQueue].present()) {
      j.partition = trace.partitions.intern(id_name(v[kQueue], "q"));
    }
    if (!v[kQueue].name.empty()) j.qos = trace.qos.intern(v[kQueue].name);
    if (v[kExecutable].present()) j.name = trace.strings.intern(id_name(v[kExecutable], "app"));
    if (!accept_within_limits(j, line_no, sink, line)) continue;
    trace.jobs.push_back(std::move(j));
    accepted_ids.insert(job_number);
    ++report.accepted;
  }
  counts.finish(file, "SWF");
}

}  // namespace slurmtwin
