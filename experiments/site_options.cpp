#include "experiments/site_options.hpp"

#include "traces/default_site.hpp"
#include "traces/sacctmgr.hpp"
#include "traces/site_yaml.hpp"
#include "traces/slurm_conf.hpp"

namespace slurmtwin::cli {

void add_site_options(po::options_description& o) {
  o.add_options()("site", po::value<std::string>()->default_value(""),
                  "site YAML (from `slurmtwin config import`)")(
      "slurm-conf", po::value<std::string>()->default_value(""),
      "import the site from this slurm.conf instead")("gres-conf",
                                                      po::value<std::string>()->default_value(""),
                                                      "gres.conf to apply (default: beside slurm.conf)")(
      "sacctmgr", po::value<std::string>()->default_value(""),
      "sacctmgr script with QOS, accounts, users and shares")(
      "assoc-dump", po::value<std::string>()->default_value(""),
      "`sacctmgr show assoc -P` dump instead of a script")(
      "default-cpu-nodes", po::value<std::uint32_t>()->default_value(64),
      "size of the built-in default site (CPU nodes; +1/16 big-memory, +1/8 GPU nodes)")(
      "lenient", po::bool_switch(),
      "warn about slurm.conf keys slurmctld does not know (typos) instead of stopping");
}

Site import_site(const std::string& slurm_conf, const std::string& gres_conf, const std::string& sacctmgr,
                 const std::string& assoc_dump, std::vector<std::string>& warnings, bool lenient) {
  Site site = import_slurm_conf(slurm_conf, warnings, gres_conf, lenient);
  if (!sacctmgr.empty()) import_sacctmgr_script(sacctmgr, site, warnings);
  if (!assoc_dump.empty()) import_assoc_dump(assoc_dump, site, warnings);
  validate(site);
  return site;
}

Site load_site(const po::variables_map& vm, std::vector<std::string>& warnings) {
  const auto& yaml = vm["site"].as<std::string>();
  const auto& conf = vm["slurm-conf"].as<std::string>();
  if (!yaml.empty() && !conf.empty()) throw po::error("give either --site or --slurm-conf, not both");
  if (!yaml.empty()) return load_site_yaml(yaml);
  if (!conf.empty())
    return import_site(conf, vm["gres-conf"].as<std::string>(), vm["sacctmgr"].as<std::string>(),
                       vm["assoc-dump"].as<std::string>(), warnings, vm["lenient"].as<bool>());
  return scaled_default_site(vm["default-cpu-nodes"].as<std::uint32_t>());
}

}  // namespace slurmtwin::cli
