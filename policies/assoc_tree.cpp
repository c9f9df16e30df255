#include "policies/assoc_tree.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace slurmtwin::policies {
namespace {

constexpr std::string_view kRootAccount = "root";

/// Σ of the children's shares where a Fairshare=parent child contributes its own children's sum
/// (assoc_mgr `_get_children_level_shares`; because of hoisting that inner sum is normally 0).
std::uint32_t children_level_shares(const std::vector<AssocNode>& nodes,
                                    const std::vector<std::vector<AssocIndex>>& children, AssocIndex i) {
  std::uint32_t sum = 0;
  for (AssocIndex c : children[static_cast<std::size_t>(i)]) {
    const auto& child = nodes[static_cast<std::size_t>(c)];
    sum += child.shares_parent ? children_level_shares(nodes, children, c) : child.shares_raw;
  }
  return sum;
}

void collect_top_down(const std::vector<std::vector<AssocIndex>>& children, AssocIndex i,
                      std::vector<AssocIndex>& out) {
  out.push_back(i);
  for (AssocIndex c : children[static_cast<std::size_t>(i)]) collect_top_down(children, c, out);
}

}  // namespace

AssocTree::AssocTree(const Site& site) {
  // Root first, then accounts, then user associations: the insertion (tie) order.
  AssocNode root_node;
  root_node.account = std::string(kRootAccount);
  std::uint32_t root_priority = 0;
  if (const Account* a = site.find_account(kRootAccount)) {
    root_node.shares_raw = a->shares.value;
    root_priority = a->priority;
  }
  root_node.priority = root_priority;
  nodes_.push_back(root_node);
  std::vector<std::string> parent_names{""};
  for (const auto& a : site.accounts) {
    if (a.name == kRootAccount) continue;
    AssocNode n;
    n.account = a.name;
    n.shares_raw = a.shares.value;
    n.shares_parent = a.shares.parent;
    n.priority = a.priority;
    nodes_.push_back(std::move(n));
    parent_names.push_back(a.parent.empty() ? std::string(kRootAccount) : a.parent);
  }
  const std::size_t account_count = nodes_.size();
  for (std::size_t i = 1; i < account_count; ++i) {
    const AssocIndex p = find_account(parent_names[i]);
    if (p == kNoAssoc) {
      throw std::invalid_argument(
          fmt::format("account '{}' has unknown parent '{}'", nodes_[i].account, parent_names[i]));
    }
    nodes_[i].parent = p;
  }
  for (const auto& ua : site.associations) {
    AssocNode n;
    n.account = ua.account;
    n.user = ua.user;
    n.partition = ua.partition;
    n.is_user = true;
    n.shares_raw = ua.shares.value;
    n.shares_parent = ua.shares.parent;
    n.priority = ua.priority;
    n.parent = find_account(ua.account);
    if (n.parent == kNoAssoc) {
      throw std::invalid_argument(
          fmt::format("user association '{}' names unknown account '{}'", ua.user, ua.account));
    }
    nodes_.push_back(std::move(n));
    ++user_count_;
  }

  // Direct-parent depth check (cycles), priority inheritance (slurmdbd fills an unset Priority from
  // the parent), and the fair-share parent: the first ancestor whose shares are not "parent".
  const auto n_nodes = static_cast<AssocIndex>(nodes_.size());
  for (AssocIndex i = 1; i < n_nodes; ++i) {
    AssocIndex a = nodes_[static_cast<std::size_t>(i)].parent;
    for (AssocIndex steps = 0; a != kNoAssoc; a = nodes_[static_cast<std::size_t>(a)].parent) {
      if (++steps > n_nodes) {
        throw std::invalid_argument(
            fmt::format("account parent cycle through '{}'", nodes_[static_cast<std::size_t>(i)].account));
      }
    }
    AssocIndex fs = nodes_[static_cast<std::size_t>(i)].parent;
    while (fs != root() && nodes_[static_cast<std::size_t>(fs)].shares_parent) {
      fs = nodes_[static_cast<std::size_t>(fs)].parent;
    }
    nodes_[static_cast<std::size_t>(i)].fs_parent = fs;
  }
  // Inherit priority top-down along direct parents (parents may be listed after children).
  std::vector<bool> done(nodes_.size(), false);
  done[0] = true;
  auto resolve = [&](auto&& self, AssocIndex i) -> std::uint32_t {
    auto& n = nodes_[static_cast<std::size_t>(i)];
    if (!done[static_cast<std::size_t>(i)]) {
      if (n.priority == 0) n.priority = self(self, n.parent);
      done[static_cast<std::size_t>(i)] = true;
    }
    return n.priority;
  };
  for (AssocIndex i = 0; i < n_nodes; ++i) {
    max_priority_ = std::max(max_priority_, resolve(resolve, i));
  }

  // Children lists live on the fs-parent (assoc_mgr `_set_assoc_parent_and_user`).
  children_.assign(nodes_.size(), {});
  for (AssocIndex i = 1; i < n_nodes; ++i) {
    children_[static_cast<std::size_t>(nodes_[static_cast<std::size_t>(i)].fs_parent)].push_back(i);
  }
  for (AssocIndex i = 0; i < n_nodes; ++i) {
    const auto& kids = children_[static_cast<std::size_t>(i)];
    if (kids.empty()) continue;
    const std::uint32_t level = children_level_shares(nodes_, children_, i);
    for (AssocIndex c : kids) nodes_[static_cast<std::size_t>(c)].level_shares = level;
  }
  collect_top_down(children_, root(), top_down_);
}

AssocIndex AssocTree::find_user_assoc(std::string_view user, std::string_view account,
                                      std::string_view partition) const {
  AssocIndex any_partition = kNoAssoc;
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const auto& n = nodes_[i];
    if (!n.is_user || n.user != user || n.account != account) continue;
    if (n.partition == partition) return static_cast<AssocIndex>(i);
    if (n.partition.empty() && any_partition == kNoAssoc) any_partition = static_cast<AssocIndex>(i);
  }
  return any_partition;
}

AssocIndex AssocTree::find_account(std::string_view name) const {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (!nodes_[i].is_user && nodes_[i].account == name) return static_cast<AssocIndex>(i);
  }
  return kNoAssoc;
}

AssocIndex AssocTree::user_assoc(std::string_view user, std::string_view account,
                                 std::string_view partition) const {
  const AssocIndex i = find_user_assoc(user, account, partition);
  if (i == kNoAssoc) {
    throw std::invalid_argument(
        fmt::format("no association for user '{}' account '{}' partition '{}'", user, account, partition));
  }
  return i;
}

AssocIndex AssocTree::account(std::string_view name) const {
  const AssocIndex i = find_account(name);
  if (i == kNoAssoc) throw std::invalid_argument(fmt::format("unknown account '{}'", name));
  return i;
}

void AssocTree::reset_usage() {
  for (auto& n : nodes_) {
    n.usage_raw = 0.0;
    n.grp_used_wall = 0.0;
  }
}

void AssocTree::add_usage(AssocIndex assoc, double usage, double wall) {
  for (AssocIndex a = assoc; a != kNoAssoc; a = nodes_.at(static_cast<std::size_t>(a)).parent) {
    auto& n = nodes_[static_cast<std::size_t>(a)];
    n.usage_raw += usage;
    n.grp_used_wall += wall;
  }
}

}  // namespace slurmtwin::policies
