#pragma once
// A site from the files its admins have: the cluster (slurm.conf and/or `scontrol show`) and the
// accounting database's QOS and association tree (a sacctmgr script, a `sacctmgr dump` file or
// `sacctmgr -P show assoc`, with `sacctmgr -P show qos`).
#include <string>
#include <vector>

#include "traces/site.hpp"
#include "traces/slurm_conf.hpp"

namespace slurmtwin {

struct SiteFiles {
  SlurmConfigFiles cluster;
  std::string qos_table;            // `sacctmgr -P show qos`
  std::string sacctmgr_script;      // sacctmgr commands (add/modify qos, account, user)
  std::string sacctmgr_dump;        // `sacctmgr dump CLUSTER file=F`
  std::string assoc_table;          // `sacctmgr -P show assoc`
  std::string reservations;         // `scontrol show reservation` or `sacctmgr -P show reservation`
  std::string node_events;          // `sacctmgr -P show event`
  std::string time_zone = "local";  // of the times the two above print (as sacct, local time)
  bool lenient = false;             // slurm.conf keys slurmctld does not know warn instead of stopping

  /// Every file named, in the order above.
  std::vector<std::string> paths() const;
  /// The common pair: a slurm.conf (+ gres.conf) and a sacctmgr script.
  static SiteFiles conf_and_script(std::string slurm_conf, std::string sacctmgr_script,
                                   std::string gres_conf = {});
};

/// Imports the cluster, then the QOS table, then at most one of the script, the dump and the
/// association table (std::invalid_argument when several are given), then the reservations and node
/// events, and validates the site.
/// `sources`, when given, says where each setting came from (import_slurm_config's list, then one
/// line for the QOS and one for the associations).
Site import_site(const SiteFiles& files, std::vector<std::string>& warnings,
                 std::vector<SettingSource>* sources = nullptr);

}  // namespace slurmtwin
