#pragma once
// Multifactor job priority (priority/multifactor): normalized factors, weights, clamping.
// Spec: slurm-scheduling-spec.md §2.1-2.5.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "traces/site.hpp"

namespace slurmtwin::policies {

/// PriorityFlags as booleans (read_config.c `_validate_and_set_defaults`).
struct PriorityFlags {
  bool fair_tree = true;  // default; cleared by NO_FAIR_TREE and DEPTH_OBLIVIOUS
  bool depth_oblivious = false;
  bool accrue_always = false;
  bool small_relative_to_time = false;
  bool calculate_running = false;
  bool incr_only = false;
  bool max_tres = false;
  bool max_tres_gres = false;
  bool no_normal_assoc = false;
  bool no_normal_part = false;
  bool no_normal_qos = false;
  bool no_normal_tres = false;

  /// From upper- or lower-case flag names; NO_NORMAL_ALL sets every NO_NORMAL_*. Unknown names are
  /// ignored (Slurm logs and ignores them too).
  static PriorityFlags parse(const std::set<std::string>& names);
};

/// Everything about one job (for one partition/QOS pair) that its priority depends on.
struct PriorityInput {
  Seconds now = 0;                   // time of this calculation, absolute s
  Seconds accrue_time = kUnsetTime;  // absolute s; unset = not accruing yet (age factor 0)
  double fs_factor = 0.0;            // the association's fs_factor (compute_fair_tree)
  std::uint32_t min_nodes = 1;       // details.min_nodes
  std::uint32_t cpu_count = 0;       // allocated CPUs, else max_cpus, else min_cpus (0 = unknown)
  Seconds time_limit = kUnsetTime;   // s; kUnsetTime / kUnlimited -> the partition's MaxTime
  std::size_t partition = 0;         // index into Site::partitions
  std::int32_t qos = -1;             // index into Site::qos, -1 = none
  std::uint32_t assoc_priority = 0;  // association Priority (AssocNode::priority)
  TresMap tres;                      // allocated TRES if running, else requested (mem in MB)
  std::int64_t nice = 0;             // real nice (not offset); positive lowers priority
  std::int64_t site_factor = 0;      // real site factor (not offset)
};

/// Every normalized factor, every weighted term, and the final priority.
struct PriorityFactors {
  double age = 0.0;
  double assoc = 0.0;
  double fairshare = 0.0;
  double job_size = 0.0;
  double partition = 0.0;
  double qos = 0.0;
  std::map<std::string, double> tres;  // per weighted TRES name: normalized (or raw) count

  double weighted_age = 0.0;
  double weighted_assoc = 0.0;
  double weighted_fairshare = 0.0;
  double weighted_job_size = 0.0;
  double weighted_partition = 0.0;
  double weighted_qos = 0.0;
  std::map<std::string, double> weighted_tres;  // factor * weight per TRES
  double weighted_tres_sum = 0.0;

  double sum = 0.0;            // all weighted terms + site_factor - nice, before clamping
  std::uint32_t priority = 1;  // (uint32) min(max(sum, 1), 2^32 - 1)
};

/// The weighted terms of a pending job's priority that do not change while it pends (they depend on
/// its request and the configuration only). Age and fair-share move at every recalculation.
struct StaticPriorityTerms {
  double assoc = 0.0;
  double job_size = 0.0;
  double partition = 0.0;
  double qos = 0.0;
  double tres_sum = 0.0;
  std::int64_t site_factor = 0;
  std::int64_t nice = 0;
};

/// The multifactor priority policy: configuration and site-wide maxima, fixed at construction.
class PriorityModel {
 public:
  /// Uses site.scheduler for weights and flags.
  explicit PriorityModel(const Site& site);
  PriorityModel(const Site& site, const SchedulerSettings& settings);

  /// All factors and the final priority of one job at input.now.
  PriorityFactors compute(const PriorityInput& input) const;
  /// The static terms of a full computation (to be reused by recompute()).
  static StaticPriorityTerms static_terms(const PriorityFactors& factors, const PriorityInput& input);
  /// The priority compute() would give for new `now`, accrue time and fs factor, reusing the static
  /// terms: the same operations in the same order, so the result is bit-identical.
  /// Inline: called for every pending job at every recalculation.
  std::uint32_t recompute(const StaticPriorityTerms& terms, Seconds now, Seconds accrue_time,
                          double fs_factor) const {
    const double weighted_age = age_factor(now, accrue_time) * settings_.weight_age;
    const double weighted_fs =
        (settings_.weight_fairshare != 0 ? fs_factor : 0.0) * settings_.weight_fairshare;
    return clamp_priority(sum_terms(weighted_age, terms.assoc, weighted_fs, terms.job_size, terms.partition,
                                    terms.qos, terms.tres_sum, terms.site_factor, terms.nice));
  }

  /// The age factor at `now` is the one at every later time (no age weight, not accruing, or
  /// PriorityMaxAge reached).
  bool age_final(Seconds now, Seconds accrue_time) const {
    return settings_.weight_age == 0 || accrue_time == kUnsetTime || now - accrue_time >= settings_.max_age;
  }

  /// The job size term (factor x PriorityWeightJobSize) of compute(input), the same bits.
  double weighted_job_size(const PriorityInput& input) const {
    return job_size(input) * settings_.weight_job_size;
  }
  /// The job size factor counts (PriorityWeightJobSize is set).
  bool sizes_jobs() const { return settings_.weight_job_size != 0; }

  const PriorityFlags& flags() const { return flags_; }
  /// max over partitions of PriorityJobFactor (starts at 1).
  std::uint32_t max_partition_factor() const { return max_part_factor_; }
  /// max over QOS of Priority (0 when none).
  std::uint32_t max_qos_priority() const { return max_qos_priority_; }
  /// max over associations of (inherited) Priority (0 when none).
  std::uint32_t max_assoc_priority() const { return max_assoc_priority_; }
  std::uint32_t cluster_nodes() const { return cluster_nodes_; }
  std::uint64_t cluster_cpus() const { return cluster_cpus_; }
  /// TRES totals of a partition: cpu, mem (MB), node, gres/<name> and gres/<name>:<type>.
  const TresMap& partition_tres(std::size_t partition) const { return partition_tres_.at(partition); }

 private:
  double job_size_factor(const PriorityInput& in) const;
  /// compute()'s job size factor (0 without its weight or an empty cluster).
  double job_size(const PriorityInput& in) const {
    return sizes_jobs() && cluster_nodes_ != 0 && cluster_cpus_ != 0 ? job_size_factor(in) : 0.0;
  }
  double age_factor(Seconds now, Seconds accrue) const {
    if (settings_.weight_age == 0 || accrue == kUnsetTime) return 0.0;
    const Seconds diff = std::max<Seconds>(0, now - accrue);
    return diff < settings_.max_age ? static_cast<double>(diff) / static_cast<double>(settings_.max_age)
                                    : 1.0;
  }
  /// Slurm's sum (_get_priority_internal order) of the weighted terms, site factor and nice: the
  /// order of the additions matters to the last bit.
  static double sum_terms(double age, double assoc, double fs, double js, double part, double qos,
                          double tres, std::int64_t site_factor, std::int64_t nice) {
    return age + assoc + fs + js + part + qos + tres + static_cast<double>(site_factor) -
           static_cast<double>(nice);
  }
  /// 0 is reserved for held jobs; the double is truncated toward zero into uint32 (max 2^32 - 1).
  static std::uint32_t clamp_priority(double sum) {
    constexpr double kMaxPriority = 4294967295.0;
    return static_cast<std::uint32_t>(std::min(std::max(sum, 1.0), kMaxPriority));
  }

  SchedulerSettings settings_;
  PriorityFlags flags_;
  std::vector<std::uint32_t> part_factor_;  // PriorityJobFactor per partition
  std::vector<Seconds> part_max_time_;      // MaxTime per partition, s
  std::vector<std::uint32_t> qos_priority_;
  std::vector<TresMap> partition_tres_;
  std::uint32_t max_part_factor_ = 1;
  std::uint32_t max_qos_priority_ = 0;
  std::uint32_t max_assoc_priority_ = 0;
  std::uint32_t cluster_nodes_ = 0;
  std::uint64_t cluster_cpus_ = 0;
};

/// The job's accrue time for the age factor: submit time with ACCRUE_ALWAYS, else the eligible
/// (begin) time once it has passed; kUnsetTime while not eligible (future or unknown begin time).
inline Seconds accrue_time(const PriorityFlags& flags, Seconds submit, Seconds eligible, Seconds now) {
  if (flags.accrue_always) return submit;
  if (eligible == kUnsetTime || eligible > now) return kUnsetTime;
  return eligible;
}

}  // namespace slurmtwin::policies
