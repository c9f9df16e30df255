#include "policies/node_select.hpp"

#include <algorithm>
#include <map>

namespace slurmtwin::policies {
namespace {

struct Usable {
  std::uint32_t node;
  std::uint32_t cpus;  // CPUs the job could take here (before core rounding)
};

// Greedy fill of one run of nodes: each further node still must leave one task for every node the
// request needs after it. Appends to `out`; returns CPUs still missing.
std::uint32_t fill(const sim::ClusterState& cluster, const sim::NodeRequest& r,
                   const std::vector<Usable>& run, std::uint32_t missing_cpus,
                   std::vector<sim::NodeAlloc>& out) {
  const std::uint32_t cpt = std::max<std::uint32_t>(1, r.cpus_per_task);
  for (const auto& u : run) {
    const auto nodes_taken = static_cast<std::uint32_t>(out.size());
    if (nodes_taken >= r.max_nodes) break;
    const bool need_more_nodes = nodes_taken + 1 < r.min_nodes;
    if (missing_cpus == 0 && !need_more_nodes && nodes_taken >= r.min_nodes) break;
    const std::uint32_t later_nodes = r.min_nodes > nodes_taken + 1 ? r.min_nodes - nodes_taken - 1 : 0;
    std::uint32_t want = missing_cpus > later_nodes * cpt ? missing_cpus - later_nodes * cpt : cpt;
    if (r.cpus_per_node > 0) want = r.cpus_per_node;
    const std::uint32_t cpus = r.exclusive ? cluster.node(u.node).cpus : std::min(want, u.cpus);
    if (cpus == 0) continue;
    const auto alloc = r.exclusive ? cpus : cluster.round_cpus(u.node, cpus);
    out.push_back({u.node, alloc, cluster.memory_needed(u.node, r, alloc)});
    missing_cpus = cpus >= missing_cpus ? 0 : missing_cpus - cpus;
  }
  return missing_cpus;
}

std::uint64_t run_cpus(const std::vector<Usable>& run) {
  std::uint64_t s = 0;
  for (const auto& u : run) s += u.cpus;
  return s;
}

}  // namespace

std::optional<std::vector<sim::NodeAlloc>> select_nodes(const sim::ClusterState& cluster,
                                                        const sim::NodeRequest& r,
                                                        const std::vector<std::uint32_t>& candidates,
                                                        const std::vector<bool>& available) {
  // Usable nodes by weight level.
  std::map<std::uint32_t, std::vector<Usable>> by_weight;
  const std::uint32_t per_node_ask = r.cpus_per_node > 0 ? r.cpus_per_node : r.total_cpus;
  for (auto n : candidates) {
    if (!available.empty() && !available[n]) continue;
    const auto cpus = cluster.usable_cpus(n, r, per_node_ask);
    if (cpus > 0) by_weight[cluster.node_weight(n)].push_back({n, cpus});
  }
  std::vector<Usable> usable;  // cumulative over weight levels, kept in node order
  for (auto& [weight, level] : by_weight) {
    usable.insert(usable.end(), level.begin(), level.end());
    std::sort(usable.begin(), usable.end(), [](const Usable& a, const Usable& b) { return a.node < b.node; });
    if (usable.size() < r.min_nodes) continue;
    // Runs of consecutive node indices.
    std::vector<std::vector<Usable>> runs;
    for (const auto& u : usable) {
      if (runs.empty() || runs.back().back().node + 1 != u.node) runs.emplace_back();
      runs.back().push_back(u);
    }
    std::vector<sim::NodeAlloc> out;
    std::uint32_t missing = r.total_cpus;
    std::vector<bool> used(runs.size(), false);
    while (true) {
      // Tightest sufficient run, else the largest one.
      std::optional<std::size_t> best;
      for (std::size_t i = 0; i < runs.size(); ++i) {
        if (used[i]) continue;
        std::vector<sim::NodeAlloc> probe = out;
        const bool sufficient = fill(cluster, r, runs[i], missing, probe) == 0 && probe.size() >= r.min_nodes;
        if (sufficient && (!best || run_cpus(runs[i]) < run_cpus(runs[*best]))) best = i;
      }
      if (best) {
        fill(cluster, r, runs[*best], missing, out);
        return out;
      }
      std::optional<std::size_t> largest;
      for (std::size_t i = 0; i < runs.size(); ++i)
        if (!used[i] && (!largest || run_cpus(runs[i]) > run_cpus(runs[*largest]))) largest = i;
      if (!largest) break;
      used[*largest] = true;
      missing = fill(cluster, r, runs[*largest], missing, out);
      if (out.size() >= r.max_nodes) break;
    }
  }
  return std::nullopt;
}

}  // namespace slurmtwin::policies
