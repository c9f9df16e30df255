#pragma once
// Preemption (spec §7): preempt/partition_prio (PriorityTier) and preempt/qos (QOS Preempt lists),
// victims in ascending (tier or QOS priority, node count) order, PreemptExemptTime, GraceTime, and the
// CANCEL, REQUEUE and SUSPEND modes (a suspended victim resumes when its preemptor has ended).
#include <vector>

#include "sim/sim_state.hpp"
#include "traces/site.hpp"

namespace slurmtwin::policies {

class Preemption {
 public:
  explicit Preemption(const Site& site);
  /// PreemptType is partition_prio or qos (and the global PreemptMode is not OFF).
  bool enabled() const { return type_ != Type::kNone; }
  /// Whether a pending job may preempt others at all (queue order puts such jobs first).
  bool may_preempt(const sim::SimJob& job, std::uint16_t partition) const;
  /// Whether `preemptor` (considered for `partition`) may preempt the running `victim` now.
  bool can_preempt(const sim::SimState& state, const sim::SimJob& preemptor, std::uint16_t partition,
                   const sim::SimJob& victim) const;
  /// Running jobs to preempt so that `job` can start in `partition` on `available` nodes, or empty when
  /// preempting cannot make it fit. Victims are tried in Slurm's order and only those overlapping the
  /// allocation that fits are returned. The cluster state is changed during the search and restored.
  std::vector<std::uint32_t> find_victims(sim::SimState& state, std::uint32_t job, std::uint16_t partition,
                                          const std::vector<bool>& available) const;
  /// What happens to `victim`: cancel, requeue or suspend (its partition's or QOS's PreemptMode, else
  /// the global one).
  sim::PreemptAction action(const sim::SimState& state, const sim::SimJob& victim) const;
  /// GraceTime of the victim's partition (partition_prio) or QOS (qos), s.
  Seconds grace(const sim::SimState& state, const sim::SimJob& victim) const;

 private:
  enum class Type { kNone, kPartitionPrio, kQos };
  PreemptMode mode(const sim::SimState& state, const sim::SimJob& victim) const;
  Seconds exempt_time(const sim::SimState& state, const sim::SimJob& victim) const;

  const Site& site_;
  Type type_ = Type::kNone;
  std::vector<std::vector<bool>> qos_preempts_;  // [preemptor qos][victim qos]
};

}  // namespace slurmtwin::policies
