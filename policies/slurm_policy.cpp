#include "policies/slurm_policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "policies/accrue.hpp"
#include "policies/fair_tree.hpp"
#include "policies/limits.hpp"
#include "policies/node_select.hpp"

namespace slurmtwin::policies {

SlurmPolicy::SlurmPolicy(const Site& site, SlurmPolicyOptions options)
    : site_(site),
      options_(options),
      priority_(site),
      decay_(site.scheduler.decay_half_life),
      reset_period_(parse_usage_reset_period(site.scheduler.usage_reset_period)),
      billing_mode_(billing_mode(site.scheduler.priority_flags)),
      preemption_(site),
      reservations_(site),
      main_(site.scheduler.params, &preemption_, reservations_.empty() ? nullptr : &reservations_),
      backfill_(site.scheduler.params, options.backfill_cost, &preemption_,
                reservations_.empty() ? nullptr : &reservations_),
      profiles_(options.check_backfill_profiles),
      tree_(site),
      qos_usage_(make_qos_usage(site)) {
  for (const auto& a : site.associations)
    tree_index_.push_back(tree_.find_user_assoc(a.user, a.account, a.partition));
  for (const auto& p : site.partitions) {
    std::int32_t q = -1;
    for (std::size_t i = 0; i < site.qos.size(); ++i)
      if (site.qos[i].name == p.qos) q = static_cast<std::int32_t>(i);
    partition_qos_.push_back(q);
  }
}

void SlurmPolicy::init(sim::SimState& state) {
  std::unordered_map<std::string_view, std::uint32_t> node_index;
  for (std::uint32_t n = 0; n < site_.nodes.size(); ++n) node_index.emplace(site_.nodes[n].name, n);
  state.partition_nodes.assign(site_.partitions.size(), {});
  state.partition_bits.assign(site_.partitions.size(),
                              std::vector<std::uint64_t>(state.cluster.node_words(), 0));
  for (std::size_t p = 0; p < site_.partitions.size(); ++p) {
    auto& nodes = state.partition_nodes[p];
    for (const auto& name : site_.partitions[p].nodes)
      if (const auto it = node_index.find(name); it != node_index.end()) nodes.push_back(it->second);
    // A node named twice is one node of the partition (Slurm keeps a partition's nodes as a bitmap).
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    for (const auto n : nodes) state.partition_bits[p][n / 64] |= std::uint64_t{1} << (n % 64);
  }
  state.partition_cpus.assign(site_.partitions.size(), 0);
  for (std::size_t p = 0; p < site_.partitions.size(); ++p)
    for (const auto n : state.partition_nodes[p]) state.partition_cpus[p] += state.cluster.node(n).cpus;
  entries_at_.assign(state.jobs.size(), kNoEntries);
  std::size_t arrays = 0;
  for (const auto& j : state.jobs) arrays = std::max(arrays, static_cast<std::size_t>(j.array_slot + 1));
  state.array_running.assign(arrays, 0);
  state.licenses_used.assign(site_.licenses.size(), 0);
  prepare_limits(state);
  prepare_accrue(state, priority_.flags().accrue_always);
}

namespace {

// What a job's age runs from once it has passed: its eligible time, or under accrue limits the time
// it was counted (SimJob::accrue, unset until then).
Seconds age_from(const sim::SimState& s, const sim::SimJob& j) {
  return s.usage.accrue_limits ? j.accrue : j.eligible;
}

// The job's accrue time at `now`. An instant before a requeued job's (re)submit is one of its previous
// run (a requeued job keeps the priority computed then, SlurmPolicy::on_submit): accrue from that run.
Seconds job_accrue_time(const PriorityFlags& flags, const sim::SimState& s, const sim::SimJob& j,
                        Seconds now) {
  if (!j.past_runs.empty() && now < j.submit) {
    const auto& run = j.past_runs.back();
    return accrue_time(flags, run.submit, s.usage.accrue_limits ? run.accrue : run.eligible, now);
  }
  return accrue_time(flags, j.submit, age_from(s, j), now);
}

// The CPUs the job size factor counts (slurmctld's total_cpus, else the request's): those allocated
// while it runs, else `size_cpus`, the size CPUs its priority was last computed with (0: none).
std::uint32_t size_cpu_count(const sim::SimJob& j, std::uint32_t size_cpus) {
  return j.alloc_cpus > 0 ? j.alloc_cpus : size_cpus > 0 ? size_cpus : j.request.total_cpus;
}

PriorityInput priority_input(const sim::SimState& s, const sim::SimJob& j, std::size_t k,
                             const PriorityFlags& flags, const AssocTree& tree, AssocIndex ti,
                             std::uint32_t size_cpus) {
  PriorityInput in;
  in.now = s.now;
  in.accrue_time = job_accrue_time(flags, s, j, s.now);
  in.fs_factor = ti == kNoAssoc ? 0.0 : tree.node(ti).fs_factor;
  in.min_nodes = j.asked_nodes;
  in.cpu_count = size_cpu_count(j, size_cpus);
  in.time_limit = j.time_limit;
  in.partition = j.partitions[k];
  in.qos = j.qos;
  in.assoc_priority = ti == kNoAssoc ? 0 : tree.node(ti).priority;
  in.tres = job_tres_counts(s, j);
  in.nice = j.nice;
  return in;
}

}  // namespace

void SlurmPolicy::check_invariants(const sim::SimState& s) const {
  const auto fail = [](const std::string& what) { throw std::logic_error("policy invariant: " + what); };
  check_accrue(s);
  // Licences held: those of the started jobs not yet ended (running and suspended), never over a count.
  std::vector<std::uint32_t> held(s.licenses_used.size(), 0);
  for (const auto* list : {&s.running, &s.suspended})
    for (const auto ji : *list)
      for (const auto& l : s.jobs[ji].licenses) held[l.license] += l.count;
  for (std::size_t k = 0; k < held.size(); ++k)
    if (held[k] != s.licenses_used[k] || held[k] > site_.licenses[k].count)
      fail(fmt::format("licence {}: {} counted in use, {} held by jobs, {} configured",
                       site_.licenses[k].name, s.licenses_used[k], held[k], site_.licenses[k].count));
  for (const auto ji : s.pending) {
    const auto& j = s.jobs[ji];
    const auto at = ji < entries_at_.size() ? entries_at_[ji] : kNoEntries;
    if (at == kNoEntries) fail(fmt::format("queued job {} has no priority entries", j.id));
    if (at + j.partitions.size() > entries_.size() || j.part_priority.size() != j.partitions.size())
      fail(fmt::format("job {}: its priority entries run past the table", j.id));
    for (std::size_t k = 0; k < j.partitions.size(); ++k) {
      const auto& e = entries_[at + k];
      if (e.job != ji || e.k != k || e.count != j.partitions.size() || !e.queued)
        fail(fmt::format("job {}: priority entry {} belongs elsewhere", j.id, k));
      if (e.priority != j.part_priority[k])
        fail(fmt::format("job {}: entry priority {} but the job shows {}", j.id, e.priority,
                         j.part_priority[k]));
    }
  }
  for (std::size_t i = 0; i < tree_.size(); ++i) {
    const auto& n = tree_.node(static_cast<AssocIndex>(i));
    if (!std::isfinite(n.usage_raw) || n.usage_raw < 0 || !std::isfinite(n.grp_used_wall) ||
        n.grp_used_wall < 0)
      fail(fmt::format("association {}/{}: usage {} s, wall {} s", n.account, n.user, n.usage_raw,
                       n.grp_used_wall));
    if (!std::isfinite(n.usage_efctv) || n.usage_efctv < 0 || !(n.fs_factor >= 0 && n.fs_factor <= 1))
      fail(fmt::format("association {}/{}: effective usage {}, fair-share factor {}", n.account, n.user,
                       n.usage_efctv, n.fs_factor));
  }
  for (const auto& q : qos_usage_)
    if (!std::isfinite(q.usage_raw) || q.usage_raw < 0 || !std::isfinite(q.grp_used_wall) ||
        q.grp_used_wall < 0)
      fail(fmt::format("a QOS's usage {} s, wall {} s", q.usage_raw, q.grp_used_wall));
}

PriorityFactors SlurmPolicy::factors(const sim::SimState& s, std::uint32_t ji, std::size_t k) const {
  const auto& j = s.jobs[ji];
  return priority_.compute(priority_input(
      s, j, k, priority_.flags(), tree_, tree_index_[static_cast<std::size_t>(j.assoc)], priced_size(ji, k)));
}

PriorityFactors SlurmPolicy::factors_with(const PriorityModel& model, const sim::SimState& s,
                                          std::uint32_t ji, std::size_t k) const {
  const auto& j = s.jobs[ji];
  return model.compute(priority_input(s, j, k, model.flags(), tree_,
                                      tree_index_[static_cast<std::size_t>(j.assoc)], priced_size(ji, k)));
}

PriorityFactors SlurmPolicy::factors_at(const sim::SimState& s, std::uint32_t ji, std::size_t k,
                                        Seconds at) const {
  const auto& j = s.jobs[ji];
  auto in = priority_input(s, j, k, priority_.flags(), tree_, tree_index_[static_cast<std::size_t>(j.assoc)],
                           priced_size(ji, k));
  in.now = at;
  in.accrue_time = job_accrue_time(priority_.flags(), s, j, at);
  return priority_.compute(in);
}

Seconds SlurmPolicy::recalculated_before_requeue(const sim::PastRun& previous, Seconds last_decay,
                                                 Seconds period) {
  assert(period > 0);
  if (last_decay == kUnsetTime || last_decay < previous.submit) return previous.submit;
  Seconds t = last_decay;
  if (t >= previous.start) t -= ((t - previous.start) / period + 1) * period;  // the last tick before it
  return std::max(t, previous.submit);
}

void SlurmPolicy::set_priority(sim::SimState& s, std::uint32_t ji) {
  auto& j = s.jobs[ji];
  const auto ti = tree_index_[static_cast<std::size_t>(j.assoc)];
  const auto count = j.partitions.size();
  j.part_priority.assign(count, 0);
  auto& at = entries_at_[ji];
  if (at == kNoEntries) {  // a free range of the job's size, else a new one at the end
    if (free_entries_.size() <= count) free_entries_.resize(count + 1);
    auto& free = free_entries_[count];
    if (!free.empty()) {
      at = free.back();
      free.pop_back();
    } else {
      at = static_cast<std::uint32_t>(entries_.size());
      entries_.resize(entries_.size() + count);
    }
  }
  j.priority = 0;
  for (std::size_t k = 0; k < count; ++k) {
    const auto in = priority_input(s, j, k, priority_.flags(), tree_, ti, j.size_cpus);
    const auto f = priority_.compute(in);
    auto& e = entries_[at + k];
    e.terms = PriorityModel::static_terms(f, in);
    e.submit = j.submit;
    e.eligible = age_from(s, j);
    e.tree = ti;
    e.job = ji;
    e.k = static_cast<std::uint16_t>(k);
    e.count = static_cast<std::uint16_t>(count);
    e.priority = f.priority;
    e.size_cpus = j.size_cpus;
    e.queued = false;
    e.age_final = false;
    j.part_priority[k] = f.priority;
    j.priority = std::max(j.priority, f.priority);
  }
}

std::uint32_t SlurmPolicy::priced_size(std::uint32_t ji, std::size_t k) const {
  const auto at = ji < entries_at_.size() ? entries_at_[ji] : kNoEntries;
  return at == kNoEntries ? 0 : entries_[at + k].size_cpus;
}

void SlurmPolicy::apply_sizes(sim::SimState& s) {
  for (const auto ji : resized_) {
    const auto& j = s.jobs[ji];
    if (entries_at_[ji] == kNoEntries || j.state != sim::SimJobState::kPending) continue;
    auto* e = &entries_[entries_at_[ji]];
    for (std::size_t k = 0, n = j.partitions.size(); k < n; ++k) {
      if (e[k].size_cpus == j.size_cpus) continue;
      PriorityInput in;
      in.min_nodes = j.asked_nodes;
      in.cpu_count = size_cpu_count(j, j.size_cpus);
      in.time_limit = j.time_limit;
      in.partition = j.partitions[k];
      e[k].terms.job_size = priority_.weighted_job_size(in);
      e[k].size_cpus = j.size_cpus;
      e[k].age_final = false;
    }
  }
  resized_.clear();
}

std::uint32_t SlurmPolicy::idle_size_cpus(const sim::SimState& s, const sim::SimJob& j) {
  // Cached per partition and request while every node is in service (the selection reads nothing
  // else of the cluster then).
  const bool cacheable = s.cluster.out_of_service() == 0;
  for (const auto p : j.partitions) {
    IdleKey key{p, j.request};
    if (cacheable)
      if (const auto it = idle_cpus_.find(key); it != idle_cpus_.end()) {
        if (it->second > 0) return it->second;
        continue;
      }
    std::uint32_t cpus = 0;
    if (const auto alloc = select_when_idle(s.cluster, j.request, s.partition_nodes[p], {}))
      for (const auto& a : *alloc) cpus += a.cpus;
    if (cacheable) idle_cpus_.emplace(std::move(key), cpus);
    if (cpus > 0) return cpus;
  }
  return 0;
}

void SlurmPolicy::update_priority(sim::SimState& s, std::uint32_t ji) {
  auto& j = s.jobs[ji];
  const auto ti = tree_index_[static_cast<std::size_t>(j.assoc)];
  const double fs = ti == kNoAssoc ? 0.0 : tree_.node(ti).fs_factor;
  const auto accrue = accrue_time(priority_.flags(), j.submit, age_from(s, j), s.now);
  const bool incr_only = priority_.flags().incr_only;
  auto* e = &entries_[entries_at_[ji]];
  std::uint32_t top = 0;
  for (std::size_t k = 0, n = j.partitions.size(); k < n; ++k) {
    auto p = priority_.recompute(e[k].terms, s.now, accrue, fs);
    if (incr_only && p < e[k].priority) p = e[k].priority;
    e[k].priority = p;
    e[k].age_final = false;
    j.part_priority[k] = p;
    top = std::max(top, p);
  }
  j.priority = top;
}

void SlurmPolicy::recalculate_queued(sim::SimState& s) {
  apply_sizes(s);
  // Fair-share factors now, and whether each moved since the last recalculation.
  const auto& nodes = tree_.nodes();
  if (fs_now_.size() != nodes.size()) {
    fs_now_.assign(nodes.size(), 0.0);
    fs_moved_.assign(nodes.size(), 1);
  }
  for (std::size_t t = 0; t < nodes.size(); ++t) {
    fs_moved_[t] = fs_moved_[t] || nodes[t].fs_factor != fs_now_[t];
    fs_now_[t] = nodes[t].fs_factor;
  }
  const bool incr_only = priority_.flags().incr_only;
  const Seconds now = s.now;
  for (auto& e : entries_) {
    if (!e.queued) continue;
    // A single-partition job whose age factor is final and whose fair share did not move keeps its
    // priority: the same inputs give the same bits (multi-partition jobs are recomputed so that
    // SimJob::priority is their maximum again).
    if (e.age_final && e.count == 1 && (e.tree == kNoAssoc || !fs_moved_[static_cast<std::size_t>(e.tree)]))
      continue;
    const double fs = e.tree == kNoAssoc ? 0.0 : fs_now_[static_cast<std::size_t>(e.tree)];
    const auto accrue = accrue_time(priority_.flags(), e.submit, e.eligible, now);
    auto p = priority_.recompute(e.terms, now, accrue, fs);
    if (incr_only && p < e.priority) p = e.priority;
    e.priority = p;
    e.age_final = priority_.age_final(now, accrue);
    auto& j = s.jobs[e.job];
    j.part_priority[e.k] = p;
    if (e.count == 1)
      j.priority = p;
    else if (e.k + 1 == e.count)  // the job's last entry: all its partitions are done
      j.priority = *std::max_element(j.part_priority.begin(), j.part_priority.end());
  }
  std::fill(fs_moved_.begin(), fs_moved_.end(), 0);
}

std::string SlurmPolicy::admit(sim::SimState& s, std::uint32_t job) {
  // sbatch --reservation by a user or account its lists leave out: "Access denied to requested
  // reservation" (validate_job_resv).
  if (const auto& j = s.jobs[job]; j.reservation >= 0 && !reservations_.admits(s, j))
    return "reservation access denied";
  auto why = check_submit_limits(s, s.jobs[job]);
  if (why.empty()) count_submit(s, s.jobs[job]);
  return why;
}

void SlurmPolicy::on_submit(sim::SimState& s, std::uint32_t job) {
  const auto& j = s.jobs[job];
  // A requeued job may still have the records of its previous stay in the queue (records are dropped
  // lazily, only once they are a quarter of the queue or at a re-sort after a priority recalculation):
  // they go now, so that no pass finds it before it is eligible again, where it was before it ran.
  if (!j.past_runs.empty()) drop_records(job);
  accrue_wait(s, job);
  if (j.past_runs.empty() || !options_.requeue_keeps_priority) {
    set_priority(s, job);
    // slurmctld computes the priority, then tests the job on idle nodes (select_nodes, test_only):
    // that test's CPUs count from the next recalculation on.
    if (j.past_runs.empty() && priority_.sizes_jobs()) {
      s.jobs[job].size_cpus = idle_size_cpus(s, j);
      resized_.push_back(job);
    }
    return;
  }
  // Requeued: slurmctld does not recompute the priority then, so the job keeps the one (and the
  // factors sprio shows) of its last recalculation while it was pending before; the next decay run
  // recomputes it from its new eligible time (real Slurm 22.05: age 5 s from a tick 5 s after the
  // previous eligible time, shown again after the requeue; docs/fidelity.md).
  const Seconds now = s.now;
  s.now = recalculated_before_requeue(j.past_runs.back(), last_decay_,
                                      std::max<Seconds>(60, site_.scheduler.calc_period));
  set_priority(s, job);
  s.now = now;
}

void SlurmPolicy::on_queued(sim::SimState& s, std::uint32_t job) {
  // A job that waited for its begin time has the priority of the last recalculation, as in Slurm
  // (the decay thread recomputes every pending job, eligible or not).
  if (last_decay_ != kUnsetTime && s.jobs[job].submit < last_decay_) {
    const Seconds now = s.now;
    s.now = last_decay_;
    update_priority(s, job);
    s.now = now;
  }
  auto* e = &entries_[entries_at_[job]];
  for (std::size_t k = 0; k < s.jobs[job].partitions.size(); ++k) e[k].queued = true;
  append_queue_records(s, job, queued_since_, &preemption_);
  unsettled_.add(job);
}

void SlurmPolicy::drop_records(std::uint32_t job) {
  std::size_t dropped = 0;
  std::erase_if(queue_, [&](const QueueRecord& r) {
    if (r.job != job) return false;
    --queue_counts_[r.partition];
    ++dropped;
    return true;
  });
  stale_records_ -= std::min(stale_records_, dropped);
}

const std::vector<QueueRecord>& SlurmPolicy::sorted_queue(const sim::SimState& s) {
  if (queue_counts_.empty()) queue_counts_.assign(site_.partitions.size(), 0);
  // A job that left the queue again before any pass merged its records (cancelled in the second it was
  // queued, before that second's pass) counted them stale: drop them before they are merged, as the
  // erasure below may otherwise run first and leave them in the queue with no priority entries.
  const auto unmerged = queued_since_.size();
  std::erase_if(queued_since_, [&](const QueueRecord& r) { return !sim::in_queue(s.jobs[r.job], s.now); });
  stale_records_ -= std::min(stale_records_, unmerged - queued_since_.size());
  // Drop records of jobs that left the queue when they are a quarter of it (passes skip them anyway)
  // or when the whole queue is re-sorted.
  // (With no start since the last erasure there is nothing to drop.)
  if ((queue_stale_ && stale_records_ > 0) || stale_records_ * 4 > queue_.size()) {
    std::erase_if(queue_, [&](const QueueRecord& r) {
      const bool gone = !sim::in_queue(s.jobs[r.job], s.now);
      if (gone) --queue_counts_[r.partition];
      return gone;
    });
    stale_records_ = 0;
  }
  std::sort(queued_since_.begin(), queued_since_.end(), queue_before);
  for (const auto& r : queued_since_) ++queue_counts_[r.partition];
  const auto mid = static_cast<std::ptrdiff_t>(queue_.size());
  queue_.insert(queue_.end(), queued_since_.begin(), queued_since_.end());
  queued_since_.clear();
  if (queue_stale_) {
    // Priorities were recalculated: refresh them in place; the order mostly holds, so re-sort cheaply.
    // One pass refreshes them and finds the out-of-order neighbours.
    auto& descents = descents_;
    descents.clear();
    for (std::size_t i = 0; i < queue_.size(); ++i) {
      auto& r = queue_[i];
      assert(entries_at_[r.job] != kNoEntries);  // records of jobs no longer pending were erased above
      r.priority = entries_[entries_at_[r.job] + r.part_index].priority;
      if (i > 0 && descents.size() <= kMaxDescents && queue_before(r, queue_[i - 1])) descents.push_back(i);
    }
    if (descents.size() > kMaxDescents)
      std::sort(queue_.begin(), queue_.end(), queue_before);
    else
      sort_at_descents(queue_, descents);
    queue_stale_ = false;
  } else {
    std::inplace_merge(queue_.begin(), queue_.begin() + mid, queue_.end(), queue_before);
  }
  return queue_;
}

ChargedJob SlurmPolicy::charged(const sim::SimState& s, const sim::SimJob& j) const {
  ChargedJob c;
  c.assoc = tree_index_[static_cast<std::size_t>(j.assoc)];
  c.qos = j.qos;
  c.partition_qos = partition_qos_[j.run_partition];
  c.start = j.start;
  c.end = j.end;
  c.billing = j.billing;
  c.usage_factor = site_.qos[j.qos].usage_factor;
  (void)s;
  return c;
}

void SlurmPolicy::on_start(sim::SimState& s, std::uint32_t job) {
  auto& j = s.jobs[job];
  j.billing = billable_tres(job_tres_counts(s, j), site_.partitions[j.run_partition].tres_billing_weights,
                            billing_mode_);
  count_start(s, j);
  if (j.array_slot >= 0) ++s.array_running[static_cast<std::size_t>(j.array_slot)];
  for (const auto& l : j.licenses) s.licenses_used[l.license] += l.count;  // allocate_nodes: license_job_get
  accrue_leave(s, job);
  // Its entries are not read again until a requeue (which computes them anew).
  leave_queue(s, job, /*keep_entries=*/priority_.flags().calculate_running);
}

void SlurmPolicy::on_cancel_pending(sim::SimState& s, std::uint32_t job) {
  count_withdrawn(s, s.jobs[job]);
  accrue_leave(s, job);
  leave_queue(s, job, /*keep_entries=*/false);
}

void SlurmPolicy::leave_queue(const sim::SimState& s, std::uint32_t job, bool keep_entries) {
  const auto& j = s.jobs[job];
  stale_records_ += j.partitions.size();  // its queue records are skipped, then dropped lazily
  if (entries_at_[job] == kNoEntries) return;
  auto* e = &entries_[entries_at_[job]];
  for (std::size_t k = 0; k < j.partitions.size(); ++k) e[k].queued = false;
  if (keep_entries) return;
  free_entries_[j.partitions.size()].push_back(entries_at_[job]);
  entries_at_[job] = kNoEntries;
}

void SlurmPolicy::on_end(sim::SimState& s, std::uint32_t job) {
  const auto& j = s.jobs[job];
  if (last_decay_ != kUnsetTime && j.assoc >= 0 &&
      tree_index_[static_cast<std::size_t>(j.assoc)] != kNoAssoc) {
    const auto c = decay_.charge_slice(tree_, qos_usage_, charged(s, j), last_decay_, s.now, /*at_end=*/true);
    charge_tres_minutes(s, j, last_decay_, s.now, c.wall, c.wall_nodecay);
  }
  count_end(s, j);
  if (j.array_slot >= 0) --s.array_running[static_cast<std::size_t>(j.array_slot)];
  for (const auto& l : j.licenses) s.licenses_used[l.license] -= l.count;  // cleanup_completing
}

void SlurmPolicy::decay_tick(sim::SimState& s) {
  const Seconds t = s.now;
  if (usage_reset_due(reset_period_, last_decay_, t)) {
    reset_usage(tree_, qos_usage_);
    reset_tres_minutes(s);
  }
  // Classic fair share: accounts' usage from before this run decays and charges anything; each
  // user's once a job of it needs it (fair_tree.hpp).
  const bool classic = !priority_.flags().fair_tree;
  const bool oblivious = priority_.flags().depth_oblivious;
  if (classic) {
    classic_accounts(tree_, oblivious);
    user_fresh_.assign(tree_.nodes().size(), 0);
  }
  if (last_decay_ != kUnsetTime && t > last_decay_) {
    decay_.decay(tree_, qos_usage_, t - last_decay_);
    decay_tres_minutes(s, decay_.factor(t - last_decay_));
    // Running and suspended jobs: slurmctld's decay thread charges every job that has started and is
    // not pending or finished, so a suspended job keeps accruing usage (spec §2.6, §7.6).
    const auto charge = [&](std::uint32_t ji) {
      const auto& j = s.jobs[ji];
      if (tree_index_[static_cast<std::size_t>(j.assoc)] == kNoAssoc) return;
      const auto c = decay_.charge_slice(tree_, qos_usage_, charged(s, j), last_decay_, t, /*at_end=*/false);
      charge_tres_minutes(s, j, last_decay_, t, c.wall, c.wall_nodecay);
    };
    if (!classic) {
      for (const auto* jobs : {&s.running, &s.suspended})
        for (auto ji : *jobs) charge(ji);
    } else {
      // In the job list's order (creation: job ids ascending), a running job is charged where the list
      // reaches it, and a pending job's user gets its usage from the usage then, before the jobs after
      // it are charged (decay_apply_new_usage, then _get_fairshare_priority).
      list_order_.clear();
      for (const auto* jobs : {&s.running, &s.suspended, &s.pending})
        list_order_.insert(list_order_.end(), jobs->begin(), jobs->end());
      std::sort(list_order_.begin(), list_order_.end(), [&](std::uint32_t a, std::uint32_t b) {
        return std::tie(s.jobs[a].id, s.jobs[a].array_task) < std::tie(s.jobs[b].id, s.jobs[b].array_task);
      });
      for (const auto ji : list_order_) {
        const auto& j = s.jobs[ji];
        if (j.state != sim::SimJobState::kPending) {
          charge(ji);
          continue;
        }
        const auto ti = tree_index_[static_cast<std::size_t>(j.assoc)];
        if (ti == kNoAssoc || user_fresh_[ti] != 0) continue;
        classic_user(tree_, ti, oblivious);
        user_fresh_[ti] = 1;
      }
    }
    find_limit_kills(s);
  }
  if (classic) {
    // Users no job needed yet: from the usage now (sshare or the next submit would compute them so).
    for (const auto ti : tree_.top_down())
      if (tree_.node(ti).is_user && user_fresh_[ti] == 0) classic_user(tree_, ti, oblivious);
    classic_fs_factors(tree_, site_.scheduler.fairshare_dampening_factor);
  } else {
    compute_fair_tree(tree_, options_.fair_tree_ties);
  }
  recalculate_queued(s);
  if (priority_.flags().calculate_running)
    for (auto ji : s.running) set_priority(s, ji);
  last_decay_ = t;
  queue_stale_ = true;
}

void SlurmPolicy::count_accrue(sim::SimState& s) {
  if (!s.usage.accrue_limits) return;
  // The next recalculation computes the age of each job counted now from its accrue time.
  for (const auto job : accrue_count(s)) {
    if (entries_at_[job] == kNoEntries) continue;
    auto* e = &entries_[entries_at_[job]];
    for (std::size_t k = 0; k < s.jobs[job].partitions.size(); ++k) {
      e[k].eligible = s.jobs[job].accrue;
      e[k].age_final = false;
    }
  }
}

void SlurmPolicy::main_pass(sim::SimState& s, sim::JobLauncher& launcher, bool full) {
  count_accrue(s);
  const auto& queue = sorted_queue(s);
  // Passes that never find every partition blocked do not prune the list: keep it near the queue's size.
  if (unsettled_.jobs().size() > 2 * s.pending.size() + 64)
    unsettled_.retain([&](std::uint32_t job) {
      const auto& j = s.jobs[job];
      return j.state == sim::SimJobState::kPending &&
             (j.reason == sim::PendingReason::kNone || j.reason == sim::PendingReason::kResources);
    });
  main_.run(s, launcher, full, queue, &queue_counts_, &unsettled_);
}

std::optional<SlurmPolicy::BackfillCycle> SlurmPolicy::backfill_pass(sim::SimState& s,
                                                                     sim::JobLauncher& launcher) {
  if (site_.scheduler.scheduler_type != "sched/backfill") return std::nullopt;
  count_accrue(s);
  last_backfill_ = backfill_.run(s, launcher, sorted_queue(s), &profiles_);
  if (priority_.sizes_jobs())
    resized_.insert(resized_.end(), last_backfill_.sized.begin(), last_backfill_.sized.end());
  return BackfillCycle{backfill_.cost_model().duration(site_.scheduler.params, last_backfill_.tested),
                       last_backfill_.updated_jobs};
}

}  // namespace slurmtwin::policies
