#pragma once
// Turns trace records into simulator jobs against a site: partitions, QOS, association, time limit,
// CPUs, memory and GRES per node, with Slurm's defaults (DefaultTime, DefMemPerCPU, whole-node
// memory). A record that Slurm would refuse at submit is returned as rejected with a reason.
#include <string>
#include <vector>

#include "sim/cluster_state.hpp"
#include "sim/sim_job.hpp"
#include "traces/site.hpp"
#include "traces/trace.hpp"

namespace slurmtwin::sim {

struct ResolveOptions {
  bool honour_eligible = true;  // use the recorded Eligible time (holds, --begin) when later than submit
};

/// Resolves every trace job (same order as trace.jobs). Rejected jobs have state kRejected and
/// reject_reason set; `users` receives the dense user names (SimJob::user indexes it).
std::vector<SimJob> resolve_jobs(const Trace& trace, const Site& site, ClusterState& cluster,
                                 const ResolveOptions& options, std::vector<std::string>& users);

/// select/cons_tres's per-GPU defaults of partition `part` for a job with GPUs (job_test.c
/// _set_gpu_defaults, 22.05): without --mem/--mem-per-cpu DefMemPerGPU MB per GPU on each node, in place
/// of the DefMemPer* default, and with them a node with that much free (the GRES filter); without -c
/// at least DefCpuPerGPU CPUs per GPU on each node.
void apply_gpu_defaults(const ClusterState& cluster, const Partition& part, const JobRecord& r,
                        NodeRequest& req);

/// MaxMemPerCPU (the partition's; the importer gives partitions without their own slurm.conf's), as
/// slurmctld's job_limits_check applies it before it schedules a job (job_mgr.c _valid_pn_min_mem,
/// 20.02-25.05): per-CPU memory over the cap gets ceil(mem / cap) times the CPUs per task and that
/// much less memory per CPU. (Memory per node under a per-CPU cap would raise the CPUs per node: not
/// modelled; the importer warns.)
void apply_max_mem_per_cpu(const Partition& part, NodeRequest& req);

/// The memory per node (MB) slurmctld's same check compares with partition `part`'s MaxMemPerNode
/// when it is over it (a job it then holds for ever, reason MaxMemPerLimit), else 0: per-CPU memory
/// times the CPUs it counts per node, or a whole node's memory. `first`: the partition's node of
/// lowest index (slurmctld reads CPUs and memory per node off it), nullptr when it has none.
std::int64_t memory_over_node_cap(const Partition& part, const Node* first, const NodeRequest& req);

/// Adds an association (with Fairshare=1) for every (user, account) of the trace that the site
/// lacks, creating missing accounts under root; returns how many associations were added.
std::size_t add_missing_associations(Site& site, const Trace& trace);

}  // namespace slurmtwin::sim
