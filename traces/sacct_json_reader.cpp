// sacct --json reader (Slurm 21.08+). Two generations of the schema are accepted:
//  * 21.08 / 22.05 (openapi dbv0.0.37/38): plain numbers; time.limit in minutes; required.memory
//    with Slurm's MEM_PER_CPU bit (1 << 63) set for --mem-per-cpu; state.current a string.
//  * 23.02+ (data_parser v0.0.39+): numbers may be {"set": bool, "infinite": bool, "number": N};
//    required.memory_per_cpu / memory_per_node; state.current a list of flags (["COMPLETED"]).
// JSON is parsed with yaml-cpp (JSON is YAML flow syntax). One element of "jobs" is one input
// record; its nested "steps" are part of that record and are not counted separately.
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "traces/licenses.hpp"
#include "traces/read_report.hpp"
#include "traces/readers.hpp"
#include "traces/sacct_common.hpp"
#include "traces/text.hpp"

namespace slurmtwin {

namespace {

using sacct_detail::JobFolder;

struct BadField {
  std::string field;
  std::string detail;
};

[[noreturn]] void bad(const std::string& field, const std::string& detail) {
  throw BadField{field, detail};
}

/// A JSON number as sacct writes it: plain, or {"set", "infinite", "number"} (23.02+).
struct Number {
  bool set = false;
  bool infinite = false;
  std::uint64_t value = 0;
};

std::optional<std::uint64_t> parse_u64(std::string_view s) {
  s = text::trim(s);
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

/// Reads node `n` (named `field` in errors) as a Number; unset when absent or null.
Number number(const YAML::Node& n, const std::string& field) {
  Number out;
  if (!n || n.IsNull()) return out;
  if (n.IsMap()) {
    const auto set = n["set"];
    if (set && set.IsScalar() && set.as<std::string>() == "false") return out;
    const auto inf = n["infinite"];
    if (inf && inf.IsScalar() && inf.as<std::string>() == "true") {
      out.set = out.infinite = true;
      return out;
    }
    return number(n["number"], field);
  }
  if (!n.IsScalar()) bad(field, fmt::format("{} is not a number", field));
  const auto& s = n.Scalar();
  if (const auto v = parse_u64(s)) {
    out.set = true;
    out.value = *v;
    return out;
  }
  // Negative values are Slurm's "unset" in a few places (e.g. -1); anything else is junk.
  if (const auto v = text::parse_int(s); v && *v < 0) return out;
  bad(field, fmt::format("bad {} '{}'", field, s));
}

std::optional<std::string> string_of(const YAML::Node& n) {
  if (!n || n.IsNull() || !n.IsScalar()) return std::nullopt;
  auto s = n.Scalar();
  if (s.empty()) return std::nullopt;
  return s;
}

/// An absolute time: 0 or unset = unknown.
Seconds epoch(const YAML::Node& n, const std::string& field) {
  const auto v = number(n, field);
  if (!v.set || v.infinite || v.value == 0) return kUnsetTime;
  if (v.value > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max()) * 4)
    bad(field, fmt::format("bad {} {}", field, v.value));
  return static_cast<Seconds>(v.value);
}

std::uint32_t u32(const Number& v, const std::string& field) {
  if (v.value > std::numeric_limits<std::uint32_t>::max())
    bad(field, fmt::format("bad {} {}", field, v.value));
  return static_cast<std::uint32_t>(v.value);
}

/// TRES list entry count by type ("cpu", "mem", "node"), or nullopt.
std::optional<std::int64_t> tres_count(const YAML::Node& list, std::string_view type,
                                       const std::string& field) {
  if (!list || !list.IsSequence()) return std::nullopt;
  for (const auto& t : list) {
    const auto ty = string_of(t["type"]);
    if (ty && text::iequals(*ty, type)) {
      const auto v = number(t["count"], field);
      if (v.set && !v.infinite) return static_cast<std::int64_t>(v.value);
    }
  }
  return std::nullopt;
}

std::vector<GresRequest> tres_gres(const YAML::Node& list, const std::string& field) {
  std::vector<GresRequest> typed, untyped;
  if (!list || !list.IsSequence()) return typed;
  for (const auto& t : list) {
    const auto ty = string_of(t["type"]);
    const auto name = string_of(t["name"]);
    if (!ty || !text::iequals(*ty, "gres") || !name) continue;
    const auto v = number(t["count"], field);
    if (!v.set || v.infinite || v.value == 0) continue;
    GresRequest g;
    const auto colon = name->find(':');
    g.name = name->substr(0, colon);
    if (colon != std::string::npos) g.type = name->substr(colon + 1);
    g.count = static_cast<std::int64_t>(v.value);
    g.per_node = false;  // TRES counts are per job
    (g.type.empty() ? untyped : typed).push_back(std::move(g));
  }
  for (auto& g : untyped) {
    bool has_typed = false;
    for (const auto& t : typed) has_typed = has_typed || t.name == g.name;
    if (!has_typed) typed.push_back(std::move(g));
  }
  return typed;
}

constexpr std::uint64_t kMemPerCpuBit = 1ull << 63;  // Slurm's MEM_PER_CPU flag in req_mem

JobRecord read_job(const YAML::Node& j, Trace& trace, bool& pending_array) {
  JobRecord job;
  // Identity: the array master id + task id for array tasks, the het leader + offset for het jobs.
  const auto id = number(j["job_id"], "job_id");
  if (!id.set || id.infinite || id.value == 0) bad("job_id", "missing or bad job_id");
  job.job_id = id.value;
  if (const auto a = j["array"]; a && a.IsMap()) {
    const auto master = number(a["job_id"], "array.job_id");
    if (master.set && !master.infinite && master.value != 0) {
      job.job_id = master.value;
      const auto task = number(a["task_id"], "array.task_id");
      if (task.set && !task.infinite) {
        if (task.value > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max()))
          bad("array.task_id", fmt::format("bad array.task_id {}", task.value));
        job.array_task = static_cast<std::int32_t>(task.value);
      } else {
        pending_array = true;  // the not yet started tasks ("task": "5-10%2") as one pending record
      }
      // --array=...%N (dbv0.0.38: array/limits/max/running/tasks; 0 = no cap)
      if (const auto l = a["limits"]; l && l.IsMap())
        if (const auto m = l["max"]; m && m.IsMap())
          if (const auto r = m["running"]; r && r.IsMap()) {
            const auto cap = number(r["tasks"], "array.limits.max.running.tasks");
            if (cap.set && !cap.infinite) {
              if (cap.value > 1'000'000) bad("array.limits.max.running.tasks", "more than a million tasks");
              job.array_max_running = static_cast<std::uint32_t>(cap.value);
            }
          }
    }
  }
  if (const auto h = j["het"]; h && h.IsMap()) {
    const auto leader = number(h["job_id"], "het.job_id");
    const auto offset = number(h["job_offset"], "het.job_offset");
    if (leader.set && leader.value != 0 && offset.set && !offset.infinite) {
      if (offset.value > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max()))
        bad("het.job_offset", fmt::format("bad het.job_offset {}", offset.value));
      job.job_id = leader.value;
      job.het_component = static_cast<std::int32_t>(offset.value);
    }
  }

  if (const auto v = string_of(j["user"])) job.user = trace.users.intern(*v);
  if (const auto v = string_of(j["account"])) job.account = trace.accounts.intern(*v);
  if (const auto v = string_of(j["partition"])) job.partition = trace.partitions.intern(*v);
  if (const auto v = string_of(j["qos"])) job.qos = trace.qos.intern(*v);
  if (const auto v = string_of(j["name"])) job.name = trace.strings.intern(*v);
  if (const auto v = string_of(j["constraints"])) job.constraints = trace.strings.intern(*v);
  if (const auto v = string_of(j["licenses"]); v && !v->empty()) {  // data_parser v0.0.39 on (23.02)
    try {
      parse_licenses(*v);
    } catch (const std::invalid_argument& e) {
      bad("licenses", e.what());
    }
    job.licenses = trace.strings.intern(*v);
  }

  const auto time = j["time"];
  if (time && time.IsMap()) {
    job.submit = epoch(time["submission"], "time.submission");
    job.eligible = epoch(time["eligible"], "time.eligible");
    job.start = epoch(time["start"], "time.start");
    job.end = epoch(time["end"], "time.end");
    const auto elapsed = number(time["elapsed"], "time.elapsed");
    if (job.start != kUnsetTime && elapsed.set && !elapsed.infinite)
      job.runtime = static_cast<Seconds>(elapsed.value);
    const auto limit = number(time["limit"], "time.limit");  // minutes
    if (limit.infinite) {
      job.time_limit = kUnlimited;
    } else if (limit.set) {
      if (limit.value >= std::numeric_limits<std::uint32_t>::max()) {
        job.time_limit = kUnlimited;  // INFINITE written as a plain number by old versions
      } else {
        job.time_limit = static_cast<Seconds>(limit.value) * 60;
      }
    }
  }

  if (const auto s = j["state"]; s) {
    YAML::Node current = s.IsMap() ? s["current"] : s;
    std::optional<std::string> state;
    if (current && current.IsSequence()) {
      if (current.size() > 0) state = string_of(current[0]);
    } else {
      state = string_of(current);
    }
    if (state) {
      try {
        job.state = parse_job_state(*state);
      } catch (const std::invalid_argument&) {
        bad("state", fmt::format("bad state '{}'", *state));
      }
    }
  }
  if (pending_array && job.state == JobState::kUnknown) job.state = JobState::kPending;
  note_cancel_before_start(job);

  const auto tres = j["tres"];
  const YAML::Node requested = tres && tres.IsMap() ? tres["requested"] : YAML::Node();
  const YAML::Node allocated = tres && tres.IsMap() ? tres["allocated"] : YAML::Node();

  if (const auto n = tres_count(requested, "node", "tres.requested")) {
    job.nodes = u32({true, false, static_cast<std::uint64_t>(*n)}, "tres.requested node");
  } else if (const auto an = number(j["allocation_nodes"], "allocation_nodes"); an.set && !an.infinite) {
    job.nodes = u32(an, "allocation_nodes");
  }
  if (const auto c = tres_count(allocated, "cpu", "tres.allocated")) {
    job.alloc_cpus = u32({true, false, static_cast<std::uint64_t>(*c)}, "tres.allocated cpu");
  }

  std::optional<std::int64_t> job_total_mem;
  if (const auto r = j["required"]; r && r.IsMap()) {
    const auto cpus = number(r["CPUs"], "required.CPUs");
    if (cpus.set && !cpus.infinite) job.req_cpus = u32(cpus, "required.CPUs");
    const auto per_cpu = number(r["memory_per_cpu"], "required.memory_per_cpu");
    const auto per_node = number(r["memory_per_node"], "required.memory_per_node");
    const auto memory = number(r["memory"], "required.memory");
    if (per_cpu.set && !per_cpu.infinite) {
      job.mem_mb = static_cast<std::int64_t>(per_cpu.value);
      job.mem_per_cpu = true;
    } else if (per_node.set && !per_node.infinite) {
      job.mem_mb = static_cast<std::int64_t>(per_node.value);
    } else if (memory.set && !memory.infinite) {
      if (memory.value & kMemPerCpuBit) {
        job.mem_mb = static_cast<std::int64_t>(memory.value & ~kMemPerCpuBit);
        job.mem_per_cpu = true;
      } else {
        job.mem_mb = static_cast<std::int64_t>(memory.value);
      }
    }
  }
  if (job.req_cpus == 0) {
    if (const auto c = tres_count(requested, "cpu", "tres.requested"))
      job.req_cpus = u32({true, false, static_cast<std::uint64_t>(*c)}, "tres.requested cpu");
  }
  if (job.mem_mb < 0) job_total_mem = tres_count(requested, "mem", "tres.requested");
  if (job_total_mem) {
    const std::int64_t nodes = std::max<std::int64_t>(1, job.nodes);
    job.mem_mb = (*job_total_mem + nodes - 1) / nodes;
  }
  job.gres = tres_gres(requested, "tres.requested");

  if (const auto flags = j["flags"]; flags && flags.IsSequence()) {
    for (const auto& f : flags) {
      const auto v = string_of(f);
      if (!v) continue;
      if (text::iequals(*v, "STARTED_ON_SUBMIT") || text::iequals(*v, "SchedSubmit"))
        job.started_by = SchedulerPass::kSubmit;
      if (text::iequals(*v, "STARTED_ON_SCHEDULE") || text::iequals(*v, "SchedMain"))
        job.started_by = SchedulerPass::kMain;
      if (text::iequals(*v, "STARTED_ON_BACKFILL") || text::iequals(*v, "SchedBackfill"))
        job.started_by = SchedulerPass::kBackfill;
    }
  }
  if (const auto p = number(j["priority"], "priority"); p.set && !p.infinite) {
    if (p.value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      bad("priority", fmt::format("bad priority {}", p.value));
    job.priority = static_cast<std::int64_t>(p.value);
  }
  if (const auto r = number(j["restart_cnt"], "restart_cnt"); r.set && !r.infinite)
    job.restarts = u32(r, "restart_cnt");
  return job;
}

}  // namespace

void read_sacct_json(std::string_view content, const std::string& file, Trace& trace, RejectSink& sink) {
  auto& report = sink.report();
  if (report.file.empty()) report.file = file;
  if (text::trim(content).empty()) throw InputError(file, 0, "", "empty file: no sacct --json output");
  for (const char c : content) {
    if (c == '\0') throw InputError(file, 0, "", "binary data, not sacct --json output");
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(content));
  } catch (const YAML::Exception& e) {
    throw InputError(file, e.mark.is_null() ? 0 : static_cast<std::uint64_t>(e.mark.line) + 1, "",
                     fmt::format("not valid JSON: {}", e.msg));
  }
  if (!root.IsMap() || !root["jobs"] || !root["jobs"].IsSequence())
    throw InputError(file, 0, "jobs", "not sacct --json output: no \"jobs\" list at the top level");

  JobFolder folder(trace, sink);
  for (const auto& j : root["jobs"]) {
    ++report.records;
    const std::uint64_t line = j.Mark().is_null() ? 0 : static_cast<std::uint64_t>(j.Mark().line) + 1;
    if (!j.IsMap()) {
      sink.reject(line, "jobs", "bad job", "a \"jobs\" element is not an object");
      continue;
    }
    bool pending_array = false;
    try {
      auto job = read_job(j, trace, pending_array);
      job.source_line = line;
      folder.add_job(std::move(job));
    } catch (const BadField& e) {
      sink.reject(line, e.field, "bad " + e.field, e.detail);
    } catch (const YAML::Exception& e) {
      sink.reject(line, "job", "bad job", e.msg);
    }
  }
  folder.finish();
}

}  // namespace slurmtwin
