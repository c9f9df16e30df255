#pragma once
// Backfill's per-shape usable CPUs kept from one cycle to the next (per-run state, owned by the
// policy and lent to Backfill::run).
//
// Each cycle's planner needs, per request shape, every node's usable CPUs now and after each planned
// release of a running job on it (ClusterState::usable_cpus on the node's state once the releases up
// to it are applied). Those values depend only on the shape, the node's configuration, its state now
// and the running jobs on it (their planned releases, in order): between two cycles only the nodes
// where a job started, ended, was suspended or resumed change, and ClusterState counts those changes
// per node (NodeState::changes). A node whose count moved since the values were kept gets a new
// generation, and values are reused only for the generation they were computed for. The planner's
// own releases (to record node states) are undone before it settles, and a node where it starts a
// job is invalidated.
#include <cstdint>
#include <memory>
#include <utility>
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

  /// Starts a planner on `cluster`: a node changed since the last planner settled (or started)
  /// gets a new generation. A different cluster (or node count) than last time forgets everything.
  void start(const sim::ClusterState& cluster);
  /// The planner undid its own changes to `cluster` (releases applied to record node states): the
  /// change counts now are those of the values kept, except on invalidated nodes.
  void settle(const sim::ClusterState& cluster);
  std::uint32_t generation(std::uint32_t node) const { return gen_[node]; }
  /// Node `node` changed during the planner (a job started on it): values computed for it so far
  /// are stale, and its key matches no later planner's.
  void invalidate(std::uint32_t node);

  /// The values of `request`'s shape (added, evicting the least recently used shape not used by the
  /// current planner when kMaxShapes are kept). The reference stays valid until the next planner.
  Shape& shape(const sim::NodeRequest& request);

  /// The last planner's running jobs' planned releases (planned end, job) in planned-end order, and
  /// per job a mark the planner uses to find which of them still hold: the next planner sorts only
  /// the others (Planner::order_releases in backfill.cpp).
  std::vector<std::pair<Seconds, std::uint32_t>> releases;
  std::vector<std::uint32_t> release_mark;
  std::uint32_t release_serial = 0;

  static constexpr std::size_t kMaxShapes = 64;  // shapes kept (memory: about nodes + entries each)

 private:
  bool check_ = false;
  std::uint64_t checked_ = 0;
  const sim::ClusterState* cluster_ = nullptr;
  std::uint64_t serial_ = 0;  // planners started
  // Per node: NodeState::changes the kept values are for (kUnknown: invalidated).
  std::vector<std::uint64_t> known_;
  static constexpr std::uint64_t kUnknown = ~std::uint64_t{0};
  std::vector<std::uint32_t> gen_;  // per node, from 1
  std::vector<std::unique_ptr<Shape>> shapes_;
};

}  // namespace slurmtwin::policies
