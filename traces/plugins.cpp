#include "traces/plugins.hpp"

#include <fmt/format.h>

#include <array>
#include <stdexcept>

#include "traces/text.hpp"

namespace slurmtwin {
namespace {

struct Plugin {
  std::string_view key;      // slurm.conf key
  std::string_view name;     // plugin, lower case
  std::string_view instead;  // "" = modelled; else what the simulator does instead
};

constexpr std::array<Plugin, 19> kPlugins = {{
    {"SchedulerType", "sched/backfill", ""},
    {"SchedulerType", "sched/builtin", ""},
    {"SchedulerType", "sched/hold", "new jobs are not held: scheduled as under sched/builtin"},
    {"SelectType", "select/cons_tres", ""},
    {"SelectType", "select/cons_res", ""},
    {"SelectType", "select/linear", "jobs are placed as under select/cons_tres, not on whole nodes"},
    {"SelectType", "select/cray_aries", "jobs are placed as under select/cons_tres"},
    {"PriorityType", "priority/multifactor", ""},
    {"PriorityType", "priority/basic",
     "priorities are computed by priority/multifactor with the PriorityWeight* given (all 0: submit order)"},
    {"PreemptType", "preempt/none", ""},
    {"PreemptType", "preempt/partition_prio", ""},
    {"PreemptType", "preempt/qos", ""},
    {"TopologyPlugin", "topology/flat", ""},  // the site model's name for no topology
    {"TopologyPlugin", "topology/none", ""},
    {"TopologyPlugin", "topology/default", ""},  // 23.11 on: topology/none's new name
    {"TopologyPlugin", "topology/tree", ""},
    {"TopologyPlugin", "topology/3d_torus", "jobs are placed as under topology/flat"},
    {"TopologyPlugin", "topology/hypercube", "jobs are placed as under topology/flat"},
    {"TopologyPlugin", "topology/block", "jobs are placed as under topology/flat"},
}};

}  // namespace

std::string check_plugin(std::string_view key, std::string_view value) {
  std::string known;
  for (const auto& p : kPlugins) {
    if (!text::iequals(p.key, key)) continue;
    if (p.name == value) return std::string(p.instead);
    if (p.name != "topology/flat") known += fmt::format("{}{}", known.empty() ? "" : ", ", p.name);
  }
  if (known.empty()) throw std::invalid_argument(fmt::format("{} is not a plugin setting", key));
  throw std::invalid_argument(
      fmt::format("slurmctld has no {} plugin '{}' (it would not start); known: {}", key, value, known));
}

void check_plugins(const SchedulerSettings& s) {
  const std::array<std::pair<std::string_view, const std::string*>, 5> plugins = {{
      {"SchedulerType", &s.scheduler_type},
      {"SelectType", &s.select_type},
      {"PriorityType", &s.priority_type},
      {"PreemptType", &s.preempt_type},
      {"TopologyPlugin", &s.topology_plugin},
  }};
  for (const auto& [key, value] : plugins) check_plugin(key, *value);
}

}  // namespace slurmtwin
