#pragma once
// The network tree of topology.conf (TopologyPlugin=topology/tree): read as slurmctld reads it (Slurm
// 22.05 topology_tree.c), checked, and its levels computed in one place for the site check and the
// node choice.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "traces/site.hpp"

namespace slurmtwin {

/// topology.conf lines (`SwitchName=s1 Nodes=n[1-4]`, `SwitchName=top Switches=s[1-2]`, optional
/// LinkSpeed, `#` comments, keys in any case), or what `scontrol show topology` prints (the same with
/// Level=, where a higher switch also lists its nodes: they are its children's and are not read). Node
/// names `site` lacks are dropped with one warning, as slurmctld does; so are the warnings slurmctld
/// gives for nodes on several leaf switches and for nodes on none (jobs are never placed there).
/// Throws InputError (file, line, field) where slurmctld refuses to start: an unknown key, a line with
/// both or neither of Nodes and Switches, a switch named twice, a child switch that is unknown or the
/// switch itself, a cycle, no leaf switch, a bad node list.
std::vector<Switch> read_topology_conf(std::string_view content, const std::string& file_name,
                                       const Site& site, std::vector<std::string>& warnings);

/// Level of each switch of `switches` (file order): 0 for a leaf (no children; it may have no node
/// left when slurm.conf lacks them all), else one more than its highest child. Throws
/// std::invalid_argument naming the switch when a child is unknown or itself, a name repeats, a switch
/// has both nodes and children, or the switches do not form a tree; `culprit`, when given, then
/// receives the index of the switch the message names.
std::vector<std::uint32_t> switch_levels(const std::vector<Switch>& switches, std::size_t* culprit = nullptr);

/// Checks Site::switches against the site's nodes (switch_levels, and every leaf node known);
/// throws std::invalid_argument naming the first problem.
void validate_topology(const Site& site);

}  // namespace slurmtwin
