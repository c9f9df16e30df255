#include "surrogate/split.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>

namespace slurmtwin::surrogate {

const char* split_mode_name(SplitMode mode) {
  return mode == SplitMode::kTail ? "tail" : mode == SplitMode::kAll ? "all" : "interleaved";
}

SplitMode parse_split_mode(const std::string& name) {
  if (name == "tail") return SplitMode::kTail;
  if (name == "interleaved") return SplitMode::kInterleaved;
  if (name == "all") return SplitMode::kAll;
  throw std::invalid_argument("split must be tail, interleaved or all, not " + name);
}

Split make_split(const SurrogateDataset& d, std::uint64_t seed, SplitMode mode) {
  Split s;
  const auto nw = static_cast<std::uint32_t>(d.windows.size());
  const auto ns = static_cast<std::uint32_t>(d.setting_count());
  if (mode == SplitMode::kAll) {
    s.train_windows.resize(nw);
    std::iota(s.train_windows.begin(), s.train_windows.end(), 0u);
    s.train_settings.resize(ns);
    std::iota(s.train_settings.begin(), s.train_settings.end(), 0u);
    return s;
  }
  std::vector<std::uint32_t> order(nw);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](auto a, auto b) { return d.windows[a].t0 < d.windows[b].t0; });
  auto cut = [](std::size_t n, double f) {
    return static_cast<std::size_t>(std::floor(static_cast<double>(n) * f));
  };
  std::size_t n_test = nw >= 3 ? std::max<std::size_t>(1, cut(nw, 0.15)) : 0;
  std::size_t n_val = nw >= 3 ? std::max<std::size_t>(1, cut(nw, 0.15)) : 0;
  const std::size_t n_train = nw - n_val - n_test;
  s.train_windows.assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n_train));
  s.val_windows.assign(order.begin() + static_cast<std::ptrdiff_t>(n_train),
                       order.begin() + static_cast<std::ptrdiff_t>(n_train + n_val));
  s.test_windows.assign(order.begin() + static_cast<std::ptrdiff_t>(n_train + n_val), order.end());
  if (mode == SplitMode::kInterleaved && nw >= 7) {
    s.train_windows.clear();
    s.val_windows.clear();
    s.test_windows.clear();
    for (std::size_t i = 0; i < nw; ++i)
      (i % 7 == 3 ? s.val_windows : i % 7 == 6 ? s.test_windows : s.train_windows).push_back(order[i]);
  }
  // Overlapping windows (--stride-jobs below --window-jobs) share target jobs: a held-out job must not
  // be a target anywhere it could be learned or selected on, so test purges validation and training,
  // and validation purges training.
  // The held-out target jobs are a sorted list of trace job indices, not a table indexed by them: an
  // index may be anything up to 2^32 - 1 (a corrupt dataset made a dense table ask for gigabytes).
  auto targets_of = [&](const std::vector<std::uint32_t>& windows, std::vector<std::uint32_t> jobs) {
    for (auto w : windows) {
      const auto& win = d.windows[w];
      for (std::uint32_t i = 0; i < win.jobs; ++i)
        if (win.target[i]) jobs.push_back(win.job_index[i]);
    }
    std::sort(jobs.begin(), jobs.end());
    jobs.erase(std::unique(jobs.begin(), jobs.end()), jobs.end());
    return jobs;
  };
  auto purge = [&](std::vector<std::uint32_t>& windows, const std::vector<std::uint32_t>& held) {
    std::erase_if(windows, [&](std::uint32_t w) {
      const auto& win = d.windows[w];
      for (std::uint32_t i = 0; i < win.jobs; ++i)
        if (win.target[i] && std::binary_search(held.begin(), held.end(), win.job_index[i])) return true;
      return false;
    });
  };
  const auto test_jobs = targets_of(s.test_windows, {});
  purge(s.val_windows, test_jobs);
  purge(s.train_windows, targets_of(s.val_windows, test_jobs));
  if (d.axes.empty() || ns < 4) {
    for (std::uint32_t i = 0; i < ns; ++i) {
      s.train_settings.push_back(i);
      s.val_settings.push_back(i);
      s.test_settings.push_back(i);
    }
    return s;
  }
  std::vector<std::uint32_t> rest(ns - 1);
  std::iota(rest.begin(), rest.end(), 1u);
  std::mt19937_64 rng(seed);
  for (std::size_t i = rest.size(); i > 1; --i) std::swap(rest[i - 1], rest[rng() % i]);  // Fisher-Yates
  const std::size_t t = std::max<std::size_t>(1, cut(rest.size(), 0.15));
  const std::size_t v = std::max<std::size_t>(1, cut(rest.size(), 0.15));
  s.train_settings.push_back(0);
  s.train_settings.insert(s.train_settings.end(), rest.begin(),
                          rest.end() - static_cast<std::ptrdiff_t>(t + v));
  s.val_settings.assign(rest.end() - static_cast<std::ptrdiff_t>(t + v),
                        rest.end() - static_cast<std::ptrdiff_t>(t));
  s.test_settings.assign(rest.end() - static_cast<std::ptrdiff_t>(t), rest.end());
  for (auto* v2 : {&s.train_settings, &s.val_settings, &s.test_settings}) std::sort(v2->begin(), v2->end());
  return s;
}

}  // namespace slurmtwin::surrogate
