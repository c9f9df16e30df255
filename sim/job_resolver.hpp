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

/// Adds an association (with Fairshare=1) for every (user, account) of the trace that the site
/// lacks, creating missing accounts under root; returns how many associations were added.
std::size_t add_missing_associations(Site& site, const Trace& trace);

}  // namespace slurmtwin::sim
