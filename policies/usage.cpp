#include "policies/usage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

namespace slurmtwin::policies {
namespace {

/// Slurm's ln(2) approximation in the decay factor (priority_multifactor.c `_decay_thread`).
constexpr double kLn2Approx = 0.693;

std::string upper(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool is_node_tres(const std::string& name) {
  return name == "cpu" || name == "mem" || name == "node";
}
bool is_gres_tres(const std::string& name) {
  return name.rfind("gres/", 0) == 0;
}

}  // namespace

std::vector<QosUsage> make_qos_usage(const Site& site) {
  std::vector<QosUsage> out(site.qos.size());
  for (std::size_t i = 0; i < site.qos.size(); ++i) {
    for (const auto& flag : site.qos[i].flags) {
      if (upper(flag) == "NODECAY") out[i].no_decay = true;
    }
  }
  return out;
}

UsageDecay::UsageDecay(Seconds half_life) {
  if (half_life > 0) df_ = 1.0 - kLn2Approx / static_cast<double>(half_life);
}

double UsageDecay::factor(Seconds seconds) const {
  return std::max(std::pow(df_, static_cast<double>(seconds)), DBL_MIN);
}

void UsageDecay::decay(AssocTree& tree, std::vector<QosUsage>& qos_usage, Seconds seconds) const {
  if (seconds <= 0) return;
  const double d = factor(seconds);
  if (d == 1.0) return;
  for (AssocIndex i = 0; i < static_cast<AssocIndex>(tree.size()); ++i) {
    auto& n = tree.node(i);
    n.usage_raw *= d;
    n.grp_used_wall *= d;
  }
  for (auto& q : qos_usage) {
    if (q.no_decay) continue;
    q.usage_raw *= d;
    q.grp_used_wall *= d;
  }
}

SliceCharge UsageDecay::slice(const ChargedJob& job, Seconds from, Seconds to, bool at_end) const {
  const Seconds a = std::max(from, job.start);
  Seconds b = to;
  if (at_end && job.end != kUnsetTime && b > job.end) b = job.end;
  SliceCharge c;
  c.delta = std::max<Seconds>(0, b - a);
  const double uf = job.usage_factor >= 0.0 ? job.usage_factor : 1.0;
  const double delta = static_cast<double>(c.delta);
  // pow, not factor(): Slurm does not floor the in-slice decay at DBL_MIN.
  c.wall = delta * std::pow(df_, delta) * uf;
  c.usage = c.wall * job.billing;
  c.wall_nodecay = delta * uf;
  return c;
}

SliceCharge UsageDecay::charge_slice(AssocTree& tree, std::vector<QosUsage>& qos_usage, const ChargedJob& job,
                                     Seconds from, Seconds to, bool at_end) const {
  const SliceCharge c = slice(job, from, to, at_end);
  const double usage_nodecay = c.wall_nodecay * job.billing;
  auto charge_qos = [&](std::int32_t q) {
    if (q < 0) return;
    auto& u = qos_usage.at(static_cast<std::size_t>(q));
    u.usage_raw += u.no_decay ? usage_nodecay : c.usage;
    u.grp_used_wall += u.no_decay ? c.wall_nodecay : c.wall;
  };
  charge_qos(job.qos);
  if (job.partition_qos != job.qos) charge_qos(job.partition_qos);
  tree.add_usage(job.assoc, c.usage, c.wall);
  return c;
}

BillingMode billing_mode(const std::set<std::string>& priority_flags) {
  BillingMode mode = BillingMode::kSum;
  for (const auto& f : priority_flags) {
    const std::string u = upper(f);
    if (u == "MAX_TRES_GRES") return BillingMode::kMaxTresGres;
    if (u == "MAX_TRES") mode = BillingMode::kMaxTres;
  }
  return mode;
}

double billable_tres(const TresMap& alloc, const TresWeights& weights, BillingMode mode) {
  if (weights.empty()) {
    const auto it = alloc.find("cpu");
    return it == alloc.end() ? 0.0 : static_cast<double>(it->second);
  }
  double node_max = 0.0;
  double sum = 0.0;
  for (const auto& [name, count] : alloc) {
    if (name == "billing" || count == 0) continue;
    const auto w = weights.find(name);
    if (w == weights.end()) continue;
    const double value = static_cast<double>(count) * w->second;
    const bool in_max = mode == BillingMode::kMaxTres       ? is_node_tres(name) || is_gres_tres(name)
                        : mode == BillingMode::kMaxTresGres ? is_node_tres(name)
                                                            : false;
    if (in_max) {
      node_max = std::max(node_max, value);
    } else {
      sum += value;
    }
  }
  return node_max + sum;
}

UsageResetPeriod parse_usage_reset_period(std::string_view text) {
  const std::string u = upper(text);
  if (u == "NONE") return UsageResetPeriod::kNone;
  if (u == "NOW") return UsageResetPeriod::kNow;
  if (u == "DAILY") return UsageResetPeriod::kDaily;
  if (u == "WEEKLY") return UsageResetPeriod::kWeekly;
  if (u == "MONTHLY") return UsageResetPeriod::kMonthly;
  if (u == "QUARTERLY") return UsageResetPeriod::kQuarterly;
  if (u == "YEARLY") return UsageResetPeriod::kYearly;
  throw std::invalid_argument(fmt::format("unknown PriorityUsageResetPeriod '{}'", text));
}

Seconds next_usage_reset(UsageResetPeriod period, Seconds after) {
  using namespace std::chrono;
  const sys_seconds t{seconds{after}};
  const sys_days day = floor<days>(t);
  const year_month_day ymd{day};
  auto to_seconds = [](sys_days d) {
    return static_cast<Seconds>(sys_seconds{d}.time_since_epoch().count());
  };
  switch (period) {
    case UsageResetPeriod::kNone:
    case UsageResetPeriod::kNow:
      return kUnlimited;
    case UsageResetPeriod::kDaily:
      return to_seconds(day + days{1});
    case UsageResetPeriod::kWeekly: {
      // Slurm: midnight of `after`'s day + (7 - weekday) days, i.e. the next Sunday strictly after.
      const unsigned wd = weekday{day}.c_encoding();  // 0 = Sunday
      return to_seconds(day + days{7 - static_cast<int>(wd)});
    }
    case UsageResetPeriod::kMonthly:
      return to_seconds(sys_days{(ymd.year() / ymd.month() / 1) + months{1}});
    case UsageResetPeriod::kQuarterly: {
      const unsigned m = static_cast<unsigned>(ymd.month());          // 1..12
      const unsigned next_quarter_month = ((m - 1) / 3 + 1) * 3 + 1;  // 4, 7, 10 or 13
      if (next_quarter_month > 12) return to_seconds(sys_days{(ymd.year() + years{1}) / January / 1});
      return to_seconds(sys_days{ymd.year() / month{next_quarter_month} / 1});
    }
    case UsageResetPeriod::kYearly:
      return to_seconds(sys_days{(ymd.year() + years{1}) / January / 1});
  }
  return kUnlimited;
}

bool usage_reset_due(UsageResetPeriod period, Seconds from, Seconds to) {
  if (period == UsageResetPeriod::kNone) return false;
  if (period == UsageResetPeriod::kNow) return from == kUnsetTime;
  if (from == kUnsetTime) return false;
  return next_usage_reset(period, from) <= to;
}

void reset_usage(AssocTree& tree, std::vector<QosUsage>& qos_usage) {
  tree.reset_usage();
  for (auto& q : qos_usage) {
    q.usage_raw = 0.0;
    q.grp_used_wall = 0.0;
  }
}

}  // namespace slurmtwin::policies
