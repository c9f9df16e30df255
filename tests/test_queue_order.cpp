// The sorted queue kept across passes (policies/main_scheduler, slurm_policy): re-sorting after a
// priority recalculation, and a full pass that settles its blocked tail in bulk.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "experiments/replay/replay.hpp"
#include "policies/main_scheduler.hpp"
#include "replay_support.hpp"
#include "scenario_support.hpp"

using namespace slurmtwin;

namespace {

using policies::QueueRecord;
using testing::kT0;
using testing::make_trace;
using testing::small_site;

bool same_order(const std::vector<QueueRecord>& a, const std::vector<QueueRecord>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const QueueRecord& x, const QueueRecord& y) { return x.job == y.job; });
}

std::vector<std::size_t> descents_of(const std::vector<QueueRecord>& q) {
  std::vector<std::size_t> d;
  for (std::size_t i = 1; i < q.size(); ++i)
    if (policies::queue_before(q[i], q[i - 1])) d.push_back(i);
  return d;
}

}  // namespace

TEST_CASE("sort_at_descents puts a queue with a few moved records in queue order") {
  // Sorted queues of distinct records, then a few priorities changed (up and down, far and near) as a
  // recalculation does; the result must be std::sort's (keys are unique, so the order is unique).
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    const auto n = static_cast<std::size_t>(rng() % 60 + 2);
    std::vector<QueueRecord> q(n);
    for (std::size_t i = 0; i < n; ++i) {
      q[i].job = static_cast<std::uint32_t>(i);
      q[i].id = i + 1;
      q[i].priority = static_cast<std::uint32_t>(rng() % 50);
      q[i].submit = static_cast<Seconds>(rng() % 5);
    }
    std::sort(q.begin(), q.end(), policies::queue_before);
    const auto moved = rng() % 6;
    for (std::size_t m = 0; m < moved; ++m) q[rng() % n].priority = static_cast<std::uint32_t>(rng() % 50);
    auto expected = q;
    std::sort(expected.begin(), expected.end(), policies::queue_before);
    auto by_descents = q;
    policies::sort_at_descents(by_descents, descents_of(q));
    CHECK(same_order(by_descents, expected));
    auto nearly = q;
    policies::sort_nearly_sorted(nearly, /*max_descents=*/2);  // small threshold: both paths run
    CHECK(same_order(nearly, expected));
  }
}

TEST_CASE("sort_at_descents re-checks the pair after an insertion") {
  // Queue order is by priority, highest first. [9, 6, 8, 7] has one descent, at index 2 (8 before 6).
  // Inserting 8 gives [9, 8, 6, 7], whose new pair (6, 7) is out of order although it was not
  // recorded: the cascade must insert 7 too, giving [9, 8, 7, 6].
  std::vector<QueueRecord> q(4);
  const std::uint32_t prio[] = {9, 6, 8, 7};
  for (std::uint32_t i = 0; i < 4; ++i) q[i] = {i, 0, 0, prio[i], false, 0, i + 1, -1, 0};
  const auto d = descents_of(q);
  REQUIRE(d == std::vector<std::size_t>{2});
  policies::sort_at_descents(q, d);
  CHECK(q[0].priority == 9);
  CHECK(q[1].priority == 8);
  CHECK(q[2].priority == 7);
  CHECK(q[3].priority == 6);
}

TEST_CASE("a full pass settles the records behind a blocked partition: Priority, never for the blocker") {
  // One node with 4 CPUs, sched/builtin, FIFO priorities (all weights 0).
  // t=0: J1 (4 CPUs, 1000 s) and J2 (3 CPUs) submitted; t=3 limited pass: J1 starts, J2 fails for
  // Resources and blocks the partition. t=10: J3 (1 CPU) submitted; the limited pass it triggers stops
  // after J2 fails (nothing behind it can start), so J3's reason stays None. t=60: full pass
  // (sched_interval): J2 Resources again; J3 is behind the blocked partition and gets Priority (the
  // blocked tail is settled in bulk, as walking it would). t=1003 J1 ends: J2 and J3 start together,
  // so J3 never waited for Resources and J2 never for Priority.
  auto site = small_site(1, 4);
  site.scheduler.scheduler_type = "sched/builtin";
  experiments::ReplayOptions o;
  o.check_invariants = true;
  const auto r =
      experiments::run_replay(site, make_trace({{0, 1, 4, 1000}, {0, 1, 3, 50}, {10, 1, 1, 10}}), o);
  const auto seen = [&](std::size_t i, sim::PendingReason why) { return r.state->jobs[i].has_seen(why); };
  CHECK(r.state->jobs[0].start - kT0 == 3);
  CHECK(r.state->jobs[1].start - kT0 == 1003);
  CHECK(r.state->jobs[2].start - kT0 == 1003);
  CHECK(seen(1, sim::PendingReason::kResources));
  CHECK_FALSE(seen(1, sim::PendingReason::kPriority));
  CHECK(seen(2, sim::PendingReason::kPriority));
  CHECK_FALSE(seen(2, sim::PendingReason::kResources));
}

TEST_CASE("a job cancelled before any pass saw it leaves no record behind for the next pass") {
  // Found by the scheduler property test (seed 51, SIGSEGV in SlurmPolicy::sorted_queue). Job 1 is
  // submitted and cancelled at t=0; the decay run at t=0 (between the two) marks the queue for a
  // priority refresh. The pass at t=3 (batch_sched_delay) used to drop the stale records first and
  // merge job 1's unmerged record after, then read its freed priority entries. Job 2, submitted at
  // t=10 on the idle node, starts in the pass of that second (the last one ran at 3, 3 s before).
  auto trace = make_trace({{0, 1, 1, 100, 600}, {10, 1, 1, 100, 600}});
  trace.jobs[0].cancel = kT0;
  const auto r = testing::checked_replay(testing::small_site(1, 4), trace);
  const auto& jobs = r.state->jobs;
  CHECK(jobs[0].start == kUnsetTime);
  CHECK(r.metrics.cancelled_before_start == 1);
  CHECK(jobs[1].start - kT0 == 10);
}

TEST_CASE("without periodic passes and backfill, a replay whose pending jobs can no longer start ends") {
  // Found by the scheduler fuzz target (a 10 s timeout: the replay never ended). With SchedulerParameters
  // sched_interval=-1 and bf_interval=-1 slurmctld schedules only when something happens. Job 1 asks
  // for 4 CPUs on one node of a 2-CPU cluster: it stays pending for good. Once job 2 (submitted at 5,
  // started at 6, 100 s) has ended, nothing runs, nothing is to come and no pass is due: the replay
  // ends there instead of running the decay thread through simulated time for ever.
  auto site = small_site(1, 2);
  site.scheduler.params.sched_interval = -1;
  site.scheduler.params.bf_interval = -1;
  const auto r = testing::checked_replay(site, make_trace({{0, 1, 4, 100, 600}, {5, 1, 1, 100, 600}}));
  const auto& jobs = r.state->jobs;
  CHECK(jobs[0].start == kUnsetTime);
  CHECK(jobs[1].start - kT0 == 6);  // the pass its submit requested: batch_sched_delay after the one at 3
  CHECK(r.metrics.never_started == 1);
  CHECK(r.events < 100);
}

TEST_CASE("without periodic passes, a backfill thread woken only by the decay run lets the replay end") {
  // Found by the scheduler fuzz target (a 10 s timeout in CI). As above, but with the backfill thread
  // on (bf_interval 30): every decay run marks the pending job changed, which wakes the thread, so the
  // stop rule's "a backfill cycle has a change still to see" held for ever and the decay thread ran
  // through simulated time without end. A change made by the decay run itself gives an idle cluster
  // nothing new to start (the cycle after job 2's end has seen the queue); the replay ends.
  auto site = small_site(1, 2);
  site.scheduler.params.sched_interval = -1;
  site.scheduler.params.bf_interval = 30;
  const auto r = testing::checked_replay(site, make_trace({{0, 1, 4, 100, 600}, {5, 1, 1, 100, 600}}));
  const auto& jobs = r.state->jobs;
  CHECK(jobs[0].start == kUnsetTime);
  CHECK(jobs[1].start - kT0 == 6);
  CHECK(r.metrics.never_started == 1);
  CHECK(r.events < 100);
}
