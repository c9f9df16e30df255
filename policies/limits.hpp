#pragma once
// QOS and association limits checked when a job is considered (not at submit): a job over a limit
// stays pending with the reason recorded and never blocks other jobs (spec §5). A job's QOS and its
// partition's QOS both bind it; the first of them to set a limit (the partition's, unless the job's
// has OverPartQOS) decides it, and a limit a QOS sets replaces the association tree's same limit
// (acct_policy.c: qos_rec / out arrays).
#include <vector>

#include "sim/sim_state.hpp"

namespace slurmtwin::policies {

/// A job's TRES as slurmctld counts them: requested while pending (tres_req_cnt: CPUs, memory in MB
/// when asked for, min nodes), allocated once running (tres_alloc_cnt); each GRES as "gres/NAME", per
/// node x nodes (gres_ctld_set_job_tres_cnt). What PriorityWeightTRES and TRESBillingWeights weigh.
TresMap job_tres_counts(const sim::SimState& state, const sim::SimJob& job);
/// Resolves every association's tree and inherited limits (LimitUsage::assoc_chains), the QOS order
/// and which TRES-minute totals to keep, before the first job.
void prepare_limits(sim::SimState& state);
/// The first limit that keeps `job` from starting in `partition` now, or PendingReason::kNone.
sim::PendingReason check_limits(const sim::SimState& state, const sim::SimJob& job, std::uint16_t partition);
/// The first limit Slurm checks once nodes are chosen (acct_policy_job_runnable_post_select) that keeps
/// `job` from starting on `alloc` in `partition`: GrpTRESMins, GrpTRESRunMins, MaxTRESMinsPerJob,
/// MaxTRESPerNode, MinTRESPerJob (and MaxTRESRunMinsPU/PA from Slurm 24.05), or kNone.
sim::PendingReason check_selected_limits(const sim::SimState& state, const sim::SimJob& job,
                                         std::uint16_t partition, const std::vector<sim::NodeAlloc>& alloc);
/// check_selected_limits when no nodes could be chosen: on what the job asks for (select_nodes'
/// req_nodes: its maximum node count when it gave one, else its minimum; the requested CPUs and memory).
/// slurmctld checks them even then; a job over one is held by that limit (ESLURM_ACCOUNTING_POLICY),
/// not by Resources, and neither blocks its partition nor preempts (node_scheduler.c select_nodes).
sim::PendingReason check_requested_limits(const sim::SimState& state, const sim::SimJob& job,
                                          std::uint16_t partition);
/// The submit-time limit a new job would exceed (QOS MaxSubmitJobsPerUser / GrpSubmitJobs, association
/// MaxSubmitJobs; a DenyOnLimit QOS's per-job limits), as the reason Slurm refuses it with; "" when it
/// may be submitted.
std::string check_submit_limits(const sim::SimState& state, const sim::SimJob& job);
/// Counts a submitted job against the submit limits (until it ends).
void count_submit(sim::SimState& state, const sim::SimJob& job);
/// Adds a started job to the running totals (with its TRES x time limit, when kept).
void count_start(sim::SimState& state, const sim::SimJob& job);
/// Removes an ended job from the running totals.
void count_end(sim::SimState& state, const sim::SimJob& job);
/// Takes a job that leaves without running (cancelled while pending) out of the submit counts.
void count_withdrawn(sim::SimState& state, const sim::SimJob& job);
/// At a decay tick (or a job's end): a running job ran over [from, to] (absolute s), which fair-share
/// charges as `decayed` s (x UsageFactor, decayed) or, for a NoDecay QOS, `undecayed` s; its TRES
/// times those go to TRES-minutes used, and the part of [from, to] within its time limit leaves its
/// running TRES-minutes. No-op unless a TRES-minutes limit is set.
void charge_tres_minutes(sim::SimState& state, const sim::SimJob& job, Seconds from, Seconds to,
                         double decayed, double undecayed);
/// The running jobs whose QOS, association or an account above it has used up a GrpTRESMins of a TRES
/// they hold (acct_policy_job_time_out, every 30 s; not with AccountingStorageEnforce=safe): into
/// state.usage.limit_kills.
void find_limit_kills(sim::SimState& state);
/// Multiplies TRES-minutes used by `factor` (QOS with NoDecay excepted), as fair-share usage decays.
void decay_tres_minutes(sim::SimState& state, double factor);
/// Sets TRES-minutes used to 0 (PriorityUsageResetPeriod).
void reset_tres_minutes(sim::SimState& state);

}  // namespace slurmtwin::policies
