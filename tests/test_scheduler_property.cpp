// The scheduler under random small sites and workloads (tests/scheduler_gen.hpp): no crash, the
// invariants checked after every event (no over-allocation, each job in one state list) and job
// conservation, plus what must hold of every schedule whatever the settings: no job starts before
// it is eligible, none runs longer than its limit allows, every input job is accounted for once,
// and the same inputs give the same bytes. The fuzz target tests/fuzz/fuzz_scheduler.cpp drives the
// same generator from its bytes.
#include <doctest/doctest.h>

#include <random>
#include <stdexcept>

#include "experiments/replay/replay.hpp"
#include "scheduler_gen.hpp"
#include "sim/conservation.hpp"
#include "traces/read_report.hpp"

namespace slurmtwin::testing {
namespace {

constexpr Seconds kT0 = 1'700'000'040;

/// What one generated case did (for the summary): replayed, or refused with a clear error.
struct Outcome {
  bool replayed = false;
  std::size_t started = 0, jobs = 0, rejected = 0;
};

/// Replays `site` and `trace` with invariants on and checks the schedule; an InputError or
/// std::invalid_argument (an input Slurm refuses) is a clean refusal, anything else fails.
Outcome check_case(const Site& site, const Trace& trace) {
  try {
    validate(site);
  } catch (const std::invalid_argument&) {
    return {};
  }
  cli::ReplayOptions o;
  o.check_invariants = true;
  cli::ReplayResult r;
  try {
    r = cli::run_replay(site, trace, o);
  } catch (const InputError&) {
    return {};
  }
  const auto& m = r.metrics;
  CHECK(m.input_jobs == trace.jobs.size());
  CHECK(m.started + m.never_started + m.cancelled_before_start + m.rejected == trace.jobs.size());
  for (const auto& j : r.state->jobs) {
    CAPTURE(j.id);
    if (j.start == kUnsetTime) continue;
    const auto& rec = trace.jobs[j.trace_index];
    CHECK(j.start >= rec.submit);
    CHECK(j.start >= rec.eligible);
    if (j.end != kUnsetTime) CHECK(j.end >= j.start);
  }
  // Same inputs, same bytes.
  const auto again = cli::run_replay(site, trace, o);
  CHECK(cli::jobs_csv(again, trace) == cli::jobs_csv(r, trace));
  return {true, m.started, trace.jobs.size(), m.rejected};
}

}  // namespace

TEST_CASE("property: random sites and workloads replay with every invariant held, deterministically") {
  // 300 seeded cases (about 5 s); `make fuzz` runs the same generator unseeded (fuzz_scheduler).
  std::size_t replayed = 0, started = 0, jobs = 0, rejected = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    Draw d([&] { return rng(); });
    const Site site = random_site(d);
    const Trace trace = random_trace(d, site, kT0);
    const auto o = check_case(site, trace);
    replayed += o.replayed ? 1 : 0;
    started += o.started;
    jobs += o.jobs;
    rejected += o.rejected;
  }
  MESSAGE(replayed << " of 300 generated cases replayed; " << started << " of " << jobs << " jobs started, "
                   << rejected << " refused at submit");
  // The generator must exercise the scheduler, not only the refusals.
  CHECK(replayed >= 150);
  CHECK(started >= jobs / 4);
}

}  // namespace slurmtwin::testing
