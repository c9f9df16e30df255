// slurmtwin config import|show|check|settings
#include <fmt/format.h>

#include <iostream>
#include <optional>

#include "experiments/cli/cli.hpp"
#include "experiments/cli/site_options.hpp"
#include "traces/site_settings.hpp"
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

/// Where each modelled setting came from (file:line), the modelled settings no file sets, and how many
/// settings were read of each kind: modelled, changing scheduling but not modelled (each warned), and
/// without effect on scheduling (listed with `verbose`).
std::string sources_table(const std::vector<SettingSource>& sources, bool verbose) {
  using Kind = SettingSource::Kind;
  std::string out = "where each modelled setting came from (the last file that sets it wins):\n";
  std::string unset, not_modelled, no_effect;
  std::size_t modelled = 0, n_not_modelled = 0, n_no_effect = 0;
  const auto add = [](std::string& list, const std::string& name) {
    list += (list.empty() ? "" : ", ") + name;
  };
  for (const auto& s : sources) {
    if (s.kind == Kind::kNotModelled) {
      add(not_modelled, s.setting);
      ++n_not_modelled;
    } else if (s.kind == Kind::kNoEffect) {
      add(no_effect, s.setting);
      ++n_no_effect;
    } else if (s.where.empty()) {
      add(unset, s.setting);
    } else {
      modelled += s.kind == Kind::kModelled;
      auto value = s.value.size() > 48 ? s.value.substr(0, 45) + "..." : s.value;
      out += fmt::format("  {:<28} {:<48} {}\n", s.setting, value, s.where);
    }
  }
  if (!unset.empty()) out += "set in no file (Slurm's default): " + unset + "\n";
  out += fmt::format(
      "read: {} modelled, {} that change scheduling but are not modelled{}, {} with no effect on "
      "scheduling{}\n",
      modelled, n_not_modelled, n_not_modelled > 0 ? " (warned above: " + not_modelled + ")" : "",
      n_no_effect,
      verbose || no_effect.empty() ? (no_effect.empty() ? "" : " (" + no_effect + ")")
                                   : " (--verbose lists them)");
  return out;
}

int config_import(const Args& args) {
  po::options_description o("config import options");
  o.add_options()("output,o", po::value<std::string>()->required(), "site YAML to write")(
      "verbose", po::bool_switch(), "also list the settings read that have no effect on scheduling");
  add_site_options(o);
  const auto vm = parse(
      "slurmtwin config import --slurm-conf slurm.conf | --scontrol-config F [--scontrol-nodes F "
      "--scontrol-partitions F] [--gres-conf F] [--topology-conf F] [--qos-dump F] [--sacctmgr F | "
      "--sacctmgr-dump F | "
      "--assoc-dump F] -o site.yaml",
      o, args);
  if (vm["slurm-conf"].as<std::string>().empty() && vm["scontrol-config"].as<std::string>().empty())
    throw po::error("--slurm-conf or --scontrol-config is required");
  std::vector<std::string> warnings;
  std::vector<SettingSource> sources;
  const auto site = load_site(vm, warnings, &sources);
  for (const auto& w : warnings) std::cerr << "warning: " << w << "\n";
  save_site_yaml(site, vm["output"].as<std::string>());
  std::cout << site_summary(site) << sources_table(sources, vm["verbose"].as<bool>());
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

/// The table of scheduling settings (traces/site_settings.cpp) as Markdown, values as slurm.conf and
/// sweeps write them: bf_window in minutes, durations in seconds. With `site`, a column of its values.
std::string settings_table(bool sweepable_only, const Site* site) {
  const SchedulerSettings slurm_default;
  std::string out = fmt::format("| setting | site YAML (`scheduler:`) | unit | range | default |{} sweep |\n",
                                site ? " this site |" : "");
  out += fmt::format("|---|---|---|---|---|{}---|\n", site ? "---|" : "");
  for (const auto& st : site_settings()) {
    if (sweepable_only && !st.sweepable) continue;
    const bool flag = st.kind == SettingKind::kFlag;
    const std::string_view unit = setting_unit(st).empty() ? "integer" : setting_unit(st);
    const auto shown = [&](std::int64_t stored) -> std::string {
      if (flag) return stored ? "on" : "off";
      if (st.unset != kNoUnset && stored == st.unset) return fmt::format("{} (unset)", stored / st.scale);
      if (st.kind == SettingKind::kDuration && stored >= kUnlimited) return "UNLIMITED";
      return fmt::format("{}", stored / st.scale);
    };
    out += fmt::format(
        "| {} | `{}{}` | {} | {} | {} |{} {} |\n", st.name, st.scheduler_parameter ? "params: " : "",
        st.yaml_key, unit, flag ? "" : fmt::format("{} … {}", shown(st.min), shown(st.max)),
        shown(st.get(slurm_default)), site ? fmt::format(" {} |", shown(st.get(site->scheduler))) : "",
        st.sweepable ? "yes" : "");
  }
  return out;
}

int config_settings(const Args& args) {
  po::options_description o("config settings options");
  o.add_options()("sweepable", po::bool_switch(), "only the settings a sweep may vary (docs/sweeps.md)");
  add_site_options(o);
  const auto vm = parse(
      "slurmtwin config settings [--sweepable] [--site site.yaml | --slurm-conf ...]   (the scheduling "
      "settings SlurmTwin models: YAML key, unit, the range slurmctld accepts, Slurm's default and, with a "
      "site, its value)",
      o, args);
  const bool given = !vm["site"].as<std::string>().empty() || !site_files_of(vm).paths().empty();
  std::vector<std::string> warnings;
  const auto site = given ? std::optional<Site>(load_site(vm, warnings)) : std::nullopt;
  for (const auto& w : warnings) std::cerr << "warning: " << w << "\n";
  std::cout << settings_table(vm["sweepable"].as<bool>(), site ? &*site : nullptr);
  return kExitOk;
}

}  // namespace

int command_config(const Args& args) {
  return run_subcommand(
      "config",
      "usage: slurmtwin config import|show|check|settings [options]   (slurmtwin config SUB --help)\n"
      "  import    slurm.conf or scontrol show output (+gres.conf) + sacctmgr data -> site YAML\n"
      "  show      print a site as YAML (the built-in default when no site is given)\n"
      "  check     validate a site and print its summary\n"
      "  settings  the scheduling settings modelled: YAML key, unit, range, default (and a site's values)\n",
      args,
      {{"import", config_import},
       {"show", [](const Args& rest) { return config_show(rest, false); }},
       {"check", [](const Args& rest) { return config_show(rest, true); }},
       {"settings", config_settings}});
}

}  // namespace slurmtwin::cli
