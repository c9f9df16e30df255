#pragma once
// Where a command gets its site from: --site site.yaml, or the site's own files imported on the fly
// (slurm.conf and/or `scontrol show` output, with sacctmgr data), or the built-in default site.
#include <string>
#include <vector>

#include "experiments/cli/cli.hpp"
#include "traces/site.hpp"
#include "traces/site_import.hpp"

namespace slurmtwin::cli {

/// Adds --site, the site-file options (--slurm-conf, --scontrol-config, ...) and --lenient.
void add_site_options(po::options_description& options);
/// The site files the options name (all empty when none).
SiteFiles site_files_of(const po::variables_map& vm);
/// Loads the site the options name (the default site when none); import warnings go to `warnings`;
/// `sources`, when given, receives where each setting came from (imported sites only).
Site load_site(const po::variables_map& vm, std::vector<std::string>& warnings,
               std::vector<SettingSource>* sources = nullptr);

}  // namespace slurmtwin::cli
