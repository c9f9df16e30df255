// topology/tree: topology.conf read as slurmctld reads it, and node choice as cons_tres's
// _eval_nodes_topo (Slurm 22.05.8 select/cons_tres/job_test.c) makes it. Expected nodes are worked out
// by hand from that code (the walk is in each comment), not from this implementation.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "policies/node_select.hpp"
#include "sim/cluster_state.hpp"
#include "test_support.hpp"
#include "traces/read_report.hpp"
#include "traces/site_yaml.hpp"
#include "traces/slurm_conf.hpp"
#include "traces/topology.hpp"

using namespace slurmtwin;

namespace {

// `nodes` nodes n1.. of 8 CPUs and 1000 MB, placed by `topology` (topology.conf lines).
Site tree_site(std::uint32_t nodes, const std::string& topology) {
  Site site;
  for (std::uint32_t i = 0; i < nodes; ++i) {
    Node n;
    n.name = fmt::format("n{}", i + 1);
    n.cpus = 8;
    n.real_memory_mb = 1000;
    site.nodes.push_back(n);
  }
  std::vector<std::string> warnings;
  site.scheduler.topology_plugin = "topology/tree";
  site.switches = read_topology_conf(topology, "topology.conf", site, warnings);
  return site;
}

// The cluster of `site` with busy[i] CPUs in use on node i.
sim::ClusterState with_busy(const Site& site, const std::vector<std::uint32_t>& busy) {
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

// Node names (1-based, "n3") of a choice; empty when none.
std::vector<std::string> chosen(const sim::ClusterState& cluster, const sim::NodeRequest& r) {
  std::vector<std::uint32_t> all(cluster.nodes().size());
  for (std::uint32_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<std::string> out;
  if (const auto alloc = policies::select_nodes(cluster, r, all))
    for (const auto& a : *alloc) out.push_back(fmt::format("n{}", a.node + 1));
  return out;
}

sim::NodeRequest nodes_cpus(std::uint32_t nodes, std::uint32_t cpus) {
  sim::NodeRequest r;
  r.min_nodes = r.max_nodes = nodes;
  r.total_cpus = cpus;
  r.mem_per_node_mb = 100;
  return r;
}

using Names = std::vector<std::string>;

const char* const kTwoLeaves =
    "SwitchName=s1 Nodes=n[1-2]\n"
    "SwitchName=s2 Nodes=n[3-4]\n"
    "SwitchName=top Switches=s[1-2]\n";

}  // namespace

TEST_CASE("topology/tree: whole leaves, the tightest that holds the nodes still needed") {
  const auto site = tree_site(4, kTwoLeaves);
  // A. -N1 -n8, all idle. Top switch: 'top' (the highest level with enough nodes). Leaves scanned in
  // file order with 1 node needed: s1 and s2 both hold it with 2 nodes each, a tie keeps s1; its
  // first node: n1.
  CHECK(chosen(with_busy(site, {}), nodes_cpus(1, 8)) == Names{"n1"});
  // B. The same with n1 busy: s1 has 1 candidate, s2 2: both fit, s1 is tighter: n2.
  CHECK(chosen(with_busy(site, {8}), nodes_cpus(1, 8)) == Names{"n2"});
  // C. -N2 -n16 with n1 and n3 busy: no leaf holds 2; neither fits, same parent, equal counts: s1
  // (n2); then 1 more: s2 is the only leaf left (n4).
  CHECK(chosen(with_busy(site, {8, 0, 8}), nodes_cpus(2, 16)) == Names{"n2", "n4"});
  // D. -N2 -n16 with n1 busy: s2 holds both, s1 does not: n3, n4, on one leaf. topology/flat takes
  // the run n[2-4] in order: n2, n3, across two leaves.
  CHECK(chosen(with_busy(site, {8}), nodes_cpus(2, 16)) == Names{"n3", "n4"});
  auto flat = site;
  flat.switches.clear();
  CHECK(chosen(with_busy(flat, {8}), nodes_cpus(2, 16)) == Names{"n2", "n3"});
  // TopologyParam=TopoOptional: no --switches in this model, so every job is placed as flat.
  auto optional = site;
  optional.scheduler.topology_param = {"TopoOptional"};
  CHECK(chosen(with_busy(optional, {8}), nodes_cpus(2, 16)) == Names{"n2", "n3"});
}

TEST_CASE("topology/tree: inside a leaf nodes go in node order, with no best fit by CPUs") {
  const auto site = tree_site(4, "SwitchName=s1 Nodes=n[1-4]\n");
  // n2 has 4 CPUs free, the others 8; a 4-CPU one-node job. Flat: the best-fitting node, n2. Tree:
  // the leaf's first node that can hold it, n1.
  sim::NodeRequest r = nodes_cpus(1, 4);
  CHECK(chosen(with_busy(site, {0, 4}), r) == Names{"n1"});
  auto flat = site;
  flat.switches.clear();
  CHECK(chosen(with_busy(flat, {0, 4}), r) == Names{"n2"});
  // A 6-CPU one-node job with 4 CPUs free on n1 and on n2: neither can hold it, so neither is a
  // candidate (can_job_run_on_node): n3.
  CHECK(chosen(with_busy(site, {4, 4}), nodes_cpus(1, 6)) == Names{"n3"});
}

TEST_CASE("select/cons_res under topology/tree: CPUs decide, and the best-fitting node of a leaf") {
  // select/cons_res's own _eval_nodes_topo (Slurm 20.02 and 22.05 select/cons_res/job_test.c), worked
  // by hand. Leaves s1 = n1, n2 and s2 = n3, n4 under top.
  auto site = tree_site(
      4, "SwitchName=s1 Nodes=n[1-2]\nSwitchName=s2 Nodes=n[3-4]\nSwitchName=top Switches=s[1-2]\n");
  site.scheduler.select_type = "select/cons_res";
  auto tres = site;
  tres.scheduler.select_type = "select/cons_tres";
  // n1 has 6 CPUs free, n2 4, n3 and n4 8; -N1 -n4. The lowest-level switch with the CPUs and the
  // fewest nodes: s1 and s2 both have 2 nodes, the first (s1). In s1 the node with the fewest CPUs that
  // hold 4: n2. (cons_tres takes s1's first node that can hold it: n1.)
  CHECK(chosen(with_busy(site, {2, 4}), nodes_cpus(1, 4)) == Names{"n2"});
  CHECK(chosen(with_busy(tres, {2, 4}), nodes_cpus(1, 4)) == Names{"n1"});
  // n1 with 2 CPUs free, n2 and n3 idle, n4 full; -N1 -n4. cons_res counts n1 although it cannot hold
  // the job (its can_job_run_on_node has no one-node test): s1 has 2 nodes, s2 1, so s2: n3. cons_tres
  // leaves n1 out: one node in each leaf, the first leaf: n2.
  CHECK(chosen(with_busy(site, {6, 0, 0, 8}), nodes_cpus(1, 4)) == Names{"n3"});
  CHECK(chosen(with_busy(tres, {6, 0, 0, 8}), nodes_cpus(1, 4)) == Names{"n2"});
  // n1 and n2 with 4 CPUs free, n3 8, n4 2. -N3 -n12: no leaf has 12 CPUs, so top (18, 4 nodes); of
  // its leaves neither suffices, so the one with more CPUs, s2 (10 vs 8); in it the node with the most
  // (none holds 12), n3: 8 (12 less one for each of the 2 nodes still needed leaves 10, so all 8),
  // then n4: 2. Then s1 suffices for the last 2 CPUs: n1 and n2 hold them, the first, n1 (it gives 2).
  const auto busy = with_busy(site, {4, 4, 0, 6});
  CHECK(chosen(busy, nodes_cpus(3, 12)) == Names{"n3", "n4", "n1"});
  // -N2 -n12: the same walk takes n3 (8) and n4 (2), 2 CPUs short, and may not take a third node.
  // choose_nodes drops the nodes with at most 1, 2, ... CPUs: at 2, n4 (fails again: s1 holds 8 of the
  // 12 on two nodes); at 4, n1 (two nodes left, the floor): top has n2 and n3; s2 (8 CPUs, but only
  // one node) before s1 (4): n3 gives 8, then s1 suffices for 4: n2.
  CHECK(chosen(busy, nodes_cpus(2, 12)) == Names{"n3", "n2"});
}

TEST_CASE("topology/tree: after the first leaf, the nearest one in hops") {
  // Three levels: L1 and L3 under A, L2 and L4 under B, A and B under R. -N3 on an idle cluster.
  // First leaf: none holds 3; comparing their parents (A and B, 4 nodes each, both hold 3, equal)
  // ties, so the first in file order, L1 (n1, n2). Then 1 more: every leaf holds it; L2 and L4 are
  // 4 hops from L1, L3 is 2 (via A): n5. Flat takes n1, n2, n3.
  const auto site = tree_site(8,
                              "SwitchName=L1 Nodes=n[1-2]\n"
                              "SwitchName=L2 Nodes=n[3-4]\n"
                              "SwitchName=L3 Nodes=n[5-6]\n"
                              "SwitchName=L4 Nodes=n[7-8]\n"
                              "SwitchName=A Switches=L1,L3\n"
                              "SwitchName=B Switches=L2,L4\n"
                              "SwitchName=R Switches=A,B\n");
  CHECK(chosen(with_busy(site, {}), nodes_cpus(3, 24)) == Names{"n1", "n2", "n5"});
  // With n1 busy: L1 has 1 candidate; L2 vs L1: parents B (4) and A (3) both hold 3, A is tighter:
  // L1 stays; L3 vs L1: same parent, neither holds 3, the larger (L3, 2) wins; L4 vs L3: parents B
  // (4) and A (3): A tighter, L3 stays. L3 gives n5, n6; then 1 more, nearest is L1 (2 hops): n2.
  CHECK(chosen(with_busy(site, {8}), nodes_cpus(3, 24)) == Names{"n5", "n6", "n2"});
}

TEST_CASE("topology/tree: nodes on no switch are never chosen") {
  const auto site = tree_site(4, "SwitchName=s1 Nodes=n[1-2]\n");
  CHECK(chosen(with_busy(site, {}), nodes_cpus(2, 16)) == Names{"n1", "n2"});
  CHECK(chosen(with_busy(site, {}), nodes_cpus(3, 24)).empty());
  CHECK(chosen(with_busy(site, {8}), nodes_cpus(1, 8)) == Names{"n2"});
  CHECK(chosen(with_busy(site, {8, 8}), nodes_cpus(1, 8)).empty());
}

TEST_CASE("topology.conf is read as slurmctld reads it, and refused where slurmctld does not start") {
  Site site = tree_site(4, kTwoLeaves);
  REQUIRE(site.switches.size() == 3);
  CHECK(site.switches[0] == Switch{"s1", {"n1", "n2"}, {}});
  CHECK(site.switches[2] == Switch{"top", {}, {"s1", "s2"}});
  CHECK(switch_levels(site.switches) == std::vector<std::uint32_t>{0, 0, 1});
  std::vector<std::string> warnings;
  // `scontrol show topology` prints the same with Level, and a higher switch's nodes (not read).
  const auto shown = read_topology_conf(
      "SwitchName=s1 Level=0 LinkSpeed=1 Nodes=n[1-2]\n"
      "SwitchName=s2 Level=0 LinkSpeed=1 Nodes=n[3-4]\n"
      "SwitchName=top Level=1 LinkSpeed=1 Nodes=n[1-4] Switches=s[1-2]\n",
      "topo.txt", site, warnings);
  CHECK(shown == site.switches);
  CHECK(warnings.empty());
  // Warnings, as slurmctld logs them: unknown node names dropped, nodes on no switch.
  const auto partial = read_topology_conf("switchname=s1 nodes=n[1-2],x9 # x9: not in slurm.conf\n",
                                          "topology.conf", site, warnings);
  CHECK(partial.front().nodes == Names{"n1", "n2"});
  REQUIRE(warnings.size() == 2);
  CHECK(warnings[0] == "topology.conf: switches name 1 node(s) slurm.conf lacks (first x9); ignored");
  CHECK(
      warnings[1] ==
      "topology.conf: switches lack access to 2 node(s) (first n3): topology/tree never places a job there");
  const auto refused = [&](const std::string& text) {
    try {
      read_topology_conf(text, "topology.conf", site, warnings);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refused("SwitchName=s1 Nodes=n1 Speed=5\n") ==
        "topology.conf:1: Speed: unknown topology.conf key (SwitchName, Switches, Nodes, LinkSpeed)");
  CHECK(refused("SwitchName=s1 Nodes=n1 Switches=s2\nSwitchName=s2 Nodes=n2\n") ==
        "topology.conf:1: Nodes: a switch has nodes or child switches, not both");
  CHECK(refused("SwitchName=s1 LinkSpeed=2\n") ==
        "topology.conf:1: SwitchName: a switch needs Nodes= or Switches=");
  CHECK(refused("SwitchName=s1 Nodes=n1\nSwitchName=s1 Nodes=n2\n") ==
        "topology.conf:2: SwitchName: switch 's1' defined twice");
  CHECK(refused("SwitchName=s1 Nodes=n1\nSwitchName=top Switches=s1,s9\n") ==
        "topology.conf:2: SwitchName: switch 'top' has invalid child 's9'");
  CHECK(refused("SwitchName=s1 Nodes=n1\nSwitchName=a Switches=b\nSwitchName=b Switches=a\n") ==
        "topology.conf:2: SwitchName: switch configuration is not a tree: switch 'a' is in a cycle");
  CHECK(refused("Nodes=n1 SwitchName=s1\n") == "topology.conf:1: Nodes: a line must start with SwitchName=");
  CHECK(refused("SwitchName=s1 Nodes=n[1-\n") == "topology.conf:1: Nodes: unbalanced '[' in hostlist 'n[1-'");
}

TEST_CASE(
    "TopologyPlugin=topology/tree reads the topology.conf beside slurm.conf, and its switches survive the "
    "site YAML") {
  const auto dir = testing::scratch_dir("topology");
  const auto conf = dir / "slurm.conf";
  std::ofstream(conf)
      << "ClusterName=t\nTopologyPlugin=topology/tree\nTopologyParam=topooptional,NoInAddrAny\n"
         "NodeName=n[1-4] CPUs=8 RealMemory=1000\nPartitionName=p Nodes=n[1-4] Default=YES\n";
  std::vector<std::string> warnings;
  // slurmctld does not start without it: the error names the line that asks for it.
  CHECK_THROWS_WITH_AS(import_slurm_conf(conf.string(), warnings),
                       doctest::Contains("slurm.conf:2: TopologyPlugin: topology/tree reads topology.conf: "),
                       InputError);
  std::ofstream(dir / "topology.conf") << kTwoLeaves;
  const auto site = import_slurm_conf(conf.string(), warnings);
  CHECK(site.scheduler.topology_plugin == "topology/tree");
  CHECK(site.scheduler.topology_param == std::set<std::string>{"NoInAddrAny", "TopoOptional"});
  CHECK(site.switches.size() == 3);
  CHECK_FALSE(site.places_by_switch());  // TopoOptional
  const auto yaml = site_to_yaml(site);
  CHECK(yaml.find("topology:\n  plugin: topology/tree") != std::string::npos);
  CHECK(yaml.find("{name: s1, nodes: \"n[1-2]\"}") != std::string::npos);
  CHECK(parse_site_yaml(yaml, "site.yaml") == site);
  // The site check refuses a switch naming an unknown node.
  auto bad = site;
  bad.switches[0].nodes.push_back("n9");
  CHECK_THROWS_WITH_AS(validate(bad), "switch 's1': unknown node 'n9'", std::invalid_argument);
  // Older and newer names of the flat plugin read as topology/flat, with no warning.
  std::ofstream(conf) << "TopologyPlugin=topology/none\nNodeName=n1 CPUs=8 RealMemory=1000\n"
                         "PartitionName=p Nodes=n1\n";
  warnings.clear();
  CHECK(import_slurm_conf(conf.string(), warnings).scheduler.topology_plugin == "topology/flat");
  CHECK(warnings.empty());
}

TEST_CASE("ub_medium's topology.conf: three leaf switches under TOP, the nodes slurm.conf lacks dropped") {
  const auto conf = testing::data_file("ub_medium/slurm.conf");
  if (conf.empty()) return;
  std::vector<std::string> warnings;
  const auto site = import_slurm_conf(conf, warnings);
  REQUIRE(site.switches.size() == 4);
  CHECK(site.places_by_switch());
  // topology.conf lists n[001-100] and m[001-100]; slurm.conf defines n[001-087] and m[001-096].
  CHECK(site.switches[0].name == "IBN");
  CHECK(site.switches[0].nodes.size() == 87 + 2);
  CHECK(site.switches[1].nodes.size() == 96);
  CHECK(site.switches[2].nodes.size() == 8 + 24);
  CHECK(site.switches[3].children == Names{"IBN", "IBM", "IBG"});
  CHECK(switch_levels(site.switches) == std::vector<std::uint32_t>{0, 0, 0, 1});
  CHECK(std::count_if(warnings.begin(), warnings.end(), [](const std::string& w) {
          return w.find("topology.conf: switches name 17 node(s) slurm.conf lacks (first n088)") !=
                 std::string::npos;
        }) == 1);
}
