#pragma once
// Preemption (spec §7): preempt/partition_prio (PriorityTier) and preempt/qos (QOS Preempt lists),
// victims in ascending (tier or QOS priority, node count) order, PreemptExemptTime, GraceTime, and the
// CANCEL, REQUEUE and SUSPEND modes (a suspended victim resumes when its preemptor has ended).
#include <vector>

#include "sim/controller.hpp"
#include "sim/sim_state.hpp"
#include "traces/site.hpp"

namespace slurmtwin::policies {

class Preemption {
 public:
  explicit Preemption(const Site& site);
  /// PreemptType is partition_prio or qos (and the global PreemptMode is not OFF).
  bool enabled() const { return type_ != Type::kNone; }
  /// Whether a pending job may preempt others at all.
  bool may_preempt(const sim::SimJob& job, std::uint16_t partition) const;
  /// The job's rank in the queue order's "preemptors first" rule (spec §4: a record whose job can
  /// preempt another's goes before it, whatever their tiers and priorities). preempt/qos: 0 for a QOS
  /// that preempts no other QOS, else 1 + the highest rank of the QOSes it preempts; records compare
  /// by rank after PriorityTier and before priority, so within a tier a job whose QOS can preempt
  /// another's always sorts first. Slurm's pairwise test is not a strict weak order (two QOSes of
  /// different ranks may be unrelated, then it compares them by tier and priority): ranks are exact
  /// for layered Preempt lists (each QOS preempts every lower one) within a tier; across tiers the tier
  /// decides, which differs only for a preemptor in a lower-tier partition than its victim.
  /// preempt/partition_prio: 0 (a higher-tier partition sharing nodes already sorts first by tier).
  std::uint16_t queue_rank(const sim::SimJob& job) const {
    return job.qos < qos_rank_.size() ? qos_rank_[job.qos] : 0;
  }
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
  /// Preempts, through `launcher`, the victims `job` needs to start in `partition` on `available`
  /// nodes (spec §7.3-7.4), unless it may not preempt or acted within KillWait + MessageTimeout;
  /// returns them (empty: nothing done). `victim_nodes` (optional) receives their nodes, taken before
  /// they are acted on.
  std::vector<std::uint32_t> preempt_for(sim::SimState& state, sim::JobLauncher& launcher, std::uint32_t job,
                                         std::uint16_t partition, const std::vector<bool>& available,
                                         std::vector<std::uint32_t>* victim_nodes = nullptr) const;

 private:
  enum class Type { kNone, kPartitionPrio, kQos };
  PreemptMode mode(const sim::SimState& state, const sim::SimJob& victim) const;
  Seconds exempt_time(const sim::SimState& state, const sim::SimJob& victim) const;

  const Site& site_;
  Type type_ = Type::kNone;
  std::vector<std::vector<bool>> qos_preempts_;  // [preemptor qos][victim qos]
  std::vector<std::uint16_t> qos_rank_;          // per QOS: queue_rank (empty unless preempt/qos)
};

}  // namespace slurmtwin::policies
