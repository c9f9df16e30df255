// Graham/Cedar job CSV (mila-iqia/slurm-queue-time-pred): a header row whose first column is an unnamed
// pandas index, then one job per row (RFC 4180: req_tres is quoted because it holds commas).
//
// Mapping to JobRecord (decisions):
//  - job_unique_id -> job_id; submit_time / eligible_time / start_time / end_time ("YYYY-MM-DD
//    HH:MM:SS", taken as UTC like every timestamp in SlurmTwin) -> submit / eligible / start / end.
//  - partition_id_x -> partition "part<id>"; account_id -> account "acct<id>". The data set has no
//    user column, so the user is the account too ("acct<id>"): fair share per user then equals fair
//    share per account.
//  - req_cpus -> req_cpus and tasks (cpus_per_task 1); alloc_nodes -> nodes (the only node count).
//  - req_mem_total is MB per job: stored per node as ceil(req_mem_total / alloc_nodes) (mem_per_cpu
//    false), i.e. the job's memory spread evenly over its nodes; 0 keeps Slurm's "whole node" meaning.
//  - req_tres gres/<name>[:<type>]=N -> a per-job GRES request (per_node = false).
//  - state -> state; priority_x -> priority; time_limit_sec -> time_limit (s); run_time_sec -> runtime.
//  - Rows whose required fields do not parse are rejected with reason "bad <column>".
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "traces/csv.hpp"
#include "traces/input_limits.hpp"
#include "traces/readers.hpp"
#include "traces/site.hpp"
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

/// GRES requests from a TRES string ("billing=4,cpu=20,gres/gpu=4,mem=193024M,node=1"), per job.
std::vector<GresRequest> gres_from_tres(const TresMap& tres) {
  std::vector<GresRequest> out;
  for (const auto& [key, count] : tres) {
    if (!key.starts_with("gres/") || count <= 0) continue;
    GresRequest g;
    const auto name = std::string_view(key).substr(5);
    const auto colon = name.find(':');
    g.name = std::string(name.substr(0, colon));
    if (colon != std::string_view::npos) g.type = std::string(name.substr(colon + 1));
    g.count = count;
    g.per_node = false;
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace

void read_graham_csv(std::string_view content, const std::string& file, Trace& trace, RejectSink& sink) {
  auto& report = sink.report();
  if (report.file.empty()) report.file = file;
  csv::require_text(content, file, "Graham CSV");
  const csv::CallCounts counts(report);
  csv::Reader reader(content, file);
  csv::Record rec;
  if (!reader.next(rec)) throw InputError(file, 0, "", "no header row");
  const csv::Header header(rec.fields);
  const auto need = [&](std::string_view name) { return header.require(name, file, rec.line); };
  const auto c_id = need("job_unique_id"), c_submit = need("submit_time"),
             c_partition = need("partition_id_x"), c_account = need("account_id"),
             c_req_cpus = need("req_cpus"), c_alloc_nodes = need("alloc_nodes"), c_state = need("state"),
             c_time_limit = need("time_limit_sec"), c_run_time = need("run_time_sec");
  const auto c_eligible = header.find("eligible_time"), c_start = header.find("start_time"),
             c_end = header.find("end_time"), c_mem = header.find("req_mem_total"),
             c_tres = header.find("req_tres"), c_priority = header.find("priority_x");
  trace.source = trace.source.empty() ? file : trace.source + "," + file;

  while (reader.next(rec)) {
    ++report.records;
    const auto& f = rec.fields;
    if (f.size() != header.size()) {
      sink.reject(rec.line, "", "wrong field count",
                  fmt::format("{} fields, the header has {}", f.size(), header.size()), rec.text);
      continue;
    }
    std::string detail;
    // Field parsers: each records the first failure by column name.
    std::string bad_name;
    const auto fail = [&](std::string_view column, std::size_t col, std::string_view what) {
      if (bad_name.empty()) {
        bad_name = std::string(column);
        detail = fmt::format("'{}' {}", f[col], what);
      }
    };
    const auto count = [&](std::string_view column, std::size_t col) -> std::uint32_t {
      const auto v = whole(f[col]);
      if (!v || *v < 1 || *v > (std::int64_t{1} << 31)) {
        fail(column, col, "is not a positive count");
        return 0;
      }
      return static_cast<std::uint32_t>(*v);
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
    const auto seconds = [&](std::string_view column, std::size_t col) -> Seconds {
      const auto v = whole(f[col]);
      if (!v || *v < 0) {
        fail(column, col, "is not a duration in seconds >= 0");
        return kUnsetTime;
      }
      return *v;
    };
    const auto id = [&](std::string_view column, std::size_t col) -> std::int64_t {
      const auto v = whole(f[col]);
      if (!v || *v < 0) fail(column, col, "is not an id");
      return v.value_or(-1);
    };

    JobRecord j;
    j.source_line = rec.line;
    const auto job_id = id("job_unique_id", c_id);
    j.submit = time("submit_time", c_submit, true);
    j.eligible = time("eligible_time", c_eligible, false);
    j.start = time("start_time", c_start, false);
    j.end = time("end_time", c_end, false);
    const auto partition = id("partition_id_x", c_partition);
    const auto account = id("account_id", c_account);
    j.req_cpus = count("req_cpus", c_req_cpus);
    j.nodes = count("alloc_nodes", c_alloc_nodes);
    j.time_limit = seconds("time_limit_sec", c_time_limit);
    j.runtime = seconds("run_time_sec", c_run_time);
    try {
      j.state = parse_job_state(f[c_state]);
    } catch (const std::invalid_argument&) {
      fail("state", c_state, "is not a Slurm job state");
    }
    if (c_priority && !text::trim(f[*c_priority]).empty()) {
      if (const auto p = whole(f[*c_priority])) {
        j.priority = *p;
      } else {
        fail("priority_x", *c_priority, "is not an integer");
      }
    }
    if (c_mem && !text::trim(f[*c_mem]).empty()) {
      const auto mb = text::parse_double(f[*c_mem]);
      if (!mb || *mb < 0) {
        fail("req_mem_total", *c_mem, "is not a memory size in MB");
      } else if (j.nodes > 0) {
        // Checked before the conversion: a double beyond int64 does not convert (fuzz finding).
        if (const double per_node = std::ceil(*mb / j.nodes - 1e-9);
            per_node > static_cast<double>(kMaxJobMemMb))
          fail("req_mem_total", *c_mem, fmt::format("is over the limit of {} MB per node", kMaxJobMemMb));
        else
          j.mem_mb = static_cast<std::int64_t>(per_node);
      }
    }
    if (c_tres && !text::trim(f[*c_tres]).empty()) {
      try {
        j.gres = gres_from_tres(parse_tres_counts(f[*c_tres]));
      } catch (const std::invalid_argument& e) {
        fail("req_tres", *c_tres, e.what());
      }
    }
    if (!bad_name.empty()) {
      sink.reject(rec.line, bad_name, "bad " + bad_name, detail, rec.text);
      continue;
    }
    j.job_id = static_cast<std::uint64_t>(job_id);
    j.tasks = j.req_cpus;
    j.cpus_per_task = 1;
    j.partition = trace.partitions.intern(fmt::format("part{}", partition));
    j.account = trace.accounts.intern(fmt::format("acct{}", account));
    j.user = trace.users.intern(fmt::format("acct{}", account));
    if (!accept_within_limits(j, rec.line, sink, rec.text)) continue;
    trace.jobs.push_back(std::move(j));
    ++report.accepted;
  }
  counts.finish(file, "Graham CSV");
}

}  // namespace slurmtwin
