#include "experiments/replay/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace slurmtwin::experiments {

std::size_t parallel_for(std::size_t count, const std::function<void(std::size_t)>& body,
                         const ParallelOptions& options) {
  const auto workers = static_cast<unsigned>(std::min<std::size_t>(std::max(1u, options.threads), count));
  std::atomic<std::size_t> next{0}, succeeded{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;  // guards error, running
  std::condition_variable cv;
  std::exception_ptr error;
  unsigned running = workers;
  const auto worker = [&] {
    while (!failed && !(options.stop && options.stop())) {
      const auto i = next++;
      if (i >= count) break;
      try {
        body(i);
        ++succeeded;
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
    std::lock_guard lock(mutex);
    --running;
    cv.notify_all();
  };
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w) pool.emplace_back(worker);
  {
    std::unique_lock lock(mutex);
    const auto all_done = [&] { return running == 0; };
    while (!cv.wait_for(lock, options.poll_every, all_done)) {
      if (!options.poll) continue;
      lock.unlock();
      options.poll();
      lock.lock();
    }
  }
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  return succeeded;
}

}  // namespace slurmtwin::experiments
