#pragma once
// select/cons_tres node choice (spec §9): nodes grouped by Weight, lowest first; within the usable
// nodes of the weight levels tried so far, runs of consecutive nodes (slurm.conf order) are formed
// and the run with the tightest sufficient fit (fewest usable CPUs) is used, else the largest run,
// repeating until the request is met (best fit, as topology/flat's _eval_nodes_consec).
#include <optional>
#include <vector>

#include "sim/cluster_state.hpp"

namespace slurmtwin::policies {

/// Chooses nodes among `candidates` (node indices, ascending) for `request`; nullopt when it cannot
/// start now. `available` may further exclude nodes (empty = all candidates usable).
std::optional<std::vector<sim::NodeAlloc>> select_nodes(const sim::ClusterState& cluster,
                                                        const sim::NodeRequest& request,
                                                        const std::vector<std::uint32_t>& candidates,
                                                        const std::vector<bool>& available = {});

}  // namespace slurmtwin::policies
