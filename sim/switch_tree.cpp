#include "sim/switch_tree.hpp"

#include <algorithm>
#include <deque>
#include <unordered_map>

#include "traces/topology.hpp"

namespace slurmtwin::sim {

SwitchTree SwitchTree::of(const Site& site) {
  SwitchTree t;
  if (!site.places_by_switch()) return t;
  const auto levels = switch_levels(site.switches);
  std::unordered_map<std::string, std::uint32_t> node_index, switch_index;
  for (std::uint32_t i = 0; i < site.nodes.size(); ++i) node_index.emplace(site.nodes[i].name, i);
  for (std::uint32_t i = 0; i < site.switches.size(); ++i) switch_index.emplace(site.switches[i].name, i);
  const auto n = site.switches.size();
  t.switches.resize(n);
  std::vector<std::vector<std::uint32_t>> adjacent(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    auto& sw = t.switches[i];
    sw.level = levels[i];
    for (const auto& name : site.switches[i].nodes) sw.nodes.push_back(node_index.at(name));
    for (const auto& c : site.switches[i].children) {
      const auto child = switch_index.at(c);
      // A switch that is the child of several keeps the last parent in file order (slurmctld's
      // _find_child_switches); a root keeps 0, which the leaf comparison's walk up relies on as Slurm's does.
      t.switches[child].parent = i;
      adjacent[i].push_back(child);
      adjacent[child].push_back(i);
    }
  }
  // A higher switch's nodes are its children's, resolved lowest level first.
  std::vector<std::uint32_t> order(n);
  for (std::uint32_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return levels[a] < levels[b]; });
  for (const auto i : order) {
    auto& nodes = t.switches[i].nodes;
    for (const auto& c : site.switches[i].children) {
      const auto& more = t.switches[switch_index.at(c)].nodes;
      nodes.insert(nodes.end(), more.begin(), more.end());
    }
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  }
  t.of_node.resize(site.nodes.size());
  for (std::uint32_t i = 0; i < n; ++i)
    for (const auto node : t.switches[i].nodes) t.of_node[node].push_back(i);
  // Hops by breadth-first search from each switch over the parent-child links (slurmctld: Floyd-Warshall
  // on the same graph; the same distances in O(switches x links)).
  t.hops.assign(n * n, kFar);
  for (std::uint32_t from = 0; from < n; ++from) {
    auto* row = &t.hops[from * n];
    row[from] = 0;
    std::deque<std::uint32_t> queue{from};
    while (!queue.empty()) {
      const auto at = queue.front();
      queue.pop_front();
      for (const auto next : adjacent[at])
        if (row[next] == kFar) {
          row[next] = row[at] + 1;
          queue.push_back(next);
        }
    }
  }
  return t;
}

}  // namespace slurmtwin::sim
