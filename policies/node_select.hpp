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

/// The same choice when the caller already knows each node's usable CPUs: `usable[n]` must equal
/// cluster.usable_cpus(n, request, per-node ask) in the state the choice is for, for every candidate
/// whose bit is set in `available` (bit n%64 of word n/64; the rest are not read). Node choice reads nothing
/// else of that state, so `cluster` only supplies the configuration (CPUs, weights, memory, cores) and may be
/// in any state.
std::optional<std::vector<sim::NodeAlloc>> select_nodes(const sim::ClusterState& cluster,
                                                        const sim::NodeRequest& request,
                                                        const std::vector<std::uint32_t>& candidates,
                                                        const std::vector<std::uint64_t>& available,
                                                        const std::vector<std::uint32_t>& usable);

/// The same when the candidates are exactly the nodes set in `available`, in ascending order (a
/// partition's sorted nodes intersected with others): the set bits are visited instead of a list.
std::optional<std::vector<sim::NodeAlloc>> select_nodes(const sim::ClusterState& cluster,
                                                        const sim::NodeRequest& request,
                                                        const std::vector<std::uint64_t>& available,
                                                        const std::vector<std::uint32_t>& usable);

}  // namespace slurmtwin::policies
