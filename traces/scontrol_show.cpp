#include "traces/scontrol_show.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "traces/read_report.hpp"
#include "traces/slurm_conf_keys.hpp"
#include "traces/text.hpp"

namespace slurmtwin {
namespace {

/// Values scontrol prints for a setting nobody set.
bool means_unset(std::string_view v) {
  return v.empty() || v == "(null)" || text::iequals(v, "N/A") || text::iequals(v, "NONE") ||
         text::iequals(v, "UNLIMITED");
}

/// "30 sec" -> "30", "0 min" -> "0", "2000 usec" -> "2000": slurm.conf takes the bare number in the
/// unit scontrol names.
std::string drop_unit(std::string_view v) {
  for (const std::string_view unit : {" sec", " min", " usec", " msec"})
    if (v.size() > unit.size() && v.substr(v.size() - unit.size()) == unit)
      return std::string(v.substr(0, v.size() - unit.size()));
  return std::string(v);
}

/// scontrol's JobDefaults: "(null)", or slurm.conf's per-GPU default keys as
/// "DefCpuPerGPU=2,DefMemPerGPU=6000" (job_defaults_str, read_config.c). Pairs without '=' are kept as keys
/// without value, for the reader to refuse with their line.
std::vector<std::pair<std::string, std::string>> job_defaults(std::string_view value) {
  std::vector<std::pair<std::string, std::string>> out;
  if (value.empty() || value == "(null)") return out;
  for (const auto part : text::split(value, ',')) {
    const auto eq = part.find('=');
    out.emplace_back(std::string(text::trim(part.substr(0, eq))),
                     eq == std::string_view::npos ? "" : std::string(text::trim(part.substr(eq + 1))));
  }
  return out;
}

}  // namespace

std::vector<ConfRecord> read_scontrol_records(std::string_view content, const std::string& file_name,
                                              std::string_view head) {
  std::vector<ConfRecord> out;
  std::uint64_t line_no = 0;
  for (auto raw : text::split(content, '\n')) {
    ++line_no;
    const auto line = text::trim(raw);
    if (line.empty()) continue;
    const bool starts =
        text::starts_with_i(line, head) && line.size() > head.size() && line[head.size()] == '=';
    if (starts) {
      out.push_back({file_name, line_no, {}});
    } else if (out.empty()) {
      throw InputError(file_name, line_no, std::string(head),
                       fmt::format("expected `scontrol show` output starting with {}=", head));
    }
    auto& items = out.back().items;
    for (const auto word : text::split(line, ' ')) {
      if (word.empty()) continue;
      const auto eq = word.find('=');
      if (eq == std::string_view::npos || eq == 0) {
        if (items.empty()) throw InputError(file_name, line_no, std::string(word), "expected Key=Value");
        items.back().value += ' ';
        items.back().value += word;
        continue;
      }
      items.push_back({std::string(word.substr(0, eq)), std::string(word.substr(eq + 1)), line_no});
    }
  }
  if (out.empty()) throw InputError(file_name, 0, std::string(head), "no records: empty file");
  return out;
}

std::vector<ConfRecord> read_scontrol_config(std::string_view content, const std::string& file_name,
                                             std::string* version) {
  std::vector<ConfRecord> out;
  std::uint64_t line_no = 0;
  bool in_main = false;
  for (auto raw : text::split(content, '\n')) {
    ++line_no;
    const auto line = text::trim(raw);
    if (!in_main) {
      if (text::starts_with_i(line, "Configuration data as of")) in_main = true;
      continue;
    }
    if (line.empty()) continue;
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) break;  // a section title ("Cgroup Support Configuration:")
    const auto key = text::trim(line.substr(0, eq));
    const auto value = text::trim(line.substr(eq + 1));
    if (version && key == "SLURM_VERSION") *version = std::string(value);
    if (text::iequals(key, "JobDefaults")) {  // slurm.conf's DefCpuPerGPU/DefMemPerGPU, as one list
      for (auto& [k, v] : job_defaults(value)) out.push_back({file_name, line_no, {{k, v, line_no}}});
      continue;
    }
    if (!known_slurm_conf_key(SlurmConfSection::kGlobal, key)) continue;  // BOOT_TIME, SLURM_VERSION, ...
    if (value.empty() || value == "(null)") continue;
    // "NONE"/"UNLIMITED" are real values of some keys (PriorityUsageResetPeriod=NONE, OverTimeLimit);
    // for these two they only say that nothing is set.
    if ((text::iequals(key, "PreemptExemptTime") || text::iequals(key, "DefMemPerNode") ||
         text::iequals(key, "DefMemPerCPU") || text::iequals(key, "MaxMemPerNode") ||
         text::iequals(key, "MaxMemPerCPU")) &&
        means_unset(value))
      continue;
    out.push_back({file_name, line_no, {{std::string(key), drop_unit(value), line_no}}});
  }
  if (!in_main)
    throw InputError(file_name, 0, "",
                     "not `scontrol show config` output (no 'Configuration data as of' line)");
  return out;
}

std::vector<ConfRecord> read_scontrol_nodes(std::string_view content, const std::string& file_name,
                                            std::vector<std::string>& warnings) {
  // scontrol's name -> slurm.conf's; every other field is run-time state.
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kKeep = {{
      {"NodeName", "NodeName"},
      {"CPUTot", "CPUs"},
      {"Boards", "Boards"},
      {"Sockets", "Sockets"},
      {"CoresPerSocket", "CoresPerSocket"},
      {"ThreadsPerCore", "ThreadsPerCore"},
      {"RealMemory", "RealMemory"},
      {"AvailableFeatures", "Features"},
      {"Gres", "Gres"},
      {"Weight", "Weight"},
  }};
  auto records = read_scontrol_records(content, file_name, "NodeName");
  for (auto& r : records) {
    const auto node = r.items.front().value;
    std::vector<ConfItem> kept;
    for (auto& item : r.items) {
      if (text::iequals(item.key, "State")) {
        const auto state = text::to_lower(item.value);
        if (state.find("down") != std::string::npos || state.find("drain") != std::string::npos ||
            state.find("fail") != std::string::npos)
          warnings.push_back(fmt::format(
              "{}:{}: node {} was {} when this was taken; out-of-service nodes are not modelled: it is in "
              "service throughout",
              file_name, item.line, node, item.value));
        continue;
      }
      const auto it = std::find_if(kKeep.begin(), kKeep.end(),
                                   [&](const auto& k) { return text::iequals(k.first, item.key); });
      if (it == kKeep.end() || (item.value == "(null)" && kept.size() > 0)) continue;
      kept.push_back({std::string(it->second), std::move(item.value), item.line});
    }
    r.items = std::move(kept);
  }
  return records;
}

std::vector<ConfRecord> read_scontrol_partitions(std::string_view content, const std::string& file_name) {
  // Flags scontrol prints as YES/NO: NO is the default.
  static constexpr std::array<std::string_view, 6> kFlags = {
      "DisableRootJobs", "ExclusiveUser", "Hidden", "LLN", "ReqResv", "RootOnly"};
  // What slurmctld derives from the partition's nodes, not configured.
  static constexpr std::array<std::string_view, 4> kDerived = {"TotalCPUs", "TotalNodes", "TRES",
                                                               "SelectTypeParameters"};
  auto records = read_scontrol_records(content, file_name, "PartitionName");
  for (auto& r : records) {
    std::vector<ConfItem> kept;
    for (auto& item : r.items) {
      const auto is = [&](std::string_view k) { return text::iequals(item.key, k); };
      if (std::any_of(kDerived.begin(), kDerived.end(), is)) continue;
      if (is("JobDefaults")) {  // the partition's DefCpuPerGPU/DefMemPerGPU
        for (auto& [k, v] : job_defaults(item.value)) kept.push_back({k, v, item.line});
        continue;
      }
      // scontrol prints a few fields slurm.conf has no key for (e.g. MaxCPUsPerSocket in some versions)
      if (!known_slurm_conf_key(SlurmConfSection::kPartition, item.key)) continue;
      if (std::any_of(kFlags.begin(), kFlags.end(), is) && text::iequals(item.value, "NO")) continue;
      if (kept.size() > 0 && (means_unset(item.value) || text::iequals(item.value, "ALL"))) continue;
      if (is("QoS")) item.key = "QOS";
      kept.push_back(std::move(item));
    }
    r.items = std::move(kept);
  }
  return records;
}

}  // namespace slurmtwin
