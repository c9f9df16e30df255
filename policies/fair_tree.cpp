#include "policies/fair_tree.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace slurmtwin::policies {
namespace {

/// Slurm's NO_VAL (0xfffffffe) as a long double: the LF of a Fairshare=parent account and the
/// initial "previous LF" of every sibling walk (so a first sibling at NO_VAL counts as tied).
constexpr double kNoValLf = 4294967294.0;
constexpr double kInf = std::numeric_limits<double>::infinity();
/// Depth-oblivious steepness `f` (priority_multifactor.c hard-codes 5.0).
constexpr double kDepthObliviousSteepness = 5.0;

AssocNode& at(AssocTree& t, AssocIndex i) {
  return t.node(i);
}

/// Fair Tree S: shares_raw / level_shares of the association, or of its fs-parent when the
/// association is Fairshare=parent (assoc_mgr `_normalize_assoc_shares_fair_tree`).
double fair_tree_shares_norm(const AssocTree& t, AssocIndex i) {
  const AssocNode* n = &t.node(i);
  if (n->shares_parent && n->fs_parent != kNoAssoc) n = &t.node(n->fs_parent);
  if (n->level_shares == 0) return 0.0;
  return static_cast<double>(n->shares_raw) / static_cast<double>(n->level_shares);
}

/// `_calc_assoc_fs`: U, S and LF of one association.
void calc_level_fs(AssocTree& t, AssocIndex i) {
  AssocNode& n = at(t, i);
  const double parent_usage = n.fs_parent == kNoAssoc ? 0.0 : t.node(n.fs_parent).usage_raw;
  n.usage_efctv = parent_usage > 0.0 ? n.usage_raw / parent_usage : 0.0;
  const double root_usage = t.node(t.root()).usage_raw;
  n.usage_norm = root_usage > 0.0 ? std::min(1.0, n.usage_raw / root_usage) : 0.0;
  n.shares_norm = fair_tree_shares_norm(t, i);
  if (n.shares_parent) {
    n.level_fs = n.is_user ? kInf : kNoValLf;
  } else if (n.shares_norm == 0.0) {
    n.level_fs = 0.0;
  } else {
    n.level_fs = n.shares_norm / n.usage_efctv;  // +inf when U == 0
  }
}

struct Ranker {
  AssocTree& tree;
  TieMode mode;
  std::uint32_t rank;
  std::uint32_t rnt;  // rank if there were no ties

  /// `_calc_tree_fs`: rank one (possibly merged) sibling list.
  void visit(std::vector<AssocIndex> siblings, bool tied_in) {
    // Descending LF, users before accounts at equal LF; stable so that equal same-kind siblings keep
    // insertion order (the deterministic stand-in for qsort's unspecified order).
    std::stable_sort(siblings.begin(), siblings.end(), [&](AssocIndex a, AssocIndex b) {
      const AssocNode& x = tree.node(a);
      const AssocNode& y = tree.node(b);
      if (x.level_fs != y.level_fs) return x.level_fs > y.level_fs;
      return x.is_user && !y.is_user;
    });
    double prev = kNoValLf;
    for (std::size_t i = 0; i < siblings.size(); ++i) {
      AssocNode& n = tree.node(siblings[i]);
      const bool tied = (i == 0 && tied_in) ? true : prev == n.level_fs;
      if (n.is_user) {
        if (!tied) rank = rnt;
        n.fs_factor = static_cast<double>(rank) / static_cast<double>(tree.user_count());
        --rnt;
      } else {
        // kCode: `_count_tied_accounts` stops at the first following account, so nothing merges.
        std::size_t merge = 0;
        if (mode == TieMode::kDocumented) {
          while (i + merge + 1 < siblings.size()) {
            const AssocNode& next = tree.node(siblings[i + merge + 1]);
            if (next.is_user || next.level_fs != n.level_fs) break;
            ++merge;
          }
        }
        std::vector<AssocIndex> children;
        for (std::size_t k = i; k <= i + merge; ++k) {
          const auto& kids = tree.children(siblings[k]);
          children.insert(children.end(), kids.begin(), kids.end());
        }
        visit(std::move(children), tied);
        i += merge;
      }
      prev = n.level_fs;
    }
  }
};

/// `_depth_oblivious_set_usage_efctv`.
double depth_oblivious_usage_efctv(const AssocTree& t, AssocIndex i) {
  const AssocNode& n = t.node(i);
  const AssocNode& p = t.node(n.fs_parent);
  if (n.shares_norm == 0.0 || p.shares_norm == 0.0 || p.usage_efctv == 0.0 || n.usage_norm == 0.0) {
    return n.usage_norm;
  }
  const double ratio_p = p.usage_efctv / p.shares_norm;
  double ratio_s = 0.0;
  for (AssocIndex s : t.children(n.fs_parent)) {
    if (!t.node(s).shares_parent) ratio_s += t.node(s).usage_norm;
  }
  ratio_s /= p.shares_norm;
  const double ratio_l = (n.usage_norm / n.shares_norm) / ratio_s;
  double k = 1.0;
  if (ratio_p != 0.0 && ratio_l != 0.0 && std::log(ratio_p) * std::log(ratio_l) < 0.0) {
    k = 1.0 / (1.0 + std::pow(kDepthObliviousSteepness * std::log(ratio_p), 2.0));
  }
  return ratio_p * std::pow(ratio_l, k) * n.shares_norm;
}

}  // namespace

void compute_fair_tree(AssocTree& tree, TieMode mode) {
  for (AssocIndex i : tree.top_down()) {
    if (i == tree.root()) continue;
    calc_level_fs(tree, i);
  }
  AssocNode& root = tree.node(tree.root());
  root.level_fs = kNoValLf;
  root.shares_norm = 1.0;
  root.usage_efctv = 1.0;
  root.usage_norm = root.usage_raw > 0.0 ? 1.0 : 0.0;
  Ranker ranker{tree, mode, tree.user_count(), tree.user_count()};
  ranker.visit(tree.children(tree.root()), /*tied_in=*/false);
}

namespace {

/// `_set_assoc_usage_efctv` for node i (its fs-parent's usage_efctv already set).
void classic_usage_efctv(AssocTree& tree, AssocIndex i, bool depth_oblivious) {
  AssocNode& n = tree.node(i);
  const AssocNode& p = tree.node(n.fs_parent);
  if (n.fs_parent == tree.root()) {
    n.usage_efctv = n.usage_norm;
  } else if (n.shares_parent) {  // NOLINT(bugprone-branch-clone): Slurm's two cases, as its code has them
    n.usage_efctv = p.usage_efctv;
  } else if (depth_oblivious) {
    n.usage_efctv = depth_oblivious_usage_efctv(tree, i);
  } else if (n.level_shares == 0) {  // NOLINT(bugprone-branch-clone): Slurm's two cases, as its code has them
    n.usage_efctv = p.usage_efctv;
  } else {
    n.usage_efctv = n.usage_norm + (p.usage_efctv - n.usage_norm) * static_cast<double>(n.shares_raw) /
                                       static_cast<double>(n.level_shares);
  }
}

/// `set_assoc_usage_norm`: usage_raw / root usage_raw, at most 1.
void classic_usage_norm(AssocTree& tree, AssocIndex i) {
  const double root_usage = tree.node(tree.root()).usage_raw;
  AssocNode& n = tree.node(i);
  n.usage_norm = root_usage > 0.0 ? std::min(1.0, n.usage_raw / root_usage) : 0.0;
}

}  // namespace

void classic_accounts(AssocTree& tree, bool depth_oblivious) {
  const AssocIndex root = tree.root();
  // shares_norm (`_normalize_assoc_shares_traditional`) of every association.
  for (AssocIndex i : tree.top_down()) {
    AssocNode& n = tree.node(i);
    if (n.shares_parent && n.fs_parent != kNoAssoc) {
      n.shares_norm = tree.node(n.fs_parent).shares_norm;  // fs-parent precedes in top_down()
      continue;
    }
    double s = 1.0;
    for (AssocIndex a = i; tree.node(a).parent != kNoAssoc; a = tree.node(a).parent) {
      const AssocNode& x = tree.node(a);
      if (x.shares_parent) continue;
      if (x.level_shares == 0) {
        s = 0.0;
      } else {
        s *= static_cast<double>(x.shares_raw) / static_cast<double>(x.level_shares);
      }
    }
    n.shares_norm = s;
  }
  // Accounts' usage, pre-order (`_set_children_usage_efctv`); root's usage_efctv is 1.0 (plugin init).
  // Each account's usage_norm is set just before its usage_efctv, so a depth-oblivious account reads
  // its siblings' as they are then: new for those before it, from the last run for those after.
  // Siblings go in slurmdbd's order, the reverse of their creation (real Slurm 22.05, scenario 40:
  // a2 before a1).
  classic_usage_norm(tree, root);
  tree.node(root).usage_efctv = 1.0;
  const auto visit = [&](auto&& self, AssocIndex i) -> void {
    const auto& kids = tree.children(i);
    for (std::size_t k = kids.size(); k-- > 0;) {
      const AssocIndex c = kids[k];
      if (tree.node(c).is_user) continue;
      classic_usage_norm(tree, c);
      classic_usage_efctv(tree, c, depth_oblivious);
      self(self, c);
    }
  };
  visit(visit, root);
}

void classic_user(AssocTree& tree, AssocIndex user, bool depth_oblivious) {
  classic_usage_norm(tree, user);
  classic_usage_efctv(tree, user, depth_oblivious);
}

void classic_fs_factors(AssocTree& tree, std::uint32_t dampening) {
  // `priority_p_calc_fs_factor` on the job's association, or its fs-parent for Fairshare=parent.
  const double damp = static_cast<double>(std::max<std::uint32_t>(dampening, 1));
  for (AssocIndex i : tree.top_down()) {
    AssocNode& n = tree.node(i);
    const AssocNode& f = (n.shares_parent && n.fs_parent != kNoAssoc) ? tree.node(n.fs_parent) : n;
    n.fs_factor = f.shares_norm <= 0.0 ? 0.0 : std::pow(2.0, -((f.usage_efctv / f.shares_norm) / damp));
  }
}

void compute_classic_fair_share(AssocTree& tree, std::uint32_t dampening, bool depth_oblivious) {
  classic_accounts(tree, depth_oblivious);
  for (AssocIndex i : tree.top_down())
    if (tree.node(i).is_user) classic_usage_norm(tree, i);
  for (AssocIndex i : tree.top_down())
    if (tree.node(i).is_user) classic_usage_efctv(tree, i, depth_oblivious);
  classic_fs_factors(tree, dampening);
}

}  // namespace slurmtwin::policies
