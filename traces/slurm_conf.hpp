#pragma once
// slurm.conf and gres.conf importers: nodes, partitions and the cluster's scheduling settings.
// QOS and the association tree come from sacctmgr (traces/sacctmgr.hpp).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "traces/site.hpp"

namespace slurmtwin {

/// Where a setting came from, for `config import` to show, and what the simulator makes of it.
struct SettingSource {
  enum class Kind : std::uint8_t {
    kModelled,     // the simulator uses it
    kNotModelled,  // changes Slurm's scheduling, not modelled (each one warned, naming its effect)
    kNoEffect,     // known to Slurm, no effect on scheduling (paths, daemons, logging)
    kRecord,       // a NodeName / PartitionName line, the QOS, the associations
  };
  std::string setting;  // as written ("PriorityWeightAge")
  std::string value;    // as written; "" with `where` "" = set nowhere (Slurm's default)
  std::string where;    // "file:line"
  Kind kind = Kind::kModelled;
};

/// The files that describe a cluster: a slurm.conf and/or what the running slurmctld reports. Per
/// setting the later wins: slurm.conf, then `scontrol show config`; nodes and partitions from
/// `scontrol show nodes|partition` replace slurm.conf's NodeName / PartitionName lines (with both
/// given, an Include that cannot be read is a warning: such files usually hold the node lines).
struct SlurmConfigFiles {
  std::string slurm_conf;
  std::string scontrol_config;
  std::string scontrol_nodes;
  std::string scontrol_partitions;
  std::string gres_conf;  // "" = the gres.conf beside slurm.conf when there is one
  // Read when TopologyPlugin=topology/tree (else not): "" = the topology.conf beside slurm.conf.
  std::string topology_conf;
  // The Slurm version whose defaults apply ("18.08", "22.05.8"); "" = scontrol show config's
  // SLURM_VERSION when given, else the version the simulator follows (22.05). Before 19.05 a
  // PriorityFlags without FAIR_TREE meant classic fair share.
  std::string slurm_version;
};

/// Imports a cluster from `files` (at least slurm_conf or scontrol_config; std::invalid_argument
/// otherwise) as import_slurm_conf does. `sources`, when given, receives every global setting read with
/// the file:line that set it last and its kind, the NodeName / PartitionName lines, then the modelled
/// settings set nowhere.
Site import_slurm_config(const SlurmConfigFiles& files, std::vector<std::string>& warnings,
                         bool lenient = false, std::vector<SettingSource>* sources = nullptr);

/// Imports the slurm.conf at `path` (Include files resolve relative to the including file's directory).
/// `gres_conf_path` names a gres.conf to apply; "" = the gres.conf beside slurm.conf when there is one.
/// A key slurmctld does not know throws InputError naming file:line, the key and the nearest known
/// key, as slurmctld refuses to start (`lenient`: a warning instead). Known keys that are not modelled
/// add one warning each when they affect scheduling (saying how) and nothing otherwise; bad values
/// throw InputError naming file:line and the key. The result is not validate()d: partitions may name
/// QOS that the sacctmgr import adds later.
Site import_slurm_conf(const std::string& path, std::vector<std::string>& warnings,
                       const std::string& gres_conf_path = {}, bool lenient = false);

/// The same from text. `file_name` names the content in messages and anchors relative Includes; no
/// gres.conf is read.
Site import_slurm_conf_text(std::string_view content, const std::string& file_name,
                            std::vector<std::string>& warnings, bool lenient = false);

/// How slurmctld checks the GRES a node's slurmd reports at registration against slurm.conf's Gres=
/// (gres.c _node_config_validate), by the site's Slurm and settings (import_slurm_config decides).
enum class GresCheck : std::uint8_t {
  kRefuseLow,  // a node reporting fewer is refused (INVALID_REG): 22.05 on, and older without overrides
  kKeepLow,    // such a node is kept with slurm.conf's count (config_overrides, FastSchedule)
  kFrontEnd,   // FrontEndName: a front end registers the nodes; gres.conf's counts as written, nodes kept
};

/// Applies gres.conf lines ("NodeName=g[1-8] Name=gpu [Type=v100] Count=2|File=/dev/nvidia[0-1]") to
/// the site's nodes. Lines without NodeName apply to every node; per node, name and type the counts add
/// up (from 20.02, outside kFrontEnd, a GPU line without File= counts 0 unless AutoDetect is on: slurmd
/// discards it). A GRES slurm.conf lacks is added; where slurm.conf has it (an untyped line matches the
/// node's only GRES of that name), slurm.conf's count stays, as slurmctld schedules it, and under
/// kRefuseLow a node given fewer is out of service from time 0 (an outage, DRAIN, slurmctld's reason).
void apply_gres_conf(std::string_view content, const std::string& file_name, Site& site,
                     std::vector<std::string>& warnings, GresCheck check = GresCheck::kRefuseLow);
/// apply_gres_conf on the file at `path`.
void import_gres_conf(const std::string& path, Site& site, std::vector<std::string>& warnings,
                      GresCheck check = GresCheck::kRefuseLow);

/// Parses a node Gres= value: "gpu:tesla_v100:2,nvme:1", "gpu:4K" (K/M/G = 1024 multipliers), "gpu"
/// (count 1); socket bindings "(S:0-1)" are dropped. Throws std::invalid_argument.
std::vector<NodeGres> parse_node_gres(std::string_view text);

/// Applies one SchedulerParameters value ("bf_window=4320,bf_continue,...") on top of `s.params`
/// (the options of traces/site_settings.hpp, in slurm.conf's units: bf_window in minutes, bf_yield_*
/// and sched_min_interval in microseconds, other times in seconds). Options not modelled land in
/// params.other and their names in `unmodelled`. Throws std::invalid_argument naming the option on a
/// bad value.
void apply_scheduler_parameters(std::string_view text, SchedulerSettings& s,
                                std::vector<std::string>& unmodelled);

}  // namespace slurmtwin
