#pragma once
// Backfill's per-shape usable CPUs kept from one cycle to the next (per-run state, owned by the
// policy and lent to Backfill::run).
//
// Each cycle's planner needs, per request shape, every node's usable CPUs now and after each planned
// release of a running job on it (ClusterState::usable_cpus on the node's state once the releases up
// to it are applied). Those values depend only on the shape, the node's configuration, its state now
// and the releases that touch it, in order; between two cycles only the nodes where a job started,
// ended, was suspended or resumed change. So each planner describes every node by a key (its state
// now and, per running job on it in planned-release order, the job and what it holds there); a node
// whose key differs from the previous planner's gets a new generation, and values are reused only for
// the generation they were computed for.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/cluster_state.hpp"
#include "sim/sim_job.hpp"

namespace slurmtwin::policies {

/// What makes two requests use nodes alike (usable_cpus reads nothing else of a request).
bool same_shape(const sim::NodeRequest& a, const sim::NodeRequest& b);

class ProfileCache {
 public:
  /// One shape's values. now[n]: usable CPUs on node n now; values[n][k] (k >= 1): after the k-th
  /// planned release touching n (in planned-release order); valid where now_gen[n] (resp.
  /// after_gen[n]) equals the node's generation (0: none).
  struct Shape {
    sim::NodeRequest request;
    std::vector<std::uint32_t> now_gen;
    std::vector<std::uint32_t> after_gen;
    std::vector<std::vector<std::uint32_t>> values;
    // The planner's arrays for this shape (see backfill.cpp, Planner), rebuilt by every planner
    // that uses the shape; kept here so that their storage is reused and `now` carries over.
    std::vector<std::uint32_t> now;    // per node: usable CPUs now (right where now_gen matches)
    std::vector<std::uint32_t> after;  // per release entry of the planner
    std::vector<std::uint32_t> snaps;
    std::vector<std::int64_t> reach;
    std::vector<std::int64_t> levels;
    std::vector<std::uint64_t> level_nodes;
    std::uint64_t used = 0;  // serial of the last planner that used it (least recently used goes first)
  };

  /// `check`: every reused value is also computed again and compared (tests; slow).
  explicit ProfileCache(bool check = false) : check_(check) {}
  bool check() const { return check_; }
  /// In check mode: kept values reused (and found equal to a recomputation) so far.
  std::uint64_t checked() const { return checked_; }
  void count_checked() { ++checked_; }

  /// Starts a planner on `cluster`: node n's key takes sizes[n] words, which the caller writes at
  /// next_key(n) before commit_keys. A different cluster (or node count) than last time forgets
  /// everything.
  void start_keys(const sim::ClusterState& cluster, const std::vector<std::uint32_t>& sizes);
  std::uint64_t* next_key(std::uint32_t node) { return next_.data() + next_begin_[node]; }
  /// Compares the keys written since start_keys with the previous planner's: a node whose key
  /// changed gets a new generation.
  void commit_keys();
  std::uint32_t generation(std::uint32_t node) const { return gen_[node]; }
  /// Node `node` changed during the planner (a job started on it): values computed for it so far
  /// are stale, and its key matches no later planner's.
  void invalidate(std::uint32_t node);

  /// The values of `request`'s shape (added, evicting the least recently used shape not used by the
  /// current planner when kMaxShapes are kept). The reference stays valid until the next planner.
  Shape& shape(const sim::NodeRequest& request);

  static constexpr std::size_t kMaxShapes = 64;  // shapes kept (memory: about nodes + entries each)

 private:
  bool check_ = false;
  std::uint64_t checked_ = 0;
  const sim::ClusterState* cluster_ = nullptr;
  std::uint64_t serial_ = 0;  // planners started
  // Per node, its key: words [begin[n], begin[n + 1]) of a flat vector; the previous planner's and
  // the one being written.
  std::vector<std::uint64_t> keys_;
  std::vector<std::size_t> begin_;
  std::vector<std::uint64_t> next_;
  std::vector<std::size_t> next_begin_;
  std::vector<char> invalid_;       // per node: its previous key matches nothing (invalidate)
  std::vector<std::uint32_t> gen_;  // per node, from 1
  std::vector<std::unique_ptr<Shape>> shapes_;
};

}  // namespace slurmtwin::policies
