#pragma once
// The one worker pool of the studies (sweeps, datasets, verification): independent replays spread
// over threads. Results go where the body puts them (by index), so the outcome does not depend on
// the thread count or the order in which indices finish.
#include <chrono>
#include <cstddef>
#include <functional>

namespace slurmtwin::experiments {

struct ParallelOptions {
  unsigned threads = 1;  // at most this many workers (and never more than there are indices)
  // Called on the calling thread about every `poll_every` while the workers run (progress lines).
  std::function<void()> poll;
  std::chrono::milliseconds poll_every{250};
  // Checked before each index is taken: true ends the loop (the indices running finish).
  std::function<bool()> stop;
};

/// Runs body(i) once for each i in [0, count), handing out indices in ascending order. The first
/// exception a body throws stops the handing out; once every worker has finished it is rethrown.
/// Returns how many bodies returned normally.
std::size_t parallel_for(std::size_t count, const std::function<void(std::size_t)>& body,
                         const ParallelOptions& options);

}  // namespace slurmtwin::experiments
