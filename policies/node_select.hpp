#pragma once
// select/cons_tres node choice, as Slurm 22.05's choose_nodes/_eval_nodes (spec §9): nodes tried by
// Weight level, lowest first. topology/flat: within a level, sets of consecutive nodes of one Weight,
// the tightest sufficient set (else the largest) taken node by node until the request is met.
// topology/tree (_eval_nodes_topo): whole leaf switches, the tightest that holds the nodes still
// needed (else the largest), near the ones used, nodes in node order. When that fails, the nodes with
// the fewest usable CPUs are dropped and the choice is made again. SelectType=select/cons_res (its
// own job_test.c, the same in 20.02 and 22.05): a one-node job's candidates include nodes that cannot
// hold it, flat sets ignore Weight, and under topology/tree switches and nodes are chosen by CPU
// count (best fit).
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
/// cluster.usable_cpus(n, request, request.per_node_ask()) in the state the choice is for, for every
/// candidate whose bit is set in `available` (bit n%64 of word n/64; the rest are not read). Node choice
/// reads nothing else of that state, so `cluster` only supplies the configuration (CPUs, weights, memory,
/// cores) and may be in any state.
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

/// select_nodes over the nodes set in `partition` (bitset, cluster.node_words() words; a partition's
/// nodes), less those not `available` (empty = all): the same choice, but only the nodes with enough
/// free CPUs to be of use (ClusterState::nodes_with_free) are visited, so a try costs O(nodes / 64 +
/// such nodes) instead of O(partition nodes): on a busy large cluster most nodes are full.
std::optional<std::vector<sim::NodeAlloc>> select_nodes_in(const sim::ClusterState& cluster,
                                                           const sim::NodeRequest& request,
                                                           const std::vector<std::uint64_t>& partition,
                                                           const std::vector<bool>& available);

/// Where `request` would start on `candidates` if every one of them were idle, less those set in
/// `excluded` (may be empty) and those out of service; nullopt if nowhere.
std::optional<std::vector<sim::NodeAlloc>> select_when_idle(const sim::ClusterState& cluster,
                                                            const sim::NodeRequest& request,
                                                            const std::vector<std::uint32_t>& candidates,
                                                            const std::vector<bool>& excluded);
/// Whether select_when_idle finds nodes (Slurm's test for ReqNodeNotAvail vs Resources).
bool fits_when_idle(const sim::ClusterState& cluster, const sim::NodeRequest& request,
                    const std::vector<std::uint32_t>& candidates, const std::vector<bool>& excluded);

}  // namespace slurmtwin::policies
