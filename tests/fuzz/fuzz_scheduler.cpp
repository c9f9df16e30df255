// libFuzzer target: the scheduler itself. The input's bytes drive the generator of random small
// sites and workloads (tests/scheduler_gen.hpp; the doctest property test runs it seeded), and each
// case is replayed with the invariants checked after every event. A site Slurm would refuse
// (std::invalid_argument from validate) or a trace the replay refuses (InputError) is fine; any other
// exception, a sanitizer report, a broken invariant or a job started before it was eligible aborts.
#include <stdexcept>
#include <string>

#include "experiments/replay/replay.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "tests/scheduler_gen.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slurmtwin;
  auto d = testing::bytes_draw(data, size);
  const Site site = testing::random_site(d);
  const Trace trace = testing::random_trace(d, site, 1'700'000'040);
  try {
    validate(site);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  cli::ReplayOptions options;
  options.check_invariants = true;
  try {
    const auto r = cli::run_replay(site, trace, options);
    const auto& m = r.metrics;
    if (m.started + m.never_started + m.cancelled_before_start + m.rejected != trace.jobs.size())
      fuzz::fail("a job is not accounted for");
    for (const auto& j : r.state->jobs)
      if (j.start != kUnsetTime && j.start < trace.jobs[j.trace_index].eligible)
        fuzz::fail("job " + std::to_string(j.id) + " started before it was eligible");
  } catch (const InputError&) {
    return 0;  // the workload names what the site lacks in a way the replay refuses as a whole
  }
  return 0;
}
