#pragma once
// One table of the scheduling settings that slurm.conf, the site YAML and sweeps all set: each one's
// names, kind, bounds, sweep scale and field (docs/site-files.md). Every entrance reads a value its
// own way (slurm.conf minutes and D-HH:MM:SS, YAML seconds, a sweep's numbers) and then sets it here,
// where one bounds check holds for all of them (a value slurmctld refuses is refused everywhere).
#include <cstdint>
#include <span>
#include <string_view>

#include "traces/site.hpp"

namespace slurmtwin {

enum class SettingKind : std::uint8_t {
  kCount,     // an integer (slurm.conf and sweeps: times `scale` give the stored value)
  kDuration,  // seconds (slurm.conf: a Slurm time, minutes by default; sweeps and YAML: seconds)
  kFlag,      // on/off (slurm.conf: YES/NO or an option's presence; sweeps: non-zero)
};

struct SiteSetting {
  std::string_view name;      // slurm.conf key or SchedulerParameters option, as sweeps name it too
  std::string_view yaml_key;  // under the site YAML's scheduler: (or scheduler: params: for options)
  bool scheduler_parameter;   // a SchedulerParameters option
  SettingKind kind;
  std::int64_t scale;     // kCount: stored value = written value x scale (bf_window: minutes -> s)
  std::int64_t min, max;  // bounds of the stored value (s for durations and bf_window)
  std::int64_t unset;     // a stored value meaning "not given" that the YAML writer emits (e.g. 0 for
                          // bf_max_time: bf_interval), allowed besides the bounds; kNoUnset: none
  bool sweepable;         // a sweep parameter (docs/sweeps.md)
  std::int64_t (*get)(const SchedulerSettings&);
  void (*set)(SchedulerSettings&, std::int64_t);
};
inline constexpr std::int64_t kNoUnset = INT64_MIN;

/// Every setting, in the site YAML's order.
std::span<const SiteSetting> site_settings();
/// The setting named `name` as slurm.conf or a sweep names it (case-insensitive), or nullptr.
const SiteSetting* find_site_setting(std::string_view name);
/// The setting with site YAML key `key` (under scheduler:, or scheduler: params: when
/// `scheduler_parameter`), or nullptr.
const SiteSetting* find_site_setting_yaml(std::string_view key, bool scheduler_parameter);
/// The unit a value is written in (slurm.conf, the site YAML, sweeps): "s", "min" (bf_window), "µs",
/// "on/off" for a flag, "" for a plain count or weight.
std::string_view setting_unit(const SiteSetting& s);
/// Sets the stored value `value` (s for durations and bf_window); std::invalid_argument "V is outside
/// [MIN, MAX]" when out of its bounds (the caller names the setting and where it was written).
void set_site_setting(SchedulerSettings& s, const SiteSetting& setting, std::int64_t value);
/// std::invalid_argument "NAME: V is outside [MIN, MAX]" for the first setting of `s` out of its bounds.
void check_site_settings(const SchedulerSettings& s);

}  // namespace slurmtwin
