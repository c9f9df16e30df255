#include "traces/sacct_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "traces/time_format.hpp"

namespace slurmtwin {

const char* const kSacctWriterColumns =
    "JobID|JobIDRaw|JobName|User|Account|Partition|QOS|Submit|Eligible|Start|End|Elapsed|ElapsedRaw|"
    "Timelimit|"
    "TimelimitRaw|State|NNodes|ReqNodes|NCPUS|ReqCPUS|ReqMem|ReqTRES|NodeList|Priority|Flags|Restarts|"
    "Constraints|Reservation|ReservationId|SubmitLine";

namespace {

std::string job_id(const JobRecord& j) {
  if (j.array_task >= 0) return fmt::format("{}_{}", j.job_id, j.array_task);
  if (j.het_component >= 0) return fmt::format("{}+{}", j.job_id, j.het_component);
  return std::to_string(j.job_id);
}

std::string req_mem(const JobRecord& j) {
  if (j.mem_mb < 0) return "";
  return fmt::format("{}M{}", j.mem_mb, j.mem_per_cpu ? "c" : "n");
}

std::string req_tres(const JobRecord& j) {
  const auto cpus =
      std::max<std::uint64_t>(j.req_cpus, static_cast<std::uint64_t>(j.tasks) * j.cpus_per_task);
  std::string out = fmt::format("billing={},cpu={}", cpus, cpus);
  for (const auto& g : j.gres) {
    const auto n = g.count * (g.per_node ? std::max<std::uint32_t>(1, j.nodes) : 1);
    out += fmt::format(",gres/{}={}", g.name, n);
  }
  if (j.mem_mb > 0)
    out += fmt::format(",mem={}M", j.mem_per_cpu ? j.mem_mb * static_cast<std::int64_t>(cpus)
                                                 : j.mem_mb * std::max<std::uint32_t>(1, j.nodes));
  return out + fmt::format(",node={}", std::max<std::uint32_t>(1, j.nodes));
}

/// Per array job id with a task cap (--array=...%N), its task ids as sbatch's --array spells them
/// ("0-3,7"), with the cap ("0-3,7%2").
std::map<std::uint64_t, std::string> capped_array_specs(const Trace& t) {
  std::map<std::uint64_t, std::vector<std::int32_t>> tasks;
  for (const auto& j : t.jobs)
    if (j.array_task >= 0 && j.array_max_running > 0) tasks[j.job_id].push_back(j.array_task);
  std::map<std::uint64_t, std::string> out;
  for (auto& [id, ids] : tasks) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    std::string spec;
    for (std::size_t a = 0; a < ids.size();) {
      auto b = a;
      while (b + 1 < ids.size() && ids[b + 1] == ids[b] + 1) ++b;
      spec += fmt::format("{}{}", spec.empty() ? "" : ",", ids[a]);
      if (b > a) spec += fmt::format("-{}", ids[b]);
      a = b + 1;
    }
    out[id] = spec;
  }
  return out;
}

/// What sacct has no column for, as SubmitLine shows it (the sacct reader reads these options back);
/// `array_spec` is the task ids of its array when it is a task of an array with a cap.
std::string submit_line(const Trace& t, const JobRecord& j, const std::string* array_spec) {
  std::string opts;
  if (j.licenses != kNoName) opts += fmt::format(" --licenses={}", t.strings.name(j.licenses));
  if (array_spec) opts += fmt::format(" --array={}%{}", *array_spec, j.array_max_running);
  if (j.exclusive) opts += " --exclusive";
  if (j.tasks_per_node > 0) opts += fmt::format(" --ntasks-per-node={}", j.tasks_per_node);
  if (j.cpus_per_task > 1) opts += fmt::format(" --cpus-per-task={}", j.cpus_per_task);
  return opts.empty() ? std::string() : "sbatch" + opts;
}

const char* flags(SchedulerPass p) {
  switch (p) {
    case SchedulerPass::kMain:
      return "SchedMain";
    case SchedulerPass::kBackfill:
      return "SchedBackfill";
    case SchedulerPass::kSubmit:
      return "SchedSubmit";
    case SchedulerPass::kUnknown:
      return "";
  }
  return "";
}

}  // namespace

std::string format_sacct_parsable(const Trace& t, const std::vector<std::string>* nodelists,
                                  const std::vector<std::uint32_t>* node_counts, const TimeZone* zone) {
  const auto stamp = [&](Seconds utc) {
    const bool shift = zone && utc != kUnsetTime && utc != kUnlimited;
    return format_timestamp(shift ? utc + zone->offset_at(utc) : utc);
  };
  std::string out = kSacctWriterColumns;
  out += '\n';
  const auto array_specs = capped_array_specs(t);
  for (std::size_t i = 0; i < t.jobs.size(); ++i) {
    const auto& j = t.jobs[i];
    const auto spec =
        j.array_task >= 0 && j.array_max_running > 0 ? array_specs.find(j.job_id) : array_specs.end();
    const bool ran = j.start != kUnsetTime && j.end != kUnsetTime;
    const Seconds elapsed = ran ? j.end - j.start : 0;
    const auto limit_min = j.time_limit == kUnsetTime || j.time_limit == kUnlimited
                               ? std::string("")
                               : std::to_string(j.time_limit / 60);
    const auto id = job_id(j);
    out += fmt::format(
        "{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}\n", id, id,
        t.strings.name(j.name), t.user_name(j), t.account_name(j), t.partition_name(j), t.qos_name(j),
        stamp(j.submit), stamp(j.eligible), stamp(j.start), stamp(j.end), format_slurm_duration(elapsed),
        elapsed, j.time_limit == kUnsetTime ? "Partition_Limit" : format_slurm_duration(j.time_limit),
        limit_min,
        // NNodes: the nodes it got (as sacct), else those it asked for; ReqNodes: -N, empty when none
        // was given (so that a replay of this file lets the job spread as the original did).
        to_string(j.state),
        node_counts && i < node_counts->size() && (*node_counts)[i] > 0 ? (*node_counts)[i]
                                                                        : std::max<std::uint32_t>(1, j.nodes),
        j.nodes > 0 ? std::to_string(j.nodes) : std::string(), j.alloc_cpus,
        std::max<std::uint64_t>(j.req_cpus, static_cast<std::uint64_t>(j.tasks) * j.cpus_per_task),
        req_mem(j), req_tres(j),
        nodelists && i < nodelists->size() ? (*nodelists)[i] : std::string("None assigned"),
        j.priority < 0 ? std::string("") : std::to_string(j.priority), flags(j.started_by), j.restarts,
        t.strings.name(j.constraints), t.strings.name(j.reservation),
        j.reservation_id == 0 ? std::string() : std::to_string(j.reservation_id),
        submit_line(t, j, spec == array_specs.end() ? nullptr : &spec->second));
  }
  return out;
}

}  // namespace slurmtwin
