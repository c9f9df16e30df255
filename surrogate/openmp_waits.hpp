#pragma once
// How libtorch's CPU threads wait between parallel regions. Debian's libtorch runs them on GNU OpenMP
// (libgomp), whose idle threads spin for a while before they sleep. On a machine with few cores,
// or one busy with other work (a sweep's exact replays, the test suite), the spinning threads take the
// cores the work needs: on this project's 2-core VM `surrogate train --threads 2` took 2.3x and
// `optimize -j 2` 2.1x the wall time spinning as sleeping, 3.2x beside other work (docs/benchmarks.md).
#include <string>

namespace slurmtwin::surrogate {

/// When the user has set neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT: sets OMP_WAIT_POLICY=PASSIVE and
/// executes this program again (/proc/self/exe) with the same arguments, since libgomp reads its wait
/// policy once, when it loads, before main. Returns when either is set (so after the re-execution) or
/// when it cannot re-execute (the process then runs on with libgomp's default). Call first in main.
void reexec_with_passive_openmp_waits(char** argv);

/// The wait policy this process runs with, as the user would set it: "PASSIVE", "ACTIVE",
/// "GOMP_SPINCOUNT=N", or "libgomp's default (spin, then sleep)".
std::string openmp_wait_policy();

}  // namespace slurmtwin::surrogate
