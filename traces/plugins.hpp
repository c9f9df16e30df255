#pragma once
// The scheduling plugins slurmctld can load (SchedulerType, SelectType, PriorityType, PreemptType,
// TopologyPlugin; Slurm 20.02-24.05 source trees) and which of them the simulator models. slurmctld
// refuses to start with a plugin it does not have, so a name outside this table (a typo) is an error,
// never a silent default.
#include <string>
#include <string_view>

#include "traces/site.hpp"

namespace slurmtwin {

/// "" when `value` (lower case, e.g. "select/cons_res") is a plugin slurmctld has for slurm.conf key
/// `key` ("SelectType", ...) and the simulator models it; otherwise what the simulator does instead
/// (a warning). Throws std::invalid_argument naming the known plugins when slurmctld has no such
/// plugin for that key, or when `key` is not one of the five.
std::string check_plugin(std::string_view key, std::string_view value);

/// check_plugin for each of `s`'s five plugins (TopologyPlugin as `s.topology_plugin`, where the site
/// model writes the flat plugin as topology/flat); throws check_plugin's std::invalid_argument (it names
/// the key) for the first unknown one. Plugins known but not modelled pass.
void check_plugins(const SchedulerSettings& s);

}  // namespace slurmtwin
