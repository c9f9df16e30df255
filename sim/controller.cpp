#include "sim/controller.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "traces/site_events.hpp"
#include "traces/time_format.hpp"

namespace slurmtwin::sim {
namespace {

void remove_slot(std::vector<std::uint32_t>& list, std::vector<SimJob>& jobs, std::uint32_t job) {
  const auto at = jobs[job].slot;
  assert(at < list.size() && list[at] == job);
  list[at] = list.back();
  jobs[list[at]].slot = at;
  list.pop_back();
}

void add_slot(std::vector<std::uint32_t>& list, std::vector<SimJob>& jobs, std::uint32_t job) {
  jobs[job].slot = static_cast<std::uint32_t>(list.size());
  list.push_back(job);
}

std::uint8_t phase(EventPhase p) {
  return static_cast<std::uint8_t>(p);
}

/// The decay thread's period (s): PriorityCalcPeriod, at least a minute.
Seconds decay_period(const Site& site) {
  return std::max<Seconds>(60, site.scheduler.calc_period);
}

}  // namespace

Controller::Controller(SimState& state, SchedulingPolicy& policy, ControllerOptions options)
    : state_(state), policy_(policy), options_(std::move(options)) {}

std::uint64_t Controller::run() {
  const auto& sp = state_.site.scheduler.params;
  Seconds first_submit = kUnlimited;
  for (const auto& j : state_.jobs)
    if (j.state == SimJobState::kFuture) first_submit = std::min(first_submit, j.submit);
  if (first_submit == kUnlimited) return 0;
  state_.origin = first_submit - options_.start_offset;
  state_.now = state_.origin;
  queue_.set_now(state_.origin);
  last_sched_ = last_full_sched_ = last_backfill_end_ = state_.origin;
  policy_.init(state_);

  for (std::uint32_t i = 0; i < state_.jobs.size(); ++i) {
    const auto& j = state_.jobs[i];
    if (j.state != SimJobState::kFuture) continue;
    queue_.schedule(j.submit, phase(submit_phase(j.id)), j.id, Submit{i});
    ++future_submits_;
  }
  queue_.schedule(state_.origin + options_.decay_phase, phase(EventPhase::kDecay), 0, DecayTick{});
  if (sp.sched_interval > 0) {
    const Seconds first = options_.sched_phase != kUnsetTime ? options_.sched_phase : sp.sched_interval;
    // The full-pass clock runs from here: a full pass is due sched_interval after the last one.
    last_full_sched_ = state_.origin + first - sp.sched_interval;
    schedule_background(state_.origin + first);
  }
  backfill_enabled_ = sp.bf_interval > 0 && state_.site.scheduler.scheduler_type == "sched/backfill";
  if (backfill_enabled_) {
    const Seconds first = options_.backfill_phase != kUnsetTime ? options_.backfill_phase : sp.bf_interval;
    last_backfill_end_ = state_.origin + first - sp.bf_interval;
    schedule_backfill(state_.origin + first);
  }
  schedule_capacity_changes();
  if (options_.snapshot_at != kUnsetTime && options_.on_snapshot)
    queue_.schedule(std::max(options_.snapshot_at, state_.origin), 255, 0, Snapshot{});

  std::uint64_t events = 0;
  while (!queue_.empty()) {
    auto [key, event] = queue_.pop();
    if (key.time != state_.now) {
      for (auto* o : observers_) o->on_time_advance(state_, state_.now, key.time);
      state_.now = key.time;
    }
    current_phase_ = key.phase;
    // Anything but a timer or a snapshot may end an idle stretch: the parked timers resume first.
    if ((background_parked_ || decay_parked_) && !std::holds_alternative<Background>(event) &&
        !std::holds_alternative<DecayTick>(event) && !std::holds_alternative<BackfillTick>(event) &&
        !std::holds_alternative<Snapshot>(event))
      unpark_timers();
    std::visit([this](const auto& e) { handle(e); }, event);
    ++events;
    if (options_.check_invariants) check_invariants();
  }
  return events;
}

bool Controller::work_left() const {
  return future_submits_ > 0 || retests_pending_ > 0 || !state_.running.empty() || !state_.pending.empty() ||
         !state_.suspended.empty();
}

void Controller::schedule_capacity_changes() {
  const auto& site = state_.site;
  if (site.outages.empty() && site.reservations.empty()) return;
  std::unordered_map<std::string_view, std::uint32_t> node_index;
  for (std::uint32_t n = 0; n < site.nodes.size(); ++n) node_index.emplace(site.nodes[n].name, n);
  outage_applied_.assign(site.outages.size(), 0);
  drain_on_idle_.assign(site.nodes.size(), -1);
  // An outage or reservation boundary before the controller's start is in force from it.
  const auto at = [&](Seconds t) { return std::max(t, state_.origin); };
  const auto schedule = [&](Seconds t, std::uint32_t tie, Event e) {
    queue_.schedule(t, phase(EventPhase::kCapacity), tie, e);
    ++future_changes_;
  };
  for (std::uint32_t k = 0; k < site.outages.size(); ++k) {
    const auto& o = site.outages[k];
    outage_node_.push_back(node_index.at(o.node));  // validated with the site
    if (o.end <= state_.origin) continue;
    using Step = NodeOutage::Step;
    if (o.state == "DRAIN" && options_.drain_lead > 0 && o.start - options_.drain_lead > state_.origin)
      schedule(o.start - options_.drain_lead, k, NodeOutage{k, Step::kDrainLead});
    schedule(at(o.start), k, NodeOutage{k, Step::kOut});
    if (o.end != kUnlimited) schedule(o.end, k, NodeOutage{k, Step::kBack});
  }
  for (const auto& r : site.reservations)
    for (const Seconds t : {r.start, r.end})
      if (t > state_.origin && t != kUnlimited) schedule(t, 0, CapacityChange{});
}

void Controller::begin_outage(std::uint32_t outage, std::uint32_t node) {
  if (drain_on_idle_[node] == static_cast<std::int32_t>(outage)) drain_on_idle_[node] = -1;
  if (outage_applied_[outage]) return;
  outage_applied_[outage] = 1;
  state_.cluster.set_outage(node, true);
  note_change();
}

void Controller::handle(const NodeOutage& e) {
  --future_changes_;
  const auto node = outage_node_[e.outage];
  switch (e.step) {
    case NodeOutage::Step::kDrainLead:
      // Busy now: out of service once idle (end_job), at the latest at the event.
      if (state_.cluster.node(node).jobs > 0) drain_on_idle_[node] = static_cast<std::int32_t>(e.outage);
      break;
    case NodeOutage::Step::kOut:
      begin_outage(e.outage, node);
      break;
    case NodeOutage::Step::kBack:
      state_.cluster.set_outage(node, false);
      if (work_left()) request_pass();  // its resources are usable again, as after a job end
      break;
  }
}

void Controller::handle(const CapacityChange&) {
  --future_changes_;
  if (work_left()) request_pass();
}

bool Controller::idle() const {
  return state_.pending.empty() && state_.running.empty() && state_.suspended.empty() && held_.empty() &&
         retests_pending_ == 0;
}

void Controller::unpark_timers() {
  const auto& sp = state_.site.scheduler.params;
  if (background_parked_) {
    background_parked_ = false;
    // The full-pass ticks of the idle stretch before now ran, on an empty queue; one due now runs
    // after the event that ends the stretch, as it would have.
    const Seconds ticks = (state_.now - 1 - last_full_sched_) / sp.sched_interval;
    if (ticks > 0) last_full_sched_ = last_sched_ = last_full_sched_ + ticks * sp.sched_interval;
    schedule_background(last_full_sched_ + sp.sched_interval);
  }
  if (decay_parked_) {
    decay_parked_ = false;
    const Seconds period = decay_period(state_.site);
    const Seconds first = state_.origin + options_.decay_phase;
    const Seconds next = first + (state_.now - first + period - 1) / period * period;  // first tick >= now
    queue_.schedule(next, phase(EventPhase::kDecay), 0, DecayTick{});
  }
}

void Controller::request_pass() {
  pass_requested_ = true;
  note_change();
  // A request after this second's background loop run (a submission after its main pass, the late
  // end of a job the backfill pass started) is first seen by the loop's next run.
  const bool after_main = current_phase_ > phase(EventPhase::kBackground);
  schedule_background(std::max(state_.now + (after_main ? 1 : 0),
                               last_sched_ + state_.site.scheduler.params.batch_sched_delay));
}

EventPhase Controller::submit_phase(std::uint64_t job_id) const {
  const auto it = options_.submit_order.find(job_id);
  if (it == options_.submit_order.end()) return EventPhase::kSubmit;
  switch (it->second) {
    case SubmitOrder::kBeforeEnds:
      return EventPhase::kSubmitBeforeEnds;
    case SubmitOrder::kAfterMain:
      return EventPhase::kSubmitAfterMain;
    case SubmitOrder::kAfterPasses:
      return EventPhase::kSubmitAfterPasses;
    case SubmitOrder::kBeforePasses:
      break;
  }
  return EventPhase::kSubmit;
}

void Controller::schedule_background(Seconds at) {
  if (background_at_ != kUnsetTime && background_at_ <= at) return;
  background_at_ = at;
  queue_.schedule(at, phase(EventPhase::kBackground), 0, Background{});
}

void Controller::handle(const Submit& e) {
  auto& j = state_.jobs[e.job];
  --future_submits_;
  const auto* deps = options_.dependencies;
  auto why = deps ? deps->refusal(e.job) : std::string();
  if (why.empty()) why = policy_.admit(state_, e.job);
  if (!why.empty()) {
    j.state = SimJobState::kRejected;
    j.reject_reason = std::move(why);
    dependency_event(e.job, /*ended=*/true);
    return;
  }
  j.state = SimJobState::kPending;
  if (j.cancel != kUnsetTime)
    j.cancel_event =
        queue_.schedule(std::max(j.cancel, state_.now), phase(EventPhase::kCancel), j.id, Cancel{e.job});
  // A dependency that does not hold at submit holds the job: pending, out of the queue, not eligible
  // (no age) until a later test finds it holds.
  const bool held = deps && deps->has(e.job) && !dependency_holds(e.job);
  const Seconds begin = j.eligible;
  if (held) j.eligible = kUnsetTime;
  policy_.on_submit(state_, e.job);
  for (auto* o : observers_) o->on_submit(state_, e.job);
  if (held) {
    held_.insert(std::upper_bound(held_.begin(), held_.end(), std::pair{e.job, begin}), {e.job, begin});
    return;
  }
  queue_when_eligible(e.job);
}

void Controller::queue_when_eligible(std::uint32_t job) {
  auto& j = state_.jobs[job];
  if (j.eligible > state_.now) {
    j.note_reason(PendingReason::kBeginTime);
    ++future_submits_;  // still to come into the queue
    queue_.schedule(j.eligible, phase(EventPhase::kEligible), j.id, Eligible{job});
    return;
  }
  queue_job(job);
}

bool Controller::dependency_holds(std::uint32_t job) {
  Seconds retry_at = kUnsetTime;
  const auto status = options_.dependencies->test(state_, job, retry_at);
  if (status == DependencyStatus::kSatisfied) return true;
  auto& j = state_.jobs[job];
  j.note_reason(status == DependencyStatus::kNever ? PendingReason::kDependencyNeverSatisfied
                                                   : PendingReason::kDependency);
  if (retry_at != kUnsetTime) {
    ++retests_pending_;
    queue_.schedule(retry_at, phase(EventPhase::kEligible), j.id, Retest{});
  }
  return false;
}

void Controller::dependency_event(std::uint32_t job, bool ended) {
  const auto* deps = options_.dependencies;
  if (!deps || held_.empty()) return;
  for (auto d : deps->dependents(job)) retest_.push_back(d);
  if (ended)
    for (auto d : deps->singletons_like(job)) retest_.push_back(d);
}

void Controller::release_dependents() {
  if (retest_.empty()) return;
  std::sort(retest_.begin(), retest_.end());
  retest_.erase(std::unique(retest_.begin(), retest_.end()), retest_.end());
  std::vector<std::uint32_t> released;
  for (auto job : retest_) {
    const auto it = std::lower_bound(held_.begin(), held_.end(), std::pair{job, kUnsetTime});
    if (it == held_.end() || it->first != job || !dependency_holds(job)) continue;
    auto& j = state_.jobs[job];
    j.eligible = std::max(state_.now, it->second);  // begin_time: now, or a later --begin
    held_.erase(it);
    released.push_back(job);
  }
  retest_.clear();
  for (auto job : released) {
    state_.jobs[job].reason = PendingReason::kNone;
    queue_when_eligible(job);
  }
}

void Controller::handle(const Retest&) {
  --retests_pending_;
  for (const auto& [job, begin] : held_) retest_.push_back(job);
  request_pass();
}

void Controller::handle(const Eligible& e) {
  --future_submits_;
  if (state_.jobs[e.job].state == SimJobState::kPending) queue_job(e.job);  // else cancelled meanwhile
}

void Controller::handle(const Cancel& e) {
  auto& j = state_.jobs[e.job];
  j.cancel_event = {};
  if (j.state == SimJobState::kRunning) {  // scancel of a running job: it ends now, for good
    queue_.cancel(j.end_event);
    j.preempt = PreemptAction::kNone;  // even in a preemption's grace time: no requeue follows
    j.end_state = JobState::kCancelled;
    end_job(e.job, /*killed=*/true);
    return;
  }
  if (j.state != SimJobState::kPending) return;  // suspended: left to run when resumed
  // Out of the queue, the dependency hold or the wait for its begin time (whose event then finds it
  // no longer pending), for good.
  if (j.slot < state_.pending.size() && state_.pending[j.slot] == e.job)
    remove_slot(state_.pending, state_.jobs, e.job);
  const auto held = std::find_if(held_.begin(), held_.end(), [&](const auto& h) { return h.first == e.job; });
  if (held != held_.end()) held_.erase(held);
  j.state = SimJobState::kDone;
  j.end_state = JobState::kCancelled;
  j.end = state_.now;
  dependency_event(e.job, /*ended=*/true);
  policy_.on_cancel_pending(state_, e.job);
  for (auto* o : observers_) o->on_end(state_, e.job);
  note_change();
}

void Controller::queue_job(std::uint32_t job) {
  add_slot(state_.pending, state_.jobs, job);
  policy_.on_queued(state_, job);
  request_pass();
}

void Controller::start_job(std::uint32_t job, std::uint16_t partition, std::vector<NodeAlloc> alloc,
                           SchedulerPass pass) {
  auto& j = state_.jobs[job];
  assert(j.state == SimJobState::kPending);
  remove_slot(state_.pending, state_.jobs, job);
  state_.cluster.allocate(j.request, alloc);
  j.alloc = std::move(alloc);
  j.alloc_cpus = 0;
  for (const auto& a : j.alloc) j.alloc_cpus += a.cpus;
  j.state = SimJobState::kRunning;
  j.reason = PendingReason::kNone;
  j.run_partition = partition;
  j.start = state_.now;
  j.started_by = pass;
  j.priority_at_start = j.priority;
  add_slot(state_.running, state_.jobs, job);
  // The CPUs of the jobs it suspended that it did not take stay theirs (ClusterState::hold).
  for (const auto si : state_.suspended) {
    auto& v = state_.jobs[si];
    if (v.suspended_by == static_cast<std::int64_t>(job) && v.held.empty())
      v.held = state_.cluster.hold(v.alloc);
  }

  // Ends when its work is done, or as TIMEOUT on the first limit check after its limit.
  const Seconds limit = j.time_limit;
  auto end_phase = EventPhase::kJobEnd;
  // A job that runs until its limit (runtime kUnlimited: the UB toolkit's -sim-walltime -1) has one.
  assert(limit != kUnlimited || j.runtime != kUnlimited);
  const Seconds work_done = j.runtime == kUnlimited ? kUnlimited : state_.now + j.runtime;
  // A job of a reservation (not FLEX) is killed by the limit check once the reservation has ended
  // (ResvOverRun 0: job_time_limit kills when end < now).
  Seconds resv_due = kUnlimited;
  if (j.reservation >= 0)
    if (const auto* r = active_period(state_.site, static_cast<std::size_t>(j.reservation), state_.now);
        r != nullptr && !r->has("FLEX") && r->end != kUnlimited)
      resv_due = r->end + 1;
  const Seconds over = over_time_limit(state_.site, partition);
  // Ended by the limit check: over its limit, unless OverTimeLimit=UNLIMITED (then a job that runs
  // until its limit stops there, COMPLETED).
  const bool limit_ends_it = limit != kUnlimited && j.runtime > limit && over != kUnlimited;
  if (!limit_ends_it && work_done < resv_due) {
    j.end = state_.now + (j.runtime == kUnlimited ? limit : j.runtime);
    j.end_state = JobState::kCompleted;
    if (pass == SchedulerPass::kBackfill && j.runtime < options_.backfill_end_lag_below)
      end_phase = EventPhase::kLateBackfillEnd;
  } else {
    const Seconds due = std::min(limit_ends_it ? state_.now + limit + over : kUnlimited, resv_due);
    assert(due != kUnlimited);
    const Seconds tick = options_.timeout_check_interval;
    const Seconds base = state_.origin + options_.timeout_phase;  // ticks at base + k * tick
    j.end = tick > 0 ? base + (std::max<Seconds>(0, due - base) + tick - 1) / tick * tick : due;
    // A job that finishes its work past its limit but before the check ends then, still as TIMEOUT:
    // slurmctld marks a job that completes after its end time TIMEOUT (seen on real Slurm 22.05,
    // docs/fidelity.md: limit 60 s, work 65 s -> TIMEOUT at 65 s).
    const bool by_check = j.end < work_done;
    j.end = std::min(j.end, work_done);
    j.end_state = JobState::kTimeout;
    const Seconds period = decay_period(state_.site);
    const Seconds first_decay = state_.origin + options_.decay_phase;
    if (by_check && options_.limit_check_after_decay && j.end >= first_decay &&
        (j.end - first_decay) % period == 0)
      end_phase = EventPhase::kLateTimeout;
  }
  j.end_event = queue_.schedule(j.end, phase(end_phase), j.id, JobEnd{job});
  note_change();
  dependency_event(job, /*ended=*/false);
  policy_.on_start(state_, job);
  for (auto* o : observers_) o->on_start(state_, job);
}

void Controller::handle(const JobEnd& e) {
  const auto& j = state_.jobs[e.job];
  // Killed (preempted, or by the limit check before its work was done) or ended by itself.
  const bool killed = j.preempt != PreemptAction::kNone ||
                      (j.end_state == JobState::kTimeout &&
                       (j.runtime == kUnlimited || state_.now - j.start - j.suspended_total < j.runtime));
  end_job(e.job, killed);
  if (state_.jobs[e.job].preempt == PreemptAction::kRequeue) requeue(e.job);
}

void Controller::end_job(std::uint32_t job, bool killed) {
  auto& j = state_.jobs[job];
  state_.cluster.release(j.request, j.alloc);
  if (!drain_on_idle_.empty())
    for (const auto& a : j.alloc)
      if (const auto k = drain_on_idle_[a.node]; k >= 0 && state_.cluster.node(a.node).jobs == 0)
        begin_outage(static_cast<std::uint32_t>(k), a.node);
  remove_slot(state_.running, state_.jobs, job);
  j.state = SimJobState::kDone;
  j.end = state_.now;
  if (j.cancel_event.seq != 0 && j.preempt != PreemptAction::kRequeue) {
    queue_.cancel(j.cancel_event);
    j.cancel_event = {};
  }
  dependency_event(job, /*ended=*/true);
  policy_.on_end(state_, job);
  if (!state_.suspended.empty()) resume_suspended();
  for (auto* o : observers_) o->on_end(state_, job);
  note_change();
  // slurmd answers the kill request of a job whose steps are gone (no Epilog) ALREADY_COMPLETE, on
  // which slurmctld's agent, from 22.05, only queues a pass (queue_job_scheduler: the background loop's
  // next limited pass, batch_sched_delay after the last); a job slurmd has to kill ends with an
  // epilog-complete RPC that runs a pass at once (_slurm_rpc_epilog_complete), as every end did before.
  if (!killed && state_.site.scheduler.slurm_version >= 2205) {
    request_pass();
  } else if (!end_pass_scheduled_) {
    end_pass_scheduled_ = true;
    queue_.schedule(state_.now, phase(EventPhase::kEndPass), 0, EndPass{});
  }
}

void Controller::preempt_job(std::uint32_t job, PreemptAction action, Seconds grace,
                             std::uint32_t preemptor) {
  auto& j = state_.jobs[job];
  assert(j.state == SimJobState::kRunning && action != PreemptAction::kNone);
  if (j.preempt != PreemptAction::kNone) return;  // already on its way out (in grace time)
  if (action == PreemptAction::kSuspend) {        // GraceTime does not apply to suspension
    suspend(job, preemptor);
    return;
  }
  j.preempt = action;
  j.end_state = JobState::kPreempted;
  const Seconds at = std::min(j.end, state_.now + std::max<Seconds>(0, grace));
  queue_.cancel(j.end_event);
  if (at <= state_.now) {
    end_job(job, /*killed=*/true);
    if (action == PreemptAction::kRequeue) requeue(job);
    return;
  }
  j.end = at;  // grace time: it goes on running until then
  j.end_event = queue_.schedule(at, phase(EventPhase::kJobEnd), j.id, JobEnd{job});
}

void Controller::suspend(std::uint32_t job, std::uint32_t preemptor) {
  // The job keeps its memory, GRES and nodes; its CPUs go to the preemptor; its time limit stops
  // counting, so it ends `remaining` s after it resumes (spec §7.6).
  auto& j = state_.jobs[job];
  queue_.cancel(j.end_event);
  j.remaining = j.end - state_.now;
  j.suspended_at = state_.now;
  j.suspended_by = preemptor;
  ++j.suspensions;
  state_.cluster.suspend(j.alloc);
  remove_slot(state_.running, state_.jobs, job);
  add_slot(state_.suspended, state_.jobs, job);
  j.state = SimJobState::kSuspended;
  note_change();
}

void Controller::resume_suspended() {
  std::vector<std::uint32_t> ready;
  for (auto ji : state_.suspended) {
    const auto& j = state_.jobs[ji];
    if (j.suspended_by < 0 ||
        state_.jobs[static_cast<std::size_t>(j.suspended_by)].state != SimJobState::kRunning)
      ready.push_back(ji);
  }
  std::sort(ready.begin(), ready.end(),
            [&](auto a, auto b) { return state_.jobs[a].id < state_.jobs[b].id; });
  for (auto ji : ready) {
    auto& j = state_.jobs[ji];
    if (!state_.cluster.can_resume(j.alloc, j.held)) continue;  // its CPUs are taken: retried at the next end
    state_.cluster.resume(j.alloc, j.held);
    j.held.clear();
    remove_slot(state_.suspended, state_.jobs, ji);
    add_slot(state_.running, state_.jobs, ji);
    j.state = SimJobState::kRunning;
    j.suspended_total += state_.now - j.suspended_at;
    j.suspended_by = -1;
    j.end = state_.now + j.remaining;
    j.end_event = queue_.schedule(j.end, phase(EventPhase::kJobEnd), j.id, JobEnd{ji});
    note_change();
  }
}

void Controller::requeue(std::uint32_t job) {
  // The interrupted run stays on record as PREEMPTED; the job pends again with a new submit time,
  // eligible after the requeue delay, and its age restarts (spec §7.5).
  auto& j = state_.jobs[job];
  if (j.restarts + 1 >= kMaxRequeues) {
    std::string preemptors;
    for (const auto& p : state_.jobs)
      if (p.preempt_started == state_.now)
        preemptors += fmt::format("{}{}", preemptors.empty() ? "" : ", ", p.id);
    throw PreemptionCycle(fmt::format(
        "job {} was requeued by preemption {} times (the last at {}, by job {}): its preemptor does not "
        "start on the freed nodes and preempts again, a cycle without end; the replay stops",
        j.id, kMaxRequeues, format_timestamp(state_.now), preemptors.empty() ? "?" : preemptors));
  }
  j.past_runs.push_back(current_run(j));
  ++j.restarts;
  j.alloc.clear();
  j.alloc_cpus = 0;
  j.size_cpus = 0;  // job_requeue clears total_cpus
  j.start = j.end = kUnsetTime;
  j.started_by = SchedulerPass::kUnknown;
  j.end_state = JobState::kUnknown;
  j.preempt = PreemptAction::kNone;
  j.reason = PendingReason::kBeginTime;
  j.submit = state_.now;
  j.eligible = state_.now + options_.requeue_delay + 1;
  j.accrue = kUnsetTime;  // accrues again once eligible (job_mgr.c: requeue clears accrue_time)
  j.state = SimJobState::kPending;
  policy_.on_submit(state_, job);
  ++future_submits_;
  queue_.schedule(j.eligible, phase(EventPhase::kEligible), j.id, Eligible{job});
}

void Controller::handle(const EndPass&) {
  end_pass_scheduled_ = false;
  run_main(/*full=*/false, /*end_triggered=*/true);
}

void Controller::run_main(bool full, bool end_triggered) {
  (void)end_triggered;
  release_dependents();
  policy_.main_pass(state_, *this, full);
  last_sched_ = state_.now;
  pass_requested_ = false;
  if (full) last_full_sched_ = state_.now;
  for (auto* o : observers_) o->on_pass(state_, SchedulerPass::kMain, full);
}

void Controller::handle(const Background&) {
  if (background_at_ == state_.now) background_at_ = kUnsetTime;
  const auto& sp = state_.site.scheduler.params;
  if (sp.sched_interval > 0 && state_.now - last_full_sched_ >= sp.sched_interval) {
    run_main(/*full=*/true, false);
  } else if (pass_requested_ && state_.now - last_sched_ >= sp.batch_sched_delay) {
    run_main(/*full=*/false, false);
  }
  // An idle cluster with nothing to come can never start what is still pending: stop there.
  if (!state_.suspended.empty()) resume_suspended();
  stalled_ = state_.running.empty() && future_submits_ == 0 && future_changes_ == 0 &&
             last_full_sched_ == state_.now;
  if (!work_left() || stalled_) return;
  if (idle() && !pass_requested_ && sp.sched_interval > 0) {
    background_parked_ = true;
    return;
  }
  Seconds next = sp.sched_interval > 0 ? last_full_sched_ + sp.sched_interval : kUnlimited;
  if (pass_requested_) next = std::min(next, std::max(state_.now + 1, last_sched_ + sp.batch_sched_delay));
  if (next != kUnlimited) schedule_background(next);
}

void Controller::handle(const BackfillTick&) {
  backfill_tick_pending_ = false;
  if (!backfill_enabled_ || !work_left() || stalled_) return;
  release_dependents();
  // Before 22.05 every job queue build (each main pass and backfill cycle) marked the jobs changed
  // while any pending job had a reason (job_scheduler.c build_job_queue; 22.05 marks only a new
  // reason), so the backfill thread never idled while jobs pended: a cycle every bf_interval.
  const bool idles = state_.site.scheduler.slurm_version >= 2205;
  if ((idles && !changed_since_backfill_) || state_.pending.empty()) {
    // Slurm re-checks every second until something changes; the next change schedules the cycle.
    backfill_waiting_ = true;
    return;
  }
  changed_since_backfill_ = false;
  const auto cycle = policy_.backfill_pass(state_, *this);
  backfill_enabled_ = cycle.has_value();
  if (cycle && cycle->updated_jobs) changed_since_backfill_ = true;
  // With a cycle cost model the next cycle counts bf_interval from the (later) end of this one.
  last_backfill_end_ = state_.now + (cycle ? cycle->took : 0);
  for (auto* o : observers_) o->on_pass(state_, SchedulerPass::kBackfill, true);
  if (backfill_enabled_) schedule_backfill(last_backfill_end_ + state_.site.scheduler.params.bf_interval);
}

void Controller::schedule_backfill(Seconds at) {
  if (backfill_tick_pending_) return;
  backfill_tick_pending_ = true;
  // A change after this second's backfill cycle (a late end or submission, a decay run) wakes an
  // idle backfill thread at its next check, a second later.
  const bool after_cycle = current_phase_ > phase(EventPhase::kBackfill);
  queue_.schedule(std::max(at, state_.now + (after_cycle ? 1 : 0)), phase(EventPhase::kBackfill), 0,
                  BackfillTick{});
}

void Controller::note_change() {
  changed_since_backfill_ = true;
  if (backfill_waiting_ && backfill_enabled_) {
    backfill_waiting_ = false;
    schedule_backfill(last_backfill_end_ + state_.site.scheduler.params.bf_interval);
  }
}

void Controller::handle(const DecayTick&) {
  policy_.decay_tick(state_);
  // Jobs over a limit that ends them end at the next time-limit check, TIMEOUT (job_time_limit): in
  // this second when its check runs after the decay thread (limit_check_after_decay: seen on real
  // Slurm, 30_grp_mins_kill), else at the next one.
  const Seconds tick = std::max<Seconds>(1, options_.timeout_check_interval);
  const Seconds base = state_.origin + options_.timeout_phase;
  const bool now_too =
      options_.limit_check_after_decay && state_.now >= base && (state_.now - base) % tick == 0;
  const Seconds check =
      now_too ? state_.now : base + (state_.now < base ? 0 : (state_.now - base) / tick + 1) * tick;
  for (const auto job : state_.usage.limit_kills) {
    auto& j = state_.jobs[job];
    // (a preemption victim in its grace time ends as its preemption has it)
    if (j.state != SimJobState::kRunning || j.preempt != PreemptAction::kNone || j.end <= check) continue;
    queue_.cancel(j.end_event);
    j.end = check;
    j.end_state = JobState::kTimeout;
    j.end_event = queue_.schedule(j.end, phase(now_too ? EventPhase::kLateTimeout : EventPhase::kJobEnd),
                                  j.id, JobEnd{job});
  }
  state_.usage.limit_kills.clear();
  // A change the backfill thread has not yet seen, other than this run's own: that one cannot let
  // anything start on a cluster where nothing runs, so it must not keep the replay going for ever.
  const bool backfill_has_work = backfill_enabled_ && changed_since_backfill_;
  // The decay thread recalculates every pending job's priority and marks the jobs changed
  // (decay_apply_weighted_factors sets last_job_update), which an idle backfill thread sees.
  if (!state_.pending.empty()) note_change();
  if (!work_left() || stalled_) return;
  // Without periodic full passes (sched_interval -1) slurmctld schedules only when something happens:
  // with nothing running, suspended or to come, no pass requested and no backfill cycle left to see
  // a change, nothing can start again (the decay thread alone would tick on for ever).
  if (state_.site.scheduler.params.sched_interval <= 0 && state_.running.empty() &&
      state_.suspended.empty() && future_submits_ == 0 && future_changes_ == 0 && !pass_requested_ &&
      !backfill_has_work) {
    stalled_ = true;
    return;
  }
  if (idle()) {
    decay_parked_ = true;
    return;
  }
  const Seconds period = decay_period(state_.site);
  queue_.schedule(state_.now + period, phase(EventPhase::kDecay), 0, DecayTick{});
}

void Controller::handle(const Snapshot&) {
  options_.on_snapshot(state_);
}

void Controller::check_invariants() const {
  state_.cluster.check_invariants();
  std::size_t pending = 0, running = 0;
  for (std::uint32_t i = 0; i < state_.jobs.size(); ++i) {
    const auto& j = state_.jobs[i];
    if (j.state == SimJobState::kPending) {
      // Jobs waiting for their begin time are pending but not yet in the queue.
      if (j.slot < state_.pending.size() && state_.pending[j.slot] == i) ++pending;
    } else if (j.state == SimJobState::kRunning) {
      if (j.slot >= state_.running.size() || state_.running[j.slot] != i)
        throw std::logic_error(fmt::format("job {} is running but not in the running list", j.id));
      ++running;
    }
  }
  for (std::uint32_t k = 0; k < state_.suspended.size(); ++k)
    if (state_.jobs[state_.suspended[k]].state != SimJobState::kSuspended ||
        state_.jobs[state_.suspended[k]].slot != k)
      throw std::logic_error("the suspended list holds a job that is not suspended");
  if (pending != state_.pending.size() || running != state_.running.size())
    throw std::logic_error("a job is in more than one state list or in a list with the wrong state");
  policy_.check_invariants(state_);
}

}  // namespace slurmtwin::sim
