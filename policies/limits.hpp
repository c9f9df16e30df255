#pragma once
// QOS and partition limits checked when a job is considered (not at submit): a job over a limit
// stays pending with the reason recorded and never blocks other jobs (spec §5).
#include "sim/sim_state.hpp"

namespace slurmtwin::policies {

/// Resolves every association's tree and inherited limits (LimitUsage::assoc_chains) before the first job.
void prepare_limits(sim::SimState& state);
/// The first limit that keeps `job` from starting in `partition` now, or PendingReason::kNone.
sim::PendingReason check_limits(const sim::SimState& state, const sim::SimJob& job, std::uint16_t partition);
/// The submit-time limit a new job would exceed (QOS MaxSubmitJobsPerUser / GrpSubmitJobs, association
/// MaxSubmitJobs), as the reason Slurm refuses it with; "" when it may be submitted.
std::string check_submit_limits(const sim::SimState& state, const sim::SimJob& job);
/// Counts a submitted job against the submit limits (until it ends).
void count_submit(sim::SimState& state, const sim::SimJob& job);
/// Adds a started job to the running totals.
void count_start(sim::SimState& state, const sim::SimJob& job);
/// Removes an ended job from the running totals.
void count_end(sim::SimState& state, const sim::SimJob& job);
/// Takes a job that leaves without running (cancelled while pending) out of the submit counts.
void count_withdrawn(sim::SimState& state, const sim::SimJob& job);

}  // namespace slurmtwin::policies
