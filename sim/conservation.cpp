#include "sim/conservation.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace slurmtwin::sim {

void check_job_conservation(const SimState& state, std::size_t input_jobs, const ReplayMetrics* metrics) {
  const auto fail = [](const std::string& what) { throw std::logic_error("job conservation: " + what); };
  if (state.jobs.size() != input_jobs)
    fail(fmt::format("{} simulated jobs for {} input jobs", state.jobs.size(), input_jobs));
  std::size_t started = 0, never_started = 0, cancelled = 0, rejected = 0;
  for (const auto& j : state.jobs) {
    switch (j.state) {
      case SimJobState::kDone:  // ended; a job can end without starting (cancelled while pending)
        if (j.start == kUnsetTime) {
          if (j.end_state != JobState::kCancelled || j.end == kUnsetTime)
            fail(fmt::format("job {} ended without starting and was not cancelled", j.id));
          ++cancelled;
          break;
        }
        if (j.end == kUnsetTime || j.end < j.start)
          fail(fmt::format("job {} is done with start {} and end {}", j.id, j.start, j.end));
        ++started;
        break;
      case SimJobState::kPending:
        ++never_started;
        break;
      case SimJobState::kRejected:
        ++rejected;
        break;
      case SimJobState::kFuture:
      case SimJobState::kRunning:
      case SimJobState::kSuspended:
        fail(fmt::format("job {} is still {} after the replay ended", j.id,
                         j.state == SimJobState::kFuture    ? "unsubmitted"
                         : j.state == SimJobState::kRunning ? "running"
                                                            : "suspended"));
    }
  }
  if (started + never_started + cancelled + rejected != input_jobs)
    fail(fmt::format("started {} + never started {} + cancelled before start {} + rejected {} != input {}",
                     started, never_started, cancelled, rejected, input_jobs));
  if (metrics && (metrics->input_jobs != input_jobs || metrics->started != started ||
                  metrics->never_started != never_started || metrics->cancelled_before_start != cancelled ||
                  metrics->rejected != rejected))
    fail(fmt::format(
        "metrics count input {} = started {} + never started {} + cancelled {} + rejected {}; the "
        "jobs say {} = {} + {} + {} + {}",
        metrics->input_jobs, metrics->started, metrics->never_started, metrics->cancelled_before_start,
        metrics->rejected, input_jobs, started, never_started, cancelled, rejected));
  if (state.running.empty() && state.suspended.empty() && state.cluster.used_cpus() != 0)
    fail(fmt::format("no job runs but {} CPUs are still allocated", state.cluster.used_cpus()));
}

}  // namespace slurmtwin::sim
