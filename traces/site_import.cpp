#include "traces/site_import.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "traces/file_io.hpp"
#include "traces/sacctmgr.hpp"
#include "traces/site_events.hpp"

namespace slurmtwin {

std::vector<std::string> SiteFiles::paths() const {
  std::vector<std::string> out;
  for (const auto* p : {&cluster.slurm_conf, &cluster.scontrol_config, &cluster.scontrol_nodes,
                        &cluster.scontrol_partitions, &cluster.gres_conf, &cluster.topology_conf, &qos_table,
                        &sacctmgr_script, &sacctmgr_dump, &assoc_table, &reservations, &node_events})
    if (!p->empty()) out.push_back(*p);
  return out;
}

SiteFiles SiteFiles::conf_and_script(std::string slurm_conf, std::string sacctmgr_script,
                                     std::string gres_conf) {
  SiteFiles f;
  f.cluster.slurm_conf = std::move(slurm_conf);
  f.cluster.gres_conf = std::move(gres_conf);
  f.sacctmgr_script = std::move(sacctmgr_script);
  return f;
}

Site import_site(const SiteFiles& files, std::vector<std::string>& warnings,
                 std::vector<SettingSource>* sources) {
  const int accounting =
      !files.sacctmgr_script.empty() + !files.sacctmgr_dump.empty() + !files.assoc_table.empty();
  if (accounting > 1)
    throw std::invalid_argument(
        "give the associations one way: a sacctmgr script, a sacctmgr dump or a `sacctmgr show assoc` table");
  Site site = import_slurm_config(files.cluster, warnings, files.lenient, sources);
  if (!files.qos_table.empty()) import_qos_table(files.qos_table, site, warnings);
  std::string accounts_from;
  if (!files.sacctmgr_script.empty()) {
    import_sacctmgr_script(files.sacctmgr_script, site, warnings);
    accounts_from = files.sacctmgr_script;
  } else if (!files.sacctmgr_dump.empty()) {
    import_sacctmgr_dump(files.sacctmgr_dump, site, warnings);
    accounts_from = files.sacctmgr_dump;
  } else if (!files.assoc_table.empty()) {
    import_assoc_dump(files.assoc_table, site, warnings);
    accounts_from = files.assoc_table;
  }
  if (!files.reservations.empty() || !files.node_events.empty()) {
    const TimeZone zone(files.time_zone);
    if (!files.reservations.empty())
      site.reservations =
          read_reservations(read_input_file(files.reservations), files.reservations, zone, warnings);
    if (!files.node_events.empty()) {
      // After the nodes gres.conf made unusable from the start (import_slurm_config), if any.
      auto events = read_node_events(read_input_file(files.node_events), files.node_events, zone);
      site.outages.insert(site.outages.end(), events.begin(), events.end());
    }
  }
  validate(site);
  for (auto& w : unenforced_limits(site)) warnings.push_back(std::move(w));
  if (sources) {
    std::string names;
    for (const auto& q : site.qos) names += (names.empty() ? "" : ",") + q.name;
    const auto& qos_from = !files.qos_table.empty() ? files.qos_table : accounts_from;
    if (!qos_from.empty()) sources->push_back({"QOS", names, qos_from, SettingSource::Kind::kRecord});
    if (!accounts_from.empty())
      sources->push_back(
          {"associations",
           fmt::format("{} accounts, {} user associations", site.accounts.size(), site.associations.size()),
           accounts_from, SettingSource::Kind::kRecord});
    if (!files.reservations.empty())
      sources->push_back({"reservations", fmt::format("{}", site.reservations.size()), files.reservations,
                          SettingSource::Kind::kRecord});
    if (!files.node_events.empty())
      sources->push_back({"node outages", fmt::format("{}", site.outages.size()), files.node_events,
                          SettingSource::Kind::kRecord});
  }
  return site;
}

}  // namespace slurmtwin
