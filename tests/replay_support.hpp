#pragma once
// Every replay in the suite runs through checked_replay(): invariants checked after every event
// (no over-allocation, each job in exactly one state list) and job conservation at the end
// (started + never started + rejected = input; sim/conservation.hpp).
#include <doctest/doctest.h>

#include <utility>

#include "experiments/replay/replay.hpp"
#include "sim/conservation.hpp"

namespace slurmtwin::testing {

/// experiments::run_replay with options.check_invariants forced on; a broken invariant throws and fails the
/// calling test. Also checks the metrics against the input count.
inline experiments::ReplayResult checked_replay(Site site, const Trace& trace,
                                                experiments::ReplayOptions options = {}) {
  options.check_invariants = true;
  auto r = experiments::run_replay(std::move(site), trace, options);
  CHECK(r.metrics.input_jobs == trace.jobs.size());
  CHECK(r.metrics.started + r.metrics.never_started + r.metrics.cancelled_before_start + r.metrics.rejected ==
        trace.jobs.size());
  return r;
}

}  // namespace slurmtwin::testing
