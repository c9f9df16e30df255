// libFuzzer target: topology.conf read against the built-in default site; a tree it accepts then places
// jobs of several shapes on it (the switch choice must end and give what was asked or nothing).
#include "policies/node_select.hpp"
#include "sim/cluster_state.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "traces/default_site.hpp"
#include "traces/topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slurmtwin;
  static const Site kBase = [] {
    Site s = default_site();
    s.scheduler.topology_plugin = "topology/tree";
    return s;
  }();
  Site site = kBase;
  std::vector<std::string> warnings;
  try {
    site.switches = read_topology_conf(fuzz::as_text(data, size), fuzz::kFuzzFile, site, warnings);
  } catch (const InputError& e) {
    fuzz::check_error(e);
    return 0;
  }
  validate_topology(site);  // what the reader accepts, the site check accepts
  const sim::ClusterState cluster(site, true);
  std::vector<std::uint32_t> all(site.nodes.size());
  for (std::uint32_t i = 0; i < all.size(); ++i) all[i] = i;
  for (const std::uint32_t nodes : {1u, 2u, 5u}) {
    sim::NodeRequest r;
    r.min_nodes = r.max_nodes = nodes;
    r.total_cpus = nodes * 4;
    r.mem_per_node_mb = 100;
    if (const auto alloc = policies::select_nodes(cluster, r, all))
      if (alloc->size() != nodes) __builtin_trap();
  }
  return 0;
}
