// Job arrays on hand-made clusters: the task cap (--array=...%N), bf_max_job_array_resv, and a pending
// array tried as one record of Slurm's queue (policies/array_tasks.hpp); the readers and writer that
// carry the cap. Against real Slurm 22.05: docs/fidelity.md, scenario 34.
//
// Facts used (tests/scenario_support.hpp): every priority is 1, so the queue is FIFO by submit time,
// then job id, then array task; every_second_site runs a main pass and a backfill cycle every second,
// the first main pass at 1; small_site's first main pass is a limited one at 3 (batch_sched_delay),
// then a full pass every 60 s.
#include <doctest/doctest.h>

#include <memory>

#include "policies/slurm_policy.hpp"
#include "scenario_support.hpp"
#include "sim/conservation.hpp"
#include "sim/controller.hpp"
#include "sim/job_resolver.hpp"
#include "traces/array_spec.hpp"
#include "traces/native_format.hpp"
#include "traces/readers.hpp"
#include "traces/sacct_writer.hpp"

using namespace slurmtwin;

namespace {

using testing::JobSpec;
using testing::kT0;
using testing::make_trace;

struct Replayed {
  Site site;
  std::unique_ptr<sim::SimState> state;
  Seconds start(std::size_t i) const { return state->jobs[i].start - kT0; }
  bool saw(std::size_t i, sim::PendingReason r) const { return state->jobs[i].has_seen(r); }
};

Replayed replay(Site site, const Trace& trace) {
  Replayed r;
  r.site = std::move(site);
  validate(r.site);
  r.state = std::make_unique<sim::SimState>(r.site, true);
  r.state->jobs = sim::resolve_jobs(trace, r.site, r.state->cluster, {}, r.state->users);
  policies::SlurmPolicy policy(r.site, {});
  sim::ControllerOptions o;
  o.check_invariants = true;
  sim::Controller controller(*r.state, policy, o);
  controller.run();
  sim::check_job_conservation(*r.state, trace.jobs.size());
  return r;
}

/// Makes jobs [first, first + count) of `t` the tasks 0..count-1 of one array (the first one's id),
/// at most `cap` of them running at once (0: no cap).
void make_array(Trace& t, std::size_t first, std::size_t count, std::uint32_t cap) {
  for (std::size_t k = 0; k < count; ++k) {
    auto& j = t.jobs[first + k];
    j.job_id = t.jobs[first].job_id;
    j.array_task = static_cast<std::int32_t>(k);
    j.array_max_running = cap;
  }
}

}  // namespace

TEST_CASE("--array=0-3%2: at most two tasks run at once, the others pend with JobArrayTaskLimit") {
  // 4 nodes x 4 CPUs, four one-node tasks of 100 s: room for all four at 0.
  auto trace =
      make_trace({{0, 1, 4, 100, 600}, {0, 1, 4, 100, 600}, {0, 1, 4, 100, 600}, {0, 1, 4, 100, 600}});
  SUBCASE("cap 2: tasks 0 and 1 at 1, tasks 2 and 3 at 101 when those end (the pass their end triggers)") {
    make_array(trace, 0, 4, 2);
    const auto r = replay(testing::every_second_site(4, 4), trace);
    CHECK(r.start(0) == 1);
    CHECK(r.start(1) == 1);
    CHECK(r.start(2) == 101);
    CHECK(r.start(3) == 101);
    CHECK(r.saw(2, sim::PendingReason::kJobArrayTaskLimit));
    CHECK_FALSE(r.saw(0, sim::PendingReason::kJobArrayTaskLimit));
  }
  SUBCASE("no cap: all four at 1") {
    make_array(trace, 0, 4, 0);
    const auto r = replay(testing::every_second_site(4, 4), trace);
    for (std::size_t i = 0; i < 4; ++i) CHECK(r.start(i) == 1);
  }
}

TEST_CASE("bf_max_job_array_resv: backfill reserves for that many tasks of an array, no more") {
  // 2 nodes x 8 CPUs. A (8 CPUs) holds n1 and B (4 CPUs) half of n2 from 1 until 121 (their limits).
  // The array X (tasks 0-1, one whole node each, limit 60) pends from 1; Y (4 CPUs, limit 300, runs
  // 300) from 2 could start at once in n2's free half, if no reservation there began before 302.
  // Backfill plans X0 on n1 and X1 on n2, both at 121 (the first nodes free).
  auto trace = make_trace(
      {{0, 1, 8, 120, 120}, {0, 1, 4, 120, 120}, {1, 1, 8, 60, 60}, {1, 1, 8, 60, 60}, {2, 1, 4, 300, 300}});
  make_array(trace, 2, 2, 0);
  SUBCASE("bf_max_job_array_resv = 1: X1 gets no reservation, so Y backfills at 2 and X1 comes later") {
    auto site = testing::every_second_site(2, 8);
    site.scheduler.params.bf_max_job_array_resv = 1;
    const auto r = replay(site, trace);
    CHECK(r.start(4) == 2);
    CHECK(r.start(2) == 121);  // X0 on n1 when A ends
    CHECK(r.start(3) == 181);  // X1: n2 is Y's until 302, n1 X0's until 181
  }
  SUBCASE("the default 20: X1's reservation on n2 at 121 keeps Y out; X runs 121-181, then Y") {
    const auto r = replay(testing::every_second_site(2, 8), trace);
    CHECK(r.start(2) == 121);
    CHECK(r.start(3) == 121);
    CHECK(r.start(4) == 181);
  }
}

TEST_CASE("a pending array is one queue record: its rejected tasks count no depth in the main pass") {
  // 2 nodes x 4 CPUs; partition p has n1, q has n2; no backfill; default_queue_depth 2 (a limited
  // pass stops after testing 3 records). J1 (p) takes n1 at the first pass (3); the array A (p, six
  // tasks) cannot start behind it; Z (q) can start on n2. Slurm tries A once (its first task fails,
  // the rest of the record with it): J1, A, Z are three records, and Z starts at 3. Counting each task
  // as a record would stop the pass at A's third task, and Z would wait for the full pass at 60.
  auto site = testing::small_site(2, 4);
  site.scheduler.scheduler_type = "sched/builtin";
  site.scheduler.params.default_queue_depth = 2;
  site.partitions[0].nodes = {"n1"};
  auto q = site.partitions[0];
  q.name = "q";
  q.is_default = false;
  q.nodes = {"n2"};
  site.partitions.push_back(q);
  std::vector<JobSpec> jobs = {{0, 1, 4, 1000, 1000}};
  for (int k = 0; k < 6; ++k) jobs.push_back({1, 1, 4, 100, 1000});
  jobs.push_back({2, 1, 4, 100, 1000});
  auto trace = make_trace(jobs);
  make_array(trace, 1, 6, 0);
  trace.jobs[7].partition = trace.partitions.intern("q");
  const auto r = replay(site, trace);
  CHECK(r.start(0) == 3);
  CHECK(r.start(7) == 3);
  CHECK(r.start(1) == 1003);  // A0 when J1 ends
  // The tasks not tried took the rejected task's reason (fill_array_reasons).
  CHECK(r.saw(4, sim::PendingReason::kResources));
}

TEST_CASE("--array specs as sbatch reads them") {
  const auto a = parse_array_spec("0-3,8,10-14:2%3");
  REQUIRE(a);
  CHECK(a->tasks == std::vector<std::int32_t>{0, 1, 2, 3, 8, 10, 12, 14});
  CHECK(a->max_running == 3);
  CHECK(parse_array_spec("5")->tasks == std::vector<std::int32_t>{5});
  CHECK(parse_array_spec("3,1-2")->tasks == std::vector<std::int32_t>{1, 2, 3});
  CHECK(parse_array_spec("1-5")->max_running == 0);
  for (const char* bad :
       {"", "%2", "1-", "-3", "3-1", "1-4:0", "1-4%0", "1:2", "a", "1,,2", "0-4000001", "1 -2"})
    CHECK_MESSAGE(!parse_array_spec(bad), bad);
}

TEST_CASE("jobs.sacct writes an array's task list with its cap, kept when read back and natively") {
  auto trace = make_trace({{0, 1, 1, 60, 600}, {0, 1, 1, 60, 600}, {0, 1, 1, 60, 600}});
  make_array(trace, 0, 2, 2);
  trace.jobs[1].array_task = 3;  // tasks 0 and 3 of array 1; job 3 is no array task
  const auto text = format_sacct_parsable(trace);
  CHECK(text.find("|sbatch --array=0,3%2\n") != std::string::npos);
  std::size_t written = 0;  // once per task, not for job 3
  for (auto at = text.find("--array"); at != std::string::npos; at = text.find("--array", at + 1)) ++written;
  CHECK(written == 2);
  ReadReport report;
  ReadOptions options;
  RejectSink sink(report, options);
  Trace back;
  read_sacct_parsable(text, "jobs.sacct", back, sink);
  REQUIRE(back.jobs.size() == 3);
  CHECK(back.jobs[0].array_max_running == 2);
  CHECK(back.jobs[1].array_max_running == 2);
  CHECK(back.jobs[2].array_max_running == 0);
  const auto native = decode_native_trace(encode_native_trace(trace, false), "x");
  CHECK(native.jobs[1].array_max_running == 2);
  CHECK(native.jobs[2].array_max_running == 0);
}
