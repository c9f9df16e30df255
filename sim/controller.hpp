#pragma once
// slurmctld's clock: submits, job ends, time-limit enforcement and the periodic timers that drive the
// scheduling passes (spec §1). It knows when to call the policy, never what the policy decides.
//
// Order of events at one instant (EventPhase): node outages and reservation boundaries, job ends, then
// the end-triggered limited pass, then submits, then the background loop (eligibility, limited pass
// after batch_sched_delay, full pass every sched_interval), then backfill, then the decay/priority
// thread. Equal phases: lower job id first.
// Two optional settings move a job end later in its second (after backfill; after the decay run).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "sim/dependencies.hpp"
#include "sim/event_queue.hpp"
#include "sim/sim_state.hpp"
#include "traces/trace.hpp"

namespace slurmtwin::sim {

enum class EventPhase : std::uint8_t {
  // A node outage or reservation boundary (an admin's scontrol), before anything else that second.
  kCapacity = 0,
  // A submission that came before the first job end of its second (ControllerOptions::submit_order):
  // the pass that end triggers sees it.
  kSubmitBeforeEnds = 1,
  kJobEnd = 2,
  kEndPass = 3,
  kSubmit = 4,
  kEligible = 5,
  kBackground = 6,
  // A submission that came after that second's main pass but before its backfill cycle
  // (ControllerOptions::submit_order).
  kSubmitAfterMain = 7,
  kBackfill = 8,
  // A submission that came after both of that second's passes (ControllerOptions::submit_order).
  kSubmitAfterPasses = 9,
  // The end of a short job started by the backfill pass, after that second's backfill cycle
  // (ControllerOptions::backfill_end_lag_below).
  kLateBackfillEnd = 10,
  kDecay = 11,
  // A TIMEOUT by the periodic limit check in a second when the decay thread ran first
  // (ControllerOptions::limit_check_after_decay).
  kLateTimeout = 12,
  // A user's scancel (a job recorded as cancelled before it started), after everything else that
  // second: a job that could start in that second's pass starts, as it might have in real Slurm.
  kCancel = 13,
};

/// Where a submission falls among the events of its second, when the input has sub-second instants (a
/// recorded slurmctld's): after that second's job ends and the pass they trigger but before its
/// periodic passes (the default), before the ends, after the main pass only, after both passes.
enum class SubmitOrder : std::uint8_t { kBeforePasses, kBeforeEnds, kAfterMain, kAfterPasses };

/// Starts jobs on behalf of a policy (the controller records the start and schedules the end).
class JobLauncher {
 public:
  virtual ~JobLauncher() = default;
  /// Starts pending job `job` in `partition` on `alloc` now.
  virtual void start_job(std::uint32_t job, std::uint16_t partition, std::vector<NodeAlloc> alloc,
                         SchedulerPass pass) = 0;
  /// Preempts running job `job` for job `preemptor`: kSuspend suspends it at once until the preemptor
  /// has ended; otherwise after `grace` s (at once when 0) it ends as PREEMPTED, and with kRequeue goes
  /// back to the queue (new submit time, eligible after the requeue delay, Restarts+1).
  virtual void preempt_job(std::uint32_t job, PreemptAction action, Seconds grace,
                           std::uint32_t preemptor) = 0;
};

/// What a scheduler plugs into the controller. All calls happen at state.now.
class SchedulingPolicy {
 public:
  virtual ~SchedulingPolicy() = default;
  /// Once before the first event.
  virtual void init(SimState& state) = 0;
  /// Whether a job may be submitted now (submit-time limits such as MaxSubmitJobsPerUser): "" to accept,
  /// else the reason it is refused. An accepted job then gets on_submit.
  virtual std::string admit(SimState& /*state*/, std::uint32_t /*job*/) { return {}; }
  /// A job was submitted (set its priority).
  virtual void on_submit(SimState& state, std::uint32_t job) = 0;
  /// A job entered the queue of pending, eligible jobs (at submit, or when its begin time came).
  virtual void on_queued(SimState& /*state*/, std::uint32_t /*job*/) {}
  /// A job started (after the controller updated the cluster).
  virtual void on_start(SimState& state, std::uint32_t job) = 0;
  /// A job ended (charge its last usage slice).
  virtual void on_end(SimState& state, std::uint32_t job) = 0;
  /// Pending job `job` was cancelled (scancel) before it started: it leaves the queue for good.
  virtual void on_cancel_pending(SimState& /*state*/, std::uint32_t /*job*/) {}
  /// The decay/priority thread tick (every PriorityCalcPeriod).
  virtual void decay_tick(SimState& state) = 0;
  /// One main scheduling pass; `full` = whole queue (sched_interval) vs default_queue_depth.
  virtual void main_pass(SimState& state, JobLauncher& launcher, bool full) = 0;
  /// What one backfill cycle did, for the controller's timing.
  struct BackfillCycle {
    Seconds took = 0;           // how long it took (s; 0 = instantaneous)
    bool updated_jobs = false;  // it changed pending jobs' records: the next cycle has work
  };
  /// One backfill cycle, or nullopt when backfill is not configured (the controller then stops its
  /// timer).
  virtual std::optional<BackfillCycle> backfill_pass(SimState& /*state*/, JobLauncher& /*launcher*/) {
    return std::nullopt;
  }
  /// ControllerOptions::check_invariants: the policy's own state is consistent with `state` (throws
  /// std::logic_error naming what is not).
  virtual void check_invariants(const SimState& /*state*/) const {}
};

/// Subscribers to what happens (metrics, tracers, exporters). Never change the state.
class ReplayObserver {
 public:
  virtual ~ReplayObserver() = default;
  virtual void on_submit(const SimState&, std::uint32_t /*job*/) {}
  virtual void on_start(const SimState&, std::uint32_t /*job*/) {}
  virtual void on_end(const SimState&, std::uint32_t /*job*/) {}
  virtual void on_pass(const SimState&, SchedulerPass /*pass*/, bool /*full*/) {}
  virtual void on_time_advance(const SimState&, Seconds /*from*/, Seconds /*to*/) {}
};

/// A replay that cannot end: a job requeued by preemption kMaxRequeues times. Found by fuzzing: a
/// preemptor in a lower-tier partition than its victims preempts, but the victims' partition sorts
/// first (the tier decides across tiers in this model, where Slurm tests preemption before the tier:
/// docs/simulator.md, Preemption), so another job there takes the freed node and it preempts again.
/// The replay stops with this error naming the job and the preemptor, instead of running for ever.
struct PreemptionCycle : std::runtime_error {
  using std::runtime_error::runtime_error;
};
inline constexpr std::uint32_t kMaxRequeues = 1000;

struct ControllerOptions {
  Seconds timeout_check_interval = 30;  // PERIODIC_TIMEOUT: limits are enforced on this tick
  Seconds timeout_phase = 0;            // offset of the time-limit ticks after controller start (s)
  Seconds decay_phase = 0;              // offset of the first decay tick after controller start (s)
  // First backfill cycle / first full main pass this long after controller start (s); kUnsetTime =
  // bf_interval / sched_interval, as slurmctld's timers start counting at controller start.
  Seconds backfill_phase = kUnsetTime;
  Seconds sched_phase = kUnsetTime;
  Seconds start_offset = 0;     // controller starts this long before the first submit (s)
  Seconds requeue_delay = 120;  // a requeued job is eligible at now + this + 1 s (AuthInfo cred_expire)
  // In a second when both a time-limit check and a decay run fall, the check comes after the decay
  // run (so the timed-out job is charged its last slice before the decay). slurmctld runs them in
  // two threads whose sub-second phases drift apart (~1 ms/s): either order happens (docs/fidelity.md).
  bool limit_check_after_decay = false;
  // A job started by the backfill pass that completes its work in less than this (s) ends after the
  // backfill cycle of the second it ends in, so that cycle still sees its nodes busy; 0 = off. Real
  // slurmctld (22.05, bf_interval=1) starts such a job at the cycle's sub-second phase and the job
  // ends ~0.06-0.1 s past that phase N s later, while the cycle's own phase drifts later by only
  // ~1-1.5 ms per second (bf_interval counts from the end of a cycle): for N below ~60 s the cycle of
  // the job's last second runs first (docs/fidelity.md). The end-triggered main pass still sees it.
  Seconds backfill_end_lag_below = 0;
  // slurmctld records a DRAIN of a busy node (sacctmgr's node event) only once its last job has
  // ended: the drain itself was ordered earlier. A node busy this long (s) before a DRAIN event is
  // taken out of service as soon as it is idle, so a twin whose job there ends a little earlier than
  // real Slurm's does not start another job on a node that was draining. 0: at the event only.
  Seconds drain_lead = 60;
  // Jobs (by SimJob::id) submitted within a second before its first job end (the pass that end
  // triggers sees them), after that second's main pass, or after both its passes (the background
  // loop's full main pass and the backfill cycle each run once a second at a sub-second phase of their
  // own; a job submitted after one is first seen by the next). Only a recorded slurmctld gives these
  // instants (experiments/fidelity/oracle_compare.cpp); absent: after the ends, before both passes.
  std::unordered_map<std::uint64_t, SubmitOrder> submit_order;
  bool check_invariants = false;
  // Job dependencies (sbatch --dependency) of the jobs; null: none are honoured.
  const Dependencies* dependencies = nullptr;
  Seconds snapshot_at = kUnsetTime;  // absolute time at which on_snapshot fires
  std::function<void(const SimState&)> on_snapshot;
};

class Controller final : public JobLauncher {
 public:
  Controller(SimState& state, SchedulingPolicy& policy, ControllerOptions options);
  void add_observer(ReplayObserver& o) { observers_.push_back(&o); }
  /// Runs until every job has ended or can never start. Returns the number of events processed.
  std::uint64_t run();

  void start_job(std::uint32_t job, std::uint16_t partition, std::vector<NodeAlloc> alloc,
                 SchedulerPass pass) override;
  void preempt_job(std::uint32_t job, PreemptAction action, Seconds grace, std::uint32_t preemptor) override;

 private:
  struct Submit {
    std::uint32_t job;
  };
  struct Eligible {
    std::uint32_t job;
  };
  struct JobEnd {
    std::uint32_t job;
  };
  struct EndPass {};
  struct Background {};
  struct BackfillTick {};
  struct DecayTick {};
  struct Snapshot {};
  struct Retest {};  // an after:ID+MIN dependency may hold now
  struct Cancel {
    std::uint32_t job;
  };
  struct NodeOutage {  // Site::outages[outage] begins, ends, or (DRAIN) may begin early
    enum class Step : std::uint8_t { kDrainLead, kOut, kBack };
    std::uint32_t outage;
    Step step;
  };
  struct CapacityChange {};  // a reservation begins or ends
  using Event = std::variant<Submit, Eligible, JobEnd, EndPass, Background, BackfillTick, DecayTick, Snapshot,
                             Retest, Cancel, NodeOutage, CapacityChange>;

  void handle(const Submit& e);
  void handle(const Eligible& e);
  void handle(const JobEnd& e);
  void handle(const EndPass&);
  void handle(const Background&);
  void handle(const BackfillTick&);
  void handle(const DecayTick&);
  void handle(const Snapshot&);
  void handle(const Retest&);
  void handle(const Cancel& e);
  void handle(const NodeOutage& e);
  void handle(const CapacityChange&);
  /// Takes node `node` out of service for outage `outage` (once).
  void begin_outage(std::uint32_t outage, std::uint32_t node);
  /// Schedules the site's node outages and reservation boundaries (future_changes_ counts them: an idle
  /// cluster is not stalled while one is to come).
  void schedule_capacity_changes();
  /// Tests job `job`'s dependency now: true when it holds; else the job is held (pending, out of the
  /// queue, not accruing age) with reason Dependency or DependencyNeverSatisfied.
  bool dependency_holds(std::uint32_t job);
  /// Releases held jobs whose dependency now holds (before each scheduling pass, as slurmctld tests
  /// dependencies while it builds its queue): eligible from now, queued (or at their begin time).
  void release_dependents();
  /// A job started or ended: the jobs that wait for it are tested before the next pass.
  void dependency_event(std::uint32_t job, bool ended);
  void queue_job(std::uint32_t job);
  /// Queues job `job` now, or at its eligible (begin) time when that is still to come.
  void queue_when_eligible(std::uint32_t job);
  /// Job or queue state changed: backfill has something new to look at.
  void note_change();
  void schedule_backfill(Seconds at);
  /// Ends running job `job` now (its end event has fired or was cancelled).
  void end_job(std::uint32_t job, bool killed);
  void requeue(std::uint32_t job);
  void suspend(std::uint32_t job, std::uint32_t preemptor);
  /// Resumes suspended jobs whose preemptor is gone and whose CPUs are free, lowest job id first.
  void resume_suspended();
  void request_pass();
  /// The event phase of job `job_id`'s submission (ControllerOptions::submit_order).
  EventPhase submit_phase(std::uint64_t job_id) const;
  void schedule_background(Seconds at);
  void run_main(bool full, bool end_triggered);
  bool work_left() const;
  /// No job is pending, running, suspended or held, and no dependency retest is due: until the next
  /// submit, begin time or capacity change nothing can happen, so the periodic timers park.
  bool idle() const;
  /// Re-arms parked timers at their first ticks from now on, as if every skipped tick had run (a
  /// skipped main pass would have found an empty queue; the decay thread decays by elapsed time).
  void unpark_timers();
  void check_invariants() const;

  SimState& state_;
  SchedulingPolicy& policy_;
  ControllerOptions options_;
  EventQueue<Event> queue_;
  std::vector<ReplayObserver*> observers_;
  std::uint64_t future_submits_ = 0;
  std::uint64_t future_changes_ = 0;  // node outages and reservation boundaries still to come
  // Per Site::outages entry: its node index and whether it is in force; per node: the DRAIN outage
  // that begins as soon as the node is idle (-1: none; ControllerOptions::drain_lead).
  std::vector<std::uint32_t> outage_node_;
  std::vector<char> outage_applied_;
  std::vector<std::int32_t> drain_on_idle_;
  bool pass_requested_ = false;
  bool end_pass_scheduled_ = false;
  Seconds last_sched_ = kUnsetTime;
  Seconds last_full_sched_ = kUnsetTime;
  Seconds background_at_ = kUnsetTime;  // time of the pending Background event, if any
  Seconds last_backfill_end_ = kUnsetTime;
  bool backfill_enabled_ = true;
  bool changed_since_backfill_ = true;
  bool backfill_waiting_ = false;       // idle: the next change schedules the next cycle
  std::uint8_t current_phase_ = 0;      // EventPhase of the event being handled
  bool backfill_tick_pending_ = false;  // a BackfillTick is in the queue
  bool stalled_ = false;                // idle cluster, nothing to come: what pends can never start
  // Jobs held for their dependency: (job index, begin time), in job index order; those to test again.
  std::vector<std::pair<std::uint32_t, Seconds>> held_;
  std::vector<std::uint32_t> retest_;
  std::uint64_t retests_pending_ = 0;  // Retest events in the queue
  // Timers parked while idle (issue 27, D1: two jobs 158 years apart took 100M events).
  bool background_parked_ = false;
  bool decay_parked_ = false;
};

}  // namespace slurmtwin::sim
