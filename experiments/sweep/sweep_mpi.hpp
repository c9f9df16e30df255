#pragma once
// Running a sweep over MPI ranks (`mpirun -np N slurmtwin sweep run SPEC --mpi`): every rank loads the
// spec, site and trace and resolves the same design points; rank 0 owns the database, hands out the
// points not yet stored one at a time (dynamic balancing: replays differ in length), runs `-j` worker
// threads of its own, and stores the rows the other ranks send back. Built only when MPI was found.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "experiments/sweep/sweep.hpp"

namespace slurmtwin::experiments {

struct SweepMpiSummary {
  bool rank0 = false;                // this process is rank 0 (the others return with this false)
  SweepRunSummary run;               // rank 0: as run_sweep_spec
  std::vector<std::size_t> by_rank;  // rank 0: points evaluated by each rank in this run
};

#ifdef SLURMTWIN_HAVE_MPI
/// Initialises MPI, runs the sweep over MPI_COMM_WORLD, finalises MPI. Any error on any rank is
/// printed and aborts every rank (MPI_Abort), so that no rank waits forever.
SweepMpiSummary run_sweep_mpi(const SweepSpec& spec, const std::string& db, const SweepRunOptions& options);
#else
[[noreturn]] inline SweepMpiSummary run_sweep_mpi(const SweepSpec&, const std::string&,
                                                  const SweepRunOptions&) {
  throw std::runtime_error(
      "this slurmtwin was built without MPI: install libopenmpi-dev and openmpi-bin and rebuild for --mpi");
}
#endif

}  // namespace slurmtwin::experiments
