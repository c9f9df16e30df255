#pragma once
// What `scontrol show config|nodes|partition` print, read back as the slurm.conf lines they stand for:
// a site that cannot share its slurm.conf (Include files, secrets) can still give what the running
// slurmctld reports. The values are turned into slurm.conf spelling here; their meaning is decided in
// one place, the slurm.conf importer (traces/slurm_conf.cpp).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace slurmtwin {

/// One Key=Value in slurm.conf spelling, with the line of the file it was read from.
struct ConfItem {
  std::string key;
  std::string value;
  std::uint64_t line = 0;
};

/// One slurm.conf line's worth: a NodeName=..., PartitionName=... record or one global setting.
struct ConfRecord {
  std::string file;
  std::uint64_t line = 0;
  std::vector<ConfItem> items;
};

/// Records of `scontrol show nodes|partition|reservation`: each starts at a line whose first word is
/// `<head>=...`; indented lines continue it (with -o, one line each). A word without '=' continues the
/// previous value ("OS=Linux 6.1.0 #1 SMP ...", "Reason=Not responding [slurm@...]"). Throws
/// InputError when the text does not start with such a line, or is empty.
std::vector<ConfRecord> read_scontrol_records(std::string_view content, const std::string& file_name,
                                              std::string_view head);

/// `scontrol show config`: the main section (up to the first "... Configuration:" title), one record
/// per setting slurm.conf knows. Values that mean "not set" ("(null)", "", "NONE" of a time) are left
/// out, unit suffixes dropped ("30 sec" -> "30", "0 min" -> "0": slurm.conf's own units); keys that
/// only the running daemon has (BOOT_TIME, SLURM_VERSION, ...) are skipped. Throws InputError when
/// the text is not `scontrol show config` output.
/// `version`, when given, receives its SLURM_VERSION ("" when absent).
std::vector<ConfRecord> read_scontrol_config(std::string_view content, const std::string& file_name,
                                             std::string* version = nullptr);

/// `scontrol show nodes` (the default multi-line form or -o): one NodeName record per node with what
/// slurm.conf says of a node (CPUs, Boards, Sockets, CoresPerSocket, ThreadsPerCore, RealMemory,
/// Features, Gres, Weight); run-time state is dropped. A node that was DOWN, DRAIN or FAIL when the
/// snapshot was taken adds a warning (out-of-service nodes are not modelled: it stays in service).
std::vector<ConfRecord> read_scontrol_nodes(std::string_view content, const std::string& file_name,
                                            std::vector<std::string>& warnings);

/// `scontrol show partition`: one PartitionName record per partition with the options it was
/// configured with; values that mean "not set" (ALL, N/A, NONE, UNLIMITED, (null), NO of a flag) and
/// what slurmctld derives (TotalCPUs, TotalNodes, TRES) are left out.
std::vector<ConfRecord> read_scontrol_partitions(std::string_view content, const std::string& file_name);

}  // namespace slurmtwin
