#pragma once
// Fair-share factors from decayed usage: Fair Tree (the default) and Classic / Depth-oblivious.
// Spec: slurm-scheduling-spec.md §3.2-3.4 (Fair Tree) and §2.7 (Classic).
#include <cstdint>

#include "policies/assoc_tree.hpp"

namespace slurmtwin::policies {

/// How Fair Tree treats sibling accounts with equal level fairshare (spec §3.4).
enum class TieMode : std::uint8_t {
  kCode,        // what fair_tree.c does: no merge; the later tied account starts its subtree tied
  kDocumented,  // fair_tree.shtml rule 3: children of tied sibling accounts are merged, then ranked
};

/// Fair Tree: sets shares_norm (S = shares_raw / level_shares, a Fairshare=parent association takes
/// its fs-parent's S), usage_efctv (U = usage_raw / fs-parent usage_raw, 0 when that is 0), level_fs
/// (LF = S/U; +inf for U = 0; 0 for S = 0; +inf for Fairshare=parent users, NO_VAL for such
/// accounts) on every association, then ranks users depth-first by LF descending (users before
/// accounts at equal LF) and sets each user's fs_factor = rank / N in (0, 1]. Equal-LF siblings of
/// the same kind keep insertion order (Slurm's qsort leaves that order unspecified).
void compute_fair_tree(AssocTree& tree, TieMode mode = TieMode::kCode);

/// Classic fair share (PriorityFlags=NO_FAIR_TREE) or its depth-oblivious variant: sets shares_norm
/// (Π shares_raw/level_shares up the direct-parent chain), usage_norm (usage_raw / root usage_raw,
/// ≤ 1), usage_efctv (top-down, §2.7) and fs_factor = 2^(-(usage_efctv/shares_norm)/dampening)
/// (0 when shares_norm is 0); a Fairshare=parent association uses its fs-parent's values.
void compute_classic_fair_share(AssocTree& tree, std::uint32_t dampening, bool depth_oblivious);
/// compute_classic_fair_share in the steps slurmctld's decay thread takes (real Slurm 22.05, scenario
/// 39). At the start of a run, before it decays and charges anything: every association's shares_norm
/// and every account's usage_norm and usage_efctv (`_set_children_usage_efctv`).
void classic_accounts(AssocTree& tree, bool depth_oblivious);
/// A user's usage_norm and usage_efctv from the usage now, against its fs-parent's usage_efctv
/// (slurmctld computes them when a job of the user first needs them after the start of a run).
void classic_user(AssocTree& tree, AssocIndex user, bool depth_oblivious);
/// Every association's fs_factor from its (or its fs-parent's, for Fairshare=parent) usage_efctv.
void classic_fs_factors(AssocTree& tree, std::uint32_t dampening);

}  // namespace slurmtwin::policies
