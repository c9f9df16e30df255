// The scheduler under random small sites and workloads (tests/scheduler_gen.hpp): no crash, the
// invariants checked after every event (no over-allocation, each job in one state list) and job
// conservation, plus what must hold of every schedule whatever the settings: no job starts before
// it is submitted or eligible, none ends before it starts, every input job is accounted for once,
// and the same inputs give the same bytes. The fuzz target tests/fuzz/fuzz_scheduler.cpp drives the
// same generator from its bytes.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "scheduler_gen.hpp"

namespace slurmtwin::testing {
namespace {

/// What one generated case did (for the summary): replayed, or refused with a clear error.
struct Outcome {
  bool replayed = false;
  bool accrue_held = false;  // a job counted for accrue limits after it became eligible
  bool cap_held = false;     // an array task pended with JobArrayTaskLimit
  std::size_t started = 0, jobs = 0, rejected = 0;
};

/// Replays `site` and `trace` (replay_generated) and checks the schedule, and that the same inputs
/// give the same bytes.
Outcome check_case(const Site& site, const Trace& trace) {
  const auto r = replay_generated(site, trace);
  if (!r) return {};
  CHECK(schedule_violation(*r, trace) == "");
  const auto again = replay_generated(site, trace);
  REQUIRE(again);
  CHECK(experiments::jobs_csv(*again, trace) == experiments::jobs_csv(*r, trace));
  const bool held = std::any_of(r->state->jobs.begin(), r->state->jobs.end(), [](const sim::SimJob& j) {
    return j.accrue != kUnsetTime && j.accrue > j.eligible;
  });
  const bool capped = std::any_of(r->state->jobs.begin(), r->state->jobs.end(), [](const sim::SimJob& j) {
    return j.has_seen(sim::PendingReason::kJobArrayTaskLimit);
  });
  return {true, held, capped, r->metrics.started, trace.jobs.size(), r->metrics.rejected};
}

}  // namespace

TEST_CASE("property: random sites and workloads replay with every invariant held, deterministically") {
  // 300 seeded cases (about 5 s); `make fuzz` runs the same generator unseeded (fuzz_scheduler).
  std::size_t replayed = 0, started = 0, jobs = 0, rejected = 0, by_switch = 0, gpu_defaults = 0, minutes = 0,
              accrue = 0, capped = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    Draw d([&] { return rng(); });
    Site site = random_site(d);
    Trace trace = random_trace(d, site);
    add_random_topology(d, site);
    add_random_gpu_defaults(d, site);
    add_random_selected_limits(d, site);
    add_random_accrue_limits(d, site);
    add_random_account_limits(d, site);
    add_random_array_caps(d, trace);
    const auto o = check_case(site, trace);
    replayed += o.replayed ? 1 : 0;
    by_switch += o.replayed && site.places_by_switch() ? 1 : 0;
    const bool defaults = std::any_of(site.partitions.begin(), site.partitions.end(), [](const Partition& p) {
      return p.def_mem_per_gpu_mb.value_or(0) > 0 || p.def_cpu_per_gpu.value_or(0) > 0;
    });
    const bool gpu_jobs =
        std::any_of(trace.jobs.begin(), trace.jobs.end(), [](const JobRecord& j) { return !j.gres.empty(); });
    gpu_defaults += o.replayed && defaults && gpu_jobs ? 1 : 0;
    minutes += o.replayed && std::any_of(site.qos.begin(), site.qos.end(),
                                         [](const Qos& q) {
                                           return !q.limits.grp_tres_run_mins.empty() ||
                                                  !q.limits.grp_tres_mins.empty();
                                         })
                   ? 1
                   : 0;
    accrue += o.replayed && o.accrue_held ? 1 : 0;
    capped += o.replayed && o.cap_held ? 1 : 0;
    started += o.started;
    jobs += o.jobs;
    rejected += o.rejected;
  }
  MESSAGE(replayed << " of 300 generated cases replayed; " << started << " of " << jobs << " jobs started, "
                   << rejected << " refused at submit; " << by_switch << " placed by topology/tree; "
                   << gpu_defaults << " with GPU jobs under per-GPU defaults; " << minutes
                   << " under QOS TRES-minute limits; " << accrue << " with jobs held back by accrue limits; "
                   << capped << " with array tasks held by their cap");
  // The generator must exercise the scheduler, not only the refusals.
  CHECK(replayed >= 150);
  CHECK(started >= jobs / 4);
  CHECK(by_switch >= 30);
  CHECK(gpu_defaults >= 20);
  CHECK(minutes >= 20);
  CHECK(accrue >= 20);
  CHECK(capped >= 10);
}

}  // namespace slurmtwin::testing
