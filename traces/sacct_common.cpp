#include "traces/sacct_common.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

#include "traces/array_spec.hpp"
#include "traces/input_limits.hpp"
#include "traces/text.hpp"

namespace slurmtwin::sacct_detail {

namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<std::int32_t> parse_index(std::string_view s) {
  if (!all_digits(s)) return std::nullopt;
  const auto v = text::parse_int(s);
  if (!v || *v > std::numeric_limits<std::int32_t>::max()) return std::nullopt;
  return static_cast<std::int32_t>(*v);
}

}  // namespace

std::optional<SacctJobId> parse_sacct_job_id(std::string_view t) {
  SacctJobId id;
  std::size_t i = 0;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
  if (i == 0 || i > 19) return std::nullopt;
  const auto base = text::parse_int(t.substr(0, i));
  if (!base || *base <= 0) return std::nullopt;
  id.job_id = static_cast<std::uint64_t>(*base);
  auto rest = t.substr(i);
  if (const auto dot = rest.find('.'); dot != std::string_view::npos) {
    id.step = std::string(rest.substr(dot + 1));
    rest = rest.substr(0, dot);
    if (id.step.empty() || !std::all_of(id.step.begin(), id.step.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
        }))
      return std::nullopt;
  }
  if (rest.empty()) return id;
  if (rest.front() == '_') {
    rest.remove_prefix(1);
    if (rest.size() >= 2 && rest.front() == '[' && rest.back() == ']') {
      const auto inner = rest.substr(1, rest.size() - 2);
      if (inner.empty() || !std::all_of(inner.begin(), inner.end(), [](char c) {
            return (c >= '0' && c <= '9') || c == '-' || c == ',' || c == '%' || c == ':';
          }))
        return std::nullopt;
      id.pending_array = true;
      if (const auto spec = parse_array_spec(inner)) id.array_max_running = spec->max_running;
      return id;
    }
    const auto task = parse_index(rest);
    if (!task) return std::nullopt;
    id.array_task = *task;
    return id;
  }
  if (rest.front() == '+') {
    const auto het = parse_index(rest.substr(1));
    if (!het) return std::nullopt;
    id.het_component = *het;
    return id;
  }
  return std::nullopt;
}

void JobFolder::add_job(JobRecord&& job) {
  auto& report = sink_.report();
  if (!accept_within_limits(job, job.source_line, sink_, {})) return;
  const auto key = key_of(job);
  auto it = jobs_.find(key);
  if (it == jobs_.end()) {
    Entry e;
    e.index = trace_.jobs.size();
    e.submits.insert(job.submit);
    e.latest_submit = job.submit;
    jobs_.emplace(key, std::move(e));
    trace_.jobs.push_back(std::move(job));
    ++report.accepted;
    return;
  }
  auto& entry = it->second;
  auto& kept = trace_.jobs[entry.index];
  if (entry.submits.count(job.submit) > 0) {
    ++report.folded_by_kind["duplicate record"];
    return;
  }
  // Another run of the same job (sacct -D lists every requeued run with its own Submit).
  ++report.folded_by_kind["requeued run"];
  entry.submits.insert(job.submit);
  kept.restarts = std::max<std::uint32_t>(kept.restarts + 1, job.restarts);
  if (kept.submit == kUnsetTime || (job.submit != kUnsetTime && job.submit < kept.submit))
    kept.submit = job.submit;  // the job keeps its first submit
  if (job.submit == kUnsetTime || (entry.latest_submit != kUnsetTime && job.submit < entry.latest_submit)) {
    return;  // an earlier run listed late: the latest run's outcome stays
  }
  entry.latest_submit = job.submit;
  kept.start = job.start;
  kept.end = job.end;
  kept.runtime = job.runtime;
  kept.cancel = job.cancel;
  kept.state = job.state;
  if (job.started_by != SchedulerPass::kUnknown) kept.started_by = job.started_by;
}

void JobFolder::add_step(const JobKey& parent, std::uint64_t line, std::string field, std::string text) {
  steps_.push_back({parent, line, std::move(field), std::move(text)});
}

void JobFolder::finish() {
  auto steps = std::move(steps_);
  steps_.clear();
  for (const auto& s : steps) {
    if (jobs_.count(s.parent) > 0) {
      ++sink_.report().folded_by_kind["job step"];
    } else {
      const bool rejected = rejected_.count(s.parent) > 0;
      sink_.reject(s.line, s.field, "orphan job step",
                   rejected ? "the step's job record was rejected" : "no job record for this step", s.text);
    }
  }
}

}  // namespace slurmtwin::sacct_detail
