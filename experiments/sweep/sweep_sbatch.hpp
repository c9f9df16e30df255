#pragma once
// A sweep as a Slurm job array (`sweep run --emit-sbatch`, docs/sweeps.md): one array task per shard,
// each into its own database, and a merge job to run after them.
#include <cstdint>
#include <string>

namespace slurmtwin::experiments {

struct SbatchOptions {
  std::uint32_t shards = 1;    // array tasks (shard I/N each), at least 1
  unsigned cpus_per_task = 1;  // each task's --cpus-per-task and -j, at least 1
  std::string time_limit;      // #SBATCH --time ("" = the partition's default)
  std::string partition;       // #SBATCH --partition ("" = the default partition)
};

/// Writes DIR/sweep.sbatch (the array) and DIR/merge.sbatch for the spec at `spec_path` (both
/// atomically, never through a link at their place), with every path quoted for bash and every
/// #SBATCH value escaped as sbatch reads it; returns what to print (the paths and how to submit).
/// std::invalid_argument for a value with a control character (a line break would start a command of
/// its own) or for no shards or CPUs.
std::string emit_sweep_sbatch(const std::string& spec_path, const std::string& dir,
                              const SbatchOptions& options);

}  // namespace slurmtwin::experiments
