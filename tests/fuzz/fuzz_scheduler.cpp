// libFuzzer target: the scheduler itself. The input's bytes drive the generator of random small
// sites and workloads (tests/scheduler_gen.hpp; the doctest property test runs it seeded), and each
// case is replayed with the invariants checked after every event. A site Slurm would refuse
// (std::invalid_argument from validate) or a trace the replay refuses (InputError) is fine; any other
// exception, a sanitizer report, a broken invariant or a job started before it was eligible aborts.
#include "tests/fuzz/fuzz_support.hpp"
#include "tests/scheduler_gen.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slurmtwin;
  auto d = testing::bytes_draw(data, size);
  Site site = testing::random_site(d);
  Trace trace = testing::random_trace(d, site);
  testing::add_random_topology(d, site);
  testing::add_random_gpu_defaults(d, site);
  testing::add_random_selected_limits(d, site);
  testing::add_random_accrue_limits(d, site);
  testing::add_random_account_limits(d, site);
  testing::add_random_array_caps(d, trace);
  if (const auto r = testing::replay_generated(site, trace))
    if (const auto why = testing::schedule_violation(*r, trace); !why.empty()) fuzz::fail(why);
  return 0;
}
