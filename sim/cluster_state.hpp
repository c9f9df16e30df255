#pragma once
// Free resources per node under select/cons_tres: CPUs (whole cores), memory, GRES. Knows nothing
// of priorities or queues; policies ask it whether a request fits and commit allocations to it.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/sim_job.hpp"
#include "sim/switch_tree.hpp"
#include "traces/site.hpp"

namespace slurmtwin::sim {

struct NodeState {
  std::uint32_t cpus = 0;  // configured CPUs
  std::uint32_t threads_per_core = 1;
  std::int64_t memory_mb = 0;      // RealMemory - MemSpecLimit
  std::vector<std::int64_t> gres;  // configured count per gres kind
  std::uint32_t free_cpus = 0;
  std::uint32_t held_cpus = 0;  // CPUs of suspended jobs that their preemptors left: usable by nobody
  std::int64_t free_mem_mb = 0;
  std::vector<std::int64_t> free_gres;
  std::uint32_t jobs = 0;     // running jobs on the node
  bool exclusive = false;     // held whole by an exclusive job
  std::uint16_t outages = 0;  // outages (DOWN, DRAIN) in force: > 0 starts no job (usable_cpus is 0)
  // Allocations, releases, suspensions and resumptions applied to the node so far: equal counts mean
  // nothing changed on it in between (backfill keeps per-node values across cycles by it).
  std::uint64_t changes = 0;
};

/// What running jobs hold on a node, as far as usable_cpus reads it (a node's state at some planned
/// time, for backfill's future availability profiles); GRES free counts are passed beside it.
struct NodeFree {
  std::uint32_t free_cpus = 0;
  std::uint32_t jobs = 0;
  std::int64_t free_mem_mb = 0;
  bool exclusive = false;
};

class ClusterState {
 public:
  /// `core_granularity`: allocate whole cores (CR_Core*, CR_Socket*) rather than single CPUs (CR_CPU*).
  ClusterState(const Site& site, bool core_granularity);

  /// Index of a gres kind ("gpu"), adding it when new (kinds the site lacks have 0 everywhere).
  std::uint32_t gres_kind(const std::string& name);
  std::size_t gres_kinds() const { return gres_names_.size(); }
  /// Index of a gres kind the cluster already knows, else gres_kinds().
  std::uint32_t find_gres_kind(const std::string& name) const;
  /// The name of gres kind `k` (< gres_kinds()): "gpu".
  const std::string& gres_name(std::size_t k) const { return gres_names_[k]; }
  /// Index of a constraint expression ("a&b", "a|b", "a,b"): a node mask; 0 means no constraint.
  std::uint32_t constraint(const std::string& expression);
  bool node_has_features(std::uint32_t node, std::uint32_t constraint) const;

  const std::vector<NodeState>& nodes() const { return nodes_; }
  const NodeState& node(std::uint32_t i) const { return nodes_[i]; }
  std::uint32_t node_weight(std::uint32_t i) const { return weights_[i]; }
  /// The distinct node Weights, ascending (select/cons_tres tries nodes level by level).
  const std::vector<std::uint32_t>& weight_levels() const { return weight_levels_; }
  /// topology/tree's switches (empty: nodes are placed as under topology/flat).
  const SwitchTree& switch_tree() const { return switch_tree_; }
  /// SelectType=select/cons_res: it places jobs under topology/tree by its own rules (node_select).
  bool select_cons_res() const { return cons_res_; }
  /// Words of a node bitset (bit n%64 of word n/64 for node n).
  std::size_t node_words() const { return node_words_; }
  /// Nodes that may give some request `cpus` CPUs now (bitset, node_words() words): in service, not
  /// held by an exclusive job, with at least the largest power of two <= `cpus` free. A superset of the
  /// nodes where usable_cpus(i, r, ...) >= `cpus` for any request (usable_cpus never exceeds the free
  /// CPUs), so a search for a job visits these rather than every node of its partition.
  const std::vector<std::uint64_t>& nodes_with_free(std::uint32_t cpus) const {
    return free_index_[std::min<std::uint32_t>(std::bit_width(std::max<std::uint32_t>(cpus, 1)) - 1,
                                               kFreeClasses - 1)];
  }

  /// CPUs the request could get on node `i` now (after core rounding), 0 if it cannot use the node
  /// (memory, GRES, exclusivity, features). `cpus_wanted` is what the job still needs on this node.
  std::uint32_t usable_cpus(std::uint32_t i, const NodeRequest& r, std::uint32_t cpus_wanted) const;
  /// The same for node `i` in state `free` with `free_gres` (gres_kinds() counts) instead of its state now.
  std::uint32_t usable_cpus(std::uint32_t i, const NodeRequest& r, std::uint32_t cpus_wanted,
                            const NodeFree& free, const std::int64_t* free_gres) const;
  /// CPUs actually allocated for `cpus` requested on node `i`: rounded up to whole cores if configured.
  std::uint32_t round_cpus(std::uint32_t i, std::uint32_t cpus) const;
  /// Memory a request takes on node `i` for `cpus` allocated CPUs (MB).
  std::int64_t memory_needed(std::uint32_t i, const NodeRequest& r, std::uint32_t cpus) const;

  void allocate(const NodeRequest& r, const std::vector<NodeAlloc>& alloc);
  void release(const NodeRequest& r, const std::vector<NodeAlloc>& alloc);
  /// A suspended job gives up its CPUs but keeps its memory and GRES (and its place on the nodes).
  void suspend(const std::vector<NodeAlloc>& alloc);
  /// Once its preemptor has started, the suspended job's CPUs that the preemptor left are held for it
  /// again: under gang scheduling the victim keeps its cores in the select plugin and only its
  /// preemptor shares them (seen on real Slurm 22.05, issue 22). Returns the CPUs held per node of
  /// `alloc`, for resume().
  std::vector<std::uint32_t> hold(const std::vector<NodeAlloc>& alloc);
  /// Whether a suspended job's CPUs are free again (besides those held for it); resume() takes them back.
  bool can_resume(const std::vector<NodeAlloc>& alloc, const std::vector<std::uint32_t>& held) const;
  void resume(const std::vector<NodeAlloc>& alloc, const std::vector<std::uint32_t>& held = {});

  /// A node outage begins (`out`) or ends; overlapping outages are counted. Running jobs are not
  /// touched.
  void set_outage(std::uint32_t i, bool out);
  bool in_service(std::uint32_t i) const { return nodes_[i].outages == 0; }
  /// Nodes out of service now.
  std::uint32_t out_of_service() const { return out_of_service_; }

  std::uint64_t total_cpus() const { return total_cpus_; }
  std::uint64_t used_cpus() const { return used_cpus_; }
  /// Memory (MB) the nodes offer (RealMemory - MemSpecLimit) and running or suspended jobs hold.
  std::int64_t total_memory_mb() const { return total_mem_mb_; }
  std::int64_t used_memory_mb() const { return used_mem_mb_; }
  /// Units of gres kind `k` the nodes have and running or suspended jobs hold (0 for a kind unknown).
  std::int64_t total_gres(std::uint32_t k) const { return k < total_gres_.size() ? total_gres_[k] : 0; }
  std::int64_t used_gres(std::uint32_t k) const { return k < used_gres_.size() ? used_gres_[k] : 0; }
  /// Throws std::logic_error naming the node when any counter is out of range (--check-invariants).
  void check_invariants() const;

 private:
  bool core_granularity_;
  std::vector<NodeState> nodes_;
  std::vector<std::uint32_t> weights_;
  std::vector<std::uint32_t> weight_levels_;
  std::size_t node_words_ = 0;
  SwitchTree switch_tree_;
  bool cons_res_ = false;
  std::vector<std::vector<std::string>> features_;
  std::vector<std::string> gres_names_;
  std::vector<std::string> constraint_text_;
  std::vector<std::vector<bool>> constraint_masks_;
  std::uint64_t total_cpus_ = 0;
  std::uint64_t used_cpus_ = 0;
  std::int64_t total_mem_mb_ = 0, used_mem_mb_ = 0;
  std::vector<std::int64_t> total_gres_, used_gres_;  // per gres kind
  std::uint32_t out_of_service_ = 0;
  // free_index_[k]: nodes in service, not exclusive, with free_cpus >= 2^k (nodes_with_free); kept in
  // step by index_free after every change of a node.
  static constexpr std::uint32_t kFreeClasses = 12;
  std::vector<std::vector<std::uint64_t>> free_index_;
  bool in_free_class(std::uint32_t i, std::uint32_t k) const;  // node i belongs in free_index_[k]
  void index_free(std::uint32_t i);
};

}  // namespace slurmtwin::sim
