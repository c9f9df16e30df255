// slurmtwin config import|show|check
#include <fmt/format.h>

#include <iostream>

#include "experiments/cli.hpp"
#include "experiments/site_options.hpp"
#include "traces/site_yaml.hpp"

namespace slurmtwin::cli {
namespace {

std::string site_summary(const Site& s) {
  std::uint64_t cpus = 0;
  for (const auto& n : s.nodes) cpus += n.cpus;
  std::string out =
      fmt::format("cluster {}: {} nodes, {} CPUs, {} partitions, {} QOS, {} accounts, {} user associations\n",
                  s.cluster_name, s.nodes.size(), cpus, s.partitions.size(), s.qos.size(), s.accounts.size(),
                  s.associations.size());
  for (const auto& p : s.partitions)
    out += fmt::format("  partition {:<20} {:>5} nodes  tier {:<5} job factor {}\n", p.name, p.nodes.size(),
                       p.priority_tier, p.priority_job_factor);
  for (const auto& q : s.qos) out += fmt::format("  qos {:<26} priority {}\n", q.name, q.priority);
  const auto& w = s.scheduler;
  out += fmt::format("  weights: age {} fairshare {} jobsize {} partition {} qos {} assoc {}\n", w.weight_age,
                     w.weight_fairshare, w.weight_job_size, w.weight_partition, w.weight_qos, w.weight_assoc);
  return out;
}

/// Where each setting came from: set ones with file:line, then the modelled settings no file sets.
std::string sources_table(const std::vector<SettingSource>& sources) {
  std::string out = "where each setting came from (the last file that sets it wins):\n";
  std::string unset;
  for (const auto& s : sources) {
    if (s.where.empty()) {
      unset += (unset.empty() ? "" : ", ") + s.setting;
      continue;
    }
    auto value = s.value.size() > 48 ? s.value.substr(0, 45) + "..." : s.value;
    out += fmt::format("  {:<28} {:<48} {}\n", s.setting, value, s.where);
  }
  if (!unset.empty()) out += "set in no file (Slurm's default): " + unset + "\n";
  return out;
}

int config_import(const Args& args) {
  po::options_description o("config import options");
  o.add_options()("output,o", po::value<std::string>()->required(), "site YAML to write");
  add_site_options(o);
  const auto vm = parse(
      "slurmtwin config import --slurm-conf slurm.conf | --scontrol-config F [--scontrol-nodes F "
      "--scontrol-partitions F] [--gres-conf F] [--qos-dump F] [--sacctmgr F | --sacctmgr-dump F | "
      "--assoc-dump F] -o site.yaml",
      o, args);
  if (vm["slurm-conf"].as<std::string>().empty() && vm["scontrol-config"].as<std::string>().empty())
    throw po::error("--slurm-conf or --scontrol-config is required");
  std::vector<std::string> warnings;
  std::vector<SettingSource> sources;
  const auto site = load_site(vm, warnings, &sources);
  for (const auto& w : warnings) std::cerr << "warning: " << w << "\n";
  save_site_yaml(site, vm["output"].as<std::string>());
  std::cout << site_summary(site) << sources_table(sources);
  return kExitOk;
}

int config_show(const Args& args, bool check_only) {
  po::options_description o("config show options");
  add_site_options(o);
  const auto vm = parse(
      check_only ? "slurmtwin config check --site site.yaml | --slurm-conf ..."
                 : "slurmtwin config show [--site site.yaml | --slurm-conf ...] (default: built-in site)",
      o, args);
  std::vector<std::string> warnings;
  const auto site = load_site(vm, warnings);
  validate(site);
  for (const auto& w : warnings) std::cerr << "warning: " << w << "\n";
  if (check_only)
    std::cout << "ok: " << site_summary(site);
  else
    std::cout << site_to_yaml(site);
  return kExitOk;
}

}  // namespace

int run_config(const Args& args) {
  return guarded([&]() -> int {
    const std::string usage =
        "usage: slurmtwin config import|show|check [options]   (slurmtwin config SUB --help)\n"
        "  import  slurm.conf or scontrol show output (+gres.conf) + sacctmgr data -> site YAML\n"
        "  show    print a site as YAML (the built-in default when no site is given)\n"
        "  check   validate a site and print its summary\n";
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
      std::cout << usage;
      return args.empty() ? kExitUsage : kExitOk;
    }
    const Args rest(args.begin() + 1, args.end());
    if (args[0] == "import") return config_import(rest);
    if (args[0] == "show") return config_show(rest, false);
    if (args[0] == "check") return config_show(rest, true);
    std::cerr << "slurmtwin config: unknown subcommand '" << args[0] << "'\n" << usage;
    return kExitUsage;
  });
}

}  // namespace slurmtwin::cli
