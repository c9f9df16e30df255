#include "traces/site_settings.hpp"

#include <fmt/format.h>

#include <array>
#include <limits>
#include <stdexcept>

#include "traces/text.hpp"

namespace slurmtwin {
namespace {

constexpr std::int64_t kU32 = std::numeric_limits<std::uint32_t>::max();

// A field of SchedulerSettings as a stored int64 (bool and uint32 fields convert exactly in range).
#define SETTING_FIELD(member)                                                                     \
  [](const SchedulerSettings& s) -> std::int64_t { return static_cast<std::int64_t>(s.member); }, \
      [](SchedulerSettings& s, std::int64_t v) { s.member = static_cast<decltype(s.member)>(v); }

using K = SettingKind;
// Bounds as slurmctld 22.05 checks them (src/slurmctld/read_config.c, sched/backfill's options, spec
// §1 and §6); the durations of the priority plugin take any time (UNLIMITED included).
const std::array kSettings{
    SiteSetting{"PriorityWeightAge", "priority_weight_age", false, K::kCount, 1, 0, kU32, kNoUnset, true,
                SETTING_FIELD(weight_age)},
    SiteSetting{"PriorityWeightAssoc", "priority_weight_assoc", false, K::kCount, 1, 0, kU32, kNoUnset, true,
                SETTING_FIELD(weight_assoc)},
    SiteSetting{"PriorityWeightFairshare", "priority_weight_fairshare", false, K::kCount, 1, 0, kU32,
                kNoUnset, true, SETTING_FIELD(weight_fairshare)},
    SiteSetting{"PriorityWeightJobSize", "priority_weight_job_size", false, K::kCount, 1, 0, kU32, kNoUnset,
                true, SETTING_FIELD(weight_job_size)},
    SiteSetting{"PriorityWeightPartition", "priority_weight_partition", false, K::kCount, 1, 0, kU32,
                kNoUnset, true, SETTING_FIELD(weight_partition)},
    SiteSetting{"PriorityWeightQOS", "priority_weight_qos", false, K::kCount, 1, 0, kU32, kNoUnset, true,
                SETTING_FIELD(weight_qos)},
    SiteSetting{"PriorityDecayHalfLife", "priority_decay_half_life_s", false, K::kDuration, 1, 0, kUnlimited,
                kNoUnset, true, SETTING_FIELD(decay_half_life)},
    // The decay thread runs at least once a minute.
    SiteSetting{"PriorityCalcPeriod", "priority_calc_period_s", false, K::kDuration, 1, 60, kU32, kNoUnset,
                false, SETTING_FIELD(calc_period)},
    SiteSetting{"PriorityMaxAge", "priority_max_age_s", false, K::kDuration, 1, 0, kUnlimited, kNoUnset, true,
                SETTING_FIELD(max_age)},
    SiteSetting{"PriorityFavorSmall", "priority_favor_small", false, K::kFlag, 1, 0, 1, kNoUnset, true,
                SETTING_FIELD(favor_small)},
    SiteSetting{"default_queue_depth", "default_queue_depth", true, K::kCount, 1, 0, kU32, kNoUnset, true,
                SETTING_FIELD(params.default_queue_depth)},
    // -1: no periodic full pass.
    SiteSetting{"sched_interval", "sched_interval_s", true, K::kCount, 1, -1, kU32, kNoUnset, true,
                SETTING_FIELD(params.sched_interval)},
    SiteSetting{"batch_sched_delay", "batch_sched_delay_s", true, K::kCount, 1, 0, kU32, kNoUnset, false,
                SETTING_FIELD(params.batch_sched_delay)},
    SiteSetting{"sched_min_interval", "sched_min_interval_us", true, K::kCount, 1, 0, 1'000'000, kNoUnset,
                false, SETTING_FIELD(params.sched_min_interval_us)},
    // 0: derived from MessageTimeout (the YAML of a site that did not set it).
    SiteSetting{"max_sched_time", "max_sched_time_s", true, K::kCount, 1, 1, kU32, 0, false,
                SETTING_FIELD(params.max_sched_time_s)},
    SiteSetting{"partition_job_depth", "partition_job_depth", true, K::kCount, 1, 0, kU32, kNoUnset, false,
                SETTING_FIELD(params.partition_job_depth)},
    SiteSetting{"defer", "defer", true, K::kFlag, 1, 0, 1, kNoUnset, false, SETTING_FIELD(params.defer)},
    SiteSetting{"defer_batch", "defer_batch", true, K::kFlag, 1, 0, 1, kNoUnset, false,
                SETTING_FIELD(params.defer_batch)},
    // A job may ask more licences than the site has (it then waits for good) instead of being refused.
    SiteSetting{"allow_zero_lic", "allow_zero_lic", true, K::kFlag, 1, 0, 1, kNoUnset, false,
                SETTING_FIELD(params.allow_zero_lic)},
    // -1: no backfill cycles.
    SiteSetting{"bf_interval", "bf_interval_s", true, K::kCount, 1, -1, 10800, kNoUnset, true,
                SETTING_FIELD(params.bf_interval)},
    // Minutes in slurm.conf and sweeps, seconds in the YAML and the Site.
    SiteSetting{"bf_window", "bf_window_s", true, K::kCount, 60, 60, 43200 * 60, kNoUnset, true,
                SETTING_FIELD(params.bf_window)},
    SiteSetting{"bf_resolution", "bf_resolution_s", true, K::kCount, 1, 1, 3600, kNoUnset, true,
                SETTING_FIELD(params.bf_resolution)},
    SiteSetting{"bf_max_job_test", "bf_max_job_test", true, K::kCount, 1, 1, 1'000'000, kNoUnset, true,
                SETTING_FIELD(params.bf_max_job_test)},
    SiteSetting{"bf_max_job_user", "bf_max_job_user", true, K::kCount, 1, 0, 1'000'000, kNoUnset, true,
                SETTING_FIELD(params.bf_max_job_user)},
    SiteSetting{"bf_max_job_part", "bf_max_job_part", true, K::kCount, 1, 0, 1'000'000, kNoUnset, false,
                SETTING_FIELD(params.bf_max_job_part)},
    SiteSetting{"bf_max_job_user_part", "bf_max_job_user_part", true, K::kCount, 1, 0, 1'000'000, kNoUnset,
                false, SETTING_FIELD(params.bf_max_job_user_part)},
    SiteSetting{"bf_max_job_start", "bf_max_job_start", true, K::kCount, 1, 0, 10'000, kNoUnset, false,
                SETTING_FIELD(params.bf_max_job_start)},
    SiteSetting{"bf_max_job_array_resv", "bf_max_job_array_resv", true, K::kCount, 1, 0, 1000, kNoUnset,
                false, SETTING_FIELD(params.bf_max_job_array_resv)},
    SiteSetting{"bf_min_prio_reserve", "bf_min_prio_reserve", true, K::kCount, 1, 0, kU32, kNoUnset, false,
                SETTING_FIELD(params.bf_min_prio_reserve)},
    SiteSetting{"bf_min_age_reserve", "bf_min_age_reserve_s", true, K::kCount, 1, 0, 31'536'000, kNoUnset,
                false, SETTING_FIELD(params.bf_min_age_reserve)},
    SiteSetting{"bf_continue", "bf_continue", true, K::kFlag, 1, 0, 1, kNoUnset, false,
                SETTING_FIELD(params.bf_continue)},
    SiteSetting{"bf_busy_nodes", "bf_busy_nodes", true, K::kFlag, 1, 0, 1, kNoUnset, false,
                SETTING_FIELD(params.bf_busy_nodes)},
    SiteSetting{"bf_one_resv_per_job", "bf_one_resv_per_job", true, K::kFlag, 1, 0, 1, kNoUnset, false,
                SETTING_FIELD(params.bf_one_resv_per_job)},
    // 0: bf_interval (the YAML of a site that did not set it).
    SiteSetting{"bf_max_time", "bf_max_time_s", true, K::kCount, 1, 1, 3600, 0, false,
                SETTING_FIELD(params.bf_max_time)},
    SiteSetting{"bf_yield_interval", "bf_yield_interval_us", true, K::kCount, 1, 1, 10'000'000, kNoUnset,
                false, SETTING_FIELD(params.bf_yield_interval_us)},
    SiteSetting{"bf_yield_sleep", "bf_yield_sleep_us", true, K::kCount, 1, 1, 10'000'000, kNoUnset, false,
                SETTING_FIELD(params.bf_yield_sleep_us)},
};
#undef SETTING_FIELD

bool in_bounds(const SiteSetting& setting, std::int64_t value) {
  return (value >= setting.min && value <= setting.max) ||
         (setting.unset != kNoUnset && value == setting.unset);
}

/// "0 s is outside [60 s, 2592000 s]": the stored value and bounds (seconds for times).
std::invalid_argument bounds_error(const SiteSetting& setting, std::int64_t value) {
  const bool seconds = setting.scale > 1 || setting.kind == SettingKind::kDuration;
  const auto shown = [&](std::int64_t v) {
    if (v >= kUnlimited) return std::string("UNLIMITED");
    return fmt::format("{}{}", v, seconds ? " s" : "");
  };
  return std::invalid_argument(
      fmt::format("{} is outside [{}, {}]", shown(value), shown(setting.min), shown(setting.max)));
}

}  // namespace

std::span<const SiteSetting> site_settings() {
  return kSettings;
}

const SiteSetting* find_site_setting(std::string_view name) {
  for (const auto& s : kSettings)
    if (text::iequals(s.name, name)) return &s;
  return nullptr;
}

const SiteSetting* find_site_setting_yaml(std::string_view key, bool scheduler_parameter) {
  for (const auto& s : kSettings)
    if (s.scheduler_parameter == scheduler_parameter && s.yaml_key == key) return &s;
  return nullptr;
}

std::string_view setting_unit(const SiteSetting& s) {
  // From the table alone: bf_window is stored in seconds and written in minutes (scale 60); the YAML
  // key of a duration ends in _s, of a microsecond count in _us.
  if (s.kind == SettingKind::kFlag) return "on/off";
  if (s.scale == 60) return "min";
  if (s.yaml_key.ends_with("_s")) return "s";
  if (s.yaml_key.ends_with("_us")) return "µs";
  return "";
}

void set_site_setting(SchedulerSettings& s, const SiteSetting& setting, std::int64_t value) {
  if (!in_bounds(setting, value)) throw bounds_error(setting, value);
  setting.set(s, value);
}

void check_site_settings(const SchedulerSettings& s) {
  for (const auto& setting : kSettings)
    if (const auto v = setting.get(s); !in_bounds(setting, v))
      throw std::invalid_argument(fmt::format("{}: {}", setting.name, bounds_error(setting, v).what()));
}

}  // namespace slurmtwin
