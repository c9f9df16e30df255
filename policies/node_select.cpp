#include "policies/node_select.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <functional>
#include <limits>
#include <vector>

namespace slurmtwin::policies {
namespace {

struct Usable {
  std::uint32_t node;
  std::uint32_t cpus;    // CPUs the job could take here (before core rounding)
  std::uint32_t weight;  // node Weight
};

/// A run of consecutive node indices: [begin, end) in the usable list, with its usable CPUs.
struct Run {
  std::size_t begin;
  std::size_t end;
  std::uint64_t cpus;
};

// Reused between calls: select_nodes runs millions of times per replay (backfill will-run tests), and
// allocating these per call dominated it.
struct Scratch {
  std::vector<Usable> all;     // usable candidates in candidate order
  std::vector<Usable> usable;  // usable nodes of the weight levels tried so far, in node order
  std::vector<std::uint32_t> weights;
  std::vector<Run> runs;
  std::vector<char> used;
};
thread_local Scratch scratch;

// Whether `cpus` more CPUs fit on at most `nodes` of [first, last). As cons_tres does (seen on real
// Slurm 22.05, docs/fidelity.md), a node with little free is passed over when taking it would leave
// the job's bounded node count unable to hold the rest: -N2 -n16 on free CPUs 6,8,8 takes the 8s.
bool can_finish(const Usable* first, const Usable* last, std::uint32_t nodes, std::uint32_t cpus) {
  if (nodes == 0) return false;
  // Common case first (homogeneous nodes): the next `nodes` nodes already hold it.
  std::uint64_t sum = 0;
  std::uint32_t count = 0;
  for (const Usable* u = first; u != last && count < nodes; ++u, ++count)
    if ((sum += u->cpus) >= cpus) return true;
  if (count < nodes) return false;  // every later node counted
  // Otherwise the `nodes` largest later nodes must hold it.
  std::vector<std::uint32_t> later;
  for (const Usable* u = first; u != last; ++u) later.push_back(u->cpus);
  std::partial_sort(later.begin(), later.begin() + nodes, later.end(), std::greater<>());
  sum = 0;
  for (std::uint32_t i = 0; i < nodes; ++i) sum += later[i];
  return sum >= cpus;
}

// Greedy fill of one run of nodes: each further node still must leave one task for every node the
// request needs after it. Appends to `out` unless kDry; `taken` counts the nodes taken so far (out's
// size when not dry). Returns CPUs still missing.
template <bool kDry>
std::uint32_t fill(const sim::ClusterState& cluster, const sim::NodeRequest& r, const Usable* first,
                   const Usable* last, std::uint32_t missing_cpus, std::size_t& taken,
                   std::vector<sim::NodeAlloc>& out) {
  const std::uint32_t cpt = std::max<std::uint32_t>(1, r.cpus_per_task);
  for (const Usable* u = first; u != last; ++u) {
    const auto nodes_taken = static_cast<std::uint32_t>(taken);
    if (nodes_taken >= r.max_nodes) break;
    const bool need_more_nodes = nodes_taken + 1 < r.min_nodes;
    if (missing_cpus == 0 && !need_more_nodes && nodes_taken >= r.min_nodes) break;
    const std::uint32_t later_nodes = r.min_nodes > nodes_taken + 1 ? r.min_nodes - nodes_taken - 1 : 0;
    std::uint32_t want = missing_cpus > later_nodes * cpt ? missing_cpus - later_nodes * cpt : cpt;
    if (r.cpus_per_node > 0) want = r.cpus_per_node;
    const std::uint32_t cpus = r.exclusive ? cluster.node(u->node).cpus : std::min(want, u->cpus);
    if (cpus == 0) continue;
    if (!r.exclusive && r.cpus_per_node == 0 && cpus < missing_cpus &&
        !can_finish(u + 1, last, r.max_nodes - nodes_taken - 1, missing_cpus - cpus))
      continue;  // taking this node would leave too few CPUs on the nodes the job may still use
    if constexpr (!kDry) {
      const auto alloc = r.exclusive ? cpus : cluster.round_cpus(u->node, cpus);
      out.push_back({u->node, alloc, cluster.memory_needed(u->node, r, alloc)});
    }
    ++taken;
    missing_cpus = cpus >= missing_cpus ? 0 : missing_cpus - cpus;
  }
  return missing_cpus;
}

/// select_nodes over the usable candidates in `sc.all` (candidate order).
std::optional<std::vector<sim::NodeAlloc>> choose(const sim::ClusterState& cluster, const sim::NodeRequest& r,
                                                  Scratch& sc) {
  // No weight level at all, or none with enough nodes.
  if (sc.all.empty() || sc.all.size() < r.min_nodes) return std::nullopt;
  // Weight levels, lowest first; each tries the usable nodes of all levels up to it, in node order.
  const auto by_node = [](const Usable& a, const Usable& b) { return a.node < b.node; };
  // Distinct weights: sites have a handful, so a linear search per node beats sorting all of them.
  sc.weights.clear();
  for (const auto& u : sc.all)
    if (std::find(sc.weights.begin(), sc.weights.end(), u.weight) == sc.weights.end())
      sc.weights.push_back(u.weight);
  std::sort(sc.weights.begin(), sc.weights.end());
  const bool one_level = sc.weights.size() == 1;
  // Common case: one level with the nodes already in order (candidates are ascending) is used as is.
  const bool as_is = one_level && std::is_sorted(sc.all.begin(), sc.all.end(), by_node);
  std::vector<sim::NodeAlloc> out;
  for (const auto weight : sc.weights) {
    if (!as_is) {
      sc.usable.clear();
      for (const auto& u : sc.all)
        if (u.weight <= weight) sc.usable.push_back(u);
      if (!std::is_sorted(sc.usable.begin(), sc.usable.end(), by_node))
        std::sort(sc.usable.begin(), sc.usable.end(), by_node);
    }
    const auto& usable = as_is ? sc.all : sc.usable;
    if (usable.size() < r.min_nodes) continue;
    // Runs of consecutive node indices.
    sc.runs.clear();
    for (std::size_t k = 0; k < usable.size(); ++k) {
      if (sc.runs.empty() || usable[k - 1].node + 1 != usable[k].node) sc.runs.push_back({k, k, 0});
      sc.runs.back().end = k + 1;
      sc.runs.back().cpus += usable[k].cpus;
    }
    const Usable* base = usable.data();
    out.clear();
    std::uint32_t missing = r.total_cpus;
    sc.used.assign(sc.runs.size(), 0);
    while (true) {
      // Tightest sufficient run, else the largest one.
      std::optional<std::size_t> best;
      for (std::size_t i = 0; i < sc.runs.size(); ++i) {
        if (sc.used[i]) continue;
        std::size_t taken = out.size();
        const bool sufficient = fill<true>(cluster, r, base + sc.runs[i].begin, base + sc.runs[i].end,
                                           missing, taken, out) == 0 &&
                                taken >= r.min_nodes;
        if (sufficient && (!best || sc.runs[i].cpus < sc.runs[*best].cpus)) best = i;
      }
      if (best) {
        std::size_t taken = out.size();
        fill<false>(cluster, r, base + sc.runs[*best].begin, base + sc.runs[*best].end, missing, taken, out);
        return out;
      }
      std::optional<std::size_t> largest;
      for (std::size_t i = 0; i < sc.runs.size(); ++i)
        if (!sc.used[i] && (!largest || sc.runs[i].cpus > sc.runs[*largest].cpus)) largest = i;
      if (!largest) break;
      sc.used[*largest] = 1;
      std::size_t taken = out.size();
      missing = fill<false>(cluster, r, base + sc.runs[*largest].begin, base + sc.runs[*largest].end, missing,
                            taken, out);
      if (out.size() >= r.max_nodes) break;
    }
  }
  return std::nullopt;
}

/// The request takes all its CPUs on one node and fill() treats it simply: a run suffices when one of
/// its nodes has them all, and fill takes the first such node.
bool single_node_plain(const sim::NodeRequest& r) {
  return r.max_nodes == 1 && r.min_nodes <= 1 && !r.exclusive && r.cpus_per_node == 0 && r.total_cpus > 0;
}

/// choose() for a single_node_plain request over the nodes set in `available` (ascending) in one pass per
/// weight level, without listing them: at the lowest level with a sufficient run, the first run with
/// the fewest usable CPUs among the sufficient ones, and in it the first node with all the CPUs. A
/// level of the cluster with no usable node of its own tries the same nodes as the level below it
/// (already failed) or none, so walking every level of the cluster gives choose()'s answer.
std::optional<std::vector<sim::NodeAlloc>> choose_single(const sim::ClusterState& cluster,
                                                         const sim::NodeRequest& r,
                                                         const std::vector<std::uint64_t>& available,
                                                         const std::vector<std::uint32_t>& usable) {
  constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  const auto& levels = cluster.weight_levels();
  const std::size_t words = available.size();
  assert(words == cluster.node_words());
  // A level succeeds exactly when one of its nodes (weight at most its own) has all the CPUs: the
  // first level that can is that of the lightest such node, and the levels below it are skipped.
  // Levels are searched lightest first, each over its own nodes, until one has such a node.
  std::size_t first = levels.size();
  for (std::size_t level = 0; level < levels.size() && first == levels.size(); ++level) {
    const auto* mask = cluster.nodes_up_to_level(level);
    const auto* below = level > 0 ? cluster.nodes_up_to_level(level - 1) : nullptr;
    for (std::size_t w = 0; w < words && first == levels.size(); ++w)
      for (auto bits = available[w] & mask[w] & ~(below != nullptr ? below[w] : 0); bits != 0;
           bits &= bits - 1) {
        const auto n = static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
        if (usable[n] >= r.total_cpus) {
          first = level;
          break;
        }
      }
  }
  for (std::size_t level = first; level < levels.size(); ++level) {
    // The nodes of weight at most this level's (all of them at the top level).
    const auto* mask = cluster.nodes_up_to_level(level);
    std::uint64_t best_cpus = 0;
    std::uint32_t best_node = kNone;
    std::uint64_t run_cpus = 0;
    std::uint32_t run_node = kNone;  // first node of the current run with all the CPUs
    std::uint32_t prev = kNone;      // last node of the current run
    const auto end_run = [&] {
      if (run_node != kNone && (best_node == kNone || run_cpus < best_cpus)) {
        best_cpus = run_cpus;
        best_node = run_node;
      }
    };
    for (std::size_t w = 0; w < words; ++w)
      for (auto bits = available[w] & mask[w]; bits != 0; bits &= bits - 1) {
        const auto n = static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
        const auto cpus = usable[n];
        if (cpus == 0) continue;
        if (prev == kNone || n != prev + 1) {
          end_run();
          run_cpus = 0;
          run_node = kNone;
        }
        run_cpus += cpus;
        if (run_node == kNone && cpus >= r.total_cpus) run_node = n;
        prev = n;
      }
    end_run();
    if (best_node != kNone) {
      const auto alloc = cluster.round_cpus(best_node, r.total_cpus);
      return std::vector<sim::NodeAlloc>{{best_node, alloc, cluster.memory_needed(best_node, r, alloc)}};
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::vector<sim::NodeAlloc>> select_nodes(const sim::ClusterState& cluster,
                                                        const sim::NodeRequest& r,
                                                        const std::vector<std::uint32_t>& candidates,
                                                        const std::vector<bool>& available) {
  auto& sc = scratch;
  sc.all.clear();
  const std::uint32_t per_node_ask = r.cpus_per_node > 0 ? r.cpus_per_node : r.total_cpus;
  for (auto n : candidates) {
    if (!available.empty() && !available[n]) continue;
    const auto cpus = cluster.usable_cpus(n, r, per_node_ask);
    if (cpus > 0) sc.all.push_back({n, cpus, cluster.node_weight(n)});
  }
  return choose(cluster, r, sc);
}

std::optional<std::vector<sim::NodeAlloc>> select_nodes(const sim::ClusterState& cluster,
                                                        const sim::NodeRequest& r,
                                                        const std::vector<std::uint32_t>& candidates,
                                                        const std::vector<std::uint64_t>& available,
                                                        const std::vector<std::uint32_t>& usable) {
  auto& sc = scratch;
  sc.all.clear();
  for (auto n : candidates)
    if (((available[n >> 6] >> (n & 63)) & 1u) != 0 && usable[n] > 0)
      sc.all.push_back({n, usable[n], cluster.node_weight(n)});
  return choose(cluster, r, sc);
}

std::optional<std::vector<sim::NodeAlloc>> select_nodes(const sim::ClusterState& cluster,
                                                        const sim::NodeRequest& r,
                                                        const std::vector<std::uint64_t>& available,
                                                        const std::vector<std::uint32_t>& usable) {
  if (single_node_plain(r)) return choose_single(cluster, r, available, usable);
  auto& sc = scratch;
  sc.all.clear();
  for (std::size_t w = 0; w < available.size(); ++w)
    for (auto bits = available[w]; bits != 0; bits &= bits - 1) {
      const auto n = static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
      if (usable[n] > 0) sc.all.push_back({n, usable[n], cluster.node_weight(n)});
    }
  return choose(cluster, r, sc);
}

}  // namespace slurmtwin::policies
