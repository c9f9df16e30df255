#pragma once
// Where a command gets its site from: --site site.yaml, or --slurm-conf (+ --gres-conf, --sacctmgr or
// --assoc-dump) imported on the fly, or the built-in default site.
#include <string>
#include <vector>

#include "experiments/cli.hpp"
#include "traces/site.hpp"

namespace slurmtwin::cli {

/// Adds --site, --slurm-conf, --gres-conf, --sacctmgr, --assoc-dump.
void add_site_options(po::options_description& options);
/// Loads the site the options name (the default site when none); import warnings go to `warnings`.
Site load_site(const po::variables_map& vm, std::vector<std::string>& warnings);
/// Imports slurm.conf (+gres.conf) and sacctmgr data, then validates the whole site.
Site import_site(const std::string& slurm_conf, const std::string& gres_conf, const std::string& sacctmgr,
                 const std::string& assoc_dump, std::vector<std::string>& warnings, bool lenient = false);

}  // namespace slurmtwin::cli
