#pragma once
// Slurm's scheduling as one policy for the controller: multifactor priority, fair-share usage with
// decay (Fair Tree or classic), QOS/partition limits, the main scheduling pass and sched/backfill.
// Preemption plugs in here as it is built.
#include <map>
#include <tuple>
#include <vector>

#include "policies/assoc_tree.hpp"
#include "policies/backfill.hpp"
#include "policies/fair_tree.hpp"
#include "policies/main_scheduler.hpp"
#include "policies/preemption.hpp"
#include "policies/priority.hpp"
#include "policies/reservations.hpp"
#include "policies/usage.hpp"
#include "sim/controller.hpp"

namespace slurmtwin::policies {

struct SlurmPolicyOptions {
  TieMode fair_tree_ties = TieMode::kCode;  // what slurmctld's code does (spec §3.4)
  BackfillCostModel backfill_cost;          // off by default: backfill cycles take no simulated time
  // A requeued job keeps the priority (and sprio factors) of its last recalculation before its
  // previous start until the next decay run, as real Slurm 22.05 shows (docs/fidelity.md); false:
  // computed anew at the requeue (age from the new eligible time only).
  bool requeue_keeps_priority = true;
  // Backfill's usable-CPU profiles kept across cycles are also computed anew and compared, throwing
  // std::logic_error on a difference (tests: a wrong invalidation fails; slow).
  bool check_backfill_profiles = false;
};

class SlurmPolicy final : public sim::SchedulingPolicy {
 public:
  SlurmPolicy(const Site& site, SlurmPolicyOptions options = {});

  void init(sim::SimState& state) override;
  std::string admit(sim::SimState& state, std::uint32_t job) override;
  void on_submit(sim::SimState& state, std::uint32_t job) override;
  void on_queued(sim::SimState& state, std::uint32_t job) override;
  void on_start(sim::SimState& state, std::uint32_t job) override;
  void on_end(sim::SimState& state, std::uint32_t job) override;
  void on_cancel_pending(sim::SimState& state, std::uint32_t job) override;
  void decay_tick(sim::SimState& state) override;
  void main_pass(sim::SimState& state, sim::JobLauncher& launcher, bool full) override;
  /// One sched/backfill cycle; false (backfill off) when SchedulerType is not sched/backfill.
  std::optional<BackfillCycle> backfill_pass(sim::SimState& state, sim::JobLauncher& launcher) override;
  /// Every queued job has one priority entry per requested partition, holding the priority the job
  /// shows; usages are finite and not negative; fair-share factors lie in [0, 1].
  void check_invariants(const sim::SimState& state) const override;

  const AssocTree& assoc_tree() const { return tree_; }
  /// What the last backfill cycle did.
  const BackfillStats& last_backfill() const { return last_backfill_; }
  /// Backfill's usable-CPU profiles kept across cycles.
  const ProfileCache& backfill_profiles() const { return profiles_; }
  const std::vector<QosUsage>& qos_usage() const { return qos_usage_; }
  /// Every factor of one pending job's priority in its k-th partition, as sprio -l shows it.
  PriorityFactors factors(const sim::SimState& state, std::uint32_t job, std::size_t k) const;
  /// The same as computed at instant `at` (absolute s): what sprio shows between recalculations, when
  /// `at` is the last one (decay tick or submit).
  PriorityFactors factors_at(const sim::SimState& state, std::uint32_t job, std::size_t k, Seconds at) const;
  /// The normalized factors of the same job as `model` computes them (e.g. one whose weights are all
  /// non-zero: Slurm leaves a factor at 0 when its weight is 0).
  PriorityFactors factors_with(const PriorityModel& model, const sim::SimState& state, std::uint32_t job,
                               std::size_t k) const;
  /// When a requeued job's priority was last computed, as of its requeue: the last decay run while
  /// it was pending before its previous start (one in the very second of that start came after it),
  /// else that previous submit. `period`: the decay thread's period (s).
  static Seconds recalculated_before_requeue(const sim::PastRun& previous, Seconds last_decay,
                                             Seconds period);
  bool requeue_keeps_priority() const { return options_.requeue_keeps_priority; }

 private:
  /// Full priority computation (at submit): caches the job's static terms.
  void set_priority(sim::SimState& state, std::uint32_t job);
  /// Recalculation of one job from its cached static terms (age and fair-share move).
  void update_priority(sim::SimState& state, std::uint32_t job);
  /// The size CPUs the priority of the job's k-th partition was last computed with (0: the request's).
  std::uint32_t priced_size(std::uint32_t job, std::size_t k) const;
  /// At a recalculation: the job size terms of the jobs whose SimJob::size_cpus moved since the last
  /// one (resized_) are computed again.
  void apply_sizes(sim::SimState& state);
  /// The CPUs node selection gives the job on idle nodes (in the first of its partitions where it
  /// fits; 0: none, or no job size weight).
  std::uint32_t idle_size_cpus(const sim::SimState& state, const sim::SimJob& job);
  /// Recalculation of every queued job at a decay tick (the same arithmetic as update_priority).
  void recalculate_queued(sim::SimState& state);
  /// Accrue limits: counts the jobs that may accrue age now (build_job_queue), at each pass's start.
  void count_accrue(sim::SimState& state);
  /// The pending queue sorted by queue_before: rebuilt after priorities change, else merged with
  /// the jobs queued since the last pass.
  const std::vector<QueueRecord>& sorted_queue(const sim::SimState& state);
  ChargedJob charged(const sim::SimState& state, const sim::SimJob& job) const;
  /// Removes a job's records from queue_ (those of an earlier stay in the queue).
  void drop_records(std::uint32_t job);
  /// Job `job` leaves the queue (started or cancelled): its records go stale; its priority entries are
  /// freed unless `keep_entries` (CALCULATE_RUNNING reads them again).
  void leave_queue(const sim::SimState& s, std::uint32_t job, bool keep_entries);

  const Site& site_;
  SlurmPolicyOptions options_;
  PriorityModel priority_;
  UsageDecay decay_;
  UsageResetPeriod reset_period_;
  BillingMode billing_mode_;
  Preemption preemption_;
  Reservations reservations_;  // before main_ and backfill_, which point to it
  MainScheduler main_;
  Backfill backfill_;
  ProfileCache profiles_;  // backfill's per-shape usable CPUs, kept across cycles of this replay
  BackfillStats last_backfill_;
  AssocTree tree_;
  std::vector<QosUsage> qos_usage_;
  std::vector<AssocIndex> tree_index_;       // site association index -> tree node
  std::vector<std::int32_t> partition_qos_;  // partition -> QOS index, -1 = none
  Seconds last_decay_ = kUnsetTime;
  /// One (job, requested partition) pair's priority inputs and result, kept flat so that a
  /// recalculation is one sequential pass over them.
  struct PriorityEntry {
    StaticPriorityTerms terms;
    Seconds submit = 0;          // the job's, for accrue_time (absolute s)
    Seconds eligible = 0;        // what its age runs from: eligible time, or accrue time under accrue limits
    AssocIndex tree = kNoAssoc;  // where its fair-share factor is read
    std::uint32_t job = 0;
    std::uint32_t priority = 0;   // last computed (= SimJob::part_priority[k])
    std::uint32_t size_cpus = 0;  // SimJob::size_cpus its job size term was computed with
    std::uint16_t k = 0;          // index into SimJob::partitions
    std::uint16_t count = 0;      // the job's partitions (its entries are contiguous)
    bool queued = false;          // in SimState::pending: recalculated at every tick
    bool age_final = false;       // its age factor cannot change any more (PriorityModel::age_final)
  };
  // A job's entries are contiguous from entries_at_[job]; ranges of started jobs are reused
  // (free_entries_, by length).
  static constexpr std::uint32_t kNoEntries = ~std::uint32_t{0};
  std::vector<PriorityEntry> entries_;
  std::vector<std::uint32_t> entries_at_;                 // per job
  std::vector<std::vector<std::uint32_t>> free_entries_;  // by range length: free ranges
  std::vector<double> fs_now_;                            // per tree node: fs_factor at the last tick
  std::vector<char> fs_moved_;                            // per tree node: changed at this tick
  std::vector<QueueRecord> queue_;
  std::vector<QueueRecord> queued_since_;  // records of jobs queued since queue_ was sorted
  bool queue_stale_ = true;                // priorities changed: rebuild
  std::size_t stale_records_ = 0;
  std::vector<std::uint32_t> queue_counts_;  // records of queue_ per partition (for the main pass)
  std::vector<std::size_t> descents_;        // scratch: out-of-order neighbours after a refresh
  UnsettledJobs unsettled_;                  // pending jobs whose reason may be None or Resources
  // idle_size_cpus per (partition, request): what node selection gives on idle nodes.
  struct IdleKey {
    std::uint16_t partition;
    sim::NodeRequest request;
    auto key() const {
      return std::tuple_cat(std::tie(partition, request.min_nodes, request.max_nodes), request.shape_tie());
    }
    bool operator<(const IdleKey& o) const { return key() < o.key(); }
  };
  std::map<IdleKey, std::uint32_t> idle_cpus_;
  std::vector<std::uint32_t> resized_;  // jobs whose SimJob::size_cpus moved since the last recalculation
  // Classic fair share at a decay run: the jobs in slurmctld's job list order, and per tree node
  // whether the user's usage was computed in this run.
  std::vector<std::uint32_t> list_order_;
  std::vector<char> user_fresh_;
};

}  // namespace slurmtwin::policies
