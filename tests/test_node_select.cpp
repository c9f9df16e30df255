// select_nodes given precomputed usable CPUs (the backfill planner's future profile) must choose
// exactly what select_nodes computing them from the cluster state chooses.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <random>

#include "policies/node_select.hpp"
#include "sim/cluster_state.hpp"
#include "traces/topology.hpp"

using namespace slurmtwin;

namespace {

// 40 nodes in mixed sizes, weights and GPU counts, so that weight levels, core rounding, memory and
// GRES all shape the choice.
Site mixed_site() {
  Site s;
  for (std::uint32_t i = 0; i < 40; ++i) {
    Node n;
    n.name = fmt::format("n{}", i);
    n.cpus = i % 3 == 0 ? 16 : 8;
    n.threads_per_core = i % 4 == 0 ? 2 : 1;
    n.real_memory_mb = 4000 + 1000 * (i % 2);
    n.weight = i % 5 == 0 ? 10 : 1;
    if (i % 7 == 0) n.gres.push_back({"gpu", "", 2});
    s.nodes.push_back(n);
  }
  return s;
}

bool same(const std::optional<std::vector<sim::NodeAlloc>>& a,
          const std::optional<std::vector<sim::NodeAlloc>>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  if (a->size() != b->size()) return false;
  for (std::size_t i = 0; i < a->size(); ++i)
    if ((*a)[i].node != (*b)[i].node || (*a)[i].cpus != (*b)[i].cpus || (*a)[i].mem_mb != (*b)[i].mem_mb)
      return false;
  return true;
}

// Makes each node available with probability (keep - 1) / keep, then checks that select_nodes over the
// available nodes' set bits (with their usable CPUs given) chooses what the general search over the
// same nodes chooses; returns that choice.
std::optional<std::vector<sim::NodeAlloc>> check_set_bits_path(const sim::ClusterState& cluster,
                                                               const sim::NodeRequest& r,
                                                               const std::vector<std::uint32_t>& all,
                                                               std::mt19937& rng, std::uint32_t keep) {
  std::vector<bool> available(all.size());
  std::vector<std::uint64_t> bits(cluster.node_words(), 0);
  std::vector<std::uint32_t> usable(all.size(), 0);
  for (auto n : all) {
    available[n] = std::uniform_int_distribution<std::uint32_t>(0, keep - 1)(rng) != 0;
    if (!available[n]) continue;
    bits[n >> 6] |= std::uint64_t{1} << (n & 63);
    usable[n] = cluster.usable_cpus(n, r, r.per_node_ask());
  }
  auto expected = policies::select_nodes(cluster, r, all, available);
  CHECK(same(expected, policies::select_nodes(cluster, r, bits, usable)));
  return expected;
}

}  // namespace

TEST_CASE("select_nodes with precomputed usable CPUs matches select_nodes") {
  const auto site = mixed_site();
  sim::ClusterState cluster(site, true);
  const auto gpu = cluster.gres_kind("gpu");
  std::mt19937 rng(12345);
  const auto pick = [&](std::uint32_t lo, std::uint32_t hi) {
    return std::uniform_int_distribution<std::uint32_t>(lo, hi)(rng);
  };
  std::vector<std::uint32_t> candidates;
  for (std::uint32_t n = 0; n < site.nodes.size(); ++n)
    if (n % 9 != 4) candidates.push_back(n);  // a partition that leaves some nodes out
  const auto random_request = [&] {
    sim::NodeRequest r;
    r.min_nodes = pick(1, 3);
    r.max_nodes = r.min_nodes + pick(0, 2);
    r.cpus_per_task = pick(1, 2);
    r.total_cpus = r.cpus_per_task * pick(1, 24);
    r.cpus_per_node = pick(0, 5) == 0 ? r.cpus_per_task * pick(1, 4) : 0;
    if (pick(0, 2) == 0)
      r.mem_per_cpu_mb = pick(50, 600);
    else
      r.mem_per_node_mb = pick(0, 4) == 0 ? -1 : pick(0, 3000);
    r.gres_per_node.assign(cluster.gres_kinds(), 0);
    if (pick(0, 5) == 0) r.gres_per_node[gpu] = pick(1, 2);
    r.exclusive = pick(0, 9) == 0;
    return r;
  };
  std::uint32_t fits = 0;
  for (int round = 0; round < 300; ++round) {
    // Load the cluster with jobs chosen by select_nodes itself, so the state is a reachable one.
    for (int k = 0; k < 3; ++k) {
      const auto r = random_request();
      if (auto a = policies::select_nodes(cluster, r, candidates)) cluster.allocate(r, *a);
    }
    const auto r = random_request();
    std::vector<bool> available(site.nodes.size());
    std::vector<std::uint64_t> bits((site.nodes.size() + 63) / 64, 0);
    std::vector<std::uint32_t> usable(site.nodes.size(), 0);
    const std::uint32_t ask = r.per_node_ask();
    for (auto n : candidates) {
      available[n] = pick(0, 3) != 0;
      if (!available[n]) continue;
      bits[n >> 6] |= std::uint64_t{1} << (n & 63);
      usable[n] = cluster.usable_cpus(n, r, ask);
    }
    const auto expected = policies::select_nodes(cluster, r, candidates, available);
    const auto got = policies::select_nodes(cluster, r, candidates, bits, usable);
    CHECK(same(expected, got));
    // The candidates are ascending, so the overload that visits the set bits must agree too.
    CHECK(same(expected, policies::select_nodes(cluster, r, bits, usable)));
    fits += expected ? 1 : 0;
    if (round % 10 == 9) cluster = sim::ClusterState(site, true);  // start over from an empty cluster
  }
  CHECK(fits > 30);  // the comparison covered successful choices, not only failures
}

// Single-node requests take a two-pass path (the lightest Weight that holds the job, then the tightest
// set of it and its best-fitting node) when the set bits are the candidates; it must choose what the general
// search chooses, across weight levels, core rounding and memory per CPU.
TEST_CASE("select_nodes over set bits: single-node requests match the general search") {
  const auto site = mixed_site();
  sim::ClusterState cluster(site, true);
  std::mt19937 rng(777);
  const auto pick = [&](std::uint32_t lo, std::uint32_t hi) {
    return std::uniform_int_distribution<std::uint32_t>(lo, hi)(rng);
  };
  std::vector<std::uint32_t> all(site.nodes.size());
  for (std::uint32_t n = 0; n < all.size(); ++n) all[n] = n;
  const auto random_request = [&] {
    sim::NodeRequest r;
    r.cpus_per_task = pick(1, 2);
    r.total_cpus = r.cpus_per_task * pick(1, 8);
    if (pick(0, 1) == 0)
      r.mem_per_cpu_mb = pick(50, 600);
    else
      r.mem_per_node_mb = pick(0, 3000);
    r.gres_per_node.assign(cluster.gres_kinds(), 0);
    return r;
  };
  std::uint32_t fits = 0;
  std::uint32_t misses = 0;
  std::uint32_t above_lowest = 0;  // chosen on a node above the lowest weight level
  for (int round = 0; round < 600; ++round) {
    for (int k = 0; k < 4; ++k) {
      const auto r = random_request();
      if (auto a = policies::select_nodes(cluster, r, all)) cluster.allocate(r, *a);
    }
    const auto expected = check_set_bits_path(cluster, random_request(), all, rng, 5);
    fits += expected ? 1 : 0;
    misses += expected ? 0 : 1;
    if (expected && site.nodes[expected->front().node].weight > 1) ++above_lowest;
    if (round % 15 == 14) cluster = sim::ClusterState(site, true);
  }
  CHECK(fits > 100);
  CHECK(misses > 20);
  CHECK(above_lowest > 5);
}

// The single-node path finds the lightest Weight with a node that holds the job and then walks the
// sets of that Weight only: on three interleaved levels over 150 nodes (three bitset words) it must
// still choose what the general search chooses, on every level.
TEST_CASE("select_nodes over set bits: single-node requests on three interleaved weight levels") {
  Site site;
  for (std::uint32_t i = 0; i < 150; ++i) {
    Node n;
    n.name = fmt::format("n{}", i);
    n.cpus = i % 4 == 0 ? 16 : 8;
    n.real_memory_mb = 4000;
    n.weight = i % 7 == 0 ? 30 : (i % 3 == 0 ? 20 : 5);
    site.nodes.push_back(n);
  }
  sim::ClusterState cluster(site, true);
  REQUIRE(cluster.weight_levels() == std::vector<std::uint32_t>{5, 20, 30});
  REQUIRE(cluster.node_words() == 3);
  std::mt19937 rng(4242);
  const auto pick = [&](std::uint32_t lo, std::uint32_t hi) {
    return std::uniform_int_distribution<std::uint32_t>(lo, hi)(rng);
  };
  std::vector<std::uint32_t> all(site.nodes.size());
  for (std::uint32_t n = 0; n < all.size(); ++n) all[n] = n;
  const auto random_request = [&] {
    sim::NodeRequest r;
    r.total_cpus = pick(1, 16);
    r.mem_per_cpu_mb = pick(0, 1) == 0 ? pick(50, 400) : 0;
    return r;
  };
  std::uint32_t chosen_on[3] = {0, 0, 0};  // choices per weight level
  std::uint32_t misses = 0;
  for (int round = 0; round < 800; ++round) {
    for (int k = 0; k < 12; ++k) {
      const auto r = random_request();
      if (auto a = policies::select_nodes(cluster, r, all)) cluster.allocate(r, *a);
    }
    const auto expected = check_set_bits_path(cluster, random_request(), all, rng, 6);
    if (expected) {
      const auto w = site.nodes[expected->front().node].weight;
      ++chosen_on[w == 5 ? 0 : (w == 20 ? 1 : 2)];
    } else {
      ++misses;
    }
    if (round % 20 == 19) cluster = sim::ClusterState(site, true);
  }
  CHECK(chosen_on[0] > 50);
  CHECK(chosen_on[1] > 10);
  CHECK(chosen_on[2] > 5);
  CHECK(misses > 10);
}

namespace {

// Four 8-CPU nodes with 1000 MB each; `busy[i]` CPUs (and 100 MB) already held on node i.
sim::ClusterState four_nodes(const std::vector<std::uint32_t>& busy) {
  Site site;
  for (std::uint32_t i = 0; i < 4; ++i) {
    Node n;
    n.name = fmt::format("n{}", i + 1);
    n.cpus = 8;
    n.real_memory_mb = 1000;
    site.nodes.push_back(n);
  }
  sim::ClusterState cluster(site, true);
  for (std::uint32_t i = 0; i < busy.size(); ++i) {
    if (busy[i] == 0) continue;
    sim::NodeRequest r;
    r.total_cpus = busy[i];
    r.mem_per_node_mb = 100;
    cluster.allocate(r, {{i, busy[i], 100}});
  }
  return cluster;
}

std::vector<std::uint32_t> nodes_of(const std::optional<std::vector<sim::NodeAlloc>>& alloc) {
  std::vector<std::uint32_t> out;
  if (alloc)
    for (const auto& a : *alloc) out.push_back(a.node);
  return out;
}

}  // namespace

// Real Slurm 22.05 (issue 22, finding 1): with n1 and n3 full, `-N2 -n16` started at once on n[2,4];
// a set of consecutive nodes is not required. By hand, _eval_nodes: sets {n2} and {n4} (8 CPUs each),
// neither sufficient; the largest (n2, first of equals) gives 8, then {n4} is sufficient for the rest.
TEST_CASE("select_nodes: a multi-node job takes nodes from several sets of consecutive nodes") {
  const auto cluster = four_nodes({8, 0, 8, 0});
  sim::NodeRequest r;
  r.min_nodes = r.max_nodes = 2;
  r.total_cpus = 16;
  r.mem_per_node_mb = 100;
  const auto alloc = policies::select_nodes(cluster, r, {0, 1, 2, 3});
  CHECK(nodes_of(alloc) == std::vector<std::uint32_t>{1, 3});
  // -n16 with no -N (up to 16 nodes): the same two nodes, 8 CPUs each.
  r.min_nodes = 1;
  r.max_nodes = 1u << 30;
  const auto spread = policies::select_nodes(cluster, r, {0, 1, 2, 3});
  REQUIRE(spread);
  CHECK(nodes_of(spread) == std::vector<std::uint32_t>{1, 3});
  CHECK((*spread)[0].cpus == 8);
  CHECK((*spread)[1].cpus == 8);
}

// _eval_nodes takes the node with the fewest free CPUs that holds a one-node job within the chosen
// set (its "best fit single node"): free 8, 4, 6, 8 and a 4-CPU job: one set, n2. A 5-CPU job: n2
// cannot hold it, so _select_nodes drops it from the node map before _eval_nodes (cons_tres
// can_job_run_on_node: min_cpus_per_node is the task count when max_nodes is 1), which splits the
// free nodes into sets {n1} (8 CPUs) and {n3, n4} (14): the tightest sufficient set is {n1}.
TEST_CASE("select_nodes: a one-node job gets the best-fitting node of its set") {
  const auto cluster = four_nodes({0, 4, 2, 0});
  sim::NodeRequest r;
  r.total_cpus = 4;
  r.mem_per_node_mb = 100;
  CHECK(nodes_of(policies::select_nodes(cluster, r, {0, 1, 2, 3})) == std::vector<std::uint32_t>{1});
  r.total_cpus = 5;
  CHECK(nodes_of(policies::select_nodes(cluster, r, {0, 1, 2, 3})) == std::vector<std::uint32_t>{0});
  // The set-bits path (the main scheduler's) agrees.
  std::vector<std::uint64_t> bits{0xF};
  std::vector<std::uint32_t> usable(4);
  for (std::uint32_t n = 0; n < 4; ++n) usable[n] = cluster.usable_cpus(n, r, r.per_node_ask());
  CHECK(nodes_of(policies::select_nodes(cluster, r, bits, usable)) == std::vector<std::uint32_t>{0});
}

// choose_nodes' retry: free 6, 8, 8, 8 and -N2 -n16. The first evaluation takes n1's 6 and then has
// one node left for 10 CPUs: none holds them. Dropping the nodes with at most 6 usable CPUs leaves
// n[2-4], where n2 and n3 hold 8 each.
TEST_CASE("select_nodes: small leftovers are dropped when they leave a bounded job short") {
  const auto cluster = four_nodes({2, 0, 0, 0});
  sim::NodeRequest r;
  r.min_nodes = r.max_nodes = 2;
  r.total_cpus = 16;
  r.mem_per_node_mb = 100;
  CHECK(nodes_of(policies::select_nodes(cluster, r, {0, 1, 2, 3})) == std::vector<std::uint32_t>{1, 2});
  // 3 nodes (-N3 -n20): n1's 6 fit (6 + 8 + 8 >= 20 with nodes to spare): n[1-3].
  r.min_nodes = r.max_nodes = 3;
  r.total_cpus = 20;
  CHECK(nodes_of(policies::select_nodes(cluster, r, {0, 1, 2, 3})) == std::vector<std::uint32_t>{0, 1, 2});
}

// select_nodes_in visits only the nodes that ClusterState's free-CPU index lists: through allocations,
// releases, suspensions, holds, resumptions and outages it must choose what the search over the
// partition's node list chooses, and the index must stay in step (check_invariants compares it with
// every node's free CPUs).
TEST_CASE("select_nodes_in over the free-CPU index matches the search over the partition's list") {
  Site site;
  for (std::uint32_t i = 0; i < 150; ++i) {  // three bitset words
    Node n;
    n.name = fmt::format("n{}", i);
    n.cpus = std::uint32_t{4} << (i % 4);  // 4, 8, 16, 32: every free-CPU class up to 32
    n.threads_per_core = i % 5 == 0 ? 2 : 1;
    n.real_memory_mb = 8000 + 4000 * (i % 3);
    n.weight = i % 6 == 0 ? 10 : 1;
    if (i % 9 == 0) n.gres.push_back({"gpu", "", 2});
    site.nodes.push_back(n);
  }
  sim::ClusterState cluster(site, true);
  const auto gpu = cluster.gres_kind("gpu");
  std::mt19937 rng(2811);
  const auto pick = [&](std::uint32_t lo, std::uint32_t hi) {
    return std::uniform_int_distribution<std::uint32_t>(lo, hi)(rng);
  };
  std::vector<std::uint32_t> partition;
  std::vector<std::uint64_t> bits(cluster.node_words(), 0);
  for (std::uint32_t n = 0; n < site.nodes.size(); ++n)
    if (n % 11 != 3) {
      partition.push_back(n);
      bits[n / 64] |= std::uint64_t{1} << (n % 64);
    }
  const auto random_request = [&] {
    sim::NodeRequest r;
    r.min_nodes = pick(0, 3) == 0 ? pick(2, 4) : 1;
    r.max_nodes = r.min_nodes + pick(0, 1);
    r.cpus_per_task = pick(1, 2);
    r.total_cpus = r.cpus_per_task * pick(1, 40);
    if (pick(0, 2) == 0)
      r.mem_per_cpu_mb = pick(50, 800);
    else
      r.mem_per_node_mb = pick(0, 4) == 0 ? -1 : pick(0, 6000);
    r.gres_per_node.assign(cluster.gres_kinds(), 0);
    if (pick(0, 6) == 0) r.gres_per_node[gpu] = 1;
    r.exclusive = pick(0, 9) == 0;
    return r;
  };
  struct Job {
    sim::NodeRequest r;
    std::vector<sim::NodeAlloc> alloc;
    std::vector<std::uint32_t> held;
  };
  std::vector<Job> running, suspended;
  std::vector<std::uint32_t> out;  // nodes with an outage in force
  const auto take = [&](std::vector<Job>& from) {
    const auto k = pick(0, static_cast<std::uint32_t>(from.size() - 1));
    auto job = std::move(from[k]);
    from.erase(from.begin() + k);
    return job;
  };
  std::uint32_t fits = 0, compared = 0, suspensions = 0, resumptions = 0, outages = 0;
  for (int round = 0; round < 3000; ++round) {
    const auto op = pick(0, 9);
    if (op <= 4) {
      auto r = random_request();
      if (auto a = policies::select_nodes(cluster, r, partition)) {
        cluster.allocate(r, *a);
        running.push_back({r, std::move(*a), {}});
      }
    } else if (op <= 6 && !running.empty()) {
      const auto job = take(running);
      cluster.release(job.r, job.alloc);
    } else if (op == 7 && !running.empty()) {
      auto job = take(running);
      cluster.suspend(job.alloc);
      job.held.clear();
      if (pick(0, 1) == 0) job.held = cluster.hold(job.alloc);  // its preemptor has started
      suspended.push_back(std::move(job));
      ++suspensions;
    } else if (op == 8 && !suspended.empty()) {
      const auto k = pick(0, static_cast<std::uint32_t>(suspended.size() - 1));
      if (cluster.can_resume(suspended[k].alloc, suspended[k].held)) {
        cluster.resume(suspended[k].alloc, suspended[k].held);
        running.push_back(std::move(suspended[k]));
        suspended.erase(suspended.begin() + k);
        ++resumptions;
      }
    } else if (op == 9) {
      if (!out.empty() && pick(0, 1) == 0) {
        cluster.set_outage(out.back(), false);
        out.pop_back();
      } else {
        out.push_back(pick(0, static_cast<std::uint32_t>(site.nodes.size() - 1)));
        cluster.set_outage(out.back(), true);
        ++outages;
      }
    }
    cluster.check_invariants();
    const auto r = random_request();
    std::vector<bool> available;
    if (pick(0, 1) == 0)
      for (std::uint32_t n = 0; n < site.nodes.size(); ++n) available.push_back(pick(0, 4) != 0);
    const auto expected = policies::select_nodes(cluster, r, partition, available);
    CHECK(same(expected, policies::select_nodes_in(cluster, r, bits, available)));
    ++compared;
    fits += expected ? 1 : 0;
  }
  CHECK(compared == 3000);
  CHECK(fits > 300);  // successful choices compared, not only failures
  CHECK(suspensions > 50);
  CHECK(resumptions > 20);
  CHECK(outages > 50);
}

// Under topology/tree (select/cons_tres) a single-node request takes a path without lists (the lightest
// Weight that holds it, the top switch, the tightest leaf, the first node of it); on random trees of
// three shapes (one top switch; two separate trees; a leaf directly under the top beside middle
// switches), with nodes on no switch and three Weight levels, the set-bits path and select_nodes_in
// must choose what the general search (evaluate_switches over lists) chooses.
TEST_CASE("select_nodes under topology/tree: single-node requests match the general search") {
  const char* const shapes[] = {
      "SwitchName=s1 Nodes=n[0-9]\nSwitchName=s2 Nodes=n[10-24]\nSwitchName=s3 Nodes=n[25-29]\n"
      "SwitchName=s4 Nodes=n[30-54]\nSwitchName=s5 Nodes=n[55-69]\nSwitchName=s6 Nodes=n[70-89]\n"
      "SwitchName=m1 Switches=s[1-3]\nSwitchName=m2 Switches=s[4-6]\nSwitchName=top Switches=m[1-2]\n",
      "SwitchName=s1 Nodes=n[0-29]\nSwitchName=s2 Nodes=n[30-44]\nSwitchName=t1 Switches=s[1-2]\n"
      "SwitchName=s3 Nodes=n[45-59]\nSwitchName=s4 Nodes=n[60-89]\nSwitchName=t2 Switches=s[3-4]\n",
      "SwitchName=s1 Nodes=n[0-19]\nSwitchName=s2 Nodes=n[20-39]\nSwitchName=m1 Switches=s[1-2]\n"
      "SwitchName=s3 Nodes=n[40-79]\nSwitchName=top Switches=m1,s3\n"};
  std::uint32_t fits = 0, misses = 0, above_lowest = 0;
  for (std::size_t shape = 0; shape < std::size(shapes); ++shape) {
    CAPTURE(shape);
    Site site;
    for (std::uint32_t i = 0; i < 100; ++i) {  // n90..n99 (and n80.. in the third) on no switch
      Node n;
      n.name = fmt::format("n{}", i);
      n.cpus = i % 3 == 0 ? 16 : 8;
      n.real_memory_mb = 4000;
      n.weight = i % 7 == 0 ? 30 : (i % 4 == 0 ? 20 : 5);
      site.nodes.push_back(n);
    }
    std::vector<std::string> warnings;
    site.scheduler.topology_plugin = "topology/tree";
    site.switches = read_topology_conf(shapes[shape], "topology.conf", site, warnings);
    sim::ClusterState cluster(site, true);
    REQUIRE_FALSE(cluster.switch_tree().empty());
    std::mt19937 rng(9100 + static_cast<unsigned>(shape));
    const auto pick = [&](std::uint32_t lo, std::uint32_t hi) {
      return std::uniform_int_distribution<std::uint32_t>(lo, hi)(rng);
    };
    std::vector<std::uint32_t> all(site.nodes.size());
    std::vector<std::uint64_t> partition(cluster.node_words(), 0);
    for (std::uint32_t n = 0; n < all.size(); ++n) {
      all[n] = n;
      partition[n / 64] |= std::uint64_t{1} << (n % 64);
    }
    const auto random_request = [&](std::uint32_t most_nodes) {
      sim::NodeRequest r;
      r.min_nodes = pick(0, 1);
      r.max_nodes = pick(1, most_nodes);
      r.cpus_per_task = pick(1, 2);
      r.total_cpus = r.cpus_per_task * pick(1, 8);
      r.mem_per_cpu_mb = pick(0, 1) == 0 ? pick(50, 400) : 0;
      return r;
    };
    for (int round = 0; round < 600; ++round) {
      for (int k = 0; k < 8; ++k) {
        const auto r = random_request(3);
        if (auto a = policies::select_nodes(cluster, r, all)) cluster.allocate(r, *a);
      }
      const auto r = random_request(1);
      const auto expected = check_set_bits_path(cluster, r, all, rng, 5);
      CHECK(same(policies::select_nodes(cluster, r, all),
                 policies::select_nodes_in(cluster, r, partition, {})));
      if (expected) {
        ++fits;
        if (site.nodes[expected->front().node].weight > 5) ++above_lowest;
      } else {
        ++misses;
      }
      if (round % 25 == 24) cluster = sim::ClusterState(site, true);
    }
  }
  CHECK(fits > 600);
  CHECK(misses > 30);
  CHECK(above_lowest > 30);
}
