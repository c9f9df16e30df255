#pragma once
// The switch tree of topology/tree as the node choice reads it (Slurm 22.05 switch_record_table):
// per switch its level, parent, nodes (node indices) and hop distances to every other switch. Built
// once from a validated site; constant afterwards.
#include <cstdint>
#include <vector>

#include "traces/site.hpp"

namespace slurmtwin::sim {

struct SwitchTree {
  static constexpr std::uint32_t kFar = 0xFFFFFFFFu;  // no path between two switches (Slurm's INFINITE)

  struct Switch {
    std::uint32_t level = 0;           // 0: leaf
    std::uint32_t parent = 0;          // a root's is 0, not itself, as in slurmctld (see the note in .cpp)
    std::vector<std::uint32_t> nodes;  // node indices, ascending (a higher switch: its leaves' nodes)
  };
  std::vector<Switch> switches;     // topology.conf order
  std::vector<std::uint32_t> hops;  // switches x switches: hops between two switches, kFar if none
  // Per node: the switches it is under, ascending (counting a few listed nodes' switches is cheaper
  // than scanning every switch's nodes).
  std::vector<std::vector<std::uint32_t>> of_node;

  /// Empty when the site does not place jobs by switch (Site::places_by_switch).
  static SwitchTree of(const Site& site);
  bool empty() const { return switches.empty(); }
  std::uint32_t distance(std::size_t a, std::size_t b) const { return hops[a * switches.size() + b]; }
};

}  // namespace slurmtwin::sim
