#pragma once
// The association tree that fair share works on: root -> accounts -> user associations, with the
// decayed usage (mutable state) and the per-algorithm results (level shares, LF, fs_factor).
// Spec: slurm-scheduling-spec.md §3.1 (tree construction, Fairshare=parent hoisting).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "traces/site.hpp"

namespace slurmtwin::policies {

/// Index of an association in an AssocTree (0 is root); kNoAssoc when absent.
using AssocIndex = std::int32_t;
inline constexpr AssocIndex kNoAssoc = -1;

/// One association: an account (is_user false) or a user association (user, account[, partition]).
struct AssocNode {
  std::string account;    // the account this association belongs to (its own name for accounts)
  std::string user;       // "" for accounts
  std::string partition;  // "" = any partition (user associations only)
  bool is_user = false;
  AssocIndex parent = kNoAssoc;     // direct parent (parent_assoc_ptr); kNoAssoc for root
  AssocIndex fs_parent = kNoAssoc;  // first ancestor whose shares are not "parent" (fs_assoc_ptr)
  std::uint32_t shares_raw = 1;     // Fairshare=N; meaningless when shares_parent
  bool shares_parent = false;       // Fairshare=parent (SLURMDB_FS_USE_PARENT)
  std::uint32_t priority = 0;       // association Priority, inherited from the parent when unset (0)

  // Mutable usage state (spec §2.6), advanced by UsageDecay.
  double usage_raw = 0.0;      // decayed usage, billing-seconds (this association and its subtree)
  double grp_used_wall = 0.0;  // decayed wall time, s (UsageFactor applied)

  // Results of compute_fair_tree / compute_classic_fair_share.
  std::uint32_t level_shares = 0;  // Σ shares_raw of the siblings under the same fs-parent (static)
  double shares_norm = 0.0;        // S (Fair Tree: per level; classic: product down the tree)
  double usage_norm = 0.0;         // usage_raw / root usage_raw, capped at 1 (classic)
  double usage_efctv = 0.0;        // Fair Tree: U = usage_raw / fs_parent usage_raw; classic: §2.7
  double level_fs = 0.0;           // Fair Tree LF = S / U
  double fs_factor = 0.0;          // fair-share factor in [0, 1] (users; 0 until computed)
};

/// The association tree of a Site. Structure is fixed at construction; usage fields are the state.
///
/// Plain vectors indexed by AssocIndex rather than Boost.Graph: the tree is small, needs two parent
/// links (direct and fair-share) plus ordered child lists whose order is the documented tie order,
/// and every algorithm here is a short recursive walk; property maps would only add indirection.
class AssocTree {
 public:
  /// Builds root (from the "root" account, or an implicit one), every account, then every user
  /// association, in Site order; that insertion order is the order among equal-LF siblings.
  /// Throws std::invalid_argument for an unknown parent/account or a parent cycle.
  explicit AssocTree(const Site& site);

  AssocIndex root() const { return 0; }
  std::size_t size() const { return nodes_.size(); }
  /// N of Fair Tree: the number of user associations (all of them, active or not; includes root's).
  std::uint32_t user_count() const { return user_count_; }
  /// Largest association priority (g_assoc_max_priority), 0 when none is set.
  std::uint32_t max_priority() const { return max_priority_; }

  const AssocNode& node(AssocIndex i) const { return nodes_.at(static_cast<std::size_t>(i)); }
  AssocNode& node(AssocIndex i) { return nodes_.at(static_cast<std::size_t>(i)); }
  const std::vector<AssocNode>& nodes() const { return nodes_; }
  /// Children on the fair-share parent, in insertion order (Fairshare=parent subtrees hoisted).
  const std::vector<AssocIndex>& children(AssocIndex i) const {
    return children_.at(static_cast<std::size_t>(i));
  }
  /// Every association with each fs-parent before its fs-children (pre-order over children()).
  const std::vector<AssocIndex>& top_down() const { return top_down_; }

  /// The user association for (user, account, partition): an exact partition match first, then the
  /// partition-less one; kNoAssoc when absent.
  AssocIndex find_user_assoc(std::string_view user, std::string_view account,
                             std::string_view partition = "") const;
  /// The account association named `name`, kNoAssoc when absent.
  AssocIndex find_account(std::string_view name) const;
  /// Throwing twins of the above: std::invalid_argument naming the missing key.
  AssocIndex user_assoc(std::string_view user, std::string_view account,
                        std::string_view partition = "") const;
  AssocIndex account(std::string_view name) const;

  /// Sets usage_raw and grp_used_wall of every association to 0 (PriorityUsageResetPeriod).
  void reset_usage();
  /// Adds `usage` (billing-seconds) and `wall` (s) to `assoc` and all its ancestors up to root.
  void add_usage(AssocIndex assoc, double usage, double wall);

 private:
  std::vector<AssocNode> nodes_;
  std::vector<std::vector<AssocIndex>> children_;
  std::vector<AssocIndex> top_down_;
  std::uint32_t user_count_ = 0;
  std::uint32_t max_priority_ = 0;
};

}  // namespace slurmtwin::policies
