#include "policies/preemption.hpp"

#include <algorithm>

#include "policies/node_select.hpp"
#include "traces/text.hpp"

namespace slurmtwin::policies {

Preemption::Preemption(const Site& site) : site_(site) {
  const auto& t = site.scheduler.preempt_type;
  if (t == "preempt/partition_prio")
    type_ = Type::kPartitionPrio;
  else if (t == "preempt/qos")
    type_ = Type::kQos;
  qos_preempts_.assign(site.qos.size(), std::vector<bool>(site.qos.size(), false));
  for (std::size_t a = 0; a < site.qos.size(); ++a)
    for (const auto& name : site.qos[a].preempt)
      for (std::size_t b = 0; b < site.qos.size(); ++b)
        if (site.qos[b].name == name) qos_preempts_[a][b] = true;
}

bool Preemption::may_preempt(const sim::SimJob& job, std::uint16_t partition) const {
  switch (type_) {
    case Type::kNone:
      return false;
    case Type::kPartitionPrio:
      return std::any_of(site_.partitions.begin(), site_.partitions.end(), [&](const Partition& p) {
        return p.priority_tier < site_.partitions[partition].priority_tier;
      });
    case Type::kQos:
      return std::find(qos_preempts_[job.qos].begin(), qos_preempts_[job.qos].end(), true) !=
             qos_preempts_[job.qos].end();
  }
  return false;
}

PreemptMode Preemption::mode(const sim::SimState& s, const sim::SimJob& v) const {
  PreemptMode m = PreemptMode::kUnset;
  if (type_ == Type::kPartitionPrio) m = s.site.partitions[v.run_partition].preempt_mode;
  if (type_ == Type::kQos) m = s.site.qos[v.qos].preempt_mode;
  return m == PreemptMode::kUnset ? s.site.scheduler.preempt_mode : m;
}

sim::PreemptAction Preemption::action(const sim::SimState& s, const sim::SimJob& v) const {
  switch (mode(s, v)) {
    case PreemptMode::kCancel:
      return sim::PreemptAction::kCancel;
    case PreemptMode::kRequeue:
      return s.site.scheduler.job_requeue ? sim::PreemptAction::kRequeue : sim::PreemptAction::kCancel;
    case PreemptMode::kSuspend:
    case PreemptMode::kSuspendGang:
      return sim::PreemptAction::kSuspend;
    default:
      return sim::PreemptAction::kNone;  // OFF, GANG alone, WITHIN without a mode
  }
}

Seconds Preemption::grace(const sim::SimState& s, const sim::SimJob& v) const {
  return type_ == Type::kQos ? s.site.qos[v.qos].grace_time : s.site.partitions[v.run_partition].grace_time;
}

// First set of {partition QOS, job QOS} PreemptExemptTime (swapped with OverPartQOS), else global.
Seconds Preemption::exempt_time(const sim::SimState& s, const sim::SimJob& v) const {
  const Qos* job_qos = &s.site.qos[v.qos];
  const Qos* part_qos = s.site.find_qos(s.site.partitions[v.run_partition].qos);
  const Qos* first = part_qos;
  const Qos* second = job_qos;
  if (job_qos->flags.count("OverPartQOS")) std::swap(first, second);
  for (const Qos* q : {first, second})
    if (q && q->preempt_exempt_time) return *q->preempt_exempt_time;
  return s.site.scheduler.preempt_exempt_time;
}

bool Preemption::can_preempt(const sim::SimState& s, const sim::SimJob& p, std::uint16_t partition,
                             const sim::SimJob& v) const {
  if (v.state != sim::SimJobState::kRunning || v.preempt != sim::PreemptAction::kNone) return false;
  if (action(s, v) == sim::PreemptAction::kNone) return false;
  if (s.now < v.start + exempt_time(s, v)) return false;
  const bool priority_mode = false;  // PreemptMode=PRIORITY is folded into OFF by the parser
  switch (type_) {
    case Type::kNone:
      return false;
    case Type::kPartitionPrio:
      if (s.site.partitions[v.run_partition].priority_tier >= s.site.partitions[partition].priority_tier)
        return false;
      return !priority_mode || p.priority >= v.priority;
    case Type::kQos:
      if (v.qos == p.qos) return mode(s, v) == PreemptMode::kWithin && p.priority > v.priority;
      return qos_preempts_[p.qos][v.qos];
  }
  return false;
}

std::vector<std::uint32_t> Preemption::find_victims(sim::SimState& s, std::uint32_t job,
                                                    std::uint16_t partition,
                                                    const std::vector<bool>& available) const {
  if (!enabled()) return {};
  const auto& p = s.jobs[job];
  const auto& part_nodes = s.partition_nodes[partition];
  std::vector<bool> in_partition(s.cluster.nodes().size(), false);
  for (auto n : part_nodes) in_partition[n] = true;
  struct Candidate {
    std::uint32_t job;
    std::uint64_t key;
  };
  std::vector<Candidate> candidates;
  for (auto ri : s.running) {
    const auto& v = s.jobs[ri];
    if (!can_preempt(s, p, partition, v)) continue;
    if (std::none_of(v.alloc.begin(), v.alloc.end(),
                     [&](const sim::NodeAlloc& a) { return in_partition[a.node]; }))
      continue;
    const std::uint64_t rank = type_ == Type::kQos
                                   ? std::min<std::uint32_t>(s.site.qos[v.qos].priority, 0xFFFF)
                                   : s.site.partitions[v.run_partition].priority_tier;
    candidates.push_back({ri, (rank << 16) + std::min<std::uint64_t>(v.alloc.size(), 0xFFFF)});
  }
  // Ascending key; equal keys by job id for a deterministic order.
  std::sort(candidates.begin(), candidates.end(), [&](const Candidate& a, const Candidate& b) {
    return a.key != b.key ? a.key < b.key : s.jobs[a.job].id < s.jobs[b.job].id;
  });
  if (candidates.empty()) return {};
  // Release candidates one at a time from the cluster itself (and give everything back afterwards:
  // allocate is release's exact inverse), which is far cheaper than copying the cluster state.
  std::vector<std::uint32_t> victims;
  std::size_t released = 0;
  for (; released < candidates.size() && victims.empty(); ++released) {
    const auto& v = s.jobs[candidates[released].job];
    // A job to be suspended gives up only its CPUs (its memory and GRES stay allocated).
    if (action(s, v) == sim::PreemptAction::kSuspend)
      s.cluster.suspend(v.alloc);
    else
      s.cluster.release(v.request, v.alloc);
    const auto fit = select_nodes(s.cluster, p.request, part_nodes, available);
    if (!fit) continue;
    std::vector<bool> chosen(s.cluster.nodes().size(), false);
    for (const auto& a : *fit) chosen[a.node] = true;
    for (std::size_t k = 0; k <= released; ++k) {
      const auto& c = s.jobs[candidates[k].job];
      if (std::any_of(c.alloc.begin(), c.alloc.end(),
                      [&](const sim::NodeAlloc& a) { return chosen[a.node]; }))
        victims.push_back(candidates[k].job);
    }
  }
  for (std::size_t k = released; k-- > 0;) {
    const auto& v = s.jobs[candidates[k].job];
    if (action(s, v) == sim::PreemptAction::kSuspend)
      s.cluster.resume(v.alloc);
    else
      s.cluster.allocate(v.request, v.alloc);
  }
  return victims;
}

}  // namespace slurmtwin::policies
