#include "experiments/cli/site_options.hpp"

#include <fmt/format.h>

#include "traces/default_site.hpp"
#include "traces/site_yaml.hpp"

namespace slurmtwin::cli {

void add_site_options(po::options_description& o) {
  const auto file = [] { return po::value<std::string>()->default_value(""); };
  o.add_options()("site", file(), "site YAML (from `slurmtwin config import`)")(
      "slurm-conf", file(), "import the site from this slurm.conf instead")(
      "scontrol-config", file(),
      "`scontrol show config` output: the settings slurmctld runs with (with or instead of slurm.conf)")(
      "scontrol-nodes", file(), "`scontrol show nodes` output: replaces slurm.conf's NodeName lines")(
      "scontrol-partitions", file(), "`scontrol show partition` output: replaces its PartitionName lines")(
      "gres-conf", file(), "gres.conf to apply (default: beside slurm.conf)")(
      "topology-conf", file(),
      "topology.conf that TopologyPlugin=topology/tree reads (default: beside slurm.conf)")(
      "qos-dump", file(), "`sacctmgr -P show qos` output: the QOS")(
      "sacctmgr", file(), "sacctmgr script with QOS, accounts, users and shares")(
      "sacctmgr-dump", file(), "`sacctmgr dump CLUSTER file=F` flat file: accounts, users, shares, limits")(
      "assoc-dump", file(), "`sacctmgr -P show assoc` output: the associations")(
      "reservations", file(),
      "`scontrol show reservation` or `sacctmgr -P show reservation` output: advanced reservations "
      "(times in --timezone)")(
      "node-events", file(),
      "`sacctmgr -P show event` output: nodes DOWN or DRAINED and when (times in --timezone)")(
      "slurm-version", file(),
      "Slurm version whose defaults apply (e.g. 18.08: classic fair share unless PriorityFlags=FAIR_TREE); "
      "default: scontrol show config's, else 22.05")(
      "default-cpu-nodes", po::value<std::uint32_t>()->default_value(64),
      "size of the built-in default site (CPU nodes; +1/16 big-memory, +1/8 GPU nodes)")(
      "lenient", po::bool_switch(),
      "warn about slurm.conf keys slurmctld does not know (typos) instead of stopping");
}

SiteFiles site_files_of(const po::variables_map& vm) {
  const auto get = [&](const char* name) { return vm[name].as<std::string>(); };
  SiteFiles f;
  f.cluster.slurm_conf = get("slurm-conf");
  f.cluster.scontrol_config = get("scontrol-config");
  f.cluster.scontrol_nodes = get("scontrol-nodes");
  f.cluster.scontrol_partitions = get("scontrol-partitions");
  f.cluster.gres_conf = get("gres-conf");
  f.cluster.topology_conf = get("topology-conf");
  f.cluster.slurm_version = get("slurm-version");
  if (!f.cluster.slurm_version.empty()) {
    try {
      parse_slurm_version(f.cluster.slurm_version);
    } catch (const std::invalid_argument& e) {
      throw po::error(std::string("--slurm-version: ") + e.what());
    }
  }
  f.qos_table = get("qos-dump");
  f.sacctmgr_script = get("sacctmgr");
  f.sacctmgr_dump = get("sacctmgr-dump");
  f.assoc_table = get("assoc-dump");
  f.reservations = get("reservations");
  f.node_events = get("node-events");
  // Their times are local like sacct's: the trace's --timezone where the command has one.
  if (vm.count("timezone")) f.time_zone = vm["timezone"].as<std::string>();
  f.lenient = vm["lenient"].as<bool>();
  return f;
}

Site load_site(const po::variables_map& vm, std::vector<std::string>& warnings,
               std::vector<SettingSource>* sources) {
  const auto& yaml = vm["site"].as<std::string>();
  const auto files = site_files_of(vm);
  const bool imported = !files.cluster.slurm_conf.empty() || !files.cluster.scontrol_config.empty();
  if (!yaml.empty() && imported)
    throw po::error("give either --site or the site's files (--slurm-conf, --scontrol-config), not both");
  if (!imported && !files.paths().empty())
    throw po::error(
        "the site's files need --slurm-conf or --scontrol-config (the cluster's configuration) with them");
  if (!yaml.empty()) {
    Site site = load_site_yaml(yaml);
    for (auto& w : unenforced_limits(site)) warnings.push_back(fmt::format("{}: {}", yaml, w));
    return site;
  }
  if (!files.sacctmgr_script.empty() + !files.sacctmgr_dump.empty() + !files.assoc_table.empty() > 1)
    throw po::error("give the associations one way: --sacctmgr, --sacctmgr-dump or --assoc-dump");
  if (imported) return import_site(files, warnings, sources);
  const auto cpu_nodes = vm["default-cpu-nodes"].as<std::uint32_t>();
  if (cpu_nodes == 0 || cpu_nodes > kMaxDefaultCpuNodes)
    throw po::error(
        fmt::format("--default-cpu-nodes: expected 1..{}, not {}", kMaxDefaultCpuNodes, cpu_nodes));
  return scaled_default_site(cpu_nodes);
}

}  // namespace slurmtwin::cli
