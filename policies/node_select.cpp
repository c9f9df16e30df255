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
  // topology/tree (evaluate_switches)
  std::vector<std::uint32_t> slot;  // per cluster node: its index in the list + 1; 0: not listed
  std::vector<std::uint32_t> topo_weights;
  std::vector<std::int64_t> count;         // per switch: candidate nodes under it
  std::vector<std::int64_t> cpu_count;     // per switch: their usable CPUs (cons_res)
  std::vector<char> outside;               // per switch (cons_res): has a listed node outside the top one
  std::vector<std::uint32_t> lightest;     // per switch: the lowest Weight of a candidate under it
  std::vector<char> required;              // per switch: holds a node taken before the leaves are chosen
  std::vector<std::uint32_t> dist;         // per switch: hops summed from the switches used (kFar sticky)
  std::vector<char> in_top, best, forced;  // per listed node
  // select_nodes_in's single-node path: the visited nodes (bitset) and their usable CPUs by node
  std::vector<std::uint64_t> bits;
  std::vector<std::uint32_t> usable_of;
  std::vector<std::uint32_t> holders;  // choose_single: the nodes that hold the job, ascending
};
thread_local Scratch scratch;

/// What the request still needs while an evaluation takes nodes one by one (cons_tres's rem_cpus,
/// rem_max_cpus, rem_nodes and max_nodes).
struct Need {
  std::int64_t cpt;           // CPUs per task
  std::int64_t per_node_min;  // the fewest CPUs a node it uses may give
  std::int64_t cpus;
  std::int64_t max_cpus;
  std::int64_t nodes;
  std::int64_t max_nodes;  // more nodes it may still take
  explicit Need(const sim::NodeRequest& r)
      : cpt(std::max<std::uint32_t>(1, r.cpus_per_task)),
        per_node_min(r.cpus_per_node > 0 ? r.cpus_per_node : cpt),
        cpus(r.total_cpus),
        max_cpus(r.total_cpus),
        nodes(r.min_nodes),
        max_nodes(r.node_bound()) {}
  bool met() const { return nodes <= 0 && cpus <= 0; }
  /// Takes node `u` with `avail` of its CPUs usable. Unless the job is exclusive it takes at most what
  /// leaves one task for each node still needed after this one (_cpus_to_use); that cut stays in `u`
  /// for the next evaluation (Slurm keeps it in avail_res).
  void take(const sim::ClusterState& cluster, const sim::NodeRequest& r, Usable& u, std::int64_t avail,
            std::vector<sim::NodeAlloc>& out) {
    if (!r.exclusive) {
      const std::int64_t most = max_cpus - std::max<std::int64_t>(nodes - 1, 0) * cpt;
      if (avail > most) {
        avail = std::max(most, per_node_min);
        u.cpus = static_cast<std::uint32_t>(avail);
      }
    }
    const auto alloc = r.exclusive ? cluster.node(u.node).cpus
                                   : cluster.round_cpus(u.node, static_cast<std::uint32_t>(avail));
    out.push_back({u.node, alloc, cluster.memory_needed(u.node, r, alloc)});
    cpus -= avail;
    max_cpus -= avail;
    --nodes;
    --max_nodes;
  }
};

/// One evaluation of `list` (usable nodes in node order), as cons_tres's _eval_nodes for topology/flat
/// (Slurm 22.05 select/cons_tres/job_test.c): sets of consecutive nodes of equal Weight; the set to
/// take from is the lowest-weight one, and among equal weights the tightest sufficient set, else the
/// largest; a set is taken node by node in order (the best-fitting single node when one more node is
/// needed), a node skipped when it is the last the job may use and cannot hold the rest; repeated
/// until the request is met. Cuts of CPUs stay in `list` (Need::take). Appends the choice to `out`.
/// select/cons_res's _eval_nodes is the same walk with sets that ignore Weight.
bool evaluate(const sim::ClusterState& cluster, const sim::NodeRequest& r, std::vector<Usable>& list,
              Scratch& sc, std::vector<sim::NodeAlloc>& out) {
  Need need(r);
  out.clear();
  sc.sets.clear();
  sc.avail.resize(list.size());
  sc.taken.assign(list.size(), 0);
  // select/cons_res's _eval_nodes does not split sets by Weight (_pick_best_nodes has already
  // limited the nodes to the Weights tried so far): one weight for all.
  const bool by_weight = !cluster.select_cons_res();
  for (std::size_t k = 0; k < list.size(); ++k) {
    sc.avail[k] = list[k].cpus;
    if (sc.sets.empty() || list[k - 1].node + 1 != list[k].node ||
        (by_weight && list[k - 1].weight != list[k].weight))
      sc.sets.push_back({k, k, 0, 0, by_weight ? list[k].weight : 0});
    auto& set = sc.sets.back();
    set.end = k + 1;
    set.cpus += list[k].cpus;
    ++set.nodes;
  }
  while (need.max_nodes > 0) {
    // The set to take from (the order of the conditions is Slurm's).
    std::size_t best = 0;
    std::uint32_t best_nodes = 0;
    std::uint64_t best_cpus = 0;
    bool best_sufficient = false;
    for (std::size_t i = 0; i < sc.sets.size(); ++i) {
      const auto& set = sc.sets[i];
      if (set.nodes == 0) continue;
      const bool sufficient = static_cast<std::int64_t>(set.cpus) >= need.cpus && set.nodes >= need.nodes;
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
    if (need.nodes <= 1) {  // one node may do: the one with the fewest CPUs that holds the rest
      std::size_t fit = set.end;
      for (std::size_t k = set.begin; k < set.end; ++k) {
        if (sc.taken[k] || sc.avail[k] < need.cpus) continue;
        if (fit == set.end || sc.avail[k] < sc.avail[fit]) {
          fit = k;
          if (sc.avail[k] == need.cpus) break;
        }
      }
      if (fit != set.end)
        for (std::size_t k = set.begin; k < set.end; ++k)
          if (k != fit) sc.avail[k] = 0;
    }
    for (std::size_t k = set.begin; k < set.end; ++k) {
      if (need.max_nodes == 0 || need.met()) break;
      if (sc.taken[k] || sc.avail[k] == 0) continue;
      // The last node it may use cannot hold the rest.
      if (need.max_nodes == 1 && static_cast<std::int64_t>(sc.avail[k]) < need.cpus) continue;
      need.take(cluster, r, list[k], sc.avail[k], out);
      sc.taken[k] = 1;
    }
    if (need.met()) return true;
    set.cpus = 0;
    set.nodes = 0;
  }
  return need.met();
}

/// cons_tres's _topo_compare_switches: > 0 when leaf `i` is the better place for `rem` more nodes
/// than leaf `j`. A switch that holds them all beats one that does not, the tighter of two that do;
/// when neither does, their parents are compared (up to a common one), then the larger count and
/// the lower level win.
int compare_switches(const sim::SwitchTree& tree, const std::vector<std::int64_t>& count, std::uint32_t i,
                     std::uint32_t j, std::int64_t rem) {
  // The walk up ends at the top switch (it holds them all) or at a common parent; the bound only
  // guards against a malformed tree.
  for (std::size_t steps = 0; steps <= 2 * tree.switches.size(); ++steps) {
    const bool i_fit = count[i] >= rem, j_fit = count[j] >= rem;
    if (i_fit && j_fit) {
      if (count[i] != count[j]) return count[i] < count[j] ? 1 : -1;
      break;
    }
    if (i_fit) return 1;
    if (j_fit) return -1;
    const auto pi = tree.switches[i].parent, pj = tree.switches[j].parent;
    if ((pi != i || pj != j) && pi != pj) {
      i = pi;
      j = pj;
      continue;
    }
    break;
  }
  if (count[i] != count[j]) return count[i] > count[j] ? 1 : -1;
  if (tree.switches[i].level != tree.switches[j].level)
    return tree.switches[i].level < tree.switches[j].level ? 1 : -1;
  return 0;
}

/// One evaluation of `list` under topology/tree, as cons_tres's _eval_nodes_topo (Slurm 22.05, no
/// required nodes, no --switches): the top switch is the highest-level switch with enough listed nodes
/// (the one whose lightest node is lightest among equals); its nodes of the lowest Weights are the
/// candidates, enough of them for the request, the lighter levels taken first when several are needed;
/// then whole leaf switches in turn: the tightest leaf that holds the nodes still needed, else the
/// largest, preferring leaves near those already used (hops); inside a leaf nodes go in node order,
/// with no best fit by CPUs. Appends the choice to `out`.
bool evaluate_switches(const sim::ClusterState& cluster, const sim::NodeRequest& r, std::vector<Usable>& list,
                       Scratch& sc, std::vector<sim::NodeAlloc>& out) {
  const auto& tree = cluster.switch_tree();
  const std::size_t switches = tree.switches.size();
  constexpr auto kNone = std::numeric_limits<std::size_t>::max();
  Need need(r);
  out.clear();
  sc.slot.resize(cluster.nodes().size(), 0);
  for (std::size_t k = 0; k < list.size(); ++k) sc.slot[list[k].node] = static_cast<std::uint32_t>(k + 1);
  const auto body = [&]() -> bool {
    // The top switch.
    sc.count.assign(switches, 0);
    sc.lightest.assign(switches, std::numeric_limits<std::uint32_t>::max());
    for (const auto& u : list)
      for (const auto i : tree.of_node[u.node]) {
        ++sc.count[i];
        sc.lightest[i] = std::min(sc.lightest[i], u.weight);
      }
    std::size_t top = kNone;
    std::uint32_t top_weight = 0;
    for (std::size_t i = 0; i < switches; ++i) {
      if (sc.count[i] == 0 || sc.count[i] < need.nodes) continue;
      if (top == kNone ||
          (tree.switches[i].level >= tree.switches[top].level && sc.lightest[i] <= top_weight)) {
        top = i;
        top_weight = sc.lightest[i];
      }
    }
    if (top == kNone) return false;
    sc.in_top.assign(list.size(), 0);
    for (std::size_t k = 0; k < list.size(); ++k) {
      const auto& under = tree.of_node[list[k].node];
      sc.in_top[k] = std::binary_search(under.begin(), under.end(), static_cast<std::uint32_t>(top));
    }
    // The candidates: the top switch's nodes by Weight level until they suffice; the levels below the
    // last one are all taken first.
    sc.topo_weights.clear();
    for (std::size_t k = 0; k < list.size(); ++k)
      if (sc.in_top[k]) sc.topo_weights.push_back(list[k].weight);
    std::sort(sc.topo_weights.begin(), sc.topo_weights.end());
    sc.topo_weights.erase(std::unique(sc.topo_weights.begin(), sc.topo_weights.end()), sc.topo_weights.end());
    sc.best.assign(list.size(), 0);
    sc.forced.assign(list.size(), 0);
    std::int64_t best_cpus = 0, best_nodes = 0;
    bool sufficient = false, any_forced = false;
    for (const auto w : sc.topo_weights) {
      if (sufficient) break;
      if (best_nodes > 0) {
        sc.forced = sc.best;
        any_forced = true;
      }
      for (std::size_t k = 0; k < list.size(); ++k)
        if (sc.in_top[k] && list[k].weight == w) {
          sc.best[k] = 1;
          best_cpus += list[k].cpus;
          ++best_nodes;
        }
      sufficient = best_cpus >= need.cpus && best_nodes >= need.nodes;
    }
    if (!sufficient) return false;
    sc.taken.assign(list.size(), 0);
    sc.required.assign(switches, 0);
    const auto take = [&](std::size_t k) {
      need.take(cluster, r, list[k], list[k].cpus, out);
      sc.taken[k] = 1;
    };
    if (any_forced) {
      for (std::size_t k = 0; k < list.size() && need.max_nodes > 0; ++k)
        if (sc.forced[k]) take(k);
      for (std::size_t k = 0; k < list.size(); ++k)
        if (sc.forced[k])
          for (const auto i : tree.of_node[list[k].node]) sc.required[i] = 1;
      if (need.met()) return true;
      if (need.max_nodes <= 0) return false;
    }
    // Per switch, the candidates under it (taken ones included).
    sc.count.assign(switches, 0);
    for (std::size_t k = 0; k < list.size(); ++k)
      if (sc.best[k])
        for (const auto i : tree.of_node[list[k].node]) ++sc.count[i];
    // Nodes of a leaf switch taken on `leaf`, in node order, until the request is met.
    const auto fill = [&](std::size_t leaf) {
      for (const auto node : tree.switches[leaf].nodes) {
        if (need.max_nodes <= 0) break;
        const auto k = sc.slot[node];
        if (k == 0 || !sc.best[k - 1] || sc.taken[k - 1] || list[k - 1].cpus == 0) continue;
        take(k - 1);
        if (need.met()) return true;
      }
      return false;
    };
    // First the rest of the leaves the forced nodes are on. (Slurm does not check max_nodes in this
    // loop; the guard in fill keeps a job within its node count.)
    if (any_forced)
      for (std::size_t i = 0; i < switches; ++i)
        if (sc.required[i] && tree.switches[i].level == 0 && fill(i)) return true;
    sc.dist.assign(switches, 0);
    const auto add_dist = [&](std::size_t from) {
      for (std::size_t i = 0; i < switches; ++i) {
        const auto d = tree.distance(from, i);
        sc.dist[i] = (d == sim::SwitchTree::kFar || sc.dist[i] == sim::SwitchTree::kFar)
                         ? sim::SwitchTree::kFar
                         : sc.dist[i] + d;
      }
    };
    for (std::size_t i = 0; i < switches; ++i)
      if (sc.required[i]) add_dist(i);
    // Then whole leaves, one at a time (_topo_choose_best_switch: a scan in switch order).
    for (std::int64_t prev = need.nodes + 1; prev != need.nodes;) {
      prev = need.nodes;
      std::size_t leaf = kNone;
      for (std::size_t i = 0; i < switches; ++i) {
        if (sc.required[i] || tree.switches[i].level != 0) continue;
        if (leaf == kNone || sc.dist[i] == sim::SwitchTree::kFar || sc.count[i] == 0) {
          if (leaf == kNone && sc.count[i] > 0 && sc.dist[i] != sim::SwitchTree::kFar) leaf = i;
          continue;
        }
        const int better = compare_switches(tree, sc.count, static_cast<std::uint32_t>(i),
                                            static_cast<std::uint32_t>(leaf), need.nodes);
        if ((sc.dist[i] < sc.dist[leaf] && better >= 0) || (sc.dist[i] == sc.dist[leaf] && better > 0))
          leaf = i;
      }
      if (leaf == kNone) break;
      add_dist(leaf);
      if (fill(leaf)) return true;
      sc.count[leaf] = 0;
    }
    return need.nodes <= 0 && need.cpus <= 0;
  };
  const bool ok = body();
  for (const auto& u : list) sc.slot[u.node] = 0;
  return ok;
}

/// One evaluation of `list` under topology/tree as select/cons_res's _eval_nodes_topo (the same in
/// Slurm 20.02 and 22.05; no required nodes, no --switches). Unlike cons_tres it counts CPUs: the
/// switch to place in is the lowest-level one with enough CPUs and nodes (the fewest nodes among equals,
/// the first in topology.conf order); then its leaves one at a time, the one with the fewest CPUs that
/// holds the rest (else the one with the most), and in a leaf the node with the fewest CPUs that holds
/// the rest (else the one with the most), the first in node order among equals. Appends to `out`.
bool evaluate_switches_cons_res(const sim::ClusterState& cluster, const sim::NodeRequest& r,
                                std::vector<Usable>& list, Scratch& sc, std::vector<sim::NodeAlloc>& out) {
  const auto& tree = cluster.switch_tree();
  const std::size_t switches = tree.switches.size();
  constexpr auto kNone = std::numeric_limits<std::size_t>::max();
  Need need(r);
  out.clear();
  // Per switch: the listed nodes under it and their CPUs (switches_node_cnt, switches_cpu_cnt).
  sc.count.assign(switches, 0);
  sc.cpu_count.assign(switches, 0);
  for (const auto& u : list)
    for (const auto i : tree.of_node[u.node]) {
      ++sc.count[i];
      sc.cpu_count[i] += u.cpus;
    }
  std::size_t top = kNone;
  for (std::size_t j = 0; j < switches; ++j) {
    if (sc.cpu_count[j] < need.cpus || sc.count[j] < need.nodes) continue;
    if (top == kNone || tree.switches[j].level < tree.switches[top].level ||
        (tree.switches[j].level == tree.switches[top].level && sc.count[j] < sc.count[top]))
      top = j;
  }
  if (top == kNone) return false;
  // The leaves whose listed nodes all lie under the top switch (in a tree: the leaves below it).
  const auto under = [&](std::uint32_t node, std::size_t i) {
    const auto& of = tree.of_node[node];
    return std::binary_search(of.begin(), of.end(), static_cast<std::uint32_t>(i));
  };
  sc.outside.assign(switches, 0);
  for (const auto& u : list)
    if (!under(u.node, top))
      for (const auto i : tree.of_node[u.node]) sc.outside[i] = 1;
  for (std::size_t j = 0; j < switches; ++j)
    if (tree.switches[j].level != 0 || sc.outside[j]) sc.count[j] = 0;
  sc.taken.assign(list.size(), 0);
  while (need.max_nodes > 0 && !need.met()) {
    std::size_t leaf = kNone;
    bool leaf_sufficient = false;
    for (std::size_t j = 0; j < switches; ++j) {
      if (sc.count[j] == 0) continue;
      const bool sufficient = sc.cpu_count[j] >= need.cpus && sc.count[j] >= need.nodes;
      if (leaf == kNone || (sufficient && !leaf_sufficient) ||
          (sufficient && sc.cpu_count[j] < sc.cpu_count[leaf]) ||
          (!sufficient && sc.cpu_count[j] > sc.cpu_count[leaf])) {
        leaf = j;
        leaf_sufficient = sufficient;
      }
    }
    if (leaf == kNone) break;
    // Its nodes by best fit: the fewest CPUs that hold the rest, else the most (node order on ties).
    sc.avail.assign(list.size(), 0);
    for (std::size_t k = 0; k < list.size(); ++k)
      if (!sc.taken[k] && under(list[k].node, leaf)) sc.avail[k] = list[k].cpus;
    while (need.max_nodes > 0 && !need.met()) {
      std::size_t fit = kNone;
      bool fit_sufficient = false;
      for (std::size_t k = 0; k < list.size(); ++k) {
        if (sc.avail[k] == 0) continue;
        const bool sufficient = static_cast<std::int64_t>(sc.avail[k]) >= need.cpus;
        if (fit == kNone || (sufficient && !fit_sufficient) || (sufficient && sc.avail[k] < sc.avail[fit]) ||
            (!sufficient && sc.avail[k] > sc.avail[fit])) {
          fit = k;
          fit_sufficient = sufficient;
        }
      }
      if (fit == kNone) break;
      const auto cpus = sc.avail[fit];
      sc.avail[fit] = 0;
      need.take(cluster, r, list[fit], cpus, out);
      sc.taken[fit] = 1;
    }
    sc.count[leaf] = 0;
  }
  return need.met();
}

/// _eval_nodes's choice between the flat and the switch evaluation.
bool evaluate_any(const sim::ClusterState& cluster, const sim::NodeRequest& r, std::vector<Usable>& list,
                  Scratch& sc, std::vector<sim::NodeAlloc>& out) {
  if (cluster.switch_tree().empty()) return evaluate(cluster, r, list, sc, out);
  return cluster.select_cons_res() ? evaluate_switches_cons_res(cluster, r, list, sc, out)
                                   : evaluate_switches(cluster, r, list, sc, out);
}

/// cons_tres's choose_nodes: evaluate `list`; when that fails, drop the nodes with the fewest usable
/// CPUs (up to 1, 2, ... CPUs, in node order, never below the request's node count) and evaluate
/// again, so that small leftovers do not keep a multi-node job from a set that fits it.
bool choose_nodes(const sim::ClusterState& cluster, const sim::NodeRequest& r, std::vector<Usable>& list,
                  Scratch& sc, std::vector<sim::NodeAlloc>& out) {
  if (list.size() < r.min_nodes) return false;
  if (evaluate_any(cluster, r, list, sc, out)) return true;
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
    if (evaluate_any(cluster, r, list, sc, out)) return true;
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
  // A job on one node leaves out the nodes that cannot hold it all (can_job_run_on_node's
  // min_cpus_per_node): they split the flat evaluation's sets of consecutive nodes and do not count
  // towards a switch.
  // (cons_tres only: select/cons_res's can_job_run_on_node has no such test.)
  const std::uint32_t least = r.node_bound() == 1 && !cluster.select_cons_res() ? r.total_cpus : 1;
  for (const auto weight : sc.weights) {
    sc.usable.clear();
    for (const auto& u : sc.all)
      if (u.weight <= weight && u.cpus >= least) sc.usable.push_back(u);
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

/// Calls `visit(n)` for every node set in `available`, ascending.
template <class Visit>
void for_each_set(const std::vector<std::uint64_t>& available, Visit&& visit) {
  for (std::size_t w = 0; w < available.size(); ++w)
    for (auto bits = available[w]; bits != 0; bits &= bits - 1)
      visit(static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits))));
}

constexpr std::uint32_t kNoNode = std::numeric_limits<std::uint32_t>::max();

/// The nodes set in `available` that hold all of a one-node job, ascending, into `holders`; returns
/// the lightest Weight among them (kNoNode: none). Only they are cons_tres's candidates for it
/// (choose()'s `least`), and choose() tries the Weight levels lightest first: the first level with one
/// is the level evaluated with candidates, the holders of that Weight. One pass without branches on
/// the CPUs (the backfill's will-run tests run it for most tests, over whole partitions).
std::uint32_t find_holders(const sim::ClusterState& cluster, const sim::NodeRequest& r,
                           const std::vector<std::uint64_t>& available,
                           const std::vector<std::uint32_t>& usable, std::vector<std::uint32_t>& holders) {
  holders.resize(cluster.nodes().size());
  std::size_t count = 0;
  std::uint32_t weight = kNoNode;
  for_each_set(available, [&](std::uint32_t n) {
    const bool holds = usable[n] >= r.total_cpus;
    holders[count] = n;
    count += holds ? 1 : 0;
    weight = std::min(weight, holds ? cluster.node_weight(n) : kNoNode);
  });
  holders.resize(count);
  return weight;
}

/// choose() under topology/flat (select/cons_tres) for a single_node_plain request whose candidates
/// are the `holders` of `weight`. The other nodes split sets; evaluate() tries the sets tightest first:
/// the one chosen is the set with the fewest CPUs (the first among equals), and in it the node with
/// the fewest usable CPUs.
std::vector<sim::NodeAlloc> choose_single_flat(const sim::ClusterState& cluster, const sim::NodeRequest& r,
                                               const std::vector<std::uint32_t>& holders,
                                               const std::vector<std::uint32_t>& usable,
                                               std::uint32_t weight) {
  std::uint64_t best_cpus = 0;
  std::uint32_t best_node = kNoNode;
  std::uint64_t set_cpus = 0;
  std::uint32_t set_node = kNoNode;  // best-fitting node of the current set
  std::uint32_t prev = kNoNode;      // last node of the current set
  const auto end_set = [&] {
    if (set_node != kNoNode && (best_node == kNoNode || set_cpus < best_cpus)) {
      best_cpus = set_cpus;
      best_node = set_node;
    }
    set_cpus = 0;
    set_node = kNoNode;
    prev = kNoNode;
  };
  for (const auto n : holders) {
    if (cluster.node_weight(n) != weight) continue;  // no candidate: splits sets (n != prev + 1 next)
    const auto cpus = usable[n];
    if (prev == kNoNode || n != prev + 1) end_set();
    set_cpus += cpus;
    if (set_node == kNoNode || cpus < usable[set_node]) set_node = n;
    prev = n;
  }
  end_set();
  const auto alloc = cluster.round_cpus(best_node, r.total_cpus);
  return {{best_node, alloc, cluster.memory_needed(best_node, r, alloc)}};
}

/// evaluate_switches worked through for a single_node_plain request (select/cons_tres) whose
/// candidates are the `holders` of `weight`. All candidates weigh the same, so the top switch is the
/// last in topology.conf order of the highest level above one of them; every leaf with a candidate
/// under it holds the one node still needed, so the tightest wins: the first leaf with the fewest
/// candidates under the top switch; in it nodes go in node order. nullopt when no candidate is under
/// a switch (evaluate_switches fails there and choose() goes on to heavier nodes).
std::optional<std::vector<sim::NodeAlloc>> choose_single_tree(const sim::ClusterState& cluster,
                                                              const sim::NodeRequest& r,
                                                              const std::vector<std::uint64_t>& available,
                                                              const std::vector<std::uint32_t>& holders,
                                                              const std::vector<std::uint32_t>& usable,
                                                              std::uint32_t weight) {
  const auto& tree = cluster.switch_tree();
  const std::size_t switches = tree.switches.size();
  constexpr auto kNone = std::numeric_limits<std::size_t>::max();
  auto& sc = scratch;
  sc.count.assign(switches, 0);
  for (const auto n : holders)
    if (cluster.node_weight(n) == weight)
      for (const auto i : tree.of_node[n]) ++sc.count[i];
  std::size_t top = kNone;
  for (std::size_t i = 0; i < switches; ++i)
    if (sc.count[i] > 0 && (top == kNone || tree.switches[i].level >= tree.switches[top].level)) top = i;
  if (top == kNone) return std::nullopt;
  const auto candidate = [&](std::uint32_t n) {
    const auto& of = tree.of_node[n];
    return cluster.node_weight(n) == weight &&
           std::binary_search(of.begin(), of.end(), static_cast<std::uint32_t>(top));
  };
  sc.count.assign(switches, 0);  // per leaf: candidates under the top switch
  for (const auto n : holders)
    if (candidate(n))
      for (const auto i : tree.of_node[n])
        if (tree.switches[i].level == 0) ++sc.count[i];
  std::size_t leaf = kNone;
  for (std::size_t i = 0; i < switches; ++i)
    if (tree.switches[i].level == 0 && sc.count[i] > 0 && (leaf == kNone || sc.count[i] < sc.count[leaf]))
      leaf = i;
  if (leaf == kNone) return std::nullopt;
  // The leaf's first candidate, in node order: a holder (available, holding the job) of that weight
  // under the top switch.
  for (const auto n : tree.switches[leaf].nodes) {
    const bool holder = ((available[n >> 6] >> (n & 63)) & 1u) != 0 && usable[n] >= r.total_cpus;
    if (!holder || !candidate(n)) continue;
    Need need(r);
    Usable u{n, usable[n], weight};
    std::vector<sim::NodeAlloc> out;
    need.take(cluster, r, u, u.cpus, out);
    return out;
  }
  return std::nullopt;
}

/// choose() for a single_node_plain request over the nodes set in `available` (ascending) with these
/// usable CPUs, without lists where the walk is worked out (select/cons_tres); `decided` false when
/// the general search must make the choice.
struct SingleChoice {
  bool decided = false;
  std::optional<std::vector<sim::NodeAlloc>> alloc;
};
SingleChoice choose_single(const sim::ClusterState& cluster, const sim::NodeRequest& r,
                           const std::vector<std::uint64_t>& available,
                           const std::vector<std::uint32_t>& usable) {
  assert(single_node_plain(r) && available.size() == cluster.node_words());
  // select/cons_res's one-node candidates include nodes that cannot hold the job: not worked out.
  if (cluster.select_cons_res()) return {};
  auto& holders = scratch.holders;
  const auto weight = find_holders(cluster, r, available, usable, holders);
  if (weight == kNoNode) return {true, std::nullopt};
  if (cluster.switch_tree().empty()) return {true, choose_single_flat(cluster, r, holders, usable, weight)};
  if (auto a = choose_single_tree(cluster, r, available, holders, usable, weight))
    return {true, std::move(a)};
  return {};
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
    // usable_cpus is 0 for a node without a free CPU: in a busy partition most nodes, rejected here
    // without the call (a partition scan per start attempt is the replay's hottest loop at scale).
    if (cluster.node(n).free_cpus == 0) continue;
    const auto cpus = cluster.usable_cpus(n, r, r.per_node_ask());
    if (cpus > 0) sc.all.push_back({n, cpus, cluster.node_weight(n)});
  }
  return choose(cluster, r, sc);
}

std::optional<std::vector<sim::NodeAlloc>> select_nodes_in(const sim::ClusterState& cluster,
                                                           const sim::NodeRequest& r,
                                                           const std::vector<std::uint64_t>& partition,
                                                           const std::vector<bool>& available) {
  assert(partition.size() == cluster.node_words());
  // A node can give at most its free CPUs, and choose() uses a one-node job's node only when it holds
  // all of the job: nodes with fewer free CPUs than that are of no use. Any other job uses a node
  // with a free CPU.
  const std::uint32_t least = std::max<std::uint32_t>(1, r.node_bound() == 1 ? r.total_cpus : 1);
  const auto& free = cluster.nodes_with_free(least);
  auto& sc = scratch;
  // The visited nodes' usable CPUs, as (node, CPUs) in node order.
  const auto visit = [&](auto&& keep) {
    for (std::size_t w = 0; w < partition.size(); ++w)
      for (auto bits = partition[w] & free[w]; bits != 0; bits &= bits - 1) {
        const auto n = static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
        if ((!available.empty() && !available[n]) || cluster.node(n).free_cpus < least) continue;
        if (const auto cpus = cluster.usable_cpus(n, r, r.per_node_ask()); cpus >= least) keep(n, cpus);
      }
  };
  if (single_node_plain(r) && !cluster.select_cons_res()) {  // no lists: choose_single
    sc.bits.assign(partition.size(), 0);
    sc.usable_of.resize(cluster.nodes().size());
    visit([&](std::uint32_t n, std::uint32_t cpus) {
      sc.bits[n / 64] |= std::uint64_t{1} << (n % 64);
      sc.usable_of[n] = cpus;
    });
    if (auto c = choose_single(cluster, r, sc.bits, sc.usable_of); c.decided) return std::move(c.alloc);
  }
  sc.all.clear();
  visit([&](std::uint32_t n, std::uint32_t cpus) { sc.all.push_back({n, cpus, cluster.node_weight(n)}); });
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
  if (single_node_plain(r))
    if (auto c = choose_single(cluster, r, available, usable); c.decided) return std::move(c.alloc);
  auto& sc = scratch;
  sc.all.clear();
  for (std::size_t w = 0; w < available.size(); ++w)
    for (auto bits = available[w]; bits != 0; bits &= bits - 1) {
      const auto n = static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
      if (usable[n] > 0) sc.all.push_back({n, usable[n], cluster.node_weight(n)});
    }
  return choose(cluster, r, sc);
}

std::optional<std::vector<sim::NodeAlloc>> select_when_idle(const sim::ClusterState& cluster,
                                                            const sim::NodeRequest& request,
                                                            const std::vector<std::uint32_t>& candidates,
                                                            const std::vector<bool>& excluded) {
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
  return select_nodes(cluster, request, candidates, avail, usable);
}

bool fits_when_idle(const sim::ClusterState& cluster, const sim::NodeRequest& request,
                    const std::vector<std::uint32_t>& candidates, const std::vector<bool>& excluded) {
  return select_when_idle(cluster, request, candidates, excluded).has_value();
}

}  // namespace slurmtwin::policies
