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
  std::uint32_t cpus;    // CPUs the job could take here (before core rounding); an evaluation may lower it
  std::uint32_t weight;  // node Weight
};

/// A set of consecutive usable nodes of one Weight: [begin, end) in the usable list.
struct Set {
  std::size_t begin;
  std::size_t end;
  std::uint64_t cpus;
  std::uint32_t nodes;
  std::uint32_t weight;
};

// Reused between calls: select_nodes runs millions of times per replay (backfill will-run tests), and
// allocating these per call dominated it.
struct Scratch {
  std::vector<Usable> all;     // usable candidates in candidate order
  std::vector<Usable> usable;  // usable nodes of the weight levels tried so far, in node order
  std::vector<std::uint32_t> weights;
  std::vector<Set> sets;
  std::vector<std::uint32_t> avail;  // per usable node: CPUs this evaluation may take (0: none)
  std::vector<char> taken;
  std::vector<Usable> kept;
};
thread_local Scratch scratch;

/// One evaluation of `list` (usable nodes in node order), as cons_tres's _eval_nodes for topology/flat
/// (Slurm 22.05 select/cons_tres/job_test.c): sets of consecutive nodes of equal Weight; the set to
/// take from is the lowest-weight one, and among equal weights the tightest sufficient set, else the
/// largest; a set is taken node by node in order (the best-fitting single node when one more node is
/// needed), a node skipped when it is the last the job may use and cannot hold the rest; repeated
/// until the request is met. A node's CPUs cut to what the job still needs stay cut for the next
/// evaluation (Slurm keeps them in avail_res), so `list` is updated. Appends the choice to `out`.
bool evaluate(const sim::ClusterState& cluster, const sim::NodeRequest& r, std::vector<Usable>& list,
              Scratch& sc, std::vector<sim::NodeAlloc>& out) {
  const std::int64_t cpt = std::max<std::uint32_t>(1, r.cpus_per_task);
  const std::int64_t per_node_min = r.cpus_per_node > 0 ? r.cpus_per_node : cpt;
  std::int64_t rem_cpus = r.total_cpus;
  std::int64_t rem_max_cpus = r.total_cpus;
  std::int64_t rem_nodes = r.min_nodes;
  std::int64_t max_nodes = r.node_bound();
  out.clear();
  sc.sets.clear();
  sc.avail.resize(list.size());
  sc.taken.assign(list.size(), 0);
  for (std::size_t k = 0; k < list.size(); ++k) {
    sc.avail[k] = list[k].cpus;
    if (sc.sets.empty() || list[k - 1].node + 1 != list[k].node || list[k - 1].weight != list[k].weight)
      sc.sets.push_back({k, k, 0, 0, list[k].weight});
    auto& set = sc.sets.back();
    set.end = k + 1;
    set.cpus += list[k].cpus;
    ++set.nodes;
  }
  while (max_nodes > 0) {
    // The set to take from (the order of the conditions is Slurm's).
    std::size_t best = 0;
    std::uint32_t best_nodes = 0;
    std::uint64_t best_cpus = 0;
    bool best_sufficient = false;
    for (std::size_t i = 0; i < sc.sets.size(); ++i) {
      const auto& set = sc.sets[i];
      if (set.nodes == 0) continue;
      const bool sufficient = static_cast<std::int64_t>(set.cpus) >= rem_cpus && set.nodes >= rem_nodes;
      bool new_best = best_nodes == 0 || set.weight < sc.sets[best].weight;
      if (!new_best && set.weight == sc.sets[best].weight &&
          ((sufficient && !best_sufficient) || (sufficient && set.cpus < best_cpus) ||
           (!sufficient && set.cpus > best_cpus)))
        new_best = true;
      if (new_best) {
        best = i;
        best_nodes = set.nodes;
        best_cpus = set.cpus;
        best_sufficient = sufficient;
      }
    }
    if (best_nodes == 0) break;
    auto& set = sc.sets[best];
    if (rem_nodes <= 1) {  // one node may do: the one with the fewest CPUs that holds the rest
      std::size_t fit = set.end;
      for (std::size_t k = set.begin; k < set.end; ++k) {
        if (sc.taken[k] || sc.avail[k] < rem_cpus) continue;
        if (fit == set.end || sc.avail[k] < sc.avail[fit]) {
          fit = k;
          if (sc.avail[k] == rem_cpus) break;
        }
      }
      if (fit != set.end)
        for (std::size_t k = set.begin; k < set.end; ++k)
          if (k != fit) sc.avail[k] = 0;
    }
    for (std::size_t k = set.begin; k < set.end; ++k) {
      if (max_nodes == 0 || (rem_nodes <= 0 && rem_cpus <= 0)) break;
      if (sc.taken[k] || sc.avail[k] == 0) continue;
      std::int64_t cpus = sc.avail[k];
      if (max_nodes == 1 && cpus < rem_cpus) continue;  // the last node it may use cannot hold the rest
      if (!r.exclusive) {
        // Leave one task for each node still needed after this one (_cpus_to_use).
        const std::int64_t most = rem_max_cpus - std::max<std::int64_t>(rem_nodes - 1, 0) * cpt;
        if (cpus > most) {
          cpus = std::max(most, per_node_min);
          list[k].cpus = static_cast<std::uint32_t>(cpus);
        }
      }
      const auto node = list[k].node;
      const auto alloc =
          r.exclusive ? cluster.node(node).cpus : cluster.round_cpus(node, static_cast<std::uint32_t>(cpus));
      out.push_back({node, alloc, cluster.memory_needed(node, r, alloc)});
      sc.taken[k] = 1;
      rem_cpus -= cpus;
      rem_max_cpus -= cpus;
      --rem_nodes;
      --max_nodes;
    }
    if (rem_nodes <= 0 && rem_cpus <= 0) return true;
    set.cpus = 0;
    set.nodes = 0;
  }
  return rem_nodes <= 0 && rem_cpus <= 0;
}

/// cons_tres's choose_nodes: evaluate `list`; when that fails, drop the nodes with the fewest usable
/// CPUs (up to 1, 2, ... CPUs, in node order, never below the request's node count) and evaluate
/// again, so that small leftovers do not keep a multi-node job from a set that fits it.
bool choose_nodes(const sim::ClusterState& cluster, const sim::NodeRequest& r, std::vector<Usable>& list,
                  Scratch& sc, std::vector<sim::NodeAlloc>& out) {
  if (list.size() < r.min_nodes) return false;
  if (evaluate(cluster, r, list, sc, out)) return true;
  // Dropping nodes never helps when one node must hold it all or the CPUs are short anyway.
  if (list.size() <= r.min_nodes || r.node_bound() <= 1) return false;
  std::uint64_t sum = 0;
  std::uint32_t most = 0;
  for (const auto& u : list) {
    sum += u.cpus;
    most = std::max(most, u.cpus);
  }
  if (sum < r.total_cpus) return false;
  // Slurm tries every count from 1 up; a count that drops nothing is skipped (but 1 is evaluated), so
  // going from one count to the next that drops something chooses the same.
  for (std::uint32_t count = 1; count < most;) {
    sc.kept.clear();
    std::size_t remaining = list.size();
    for (const auto& u : list) {
      if (u.cpus <= count && remaining > r.min_nodes) {
        --remaining;
        continue;
      }
      sc.kept.push_back(u);
    }
    list.swap(sc.kept);
    if (evaluate(cluster, r, list, sc, out)) return true;
    if (list.size() <= r.min_nodes) return false;
    std::uint32_t least = most;
    for (const auto& u : list) least = std::min(least, u.cpus);
    count = std::max(count + 1, least);
  }
  return false;
}

/// select_nodes over the usable candidates in `sc.all` (candidate order).
std::optional<std::vector<sim::NodeAlloc>> choose(const sim::ClusterState& cluster, const sim::NodeRequest& r,
                                                  Scratch& sc) {
  // No weight level at all, or none with enough nodes.
  if (sc.all.empty() || sc.all.size() < r.min_nodes) return std::nullopt;
  // slurmctld tries the nodes of the lowest Weight first, then adds the next Weight, and so on
  // (_pick_best_nodes); each try starts from the nodes' own usable CPUs.
  const auto by_node = [](const Usable& a, const Usable& b) { return a.node < b.node; };
  // Distinct weights: sites have a handful, so a linear search per node beats sorting all of them.
  sc.weights.clear();
  for (const auto& u : sc.all)
    if (std::find(sc.weights.begin(), sc.weights.end(), u.weight) == sc.weights.end())
      sc.weights.push_back(u.weight);
  std::sort(sc.weights.begin(), sc.weights.end());
  std::vector<sim::NodeAlloc> out;
  for (const auto weight : sc.weights) {
    sc.usable.clear();
    for (const auto& u : sc.all)
      if (u.weight <= weight) sc.usable.push_back(u);
    if (!std::is_sorted(sc.usable.begin(), sc.usable.end(), by_node))
      std::sort(sc.usable.begin(), sc.usable.end(), by_node);
    if (choose_nodes(cluster, r, sc.usable, sc, out)) return out;
  }
  return std::nullopt;
}

/// The request takes all its CPUs on one node and evaluate() treats it simply: the node it gets is
/// the best-fitting one of the first set (in evaluate's order of sets) that has a node with them all.
bool single_node_plain(const sim::NodeRequest& r) {
  return r.node_bound() == 1 && r.min_nodes <= 1 && !r.exclusive && r.cpus_per_node == 0 && r.total_cpus > 0;
}

/// choose() for a single_node_plain request over the nodes set in `available` (ascending), without
/// listing them. Sets of nodes of a Weight lower than the lightest node that can hold the job have no
/// such node and fail; at that Weight (the first level that succeeds) evaluate() tries the sufficient
/// sets tightest first, so the one chosen is the tightest set of that Weight with a node that holds
/// it all (the first among equals), and in it the node with the fewest usable CPUs that holds it all.
std::optional<std::vector<sim::NodeAlloc>> choose_single(const sim::ClusterState& cluster,
                                                         const sim::NodeRequest& r,
                                                         const std::vector<std::uint64_t>& available,
                                                         const std::vector<std::uint32_t>& usable) {
  constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  const std::size_t words = available.size();
  assert(words == cluster.node_words());
  const auto for_each_node = [&](auto&& visit) {
    for (std::size_t w = 0; w < words; ++w)
      for (auto bits = available[w]; bits != 0; bits &= bits - 1)
        visit(static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits))));
  };
  std::uint32_t weight = kNone;  // the lightest Weight of a node that holds it all
  for_each_node([&](std::uint32_t n) {
    if (usable[n] >= r.total_cpus) weight = std::min(weight, cluster.node_weight(n));
  });
  if (weight == kNone) return std::nullopt;
  std::uint64_t best_cpus = 0;
  std::uint32_t best_node = kNone;
  std::uint64_t set_cpus = 0;
  std::uint32_t set_node = kNone;  // best-fitting node of the current set that holds it all
  std::uint32_t prev = kNone;      // last node of the current set
  const auto end_set = [&] {
    if (set_node != kNone && (best_node == kNone || set_cpus < best_cpus)) {
      best_cpus = set_cpus;
      best_node = set_node;
    }
    set_cpus = 0;
    set_node = kNone;
    prev = kNone;
  };
  for_each_node([&](std::uint32_t n) {
    const auto cpus = usable[n];
    if (cpus == 0 || cluster.node_weight(n) != weight) return;
    if (prev == kNone || n != prev + 1) end_set();
    set_cpus += cpus;
    if (cpus >= r.total_cpus && (set_node == kNone || cpus < usable[set_node])) set_node = n;
    prev = n;
  });
  end_set();
  const auto alloc = cluster.round_cpus(best_node, r.total_cpus);
  return std::vector<sim::NodeAlloc>{{best_node, alloc, cluster.memory_needed(best_node, r, alloc)}};
}

}  // namespace

std::optional<std::vector<sim::NodeAlloc>> select_nodes(const sim::ClusterState& cluster,
                                                        const sim::NodeRequest& r,
                                                        const std::vector<std::uint32_t>& candidates,
                                                        const std::vector<bool>& available) {
  auto& sc = scratch;
  sc.all.clear();
  for (auto n : candidates) {
    if (!available.empty() && !available[n]) continue;
    const auto cpus = cluster.usable_cpus(n, r, r.per_node_ask());
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

bool fits_when_idle(const sim::ClusterState& cluster, const sim::NodeRequest& request,
                    const std::vector<std::uint32_t>& candidates, const std::vector<bool>& excluded) {
  std::vector<std::uint64_t> avail(cluster.node_words(), 0);
  std::vector<std::uint32_t> usable(cluster.nodes().size(), 0);
  for (const auto n : candidates) {
    if (!excluded.empty() && excluded[n]) continue;
    const auto& node = cluster.node(n);
    // usable_cpus is 0 for a node out of service, whatever state it is given.
    usable[n] = cluster.usable_cpus(n, request, request.per_node_ask(),
                                    sim::NodeFree{node.cpus, 0, node.memory_mb, false}, node.gres.data());
    avail[n / 64] |= std::uint64_t{1} << (n % 64);
  }
  return select_nodes(cluster, request, candidates, avail, usable).has_value();
}

}  // namespace slurmtwin::policies
