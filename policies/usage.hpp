#pragma once
// Fair-share usage: decay, charging running jobs per calc period, billing TRES and usage resets.
// Spec: slurm-scheduling-spec.md §2.6 (accumulation, decay), §2.8 (billing), §2.4 (reset period).
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "policies/assoc_tree.hpp"
#include "traces/site.hpp"

namespace slurmtwin::policies {

/// Decayed usage of one QOS (index-aligned with Site::qos).
struct QosUsage {
  double usage_raw = 0.0;      // billing-seconds
  double grp_used_wall = 0.0;  // s
  bool no_decay = false;       // QOS flag NoDecay: never decayed, charged undecayed
};

/// One QosUsage per Site::qos entry, with no_decay taken from the "NoDecay" flag (any case).
std::vector<QosUsage> make_qos_usage(const Site& site);

/// What charge_slice needs to know about a running job.
struct ChargedJob {
  AssocIndex assoc = kNoAssoc;      // the job's (user) association
  std::int32_t qos = -1;            // index into the QosUsage vector of the job QOS, -1 = none
  std::int32_t partition_qos = -1;  // index of the partition QOS, -1 = none
  Seconds start = kUnsetTime;       // job start, absolute s
  Seconds end = kUnsetTime;         // job end, absolute s (only read when at_end)
  double billing = 0.0;             // billable TRES (billable_tres), cached at start
  double usage_factor = 1.0;        // job QOS UsageFactor; negative = not applied (1)
};

/// The amounts one charge_slice added.
struct SliceCharge {
  Seconds delta = 0;          // charged seconds, max(0, b - a)
  double wall = 0.0;          // delta * df^delta * usage_factor, s (added to grp_used_wall)
  double usage = 0.0;         // wall * billing, billing-seconds (added to usage_raw)
  double wall_nodecay = 0.0;  // delta * usage_factor, s (what a NoDecay QOS is charged)
};

/// Decay and charging at one PriorityDecayHalfLife: const configuration over AssocTree/QosUsage
/// state.
class UsageDecay {
 public:
  /// half_life in s; 0 = no decay.
  explicit UsageDecay(Seconds half_life);

  /// df = 1 - 0.693/half_life per second (Slurm's first-order 2^(-1/HL)); 1 when half_life is 0.
  double per_second() const { return df_; }
  /// max(df^seconds, DBL_MIN): the factor usage is multiplied by over `seconds` s.
  double factor(Seconds seconds) const;

  /// Multiplies usage_raw and grp_used_wall of every association (root included) and every QOS
  /// without NoDecay by factor(seconds). No-op for seconds <= 0 or a factor of exactly 1.
  void decay(AssocTree& tree, std::vector<QosUsage>& qos_usage, Seconds seconds) const;

  /// Charges the part of [from, to] (absolute s) that `job` ran: a = max(from, start),
  /// b = at_end ? min(to, end) : to; U = delta*df^delta*billing*usage_factor goes to the association
  /// and every ancestor to root, to the job QOS (undecayed delta*billing*uf when NoDecay) and to a
  /// different partition QOS (its own UsageFactor is not applied).
  SliceCharge charge_slice(AssocTree& tree, std::vector<QosUsage>& qos_usage, const ChargedJob& job,
                           Seconds from, Seconds to, bool at_end) const;
  /// What charge_slice would charge, without charging it.
  SliceCharge slice(const ChargedJob& job, Seconds from, Seconds to, bool at_end) const;

 private:
  double df_ = 1.0;
};

/// How billable TRES combine weighted TRES (PriorityFlags MAX_TRES / MAX_TRES_GRES).
enum class BillingMode : std::uint8_t {
  kSum,          // Σ alloc[t]*w[t]
  kMaxTres,      // MAX over cpu, mem, node, gres/* + Σ the rest
  kMaxTresGres,  // MAX over cpu, mem, node + Σ gres/* + Σ the rest
};

/// The billing mode for a set of PriorityFlags names (MAX_TRES_GRES wins over MAX_TRES).
BillingMode billing_mode(const std::set<std::string>& priority_flags);

/// Billable TRES of an allocation (calc_job_billable_tres): allocated CPUs ("cpu") when the partition
/// has no TRESBillingWeights, else the weighted combination (mem in MB, weight per MB; the "billing"
/// TRES itself is skipped).
double billable_tres(const TresMap& alloc, const TresWeights& weights, BillingMode mode);

/// PriorityUsageResetPeriod.
enum class UsageResetPeriod : std::uint8_t { kNone, kNow, kDaily, kWeekly, kMonthly, kQuarterly, kYearly };

/// Parses NONE NOW DAILY WEEKLY MONTHLY QUARTERLY YEARLY (any case); throws std::invalid_argument.
UsageResetPeriod parse_usage_reset_period(std::string_view text);

/// First reset boundary strictly after `after` (absolute s, UTC): next 00:00, next Sunday 00:00, 1st
/// of next month / quarter (Jan, Apr, Jul, Oct) / year. kUnlimited for NONE and NOW.
Seconds next_usage_reset(UsageResetPeriod period, Seconds after);

/// Whether usage must be zeroed at decay time `to` given the previous decay run at `from`: a boundary
/// b with from < b <= to exists. NOW: only on the first run (from == kUnsetTime).
bool usage_reset_due(UsageResetPeriod period, Seconds from, Seconds to);

/// Zeroes every association's and every QOS's usage (Slurm `_reset_usage`).
void reset_usage(AssocTree& tree, std::vector<QosUsage>& qos_usage);

}  // namespace slurmtwin::policies
