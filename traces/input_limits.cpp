#include "traces/input_limits.hpp"

#include <fmt/format.h>

namespace slurmtwin {
namespace {

std::optional<RecordLimitProblem> check_time(const char* field, Seconds t) {
  if (t == kUnsetTime) return std::nullopt;
  if (t < 0) return RecordLimitProblem{field, fmt::format("{} {} is a negative absolute time", field, t)};
  if (t > kMaxEpochTime)
    return RecordLimitProblem{field, fmt::format("{} {} is after the year 2200", field, t)};
  return std::nullopt;
}

std::optional<RecordLimitProblem> check_duration(const char* field, Seconds d) {
  if (d == kUnsetTime || d == kUnlimited) return std::nullopt;
  if (d < 0) return RecordLimitProblem{field, fmt::format("{} {} s is negative", field, d)};
  if (d > kMaxJobDuration)
    return RecordLimitProblem{field, fmt::format("{} {} s is beyond 100 years", field, d)};
  return std::nullopt;
}

std::optional<RecordLimitProblem> check_count(const char* field, std::uint64_t n, std::uint64_t max) {
  if (n > max) return RecordLimitProblem{field, fmt::format("{} {} is over the limit of {}", field, n, max)};
  return std::nullopt;
}

}  // namespace

std::optional<RecordLimitProblem> record_limit_problem(const JobRecord& j) {
  for (const auto& [field, t] : {std::pair{"submit", j.submit}, std::pair{"eligible", j.eligible},
                                 std::pair{"start", j.start}, std::pair{"end", j.end}})
    if (auto p = check_time(field, t)) return p;
  if (auto p = check_duration("runtime", j.runtime)) return p;
  if (auto p = check_duration("time_limit", j.time_limit)) return p;
  if (auto p = check_count("nodes", j.nodes, kMaxJobNodes)) return p;
  if (auto p = check_count("req_cpus", j.req_cpus, kMaxJobCpus)) return p;
  if (auto p = check_count("tasks", j.tasks, kMaxJobCpus)) return p;
  if (auto p = check_count("tasks_per_node", j.tasks_per_node, kMaxJobCpus)) return p;
  if (auto p = check_count("cpus_per_task", j.cpus_per_task, kMaxJobCpus)) return p;
  if (auto p = check_count("alloc_cpus", j.alloc_cpus, kMaxJobCpus)) return p;
  if (j.mem_mb < -1) return RecordLimitProblem{"mem_mb", fmt::format("memory {} MB is negative", j.mem_mb)};
  if (j.mem_mb > kMaxJobMemMb)
    return RecordLimitProblem{"mem_mb",
                              fmt::format("memory {} MB is over the limit of {} MB", j.mem_mb, kMaxJobMemMb)};
  for (const auto& g : j.gres)
    if (g.count < 0 || g.count > kMaxGresCount)
      return RecordLimitProblem{"gres",
                                fmt::format("{} count {} is outside 0..{}", g.name, g.count, kMaxGresCount)};
  return std::nullopt;
}

bool accept_within_limits(const JobRecord& job, std::uint64_t line, RejectSink& sink, std::string_view text) {
  const auto problem = record_limit_problem(job);
  if (!problem) return true;
  sink.reject(line, problem->field, "absurd " + problem->field, problem->detail, text);
  return false;
}

}  // namespace slurmtwin
