#include "policies/main_scheduler.hpp"

#include <algorithm>

#include "policies/array_tasks.hpp"
#include "policies/limits.hpp"
#include "policies/node_select.hpp"
#include "policies/preemption.hpp"
#include "policies/reservations.hpp"

namespace slurmtwin::policies {

void append_queue_records(const sim::SimState& s, std::uint32_t ji, std::vector<QueueRecord>& out,
                          const Preemption* preemption) {
  const auto& j = s.jobs[ji];
  const std::uint16_t rank = preemption ? preemption->queue_rank(j) : 0;
  for (std::size_t k = 0; k < j.partitions.size(); ++k) {
    const auto p = j.partitions[k];
    out.push_back({ji, p, s.site.partitions[p].priority_tier,
                   k < j.part_priority.size() ? j.part_priority[k] : j.priority, j.reservation >= 0, j.submit,
                   j.id, j.array_task, static_cast<std::uint16_t>(k), rank});
  }
}

bool queue_before(const QueueRecord& a, const QueueRecord& b) {
  if (a.tier != b.tier) return a.tier > b.tier;
  if (a.preempt_rank != b.preempt_rank) return a.preempt_rank > b.preempt_rank;
  if (a.reservation != b.reservation) return a.reservation;
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.submit != b.submit) return a.submit < b.submit;
  if (a.id != b.id) return a.id < b.id;
  if (a.array_task != b.array_task) return a.array_task < b.array_task;
  return a.partition < b.partition;
}

void sort_at_descents(std::vector<QueueRecord>& q, const std::vector<std::size_t>& descents) {
  std::size_t checked = 0;  // pairs (i - 1, i) for i <= checked are known to be in order
  for (const auto d : descents) {
    if (d <= checked) continue;  // put in order by an earlier insertion's cascade
    auto i = d;
    // q[0, i) is sorted: insert q[i]; its old left neighbour moves to i, so the pair (i, i + 1)
    // changed and is checked next (pairs further right are as recorded).
    for (; i < q.size() && queue_before(q[i], q[i - 1]); ++i) {
      const auto rec = q[i];
      auto j = i;
      for (; j > 0 && queue_before(rec, q[j - 1]); --j) q[j] = q[j - 1];
      q[j] = rec;
    }
    checked = i;
  }
}

void sort_nearly_sorted(std::vector<QueueRecord>& q, std::size_t max_descents) {
  std::vector<std::size_t> descents;
  for (std::size_t i = 1; i < q.size() && descents.size() <= max_descents; ++i)
    if (queue_before(q[i], q[i - 1])) descents.push_back(i);
  if (descents.size() > max_descents)
    std::sort(q.begin(), q.end(), queue_before);
  else
    sort_at_descents(q, descents);
}

MainScheduler::Preempted MainScheduler::try_preemption(sim::SimState& s, sim::JobLauncher& launcher,
                                                       const QueueRecord& rec,
                                                       const std::vector<bool>& avail) const {
  if (!preemption_) return Preempted::kNo;
  auto& j = s.jobs[rec.job];
  const auto victims = preemption_->preempt_for(s, launcher, rec.job, rec.partition, avail);
  if (victims.empty()) return Preempted::kNo;
  const bool all_suspended = std::all_of(victims.begin(), victims.end(), [&](std::uint32_t v) {
    return s.jobs[v].state == sim::SimJobState::kSuspended;
  });
  // Suspension frees the CPUs at once (gang scheduling): the preemptor starts in this pass.
  if (all_suspended) {
    if (auto alloc = select_nodes_in(s.cluster, j.request, s.partition_bits[rec.partition], avail)) {
      j.priority = rec.priority;
      launcher.start_job(rec.job, rec.partition, std::move(*alloc), SchedulerPass::kMain);
      return Preempted::kStarted;
    }
  }
  return Preempted::kWaiting;
}

std::vector<QueueRecord> build_job_queue(const sim::SimState& s, const Preemption* preemption) {
  std::vector<QueueRecord> q;
  q.reserve(s.pending.size());
  for (auto ji : s.pending) append_queue_records(s, ji, q, preemption);
  std::sort(q.begin(), q.end(), queue_before);
  return q;
}

bool MainScheduler::settle_tail(sim::SimState& s, const std::vector<QueueRecord>& queue, std::size_t cut,
                                UnsettledJobs& unsettled) const {
  using R = sim::PendingReason;
  const auto& first = queue[cut];
  std::vector<QueueRecord> records;
  std::vector<std::uint32_t> settle;
  for (const auto ji : unsettled.jobs()) {
    const auto& j = s.jobs[ji];
    if (j.state != sim::SimJobState::kPending || (j.reason != R::kNone && j.reason != R::kResources))
      continue;
    records.clear();
    append_queue_records(s, ji, records, preemption_);
    bool in_tail = false;
    for (const auto& rec : records) {
      // The record must be in the queue (sorted, keys unique) where its key puts it.
      const auto at = std::lower_bound(queue.begin(), queue.end(), rec, queue_before);
      if (at == queue.end() || at->job != ji || at->partition != rec.partition) return false;
      in_tail = in_tail || !queue_before(rec, first);
    }
    if (in_tail) settle.push_back(ji);
  }
  for (const auto ji : settle) {
    auto& j = s.jobs[ji];
    j.note_reason(R::kPriority);
  }
  unsettled.retain([&](std::uint32_t ji) {
    const auto& j = s.jobs[ji];
    return j.state == sim::SimJobState::kPending && (j.reason == R::kNone || j.reason == R::kResources);
  });
  return true;
}

MainPassStats MainScheduler::run(sim::SimState& s, sim::JobLauncher& launcher, bool full,
                                 const std::vector<QueueRecord>& queue,
                                 const std::vector<std::uint32_t>* partition_counts,
                                 UnsettledJobs* unsettled) const {
  using R = sim::PendingReason;
  MainPassStats stats;
  std::vector<bool> avail(s.cluster.nodes().size(), true);
  std::vector<bool> reserved_avail;  // scratch: avail less a job's reserved nodes
  std::vector<bool> part_failed(s.site.partitions.size(), false);
  std::vector<std::uint32_t> part_depth(s.site.partitions.size(), 0);
  std::uint32_t depth = 0;
  // Records left per partition: once every partition that still has records is blocked, the rest of
  // the pass can start nothing; a limited pass stops there (a full pass goes on to record every
  // job's pending reason, as Slurm's does: in bulk when the caller keeps the unsettled jobs).
  std::vector<std::uint32_t> left(s.site.partitions.size(), 0);
  std::size_t open_parts = 0;
  const bool bulk_tail =
      full && unsettled != nullptr && partition_counts != nullptr && params_.partition_job_depth == 0;
  bool settled = false;
  if (!full || bulk_tail) {
    if (partition_counts)
      left = *partition_counts;
    else
      for (const auto& rec : queue) ++left[rec.partition];
    for (auto n : left) open_parts += n > 0 ? 1 : 0;
  }
  const auto note = [&](sim::SimJob& j, R r) {
    j.note_reason(r);
    if (r == R::kResources && unsettled != nullptr)
      unsettled->add(static_cast<std::uint32_t>(&j - s.jobs.data()));
  };
  ArrayReject arrays;
  for (std::size_t at = 0; at < queue.size(); ++at) {
    const auto& rec = queue[at];
    if (!full || (bulk_tail && !settled)) {
      if (open_parts == 0) {
        if (!full) break;
        settled = true;  // once: if the tail cannot be settled in bulk, walk it
        if (settle_tail(s, queue, at, *unsettled)) break;
      }
      if (--left[rec.partition] == 0 && !part_failed[rec.partition]) --open_parts;
    }
    auto& j = s.jobs[rec.job];
    if (!sim::in_queue(j, s.now)) continue;  // started through an earlier record, or requeued
    // A job whose reservation is not active is not queued (job_independent): no depth, no block.
    if (reservations_ && !reservations_->may_run_now(s, j, s.now)) {
      note(j, R::kReservation);
      continue;
    }
    if (arrays.skip(s, rec.job, rec.partition)) {
      note(j, arrays.reason(s));
      continue;
    }
    if (sim::array_capped(s, j)) {  // before any depth is counted (job_array_start_test)
      note(j, R::kJobArrayTaskLimit);
      continue;
    }
    if (params_.partition_job_depth > 0 && ++part_depth[rec.partition] > params_.partition_job_depth) {
      note(j, R::kPriority);
      continue;
    }
    if (!full && depth++ > params_.default_queue_depth) break;
    ++stats.examined;
    if (part_failed[rec.partition]) {
      if (j.reason == R::kNone || j.reason == R::kResources) note(j, R::kPriority);
      continue;
    }
    j.priority = rec.priority;  // the priority of the record being tried (multi-partition jobs)
    if (const auto why = check_limits(s, j, rec.partition); why != R::kNone) {
      note(j, why);
      continue;
    }
    // Licences short: it waits, blocking no partition and reserving nothing (schedule()).
    if (!sim::licenses_free(s, j)) {
      note(j, R::kLicenses);
      continue;
    }
    const auto& nodes = s.partition_nodes[rec.partition];
    // Reserved nodes are kept from this job only (job_test_resv at now over its time limit).
    const std::vector<bool>* job_avail = &avail;
    std::vector<bool> blocked;
    if (reservations_ && !reservations_->empty()) {
      auto t = reservations_->test(s, j, rec.partition, s.now, j.time_limit);
      if (t.start > s.now) t.blocked.assign(avail.size(), true);  // a MAINT one holds the whole partition
      blocked = std::move(t.blocked);
      if (!blocked.empty()) {
        reserved_avail = avail;
        for (std::size_t n = 0; n < blocked.size(); ++n)
          if (blocked[n]) reserved_avail[n] = false;
        job_avail = &reserved_avail;
      }
    }
    auto alloc = select_nodes_in(s.cluster, j.request, s.partition_bits[rec.partition], *job_avail);
    if (alloc) {
      // Limits on what the chosen nodes give it (select_nodes: acct_policy_job_runnable_post_select).
      if (const auto why = check_selected_limits(s, j, rec.partition, *alloc); why != R::kNone) {
        note(j, why);
        continue;
      }
      launcher.start_job(rec.job, rec.partition, std::move(*alloc), SchedulerPass::kMain);
      ++stats.started;
      arrays.accept();
      continue;
    }
    // No nodes now, yet slurmctld checks the post-select limits, on the request's counts where no
    // preemption chose nodes: over one, the job waits on that limit (ESLURM_ACCOUNTING_POLICY) and
    // blocks no partition. Seen on real Slurm in scenario 28: QOSMaxCpuPerNode while every node was busy.
    // A job that may preempt is checked once it found no victims (below). Most sites set no such limit:
    // then nothing is asked of preemption here, on the path of every job that does not fit.
    const bool after_victims =
        s.usage.selected_limits && preemption_ != nullptr && preemption_->may_preempt(j, rec.partition);
    const auto held_by_limit = [&] {
      const auto why = check_requested_limits(s, j, rec.partition);
      if (why != R::kNone) note(j, why);
      return why != R::kNone;
    };
    if (!after_victims && held_by_limit()) continue;
    // Nodes it may not use (reserved, out of service) are not "busy": if it would not fit even with
    // the others idle, Slurm says ReqNodeNotAvail and the partition stays open (ESLURM_NODE_NOT_AVAIL).
    if ((!blocked.empty() || s.cluster.out_of_service() > 0) &&
        !fits_when_idle(s.cluster, j.request, nodes, blocked)) {
      note(j, R::kReqNodeNotAvail);
      continue;
    }
    note(j, R::kResources);
    if (const auto p = try_preemption(s, launcher, rec, avail); p == Preempted::kStarted) {
      ++stats.started;
      arrays.accept();
      continue;
    } else if (p == Preempted::kWaiting) {
      ++stats.preempted;
    } else if (after_victims && held_by_limit()) {
      continue;
    }
    bool fail_by_part = true;
    if (params_.bf_min_age_reserve > 0 && s.now - j.eligible < params_.bf_min_age_reserve)
      fail_by_part = false;
    if (params_.bf_min_prio_reserve > 0 && j.priority < params_.bf_min_prio_reserve) fail_by_part = false;
    // A job of a reservation blocks only that reservation (schedule()): not modelled, it blocks nothing.
    if (j.reservation >= 0) fail_by_part = false;
    if (fail_by_part) {
      if ((!full || bulk_tail) && !part_failed[rec.partition] && left[rec.partition] > 0) --open_parts;
      part_failed[rec.partition] = true;
      for (auto n : nodes) avail[n] = false;
    }
  }
  return stats;
}

}  // namespace slurmtwin::policies
