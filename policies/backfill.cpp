#include "policies/backfill.hpp"

#include <fmt/format.h>

#include <cmath>

#include <algorithm>
#include <array>
#include <bit>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "policies/array_tasks.hpp"
#include "policies/limits.hpp"
#include "policies/node_select.hpp"
#include "policies/preemption.hpp"
#include "policies/profile_cache.hpp"
#include "policies/reservations.hpp"

namespace slurmtwin::policies {
namespace {

constexpr Seconds kYear = 365 * 86400;  // planning length of an unlimited time limit (s)
constexpr Seconds kWillRunWindow = 30;  // first will-run time window (s), cons_tres time_window

// ---- node bitsets -------------------------------------------------------------------------------

using Words = std::vector<std::uint64_t>;

bool has(const Words& w, std::uint32_t n) {
  return ((w[n >> 6] >> (n & 63)) & 1u) != 0;
}
void put(Words& w, std::uint32_t n) {
  w[n >> 6] |= std::uint64_t{1} << (n & 63);
}
/// Some node is in both (without a branch per word: the sets are a few words long).
bool meets(const std::uint64_t* a, const std::uint64_t* b, std::size_t words) {
  std::uint64_t any = 0;
  for (std::size_t w = 0; w < words; ++w) any |= a[w] & b[w];
  return any != 0;
}
/// `w` holds at least `least` nodes (counting stops there: mostly `least` is 1).
bool at_least(const Words& w, std::uint32_t least) {
  if (least <= 1)
    return least == 0 || std::any_of(w.begin(), w.end(), [](std::uint64_t x) { return x != 0; });
  std::uint32_t c = 0;
  for (auto x : w) {
    if (c >= least) return true;
    c += static_cast<std::uint32_t>(std::popcount(x));
  }
  return c >= least;
}

// ---- node-space map -----------------------------------------------------------------------------

/// Slurm's node_space table as a sorted, contiguous list of slots [begin, end), each with the bitset of
/// nodes not reserved for pending jobs during it. The bitsets lie one after another in one array (slot k
/// at words k * words_) so that the walk over a test's slots reads memory in order and a split or merge
/// moves words instead of allocating a bitset per slot.
class NodeSpace {
 public:
  NodeSpace(Seconds begin, Seconds end, std::size_t nodes) : words_((nodes + 63) / 64) {
    begin_.push_back(begin);
    end_.push_back(std::max(end, begin + 1));
    bits_.assign(words_, 0);
    for (std::uint32_t n = 0; n < nodes; ++n) bits_[n >> 6] |= std::uint64_t{1} << (n & 63);
    changed_.emplace_back();
  }
  std::size_t size() const { return begin_.size(); }
  Seconds slot_begin(std::size_t k) const { return begin_[k]; }
  Seconds slot_end(std::size_t k) const { return end_[k]; }
  /// Slot k's nodes not reserved (words() words).
  const std::uint64_t* avail(std::size_t k) const { return bits_.data() + k * words_; }
  /// The words of slot k's bitset with a node reserved (ascending): every other word has all its nodes.
  const std::vector<std::uint32_t>& changed(std::size_t k) const { return changed_[k]; }
  Seconds begin() const { return begin_.front(); }
  Seconds end() const { return end_.back(); }

  /// Index of the first slot ending after `t` (size() if none).
  std::size_t first_ending_after(Seconds t) const {
    return static_cast<std::size_t>(std::upper_bound(end_.begin(), end_.end(), t) - end_.begin());
  }

  /// Some node of `nodes` is reserved during part of [start, end) (_test_resv_overlap).
  bool overlaps(Seconds start, Seconds end, const Words& nodes) const {
    for (auto k = first_ending_after(start); k < size() && begin_[k] < end; ++k) {
      const auto* a = avail(k);
      for (const auto i : changed_[k])
        if ((nodes[i] & ~a[i]) != 0) return true;
    }
    return false;
  }

  /// Reserves `nodes` during [start, end) (_add_reservation): at least one resolution long, clipped
  /// to the map; adjacent slots left identical are merged.
  void add(Seconds start, Seconds end, Seconds resolution, const Words& nodes) {
    start = std::max(start, begin());
    end = std::min(std::max(end, start + resolution), this->end());
    if (start >= end) return;
    split(start);
    split(end);
    // The words holding a reserved node (a job's few nodes: mostly one or two of the bitset's words).
    auto& words = words_scratch_;
    words.clear();
    for (std::uint32_t i = 0; i < words_; ++i)
      if (nodes[i] != 0) words.push_back(i);
    for (auto k = first_ending_after(start); k < size() && begin_[k] < end; ++k) {
      auto* a = bits_.data() + k * words_;
      for (const auto i : words) {
        a[i] &= ~nodes[i];
        auto& c = changed_[k];
        if (const auto at = std::lower_bound(c.begin(), c.end(), i); at == c.end() || *at != i)
          c.insert(at, i);
      }
    }
    merge_at(first_ending_after(end - 1) + 1);  // slot after the reservation with its last slot
    merge_at(first_ending_after(start));        // first reserved slot with the one before it
  }

 private:
  void split(Seconds t) {
    auto k = first_ending_after(t);
    if (k >= size() || begin_[k] >= t) return;
    const auto at = static_cast<std::ptrdiff_t>(k) + 1;
    begin_.insert(begin_.begin() + at, t);
    end_.insert(end_.begin() + at, end_[k]);
    end_[k] = t;
    changed_.insert(changed_.begin() + at, changed_[k]);
    bits_.insert(bits_.begin() + at * static_cast<std::ptrdiff_t>(words_), words_, 0);
    std::copy_n(bits_.begin() + static_cast<std::ptrdiff_t>(k * words_), words_,
                bits_.begin() + at * static_cast<std::ptrdiff_t>(words_));
  }
  // Merges slot k into slot k-1 when their nodes are the same.
  void merge_at(std::size_t k) {
    if (k == 0 || k >= size() || !std::equal(avail(k - 1), avail(k), avail(k))) return;
    end_[k - 1] = end_[k];
    const auto at = static_cast<std::ptrdiff_t>(k);
    begin_.erase(begin_.begin() + at);
    end_.erase(end_.begin() + at);
    changed_.erase(changed_.begin() + at);
    const auto w = static_cast<std::ptrdiff_t>(words_);
    bits_.erase(bits_.begin() + at * w, bits_.begin() + (at + 1) * w);
  }

  std::size_t words_;
  std::vector<Seconds> begin_;
  std::vector<Seconds> end_;
  std::vector<std::uint64_t> bits_;                  // size() * words_
  std::vector<std::vector<std::uint32_t>> changed_;  // per slot: changed(k)
  std::vector<std::uint32_t> words_scratch_;         // add
};

/// The walk of a will-run attempt over the node-space map: intersects `avail` (the partition's nodes,
/// `part`) with the slots from the first one ending after `start` up to the last one beginning by
/// `end`, and returns the next time at which more of the partition's nodes become free (the end of the
/// first slot whose successor frees some; or, when none of the walked slots' successors does, the
/// end of the slot after the walk if the map goes on beyond it; 0 if neither).
/// `kWords` > 0 fixes the bitset length at compile time (the intersection then stays in registers)
/// and visits every word. 0 takes any length and visits only the words of each slot with a reserved
/// node (NodeSpace::changed; elsewhere a slot has every node, a superset of the partition's): elsewhere
/// a slot leaves the intersection as it is, and adds nothing to the "more nodes free next" test (a
/// node of the partition free in this slot and the next but lost by the intersection in an earlier
/// one became free at some slot b in between, whose test, b reserving it in a changed word, already
/// set `later`). Same result, O(reserved words) per slot rather than O(nodes / 64).
template <std::size_t kWords>
Seconds walk_slots(const NodeSpace& map, Seconds start, Seconds end, const Words& part, Words& avail) {
  std::array<std::uint64_t, kWords> local{};
  std::uint64_t* acc = local.data();
  if constexpr (kWords == 0) {
    avail.assign(part.begin(), part.end());
    acc = avail.data();
  } else {
    std::copy_n(part.begin(), kWords, local.begin());
  }
  const auto for_words = [&](std::size_t k, auto&& visit) {
    if constexpr (kWords > 0) {
      for (std::size_t w = 0; w < kWords; ++w) visit(w);
    } else {
      for (const std::size_t w : map.changed(k)) visit(w);
    }
  };
  Seconds later = 0;
  const std::size_t slot_count = map.size();
  for (auto k = map.first_ending_after(start); k < slot_count; ++k) {
    const auto* th = map.avail(k);
    if (later == 0 && k + 1 < slot_count) {
      // More nodes free in the next slot than in this one: (part & next) not within (avail & this).
      const auto* nx = map.avail(k + 1);
      std::uint64_t more = 0;
      for_words(k, [&](std::size_t w) { more |= part[w] & nx[w] & ~(acc[w] & th[w]); });
      if (more != 0) later = map.slot_end(k);
    }
    if (map.slot_begin(k) > end) {
      if (later == 0 && k + 2 < slot_count) later = map.slot_end(k + 1);
      break;
    }
    for_words(k, [&](std::size_t w) { acc[w] &= th[w]; });
  }
  if constexpr (kWords > 0) std::copy_n(local.begin(), kWords, avail.begin());
  return later;
}

/// walk_slots for `avail` sized as `part`, with the bitset length fixed for small clusters.
Seconds free_nodes(const NodeSpace& map, Seconds start, Seconds end, const Words& part, Words& avail) {
  avail.resize(part.size());
  switch (part.size()) {
    case 1:
      return walk_slots<1>(map, start, end, part, avail);
    case 2:
      return walk_slots<2>(map, start, end, part, avail);
    case 3:
      return walk_slots<3>(map, start, end, part, avail);
    case 4:
      return walk_slots<4>(map, start, end, part, avail);
    case 5:
      return walk_slots<5>(map, start, end, part, avail);
    case 6:
      return walk_slots<6>(map, start, end, part, avail);
    case 7:
      return walk_slots<7>(map, start, end, part, avail);
    case 8:
      return walk_slots<8>(map, start, end, part, avail);
    default:
      return walk_slots<0>(map, start, end, part, avail);
  }
}

// ---- running jobs' planned releases and the will-run test ----------------------------------------

struct Release {
  Seconds end;  // planned end: start + time limit (s)
  std::uint32_t job;
};

// A function object rather than a function pointer, so that sort and search inline it.
constexpr auto release_before = [](const Release& a, const Release& b) {
  return a.end != b.end ? a.end < b.end : a.job < b.job;
};

/// Requests that select_nodes treats alike in every state.
bool same_request(const sim::NodeRequest& a, const sim::NodeRequest& b) {
  return a.min_nodes == b.min_nodes && a.max_nodes == b.max_nodes && same_shape(a, b);
}

struct Fit {
  Seconds start = 0;
  std::vector<sim::NodeAlloc> alloc;
};

/// Everything one cycle plans with: running jobs' releases in planned-end order and, per request
/// shape, the future availability profile: the CPUs the shape could use on each node now and on each
/// node of each release once the releases up to it are applied. A node's state after the releases up
/// to i depends only on the releases that touch it, so one profile per shape and cycle answers every
/// will-run test of that shape (whatever nodes the test may use) without releasing jobs per test; it
/// is patched when the cycle starts a job. select_nodes reads a state only through usable_cpus, so it
/// is given the profile's values. For the same reason a node whose state now and releases are those
/// of the previous planner (its ProfileCache key) has the same values: they are reused from it.
class Planner {
 public:
  /// `cluster` is s.cluster. Profiles are computed by releasing running jobs from it and allocating
  /// them back, which leaves it exactly as it was (integer counters), so no copy is needed.
  /// `cache` (may be null) keeps each shape's values across cycles.
  /// `running` (default s.running): the running jobs whose releases it plans with; the others' resources
  /// must be free in `cluster` (a preemptor's plan without the jobs it may preempt).
  Planner(const sim::SimState& s, sim::ClusterState& cluster, ProfileCache* cache,
          const std::vector<std::uint32_t>* running = nullptr)
      : snap_every_(std::max<std::size_t>(64, std::bit_ceil(cluster.nodes().size() / 8))),
        s_(s),
        running_(running != nullptr ? *running : s.running),
        cluster_(cluster),
        cache_(cache != nullptr ? cache : &own_cache_) {
    const auto& sc = s.site.scheduler;
    cache_->start(cluster);
    order_releases();
    const auto node_count = cluster.nodes().size();
    count_.assign(node_count, 0);
    first_.reserve(releases_.size() + 1);
    for (const auto& rel : releases_) {
      first_.push_back(static_cast<std::uint32_t>(node_.size()));
      for (const auto& a : s.jobs[rel.job].alloc) {
        node_.push_back(a.node);
        rank_.push_back(++count_[a.node]);
      }
    }
    first_.push_back(static_cast<std::uint32_t>(node_.size()));
    kill_wait_ = sc.kill_wait;
    mark_.assign(node_count, 0);
    dirty_.assign(node_count, 0);
    recorded_.assign(node_count, 0);
  }

  /// Job `ji` was started now (the launcher has allocated it in the cluster): mirror it in the plan.
  void started(std::uint32_t ji) {
    const auto& j = s_.jobs[ji];
    const Release r{j.time_limit == kUnlimited ? s_.now + kYear : s_.now + j.time_limit, ji};
    const auto p = static_cast<std::size_t>(
        std::upper_bound(releases_.begin(), releases_.end(), r, release_before) - releases_.begin());
    const auto e0 = first_[p];
    const auto k = static_cast<std::uint32_t>(j.alloc.size());
    releases_.insert(releases_.begin() + static_cast<std::ptrdiff_t>(p), r);
    first_.insert(first_.begin() + static_cast<std::ptrdiff_t>(p), e0);
    for (auto q = p + 1; q < first_.size(); ++q) first_[q] += k;
    std::vector<std::uint32_t> nodes;
    for (const auto& a : j.alloc) nodes.push_back(a.node);
    node_.insert(node_.begin() + e0, nodes.begin(), nodes.end());
    rank_.insert(rank_.begin() + e0, k, 0);  // dirty nodes' entries have no rank
    for (auto n : nodes) {
      dirty_[n] = 1;
      if (cache_ != nullptr) cache_->invalidate(n);
    }
    blocks_valid_ = false;  // release indices moved
    for (auto& shape : shapes_) {
      shape.snaps_valid = false;  // release indices moved
      shape.reach_valid = false;
      for (const auto& a : j.alloc) shape.kept->now[a.node] = usable(a.node, shape);
      if (shape.built) shape.kept->after.insert(shape.kept->after.begin() + e0, k, 0);
    }
    // The job's nodes have fewer resources until its release at p: their states are recorded again
    // (when a profile needs them) and the built profiles' entries up to p recomputed (later ones and
    // other nodes are unchanged).
    if (!states_sized_) return;  // nothing recorded yet
    states_.insert(states_.begin() + e0, k, sim::NodeFree{});
    gres_.insert(gres_.begin() + static_cast<std::ptrdiff_t>(e0 * gres_kinds_), k * gres_kinds_, 0);
    for (auto n : nodes) recorded_[n] = 0;
    if (std::none_of(shapes_.begin(), shapes_.end(), [](const Shape& shape) { return shape.built; })) return;
    record_states(nodes);
    for (auto n : nodes) mark_[n] = 1;
    for (std::size_t e = 0; e < first_[p + 1]; ++e)
      if (mark_[node_[e]] != 0)
        for (auto& shape : shapes_)
          if (shape.built) shape.kept->after[e] = usable_at(e, shape);
    for (auto n : nodes) mark_[n] = 0;
    if (cache_->check()) verify_profiles();
  }

  /// Slurm's will-run test of `job` on nodes `avail` (a subset of one partition's nodes), no earlier
  /// than `start_res` and, when `later_start` is set, with no running job ending after it; `now_only`:
  /// fail unless it fits now (TEST_NOW_ONLY). The start is max(estimate, start_res).
  std::optional<Fit> will_run(const sim::SimJob& job, const Words& avail, Seconds start_res,
                              Seconds later_start, bool now_only) {
    const auto& r = job.request;
    auto& shape = shape_for(r);
    std::uint64_t sum = 0;
    std::uint32_t nodes = 0;
    std::uint32_t top = 0;  // at least the most usable CPUs on one node (a running max)
    const auto add_now = [&](std::uint32_t n) {
      sum += shape.kept->now[n];
      nodes += shape.kept->now[n] > 0 ? 1 : 0;
      top = std::max(top, shape.kept->now[n]);
    };
    const Seconds now = s_.now;
    if (r.max_nodes == 1) return single_node_test(shape, r, avail, start_res, later_start, now_only);
    // A later start begins from the shape's snapshot below start_res (see below); otherwise from the
    // usable CPUs now.
    const bool from_snapshot = start_res > now;
    if (!from_snapshot)
      for (std::size_t w = 0; w < avail.size(); ++w)
        for (auto bits = avail[w]; bits != 0; bits &= bits - 1)
          add_now(static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits))));
    // Necessary conditions of select_nodes' success. A single-node request must find all its CPUs on
    // one node: fill takes at most that node's usable CPUs (all of them when exclusive).
    const auto enough = [&] {
      return nodes >= r.min_nodes && sum >= r.total_cpus && (r.max_nodes != 1 || top >= r.total_cpus);
    };
    if (start_res <= now) {
      if (enough())
        if (auto a = choose_nodes(r, avail, shape.kept->now)) return Fit{now, std::move(*a)};
      if (now_only) return std::nullopt;
    }
    // Future test: release running jobs in planned-end order and try again.
    if (!shape.built) build(shape);
    auto& usable = usable_;
    usable.assign(shape.kept->now.begin(), shape.kept->now.end());
    // Applies release i to the test's nodes; false when it has none of them.
    const auto apply = [&](std::size_t i) {
      bool touched = false;
      for (auto e = first_[i]; e < first_[i + 1]; ++e) {
        const auto n = node_[e];
        if (!has(avail, n)) continue;
        touched = true;
        const auto u = shape.kept->after[e];
        sum = sum + u - usable[n];
        nodes = nodes + (u > 0 ? 1 : 0) - (usable[n] > 0 ? 1 : 0);
        top = std::max(top, u);
        usable[n] = u;
      }
      return touched;
    };
    std::size_t i = 0;
    if (start_res > now) {
      if (from_snapshot) {
        // Releases ending by start_res are applied without windows: start from the snapshot after
        // the last multiple of snap_every_ releases before them (the same usable CPUs on avail's nodes
        // as applying them one by one) and apply the rest. `top` is then the largest current value
        // rather than a running maximum; both only gate select_nodes, which decides on the current
        // values, so the outcome is the same.
        const auto i0 = static_cast<std::size_t>(
            std::partition_point(releases_.begin(), releases_.end(),
                                 [&](const Release& rel) { return rel.end <= start_res; }) -
            releases_.begin());
        ensure_snapshots(shape);
        i = i0 / snap_every_ * snap_every_;
        const auto* snap = &shape.kept->snaps[i / snap_every_ * usable.size()];
        for (std::size_t w = 0; w < avail.size(); ++w)
          for (auto bits = avail[w]; bits != 0; bits &= bits - 1) {
            const auto n =
                static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
            usable[n] = snap[n];
            sum += snap[n];
            nodes += snap[n] > 0 ? 1 : 0;
            top = std::max(top, snap[n]);
          }
        for (; i < i0; ++i) apply(i);
      }
      for (; i < releases_.size() && releases_[i].end <= start_res; ++i) apply(i);
      if (enough())
        if (auto a = choose_nodes(r, avail, usable)) return Fit{start_res, std::move(*a)};
    }
    Seconds window_end = 0;
    Seconds window = kWillRunWindow;
    bool more = true;
    while (more) {
      std::optional<std::size_t> last;
      while (true) {
        if (i >= releases_.size() || (later_start > 0 && releases_[i].end > later_start)) {
          more = false;
          break;
        }
        const auto k = i++;
        if (!apply(k)) continue;
        if (window_end == 0)
          window_end = releases_[k].end + (kWillRunWindow - releases_[k].end % kWillRunWindow);
        last = k;
        if (i >= releases_.size()) {
          more = false;
          break;
        }
        if (releases_[i].end > window_end + window) break;
      }
      if (!last) break;
      if (enough())
        if (auto a = choose_nodes(r, avail, usable)) {
          const auto& rel = releases_[*last];
          return Fit{std::max(start_res, rel.end <= now ? guess_end(rel) : rel.end), std::move(*a)};
        }
      do window *= 2;
      while (i < releases_.size() && releases_[i].end > window_end + window);
    }
    return std::nullopt;
  }

 private:
  // A request shape's profile in this planner. Its arrays live in the cache's entry for the shape
  // (ProfileCache::Shape: now, after, snaps, reach, levels, level_nodes), so that their storage and
  // the values of unchanged nodes carry over from one cycle to the next.
  struct Shape {
    sim::NodeRequest request;
    std::uint32_t ask = 0;                // per-node CPUs asked (usable_cpus' cpus_wanted)
    ProfileCache::Shape* kept = nullptr;  // never null once made by shape_for
    bool built = false;                   // `after` computed (only future tests need it)
    bool snaps_valid = false;             // `snaps` (rebuilt after a start moves releases)
    bool reach_valid = false;             // `reach`, `levels` and `level_nodes` (idem)
  };
  // Releases between snapshots. A snapshot costs a copy of every node's value and all of them are
  // made again after each start in the cycle; a jump to one saves applying up to this many releases:
  // the spacing grows with the node count (64 up to 512 nodes, 1,024 at 10,000) to balance the two.
  const std::size_t snap_every_;
  static constexpr std::size_t kBlock = 16;  // releases per node mask of first_touching
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
  static constexpr std::size_t kNotYet = std::numeric_limits<std::size_t>::max();

  // releases_: every running job's planned release, in planned-end order. The releases the last
  // planner ordered (kept in the cache) whose job still runs with the same planned end keep their
  // order; only the others (jobs started since) are sorted and merged in: the same list as sorting
  // them all, without a full sort per cycle.
  void order_releases() {
    const auto planned_end = [&](std::uint32_t ji) {
      const auto& j = s_.jobs[ji];
      return j.time_limit == kUnlimited ? j.start + kYear : j.start + j.time_limit;
    };
    auto& mark = cache_->release_mark;
    if (mark.size() < s_.jobs.size()) mark.resize(s_.jobs.size(), 0);
    if (cache_->release_serial >= std::numeric_limits<std::uint32_t>::max() / 2 - 1) {  // marks wrap
      std::fill(mark.begin(), mark.end(), 0);
      cache_->release_serial = 0;
    }
    const std::uint32_t running = 2 * ++cache_->release_serial;  // this planner's marks
    const std::uint32_t placed = running + 1;
    for (auto ji : running_) mark[ji] = running;
    releases_.reserve(running_.size());
    for (const auto& [end, ji] : cache_->releases)
      if (ji < mark.size() && mark[ji] == running && planned_end(ji) == end) {
        releases_.push_back({end, ji});
        mark[ji] = placed;
      }
    const auto kept = static_cast<std::ptrdiff_t>(releases_.size());
    for (auto ji : running_)
      if (mark[ji] != placed) releases_.push_back({planned_end(ji), ji});
    std::sort(releases_.begin() + kept, releases_.end(), release_before);
    std::inplace_merge(releases_.begin(), releases_.begin() + kept, releases_.end(), release_before);
    if (cache_->check()) {  // tests: the same list as sorting every release
      std::vector<Release> all;
      for (auto ji : running_) all.push_back({planned_end(ji), ji});
      std::sort(all.begin(), all.end(), release_before);
      if (!std::equal(all.begin(), all.end(), releases_.begin(), releases_.end(),
                      [](const Release& a, const Release& b) { return a.end == b.end && a.job == b.job; }))
        throw std::logic_error("backfill profile cache: kept planned releases differ from a full sort");
    }
    cache_->releases.clear();
    for (const auto& rel : releases_) cache_->releases.emplace_back(rel.end, rel.job);
  }

  void ensure_reach(Shape& shape) {
    if (shape.reach_valid) return;
    const std::uint32_t need = std::max<std::uint32_t>(1, shape.request.total_cpus);
    const std::size_t words = (shape.kept->now.size() + 63) / 64;
    auto& cur = level_scratch_;
    cur.assign(words, 0);
    shape.kept->levels.clear();
    shape.kept->level_nodes.clear();
    const auto add_level = [&](std::int64_t level) {
      shape.kept->levels.push_back(level);
      shape.kept->level_nodes.insert(shape.kept->level_nodes.end(), cur.begin(), cur.end());
    };
    shape.kept->reach.assign(shape.kept->now.size(), kNever);
    bool added = false;
    for (std::size_t n = 0; n < shape.kept->now.size(); ++n)
      if (shape.kept->now[n] >= need) {
        shape.kept->reach[n] = -1;
        cur[n >> 6] |= std::uint64_t{1} << (n & 63);
        added = true;
      }
    if (added) add_level(-1);
    for (std::size_t i = 0; i < releases_.size(); ++i) {
      added = false;
      for (auto e = first_[i]; e < first_[i + 1]; ++e) {
        const auto n = node_[e];
        if (shape.kept->reach[n] == kNever && shape.kept->after[e] >= need) {
          shape.kept->reach[n] = static_cast<std::int64_t>(i);
          cur[n >> 6] |= std::uint64_t{1} << (n & 63);
          added = true;
        }
      }
      if (added) add_level(static_cast<std::int64_t>(i));
    }
    shape.reach_valid = true;
  }

  // The least reach over the nodes of avail (kNever if none ever has the CPUs).
  static std::int64_t least_reach(const Shape& shape, const Words& avail) {
    const std::size_t words = avail.size();
    std::size_t lo = 0;
    std::size_t hi = shape.kept->levels.size();
    while (lo < hi) {  // first level whose nodes meet avail (they grow with the level)
      const std::size_t mid = lo + (hi - lo) / 2;
      const auto* nodes = &shape.kept->level_nodes[mid * words];
      if (meets(nodes, avail.data(), words))
        hi = mid;
      else
        lo = mid + 1;
    }
    return lo < shape.kept->levels.size() ? shape.kept->levels[lo] : kNever;
  }

  bool touches(std::size_t i, const Words& avail) const {
    for (auto e = first_[i]; e < first_[i + 1]; ++e)
      if (has(avail, node_[e])) return true;
    return false;
  }
  // First release in [from, to) with a node in avail (`to` if none). A test's nodes are often few
  // (the rest reserved or in other partitions), so whole blocks of releases none of whose nodes is
  // in avail are skipped by their node masks, where a mask (one read per bitset word) is cheaper
  // than the block's own node entries (on a large cluster with small jobs it is not).
  std::size_t first_touching(std::size_t from, std::size_t to, const Words& avail) {
    const std::size_t words = avail.size();
    while (from < to) {
      if (from % kBlock == 0 && first_[std::min(from + kBlock, releases_.size())] - first_[from] > words) {
        ensure_blocks();
        const auto* mask = &block_nodes_[from / kBlock * words];
        if (!meets(mask, avail.data(), words)) {
          from += kBlock;
          continue;
        }
      }
      if (touches(from, avail)) return from;
      ++from;
    }
    return to;
  }
  // Per block of kBlock releases: the nodes of its releases (a bitset); rebuilt after a start.
  void ensure_blocks() {
    if (blocks_valid_) return;
    const std::size_t words = (cluster_.nodes().size() + 63) / 64;
    block_nodes_.assign((releases_.size() / kBlock + 1) * words, 0);
    for (std::size_t i = 0; i < releases_.size(); ++i)
      for (auto e = first_[i]; e < first_[i + 1]; ++e)
        block_nodes_[i / kBlock * words + (node_[e] >> 6)] |= std::uint64_t{1} << (node_[e] & 63);
    blocks_valid_ = true;
  }

  // `usable` holds every node's usable CPUs after releases [0, at) (at least on avail's nodes): brings
  // it to after releases [0, to), from the snapshot below `to` when that is nearer.
  // (`at` = kNotYet: nothing in it yet).
  void advance(Shape& shape, std::vector<std::uint32_t>& usable, std::size_t at, std::size_t to) {
    if (at == kNotYet || to - at > snap_every_) {
      ensure_snapshots(shape);
      at = to / snap_every_ * snap_every_;
      const auto* snap = &shape.kept->snaps[at / snap_every_ * usable.size()];
      std::copy(snap, snap + usable.size(), usable.begin());
    }
    for (auto e = first_[at]; e < first_[to]; ++e) usable[node_[e]] = shape.kept->after[e];
  }

  // will_run for a single-node request (max_nodes == 1). select_nodes can only
  // succeed where some node of avail has all the CPUs (enough()'s `top`), which the shape's `reach`
  // says without applying releases: the walk visits the same windows as the general one but only
  // finds their boundaries (which releases touch avail), and brings the usable CPUs up to date (from
  // the snapshots) only where select_nodes runs. Same calls, same result as the general test.
  std::optional<Fit> single_node_test(Shape& shape, const sim::NodeRequest& r, const Words& avail,
                                      Seconds start_res, Seconds later_start, bool now_only) {
    const Seconds now = s_.now;
    // A job that fits now needs no future profile: before the shape's is built, try that first (on a
    // cluster with idle nodes most tests end here). select_nodes succeeds for a single-node request
    // exactly when a node of avail has its CPUs, which is when the walk below would call it first,
    // with these values. Once it is built, `reach` tells that without a search.
    const bool now_tried = start_res <= now && !shape.built;
    if (now_tried)
      if (auto a = choose_nodes(r, avail, shape.kept->now)) return Fit{now, std::move(*a)};
    if (!shape.built) build(shape);
    ensure_reach(shape);
    const std::int64_t reached =
        least_reach(shape, avail);  // first release after which a node of avail has the CPUs
    auto& usable = usable_;
    usable.resize(shape.kept->now.size());
    std::size_t at = kNotYet;  // `usable` is after releases [0, at)
    std::size_t i = 0;         // first release of the window walk
    if (start_res <= now) {
      if (!now_tried && reached < 0)
        if (auto a = choose_nodes(r, avail, shape.kept->now)) return Fit{now, std::move(*a)};
      if (now_only) return std::nullopt;
    } else {
      // Releases ending by start_res are applied without windows.
      i = static_cast<std::size_t>(
          std::partition_point(releases_.begin(), releases_.end(),
                               [&](const Release& rel) { return rel.end <= start_res; }) -
          releases_.begin());
      if (reached < static_cast<std::int64_t>(i)) {
        advance(shape, usable, at, i);
        at = i;
        if (auto a = choose_nodes(r, avail, usable)) return Fit{start_res, std::move(*a)};
      }
    }
    if (reached == kNever) return std::nullopt;
    const std::size_t count = releases_.size();
    // Releases ending after later_start are never applied.
    const std::size_t limit =
        later_start > 0
            ? static_cast<std::size_t>(
                  std::partition_point(releases_.begin() + static_cast<std::ptrdiff_t>(i), releases_.end(),
                                       [&](const Release& rel) { return rel.end <= later_start; }) -
                  releases_.begin())
            : count;
    Seconds window_end = 0;
    Seconds window = kWillRunWindow;
    while (true) {
      // One window: from the first release touching avail, every release is applied until one touching
      // avail is followed by a release ending after the window (or the releases run out).
      const auto k = first_touching(i, limit, avail);
      if (k == limit) return std::nullopt;
      if (window_end == 0)
        window_end = releases_[k].end + (kWillRunWindow - releases_[k].end % kWillRunWindow);
      const Seconds bound = window_end + window;
      const auto p = static_cast<std::size_t>(
          std::partition_point(releases_.begin() + static_cast<std::ptrdiff_t>(k) + 1, releases_.end(),
                               [&](const Release& rel) { return rel.end <= bound; }) -
          releases_.begin());
      std::size_t last = k;
      bool more = true;
      if (p > k + 1) {
        const auto k2 = first_touching(p - 1, limit, avail);
        if (k2 < limit) {
          last = k2;
          i = k2 + 1;
        } else {  // applied up to limit: the last touching release before it ends the window
          for (last = std::min(p - 1, limit); !touches(last - 1, avail);) --last;
          --last;
          i = limit;
          more = false;
        }
      } else {
        i = k + 1;
      }
      if (i >= count) more = false;
      if (reached < static_cast<std::int64_t>(i)) {
        advance(shape, usable, at, i);
        at = i;
        if (auto a = choose_nodes(r, avail, usable)) {
          const auto& rel = releases_[last];
          return Fit{std::max(start_res, rel.end <= now ? guess_end(rel) : rel.end), std::move(*a)};
        }
      }
      if (!more) return std::nullopt;
      do window *= 2;
      while (i < count && releases_[i].end > window_end + window);
    }
  }

  void ensure_snapshots(Shape& shape) {
    if (shape.snaps_valid) return;
    const auto nodes = shape.kept->now.size();
    auto& cur = snap_scratch_;
    cur.assign(shape.kept->now.begin(), shape.kept->now.end());
    shape.kept->snaps.resize((releases_.size() / snap_every_ + 1) * nodes);
    for (std::size_t i = 0; i <= releases_.size(); ++i) {
      if (i % snap_every_ == 0)
        std::copy(cur.begin(), cur.end(), shape.kept->snaps.begin() + i / snap_every_ * nodes);
      if (i == releases_.size()) break;
      for (auto e = first_[i]; e < first_[i + 1]; ++e) cur[node_[e]] = shape.kept->after[e];
    }
    shape.snaps_valid = true;
  }

  // select_nodes on avail's nodes (a partition's nodes are ascending and distinct: visiting the set
  // bits visits them in the order select_nodes takes them) with these usable CPUs.
  std::optional<std::vector<sim::NodeAlloc>> choose_nodes(const sim::NodeRequest& r, const Words& avail,
                                                          const std::vector<std::uint32_t>& usable) {
    return select_nodes(cluster_, r, avail, usable);
  }

  std::uint32_t usable(std::uint32_t node, const Shape& shape) const {
    return cluster_.usable_cpus(node, shape.request, shape.ask);
  }

  Shape& shape_for(const sim::NodeRequest& r) {
    // A job's TRY_LATER retries ask again with the same request (jobs do not move during a cycle).
    if (&r == last_request_) return shapes_[last_shape_];
    last_request_ = &r;
    for (last_shape_ = 0; last_shape_ < shapes_.size(); ++last_shape_)
      if (same_shape(shapes_[last_shape_].request, r)) return shapes_[last_shape_];
    Shape shape;
    shape.request = r;
    shape.ask = r.per_node_ask();
    auto& kept = cache_->shape(r);
    shape.kept = &kept;
    kept.now.resize(cluster_.nodes().size());
    for (std::uint32_t n = 0; n < kept.now.size(); ++n) {
      const auto gen = cache_->generation(n);
      if (dirty_[n] == 0 && kept.now_gen[n] == gen) {  // kept.now[n] is still right
        if (cache_->check()) {
          if (kept.now[n] != usable(n, shape)) stale(n);
          cache_->count_checked();
        }
        continue;
      }
      kept.now[n] = usable(n, shape);
      if (dirty_[n] != 0) {
        kept.now_gen[n] = 0;  // started() patches it during this planner only
        continue;             // its entries have no rank: nothing kept
      }
      kept.values[n].resize(count_[n] + 1);
      kept.now_gen[n] = gen;
      kept.after_gen[n] = 0;  // values after releases: not yet for this generation
    }
    shapes_.push_back(shape);
    return shapes_.back();
  }

  [[noreturn]] static void stale(std::size_t node) {
    throw std::logic_error(fmt::format("backfill profile cache: stale usable CPUs kept for node {}", node));
  }

  // Records the shape's usable CPUs on each release entry's node after the releases up to it
  // (from the node states recorded once per cycle rather than by releasing the jobs again per shape;
  // nodes unchanged since the shape's values were kept reuse them).
  void build(Shape& shape) {
    auto& kept = *shape.kept;
    kept.after.resize(node_.size());
    // Per node: where its kept values are, or null where they must be computed again (from the
    // node's recorded states: `need`, nodes with release entries).
    auto& from = kept_from_;
    from.resize(dirty_.size());
    auto& need = need_;
    need.clear();
    for (std::uint32_t n = 0; n < from.size(); ++n) {
      from[n] =
          dirty_[n] == 0 && kept.after_gen[n] == cache_->generation(n) ? kept.values[n].data() : nullptr;
      if (from[n] == nullptr && (count_[n] > 0 || dirty_[n] != 0)) need.push_back(n);
    }
    record_states(need);
    const bool check = cache_->check();
    const std::uint32_t* node = node_.data();
    const std::uint32_t* rank = rank_.data();
    std::uint32_t* after = kept.after.data();
    for (std::size_t e = 0; e < node_.size(); ++e) {
      const auto n = node[e];
      if (from[n] != nullptr) {
        after[e] = from[n][rank[e]];
        if (check) cache_->count_checked();  // by verify_profiles below
        continue;
      }
      after[e] = usable_at(e, shape);
      if (dirty_[n] == 0) kept.values[n][rank[e]] = after[e];
    }
    for (std::uint32_t n = 0; n < from.size(); ++n)
      if (dirty_[n] == 0) kept.after_gen[n] = cache_->generation(n);
    shape.built = true;
    if (check) verify_profiles();
  }

  // Check mode (tests; slow): every entry of every built profile against the node's state after the
  // releases up to it recorded afresh, releasing every running job in order. Catches a kept value
  // that went stale and a state recorded without a release that touched its node.
  void verify_profiles() {
    with_releases([](std::size_t) { return true; },
                  [&](std::size_t i) {
                    for (auto e = first_[i]; e < first_[i + 1]; ++e) {
                      const auto& n = cluster_.node(node_[e]);
                      for (const auto& shape : shapes_)
                        if (shape.built &&
                            shape.kept->after[e] != cluster_.usable_cpus(node_[e], shape.request, shape.ask,
                                                                         node_free(n), n.free_gres.data()))
                          stale(node_[e]);
                    }
                  });
  }

  // Records the state of each release entry of `nodes` not yet recorded, after the releases up to it.
  // A node's state after releases [0, i] depends only on the releases of jobs on it, so only the
  // releases touching `nodes` are applied, in order (between cycles few nodes change: the others'
  // profile values are kept, and their states are not needed).
  void record_states(const std::vector<std::uint32_t>& nodes) {
    if (!states_sized_) {
      gres_kinds_ = cluster_.gres_kinds();
      states_.resize(node_.size());
      gres_.assign(node_.size() * gres_kinds_, 0);
      states_sized_ = true;
    }
    bool any = false;
    for (auto n : nodes)
      if (recorded_[n] == 0) {
        recorded_[n] = 1;
        mark_[n] = 1;
        any = true;
      }
    if (!any) return;
    with_releases(
        [&](std::size_t i) {
          for (auto e = first_[i]; e < first_[i + 1]; ++e)
            if (mark_[node_[e]] != 0) return true;
          return false;
        },
        [&](std::size_t i) {
          for (auto e = first_[i]; e < first_[i + 1]; ++e)
            if (mark_[node_[e]] != 0) record_state(e);
        });
    for (auto n : nodes) mark_[n] = 0;
  }

  // Applies, in planned-end order, each release i for which `apply(i)` holds to the cluster, calls
  // `visit(i)` after it, then allocates them all back (the cluster is left as it was).
  template <class Apply, class Visit>
  void with_releases(Apply&& apply, Visit&& visit) {
    auto& undo = undo_;
    undo.clear();
    for (std::size_t i = 0; i < releases_.size(); ++i) {
      if (!apply(i)) continue;
      const auto& rj = s_.jobs[releases_[i].job];
      cluster_.release(rj.request, rj.alloc);
      undo.push_back(i);
      visit(i);
    }
    restore(undo);
    cache_->settle(cluster_);  // the releases above are undone
  }
  static sim::NodeFree node_free(const sim::NodeState& n) {
    return {n.free_cpus, n.jobs, n.free_mem_mb, n.exclusive};
  }
  void record_state(std::size_t e) {
    const auto& n = cluster_.node(node_[e]);
    states_[e] = node_free(n);
    std::copy(n.free_gres.begin(), n.free_gres.end(),
              gres_.begin() + static_cast<std::ptrdiff_t>(e * gres_kinds_));
  }
  // The shape's usable CPUs on entry e's node in its recorded state.
  std::uint32_t usable_at(std::size_t e, const Shape& shape) const {
    return cluster_.usable_cpus(node_[e], shape.request, shape.ask, states_[e],
                                gres_.data() + e * gres_kinds_);
  }

  // Allocates back the releases `applied` (in the order applied), newest first.
  void restore(const std::vector<std::size_t>& applied) {
    // NOLINTNEXTLINE(modernize-loop-convert): std::views::reverse does not parse in clang 14's tidy
    for (auto it = applied.rbegin(); it != applied.rend(); ++it) {
      const auto& rj = s_.jobs[releases_[*it].job];
      cluster_.allocate(rj.request, rj.alloc);
    }
  }

  // cons_tres _guess_job_end for a job already past its planned end.
  Seconds guess_end(const Release& rel) const {
    const auto& j = s_.jobs[rel.job];
    const Seconds over = std::min(over_time_limit(s_.site, j.run_partition), kYear);  // UNLIMITED: a year
    return std::max(rel.end + kill_wait_ + over, s_.now + 1);
  }

  const sim::SimState& s_;
  const std::vector<std::uint32_t>& running_;  // the jobs whose releases are planned
  sim::ClusterState& cluster_;
  ProfileCache own_cache_;  // when the caller keeps none: every value computed anew
  ProfileCache* cache_;
  std::vector<Release> releases_;
  std::vector<std::uint32_t> first_;  // per release: its first entry; one more at the end (entry count)
  std::vector<std::uint32_t> node_;   // per release entry (a node of the released job, alloc order)
  // Per release entry: its rank among its node's entries (from 1; 0 for entries added by started(),
  // whose nodes are dirty_), the index of its value in ProfileCache::Shape::values.
  std::vector<std::uint32_t> rank_;
  std::vector<std::uint32_t> count_;  // per node: its release entries when the planner was built
  std::vector<char> dirty_;           // per node: a job started on it during the planner (nothing kept)
  std::vector<const std::uint32_t*> kept_from_;  // scratch: build
  std::vector<Shape> shapes_;
  const sim::NodeRequest* last_request_ = nullptr;  // the request shape_for last answered
  std::size_t last_shape_ = 0;                      // and its shape's index
  std::vector<std::uint64_t> block_nodes_;          // per kBlock releases: their nodes (words per block)
  bool blocks_valid_ = false;
  // Per release entry: its node's state after the releases up to it (GRES: gres_kinds_ counts each).
  // Valid on the entries of nodes recorded_ (record_states); sized when the first is recorded.
  std::vector<sim::NodeFree> states_;
  std::vector<std::int64_t> gres_;
  std::size_t gres_kinds_ = 0;
  bool states_sized_ = false;
  std::vector<char> recorded_;               // per node
  std::vector<std::uint32_t> need_;          // scratch: build
  std::vector<std::uint32_t> usable_;        // scratch: usable CPUs per node during a future test
  std::vector<std::uint32_t> snap_scratch_;  // scratch: ensure_snapshots
  Words level_scratch_;                      // scratch: ensure_reach
  std::vector<std::size_t> undo_;            // scratch: releases applied to the cluster
  std::vector<char> mark_;                   // scratch: nodes whose states are being recorded
  Seconds kill_wait_ = 30;
};

// A reservation's slot quantized to bf_resolution: both ends rounded down (backfill.c of 20.02-24.05:
// `end_reserve = (end_reserve / backfill_resolution) * backfill_resolution`), the end rounded up from
// 24.11 on (_set_slot_time adds bf_resolution - 1 first).
std::pair<Seconds, Seconds> slot_time(Seconds start, Seconds limit, Seconds res, bool end_up) {
  const Seconds end = start + limit;
  if (res <= 1) return {start, end};
  return {start / res * res, (end + (end_up ? res - 1 : 0)) / res * res};
}

}  // namespace

namespace {

// Seconds of bf_max_time spent testing rather than sleeping at lock yields.
double testing_seconds(const SchedulerParameters& p) {
  const double max_time = static_cast<double>(p.bf_max_time > 0 ? p.bf_max_time : p.bf_interval);
  const double yield = static_cast<double>(p.bf_yield_interval_us) / 1e6;
  const double sleep = static_cast<double>(p.bf_yield_sleep_us) / 1e6;
  return yield > 0 ? max_time * yield / (yield + sleep) : max_time;
}

}  // namespace

std::uint32_t BackfillCostModel::test_budget(const SchedulerParameters& p) const {
  return static_cast<std::uint32_t>(std::max(1.0, std::floor(tests_per_second * testing_seconds(p))));
}

Seconds BackfillCostModel::duration(const SchedulerParameters& p, std::uint32_t tested) const {
  if (!enabled()) return 0;
  const double testing = static_cast<double>(tested) / tests_per_second;
  const double yield = static_cast<double>(p.bf_yield_interval_us) / 1e6;
  const double sleeps =
      yield > 0 ? std::floor(testing / yield) * static_cast<double>(p.bf_yield_sleep_us) / 1e6 : 0;
  return std::max<Seconds>(1, static_cast<Seconds>(std::ceil(testing + sleeps)));
}

BackfillStats Backfill::run(sim::SimState& s, sim::JobLauncher& launcher,
                            const std::vector<QueueRecord>& queue, ProfileCache* cache) const {
  BackfillStats stats;
  const Seconds now = s.now;
  const Seconds res = std::max<Seconds>(1, params_.bf_resolution);
  const bool end_up = s.site.scheduler.slurm_version >= 2411;
  const Seconds window = std::max<Seconds>(60, params_.bf_window);
  const std::size_t node_count = s.cluster.nodes().size();
  const std::uint32_t max_test = cost_.enabled()
                                     ? std::min(params_.bf_max_job_test, cost_.test_budget(params_))
                                     : params_.bf_max_job_test;
  const std::size_t max_slots = max_test;  // bf_node_space_size defaults to bf_max_job_test
  NodeSpace map(now / res * res, (now + window) / res * res, node_count);
  const Seconds window_end = now + window;
  std::optional<Planner> planner;  // built at the first will-run test: most cycles of a big replay have none

  // Nodes out of service are never planned (node_space starts from avail_node_bitmap).
  std::vector<Words> in_service_parts;  // the partitions' nodes less those out of service, when some are
  if (s.cluster.out_of_service() > 0) {
    in_service_parts = s.partition_bits;
    for (auto& bits : in_service_parts)
      for (std::uint32_t n = 0; n < node_count; ++n)
        if (!s.cluster.in_service(n)) bits[n >> 6] &= ~(std::uint64_t{1} << (n & 63));
  }
  const auto& part_mask = s.cluster.out_of_service() > 0 ? in_service_parts : s.partition_bits;
  const bool reserved = reservations_ != nullptr && !reservations_->empty();
  Words job_part;  // scratch: a test's partition nodes less those reserved from it

  // Per-cycle counters of examined records, kept only for the limits that are set (they are read
  // for nothing else).
  std::vector<std::uint32_t> user_count;  // per user index (grown as met)
  std::vector<std::uint32_t> part_count(s.site.partitions.size(), 0);
  std::map<std::pair<std::uint32_t, std::uint16_t>, std::uint32_t> user_part_count;
  std::vector<char> planned_start;  // per job: given a start estimate in this cycle (bf_one_resv_per_job)
  if (params_.bf_one_resv_per_job) planned_start.assign(s.jobs.size(), 0);
  Words avail, chosen;  // scratch
  // A job with a constraint is tested on the nodes job_req_node_filter leaves (its features, and
  // enough configured CPUs and memory): in Slurm's will-run test a running job on none of them is
  // skipped, so its end does not widen the time window (backfill.c _try_sched).
  std::map<std::tuple<std::uint32_t, std::int64_t, std::int64_t>, Words> filtered;  // per filter
  const auto node_filter = [&](const sim::NodeRequest& r) -> const Words& {
    // pn_min_cpus: --ntasks-per-node's CPUs (cpus_per_node already counts -c), else one task's.
    const std::int64_t min_cpus =
        r.cpus_per_node > 0 ? r.cpus_per_node : std::max<std::uint32_t>(1, r.cpus_per_task);
    const std::int64_t min_mem = r.mem_per_cpu_mb > 0 ? r.mem_per_cpu_mb * min_cpus : r.mem_per_node_mb;
    const std::tuple key{r.features, min_cpus, min_mem};
    if (const auto it = filtered.find(key); it != filtered.end()) return it->second;
    Words keep((node_count + 63) / 64, 0);
    for (std::uint32_t n = 0; n < node_count; ++n) {
      const auto& node = s.cluster.node(n);
      if (s.cluster.node_has_features(n, r.features) && node.cpus >= min_cpus && node.memory_mb >= min_mem)
        put(keep, n);
    }
    return filtered.emplace(key, std::move(keep)).first->second;
  };
  struct Outcome {                    // of a record that changed nothing
    const sim::NodeRequest* request;  // the job's (SimState::jobs does not move during a cycle)
    std::uint16_t partition;
    Seconds limit;
    std::int32_t reservation;  // SimJob::reservation
    bool no_reserve;
    bool counted;                    // reached the will-run test
    std::optional<Seconds> planned;  // start estimate without a reservation
    std::uint32_t cpus;              // of the last allocation its will-run tests found (0: none)
  };
  std::vector<Outcome> memo;  // since the last start or reservation
  // A will-run test that finds nodes sets job_ptr->total_cpus to their CPUs (cons_common job_test),
  // which the job size priority factor counts from the next recalculation on.
  const auto note_size = [&](std::uint32_t ji, std::uint32_t cpus) {
    if (s.jobs[ji].size_cpus == cpus) return;
    s.jobs[ji].size_cpus = cpus;
    stats.sized.push_back(ji);
  };
  ArrayReject arrays;
  // The array whose tasks got the last reservations and how many in a row: at bf_max_job_array_resv
  // its record is done for the cycle (backfill.c test_array_job_id / test_array_count).
  std::uint64_t resv_array = 0;
  std::uint32_t resv_in_row = 0;
  const bool may_preempt = preemption_ != nullptr && preemption_->enabled();
  std::vector<bool> avail_nodes;            // scratch: avail for preemption
  std::vector<std::uint32_t> victim_nodes;  // scratch

  // The will-run of a job that may preempt: the running jobs it may preempt released from the cluster
  // (and given back after: allocate is release's exact inverse), a planner over the others.
  std::vector<std::uint32_t> kept_running, preemptable;  // scratch
  const auto plan_without_preemptable = [&](sim::SimState& st, const sim::SimJob& job,
                                            std::uint16_t partition, const Words& on, Seconds from,
                                            Seconds until, bool only_now) -> std::optional<Fit> {
    kept_running.clear();
    preemptable.clear();
    for (const auto ri : st.running)
      (preemption_->can_preempt(st, job, partition, st.jobs[ri]) ? preemptable : kept_running).push_back(ri);
    if (preemptable.empty()) return std::nullopt;
    for (const auto v : preemptable) st.cluster.release(st.jobs[v].request, st.jobs[v].alloc);
    std::optional<Fit> fit;
    {
      Planner without(st, st.cluster, nullptr, &kept_running);
      fit = without.will_run(job, on, from, until, only_now);
    }
    for (auto k = preemptable.size(); k-- > 0;)
      st.cluster.allocate(st.jobs[preemptable[k]].request, st.jobs[preemptable[k]].alloc);
    return fit;
  };

  for (const auto& rec : queue) {
    if (stats.tested >= max_test) break;
    auto& j = s.jobs[rec.job];
    if (!sim::in_queue(j, now)) continue;
    if (reserved && !reservations_->may_run_now(s, j, now)) continue;  // not queued (job_independent)
    if (arrays.skip(s, rec.job, rec.partition) || sim::array_capped(s, j)) continue;
    j.priority = rec.priority;
    // Over a limit: skipped, with the limit as its reason (acct_policy_job_runnable_pre_select sets it, and
    // the main pass keeps it while the job's partition is blocked; real Slurm in scenario 17).
    if (const auto why = check_limits(s, j, rec.partition); why != sim::PendingReason::kNone) {
      j.note_reason(why);
      continue;
    }
    const bool no_reserve =
        (params_.bf_min_prio_reserve > 0 &&
         static_cast<std::int64_t>(rec.priority) < params_.bf_min_prio_reserve) ||
        (params_.bf_min_age_reserve > 0 && now - j.eligible < params_.bf_min_age_reserve) ||
        (params_.bf_one_resv_per_job && planned_start[rec.job]);
    // Per-cycle counters of examined records (bf_max_job_user, _part, _user_part).
    std::uint32_t unused = 0;
    if (params_.bf_max_job_user > 0 && j.user >= user_count.size()) user_count.resize(j.user + 1, 0);
    auto& uc = params_.bf_max_job_user > 0 ? user_count[j.user] : unused;
    auto& pc = part_count[rec.partition];
    auto& upc = params_.bf_max_job_user_part > 0 ? user_part_count[{j.user, rec.partition}] : unused;
    if ((params_.bf_max_job_user > 0 && uc >= params_.bf_max_job_user) ||
        (params_.bf_max_job_part > 0 && pc >= params_.bf_max_job_part) ||
        (params_.bf_max_job_user_part > 0 && upc >= params_.bf_max_job_user_part))
      continue;
    ++uc;
    ++pc;
    ++upc;
    // Licences short now: skipped, no plan for it (backfill.c without bf_licenses: "not runable now
    // due to licenses"), after the bf_max_job_* counters have counted it.
    if (!sim::licenses_free(s, j)) continue;
    ++stats.examined;

    const Seconds limit = j.time_limit == kUnlimited ? kYear : j.time_limit;
    // A record like one already evaluated since the last change of the map or the running jobs
    // has the same outcome: the loop below reads nothing else (but a job that may preempt also
    // depends on its own last preemption attempt: never memoized).
    const bool preemptor = may_preempt && preemption_->may_preempt(j, rec.partition);
    const auto seen = preemptor ? memo.end() : std::find_if(memo.begin(), memo.end(), [&](const Outcome& o) {
      return o.partition == rec.partition && o.limit == limit && o.no_reserve == no_reserve &&
             o.reservation == j.reservation && same_request(*o.request, j.request);
    });
    if (seen != memo.end()) {
      if (seen->counted) ++stats.tested;
      if (seen->cpus > 0) note_size(rec.job, seen->cpus);
      if (seen->planned) {
        if (!planned_start.empty()) planned_start[rec.job] = 1;
        stats.planned.push_back({rec.job, *seen->planned, false});
      }
      continue;
    }
    const auto started_before = stats.started, reserved_before = stats.reserved;
    bool counted = false;
    bool limited = false;            // held by a limit on its chosen nodes: depends on more than the request
    bool changed = false;            // started a job or added a reservation
    std::optional<Seconds> planned;  // start estimate found without a reservation
    std::uint32_t fit_cpus = 0;      // CPUs of the last allocation a will-run test found
    Seconds later_start = now;       // TRY_LATER target; the first attempt is at now
    bool stop_cycle = false;
    while (true) {  // TRY_LATER
      Seconds start_res = later_start;
      later_start = 0;
      // Advanced reservations (job_test_resv with move_time): the nodes this run may not use, and
      // after the next reservation end it is tried again when one overlapped the partition.
      const Words* part = &part_mask[rec.partition];
      Seconds resv_end = 0;
      if (reserved) {
        const auto t = reservations_->test(s, j, rec.partition, start_res, j.time_limit);
        start_res = t.start;
        if (!t.blocked.empty()) {
          job_part = *part;
          for (std::uint32_t n = 0; n < node_count; ++n)
            if (t.blocked[n]) job_part[n >> 6] &= ~(std::uint64_t{1} << (n & 63));
          part = &job_part;
        }
        if (t.overlap) resv_end = reservations_->next_end(start_res, res);
      }
      if (start_res > window_end) break;
      const Seconds end_time = std::max(start_res, now) + limit;
      // Nodes of the partition free of reservations over [start_res, end_time], and the next time
      // at which more of them become free.
      later_start = free_nodes(map, start_res, end_time, *part, avail);
      if (j.request.features != 0) {
        const auto& keep = node_filter(j.request);
        for (std::size_t w = 0; w < avail.size(); ++w) avail[w] &= keep[w];
      }
      if (resv_end != 0 && ++resv_end < window_end && (later_start == 0 || resv_end < later_start))
        later_start = resv_end;
      const bool can_retry = later_start > 0 && !no_reserve;
      if (!at_least(avail, j.request.min_nodes)) {
        if (can_retry) continue;
        break;
      }
      if (!counted) {
        ++stats.tested;
        counted = true;
      }
      if (!planner) planner.emplace(s, s.cluster, cache);
      auto fit = planner->will_run(j, avail, start_res, later_start, no_reserve);
      // Only 22.05 on lets the thread idle, so only there does it matter; once is enough per cycle.
      if (fit && fit->start == start_res && start_res > now && !stats.updated_jobs &&
          s.site.scheduler.slurm_version >= 2205) {
        const auto unclamped = planner->will_run(j, avail, now, later_start, no_reserve);
        stats.updated_jobs = unclamped && unclamped->start < start_res;
      }
      if ((!fit || fit->start > now) && start_res <= now && preemptor) {
        // It cannot start now as things are: preempting may let it (no_reserve jobs too: Slurm's
        // TEST_NOW_ONLY fails only without preemption candidates).
        avail_nodes.assign(node_count, false);
        for (std::uint32_t n = 0; n < node_count; ++n) avail_nodes[n] = has(avail, n);
        victim_nodes.clear();
        const auto victims =
            preemption_->preempt_for(s, launcher, rec.job, rec.partition, avail_nodes, &victim_nodes);
        if (!victims.empty()) {
          planner.reset();  // running jobs changed: planned again at the next test
          changed = true;
          const bool all_suspended = std::all_of(victims.begin(), victims.end(), [&](std::uint32_t v) {
            return s.jobs[v].state == sim::SimJobState::kSuspended;
          });
          if (all_suspended)
            if (auto alloc =
                    select_nodes_in(s.cluster, j.request, s.partition_bits[rec.partition], avail_nodes)) {
              launcher.start_job(rec.job, rec.partition, std::move(*alloc), SchedulerPass::kBackfill);
              ++stats.started;
              if (params_.bf_max_job_start > 0 && stats.started >= params_.bf_max_job_start)
                stop_cycle = true;
              if (stats.tested >= max_test) stop_cycle = true;
              break;
            }
          // The victims' whole nodes are held for it for the rest of the cycle (spec §7.4); it starts
          // in a later pass, once they are free.
          chosen.assign((node_count + 63) / 64, 0);
          for (auto n : victim_nodes) put(chosen, n);
          const auto [start_q, end_q] = slot_time(now, limit, res, end_up);
          map.add(start_q, end_q, res, chosen);
          stats.planned.push_back({rec.job, now, true});
          ++stats.reserved;
          break;
        }
      }
      // It cannot start now, even by preempting: slurmctld's will-run plans a job that may preempt with
      // the jobs it may preempt gone from now on (cons_common _will_run_test: "Remove preemptable job
      // now"), so only the others' releases decide its start.
      if (preemptor && (!fit || fit->start > now))
        if (auto f = plan_without_preemptable(s, j, rec.partition, avail, start_res, later_start, no_reserve);
            f && f->start > now && (!fit || f->start < fit->start))
          fit = std::move(f);
      if (!fit) {
        if (can_retry) continue;
        break;
      }
      fit_cpus = 0;
      for (const auto& a : fit->alloc) fit_cpus += a.cpus;
      note_size(rec.job, fit_cpus);
      chosen.assign((node_count + 63) / 64, 0);
      for (const auto& a : fit->alloc) put(chosen, a.node);
      auto [start_q, end_q] = slot_time(fit->start, limit, res, end_up);
      if (fit->start > now && map.overlaps(start_q, end_q, chosen)) {
        later_start = fit->start + (fit->start == start_res ? res : 0);
        continue;
      }
      // Over a limit on what the chosen nodes give it (ESLURM_ACCOUNTING_POLICY): noted, and the job is
      // skipped, neither started nor reserved for.
      const auto over_limit = [&] {
        const auto why = check_selected_limits(s, j, rec.partition, fit->alloc);
        if (why != sim::PendingReason::kNone) j.note_reason(why);
        return why != sim::PendingReason::kNone;
      };
      if (fit->start <= now) {
        if (over_limit()) {
          limited = true;
          break;
        }
        launcher.start_job(rec.job, rec.partition, std::move(fit->alloc), SchedulerPass::kBackfill);
        planner->started(rec.job);
        changed = true;
        ++stats.started;
        if (params_.bf_max_job_start > 0 && stats.started >= params_.bf_max_job_start) stop_cycle = true;
        if (stats.tested >= max_test) stop_cycle = true;
        break;
      }
      if (later_start > 0 && fit->start > later_start && !no_reserve) continue;
      if (!planned_start.empty()) planned_start[rec.job] = 1;
      stats.planned.push_back({rec.job, fit->start, false});
      planned = fit->start;
      if (fit->start > now + window) break;  // beyond bf_window: no reservation
      if (over_limit()) {  // on the planned nodes: backfill.c checks post_select before reserving
        limited = true;
        break;
      }
      if (no_reserve) break;  // expected start known, no reservation
      if (map.size() >= max_slots) {
        stop_cycle = true;
        break;
      }
      map.add(start_q, end_q, res, chosen);
      changed = true;
      stats.planned.back().reserved = true;
      ++stats.reserved;
      break;
    }
    if (stats.started > started_before) {
      arrays.accept();
    } else if (stats.reserved > reserved_before && j.array_task >= 0) {
      resv_in_row = resv_array == j.id ? resv_in_row + 1 : 1;
      resv_array = j.id;
      if (resv_in_row < params_.bf_max_job_array_resv) arrays.accept();
    }
    if (stop_cycle) break;
    if (changed)
      memo.clear();
    else if (!preemptor && !limited)
      memo.push_back(
          {&j.request, rec.partition, limit, j.reservation, no_reserve, counted, planned, fit_cpus});
  }
  stats.slots = static_cast<std::uint32_t>(map.size());
  return stats;
}

}  // namespace slurmtwin::policies
