#pragma once
// Job conservation at the end of a replay (--check-invariants): every input job is accounted for
// exactly once, and a cluster with nothing running has every resource back.
#include <cstddef>

#include "sim/metrics.hpp"
#include "sim/sim_state.hpp"

namespace slurmtwin::sim {

/// Throws std::logic_error saying what does not add up when, after Controller::run():
/// - the simulation does not hold one job per input job (`input_jobs`);
/// - a job is still running, suspended or not yet submitted (the run ended early);
/// - accepted (started + never started) + rejected != input, per the jobs' states and per `metrics`
///   (when given);
/// - a job that started has no end or an end before its start;
/// - no job runs but some CPUs are still allocated.
void check_job_conservation(const SimState& state, std::size_t input_jobs,
                            const ReplayMetrics* metrics = nullptr);

}  // namespace slurmtwin::sim
