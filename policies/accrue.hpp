#pragma once
// Accrue limits (GrpJobsAccrue, MaxJobsAccruePU/PA, an association's MaxJobsAccrue): only so many
// pending jobs accrue age; the others wait at age 0 until a counted job starts (slurmctld 22.05,
// acct_policy.c acct_policy_handle_accrue_time). Counting happens when the job queue is built (each
// main pass and backfill cycle), over pending jobs in job-list (submit) order. Off, and the age
// factor runs from the eligible time as without limits, unless a limit is set, AccountingStorageEnforce
// has limits and PriorityFlags lacks ACCRUE_ALWAYS.
#include <cstdint>
#include <vector>

#include "sim/sim_state.hpp"

namespace slurmtwin::policies {

/// Sets SimState::usage.accrue_limits (whether accrue limits apply to this site) and empties the counts;
/// call after prepare_limits (which says whether limits are enforced). `accrue_always`:
/// PriorityFlags=ACCRUE_ALWAYS.
void prepare_accrue(sim::SimState& state, bool accrue_always);
/// A job pends anew (submitted, or requeued): it waits to be counted. No-op when accrue limits are off.
void accrue_wait(sim::SimState& state, std::uint32_t job);
/// build_job_queue's pass over the waiting jobs, in job-list order: each eligible one whose deciding
/// limit (the first set of: its QOS's GrpJobsAccrue, MaxJobsAccruePA, MaxJobsAccruePU, its
/// association's GrpJobsAccrue, MaxJobsAccrue, then each account's GrpJobsAccrue up to root) has room
/// is counted and accrues from now (from its eligible time where no limit is set). Returns the jobs
/// counted, in that order.
std::vector<std::uint32_t> accrue_count(sim::SimState& state);
/// A pending job starts or leaves the queue: it no longer counts (nor waits).
void accrue_leave(sim::SimState& state, std::uint32_t job);
/// Every count equals the pending jobs counted in it, and the waiting jobs are the pending ones not
/// counted; throws std::logic_error otherwise. No-op when accrue limits are off.
void check_accrue(const sim::SimState& state);

}  // namespace slurmtwin::policies
