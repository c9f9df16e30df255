// parallel_for (experiments/replay/parallel.hpp): the one worker pool of sweeps, datasets and
// verification.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "experiments/replay/parallel.hpp"

using namespace slurmtwin::experiments;

TEST_CASE("parallel_for runs each index once on any thread count, and counts the bodies that returned") {
  for (unsigned threads : {1u, 2u, 7u, 64u}) {
    CAPTURE(threads);
    std::vector<std::atomic<int>> runs(50);
    ParallelOptions po;
    po.threads = threads;
    CHECK(parallel_for(
              runs.size(), [&](std::size_t i) { ++runs[i]; }, po) == 50);
    for (const auto& r : runs) CHECK(r.load() == 1);
  }
  CHECK(parallel_for(0, [](std::size_t) { FAIL("no index to run"); }, {}) == 0);
}

TEST_CASE("parallel_for: the first error stops handing out indices and is rethrown after the workers end") {
  // One thread: indices in order, so 0-2 run, 3 throws, 4-9 never start.
  std::vector<int> ran;
  ParallelOptions po;
  CHECK_THROWS_WITH_AS(parallel_for(
                           10,
                           [&](std::size_t i) {
                             ran.push_back(static_cast<int>(i));
                             if (i == 3) throw std::runtime_error("replay 3 failed");
                           },
                           po),
                       "replay 3 failed", std::runtime_error);
  CHECK(ran == std::vector<int>{0, 1, 2, 3});
}

TEST_CASE("parallel_for: a stop ends the loop before the next index, and poll runs while workers do") {
  std::atomic<bool> stop{false};
  std::atomic<int> started{0}, polls{0};
  ParallelOptions po;
  po.threads = 1;
  po.stop = [&] { return stop.load(); };
  po.poll_every = std::chrono::milliseconds(1);
  po.poll = [&] { ++polls; };
  const auto done = parallel_for(
      10,
      [&](std::size_t i) {
        ++started;
        if (i == 4) {
          stop = true;
          // Long enough for the calling thread to poll a few times.
          std::this_thread::sleep_for(std::chrono::milliseconds(30));
        }
      },
      po);
  CHECK(done == 5);
  CHECK(started == 5);
  CHECK(polls > 0);
}
