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
  if (type_ != Type::kQos) return;
  // Ranks by depth-first search; a QOS on a Preempt cycle does not count what lies on it again.
  const auto n = site.qos.size();
  qos_rank_.assign(n, 0);
  std::vector<char> state(n, 0);  // 0 new, 1 on the search path, 2 done
  const auto rank = [&](auto&& self, std::size_t q) -> std::uint16_t {
    if (state[q] != 0) return state[q] == 2 ? qos_rank_[q] : 0;
    state[q] = 1;
    std::uint16_t r = 0;
    for (std::size_t v = 0; v < n; ++v)
      if (v != q && qos_preempts_[q][v] && state[v] != 1)
        r = std::max<std::uint16_t>(r, static_cast<std::uint16_t>(self(self, v) + 1));
    state[q] = 2;
    return qos_rank_[q] = r;
  };
  for (std::size_t q = 0; q < n; ++q) rank(rank, q);
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
    const auto fit = select_nodes_in(s.cluster, p.request, s.partition_bits[partition], available);
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

std::vector<std::uint32_t> Preemption::preempt_for(sim::SimState& s, sim::JobLauncher& launcher,
                                                   std::uint32_t job, std::uint16_t partition,
                                                   const std::vector<bool>& available,
                                                   std::vector<std::uint32_t>* victim_nodes) const {
  if (!enabled()) return {};
  auto& j = s.jobs[job];
  if (!may_preempt(j, partition)) return {};
  // Slurm does not act again for a preemptor within KillWait + MessageTimeout of its last attempt.
  constexpr Seconds kMessageTimeout = 10;
  if (j.preempt_started != kUnsetTime &&
      s.now - j.preempt_started < s.site.scheduler.kill_wait + kMessageTimeout)
    return {};
  auto victims = find_victims(s, job, partition, available);
  if (victims.empty()) return {};
  j.preempt_started = s.now;
  if (victim_nodes)
    for (auto v : victims)
      for (const auto& a : s.jobs[v].alloc) victim_nodes->push_back(a.node);
  for (auto v : victims) launcher.preempt_job(v, action(s, s.jobs[v]), grace(s, s.jobs[v]), job);
  return victims;
}

}  // namespace slurmtwin::policies
