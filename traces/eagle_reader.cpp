// NREL Eagle sacct-derived job CSV (NREL/eagle-jobs): header
//   job_id,user,account,partition,qos,wallclock_req,nodes_req,processors_req,gpus_req,mem_req,
//   submit_time,start_time,end_time,run_time,state,name,work_dir,submit_line
// then one job per row (RFC 4180 quoting).
//
// Mapping to JobRecord (decisions):
//  - user / account / partition / qos / name kept as given; an empty partition or qos stays unset.
//  - wallclock_req (s, may be written "172800.0") -> time_limit; empty or 0 -> unset.
//  - nodes_req -> nodes; processors_req -> req_cpus and tasks (cpus_per_task 1).
//  - gpus_req > 0 -> one per-job GRES request gpu=N (per_node = false).
//  - mem_req is MB per job (e.g. 552000 for 3 nodes of 184000 MB): stored per node as
//    ceil(mem_req / nodes_req); 0 means "not requested" in this data set (988 of 1,000 rows) and
//    becomes mem_mb = -1 (partition default), not Slurm's --mem=0 "whole node".
//  - submit_time / start_time / end_time ("YYYY-MM-DD HH:MM:SS", UTC) -> submit / start / end;
//    run_time (s) -> runtime; state -> state.
//  - Rows whose required fields do not parse are rejected with reason "bad <column>".
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "traces/csv.hpp"
#include "traces/input_limits.hpp"
#include "traces/readers.hpp"
#include "traces/text.hpp"
#include "traces/time_format.hpp"

namespace slurmtwin {
namespace {

/// Whole number (also "12.0"), else nullopt.
std::optional<std::int64_t> whole(std::string_view s) {
  if (const auto v = text::parse_int(s)) return v;
  const auto d = text::parse_double(s);
  if (!d || *d != std::floor(*d) || std::fabs(*d) > 9.0e15) return std::nullopt;
  return static_cast<std::int64_t>(*d);
}

}  // namespace

void read_eagle_csv(std::string_view content, const std::string& file, Trace& trace, RejectSink& sink) {
  auto& report = sink.report();
  if (report.file.empty()) report.file = file;
  csv::require_text(content, file, "Eagle CSV");
  const csv::CallCounts counts(report);
  csv::Reader reader(content, file);
  csv::Record rec;
  if (!reader.next(rec)) throw InputError(file, 0, "", "no header row");
  const csv::Header header(rec.fields);
  const auto need = [&](std::string_view name) { return header.require(name, file, rec.line); };
  const auto c_id = need("job_id"), c_user = need("user"), c_account = need("account"),
             c_partition = need("partition"), c_wall = need("wallclock_req"), c_nodes = need("nodes_req"),
             c_procs = need("processors_req"), c_submit = need("submit_time"), c_state = need("state");
  const auto c_qos = header.find("qos"), c_gpus = header.find("gpus_req"), c_mem = header.find("mem_req"),
             c_start = header.find("start_time"), c_end = header.find("end_time"),
             c_run = header.find("run_time"), c_name = header.find("name");
  trace.source = trace.source.empty() ? file : trace.source + "," + file;

  while (reader.next(rec)) {
    ++report.records;
    const auto& f = rec.fields;
    if (f.size() != header.size()) {
      sink.reject(rec.line, "", "wrong field count",
                  fmt::format("{} fields, the header has {}", f.size(), header.size()), rec.text);
      continue;
    }
    std::string bad_name, detail;
    const auto fail = [&](std::string_view column, std::size_t col, std::string_view what) {
      if (bad_name.empty()) {
        bad_name = std::string(column);
        detail = fmt::format("'{}' {}", f[col], what);
      }
    };
    const auto empty = [&](std::optional<std::size_t> col) { return !col || text::trim(f[*col]).empty(); };
    const auto count = [&](std::string_view column, std::size_t col, std::int64_t min) -> std::int64_t {
      const auto v = whole(f[col]);
      if (!v || *v < min || *v > (std::int64_t{1} << 31)) {
        fail(column, col, min > 0 ? "is not a positive count" : "is not a count >= 0");
        return 0;
      }
      return *v;
    };
    const auto time = [&](std::string_view column, std::optional<std::size_t> col, bool required) -> Seconds {
      if (!col) return kUnsetTime;
      const auto v = parse_timestamp(f[*col]);
      if (!v || (required && *v == kUnsetTime)) {
        fail(column, *col, "is not a YYYY-MM-DD HH:MM:SS time");
        return kUnsetTime;
      }
      return *v;
    };
    const auto seconds = [&](std::string_view column, std::optional<std::size_t> col) -> Seconds {
      if (empty(col)) return kUnsetTime;
      const auto v = text::parse_double(f[*col]);
      if (!v || *v < 0 || *v > kMaxParsedNumber) {
        fail(column, *col, "is not a duration in seconds >= 0");
        return kUnsetTime;
      }
      return static_cast<Seconds>(std::llround(*v));
    };
    const auto name = [&](std::string_view column, std::size_t col) -> std::string_view {
      const auto v = text::trim(f[col]);
      if (v.empty()) fail(column, col, "is empty");
      return v;
    };

    JobRecord j;
    j.source_line = rec.line;
    const auto job_id = count("job_id", c_id, 0);
    const auto user = name("user", c_user);
    const auto account = name("account", c_account);
    j.time_limit = seconds("wallclock_req", c_wall);
    if (j.time_limit == 0) j.time_limit = kUnsetTime;
    j.nodes = static_cast<std::uint32_t>(count("nodes_req", c_nodes, 1));
    j.req_cpus = static_cast<std::uint32_t>(count("processors_req", c_procs, 1));
    const auto gpus = empty(c_gpus) ? 0 : count("gpus_req", *c_gpus, 0);
    if (!empty(c_mem)) {
      const auto mb = text::parse_double(f[*c_mem]);
      if (!mb || *mb < 0 || *mb > kMaxParsedNumber) {
        fail("mem_req", *c_mem, "is not a memory size in MB (0 to 1e12)");
      } else if (*mb > 0 && j.nodes > 0) {
        j.mem_mb = static_cast<std::int64_t>(std::ceil(*mb / j.nodes - 1e-9));
      }
    }
    j.submit = time("submit_time", c_submit, true);
    j.start = time("start_time", c_start, false);
    j.end = time("end_time", c_end, false);
    j.runtime = seconds("run_time", c_run);
    try {
      j.state = parse_job_state(f[c_state]);
    } catch (const std::invalid_argument&) {
      fail("state", c_state, "is not a Slurm job state");
    }
    if (!bad_name.empty()) {
      sink.reject(rec.line, bad_name, "bad " + bad_name, detail, rec.text);
      continue;
    }
    j.job_id = static_cast<std::uint64_t>(job_id);
    j.tasks = j.req_cpus;
    j.cpus_per_task = 1;
    if (gpus > 0) j.gres.push_back(GresRequest{"gpu", "", gpus, false});
    j.user = trace.users.intern(user);
    j.account = trace.accounts.intern(account);
    if (const auto p = text::trim(f[c_partition]); !p.empty()) j.partition = trace.partitions.intern(p);
    if (!empty(c_qos)) j.qos = trace.qos.intern(text::trim(f[*c_qos]));
    if (!empty(c_name)) j.name = trace.strings.intern(text::trim(f[*c_name]));
    if (!accept_within_limits(j, rec.line, sink, rec.text)) continue;
    trace.jobs.push_back(std::move(j));
    ++report.accepted;
  }
  counts.finish(file, "Eagle CSV");
}

}  // namespace slurmtwin
