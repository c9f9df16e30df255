#include "sim/cluster_state.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <stdexcept>

#include "traces/text.hpp"

namespace slurmtwin::sim {

ClusterState::ClusterState(const Site& site, bool core_granularity) : core_granularity_(core_granularity) {
  constraint_text_.emplace_back();
  constraint_masks_.emplace_back();  // index 0: no constraint
  for (const auto& n : site.nodes) {
    NodeState s;
    s.cpus = n.cpus;
    s.threads_per_core = std::max<std::uint32_t>(1, n.threads_per_core);
    s.memory_mb = std::max<std::int64_t>(1, n.real_memory_mb - n.mem_spec_limit_mb);
    s.free_cpus = s.cpus;
    s.free_mem_mb = s.memory_mb;
    nodes_.push_back(std::move(s));
    weights_.push_back(n.weight);
    features_.push_back(n.features);
    total_cpus_ += n.cpus;
    total_mem_mb_ += nodes_.back().memory_mb;
  }
  weight_levels_ = weights_;
  std::sort(weight_levels_.begin(), weight_levels_.end());
  weight_levels_.erase(std::unique(weight_levels_.begin(), weight_levels_.end()), weight_levels_.end());
  node_words_ = (nodes_.size() + 63) / 64;
  free_index_.assign(kFreeClasses, std::vector<std::uint64_t>(node_words_, 0));
  for (std::uint32_t i = 0; i < nodes_.size(); ++i) index_free(i);
  switch_tree_ = SwitchTree::of(site);
  cons_res_ = site.scheduler.select_type == "select/cons_res";
  for (std::size_t i = 0; i < site.nodes.size(); ++i)
    for (const auto& g : site.nodes[i].gres) {
      const auto k = gres_kind(g.name);
      nodes_[i].gres[k] += g.count;
      nodes_[i].free_gres[k] += g.count;
      total_gres_[k] += g.count;
    }
}

bool ClusterState::in_free_class(std::uint32_t i, std::uint32_t k) const {
  const auto& n = nodes_[i];
  const std::uint32_t free = n.outages == 0 && !n.exclusive ? n.free_cpus : 0;
  return free >= (std::uint32_t{1} << k);
}

void ClusterState::index_free(std::uint32_t i) {
  const auto bit = std::uint64_t{1} << (i % 64);
  for (std::uint32_t k = 0; k < kFreeClasses; ++k) {
    auto& word = free_index_[k][i / 64];
    word = in_free_class(i, k) ? word | bit : word & ~bit;
  }
}

std::uint32_t ClusterState::gres_kind(const std::string& name) {
  for (std::uint32_t k = 0; k < gres_names_.size(); ++k)
    if (gres_names_[k] == name) return k;
  gres_names_.push_back(name);
  for (auto& n : nodes_) {
    n.gres.push_back(0);
    n.free_gres.push_back(0);
  }
  total_gres_.push_back(0);
  used_gres_.push_back(0);
  return static_cast<std::uint32_t>(gres_names_.size() - 1);
}

std::uint32_t ClusterState::find_gres_kind(const std::string& name) const {
  const auto it = std::find(gres_names_.begin(), gres_names_.end(), name);
  return static_cast<std::uint32_t>(it - gres_names_.begin());
}

std::uint32_t ClusterState::constraint(const std::string& expression) {
  if (text::trim(expression).empty()) return 0;
  for (std::uint32_t c = 1; c < constraint_text_.size(); ++c)
    if (constraint_text_[c] == expression) return c;
  // Slurm syntax subset: '&' or ',' = AND, '|' = OR (AND binds tighter); brackets and counts are
  // treated as plain AND/OR of the names inside.
  std::string cleaned;
  for (char ch : expression)
    if (ch != '[' && ch != ']' && ch != '(' && ch != ')') cleaned += ch;
  std::vector<bool> mask(nodes_.size(), false);
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    bool any = false;
    for (auto alt : text::split(cleaned, '|')) {
      bool all = true;
      for (auto part : text::split(alt, '&'))
        for (auto name : text::split(part, ',')) {
          name = text::trim(name);
          if (auto star = name.find('*'); star != std::string_view::npos) name = name.substr(0, star);
          if (name.empty()) continue;
          all = all && std::find(features_[i].begin(), features_[i].end(), name) != features_[i].end();
        }
      any = any || all;
    }
    mask[i] = any;
  }
  constraint_text_.push_back(expression);
  constraint_masks_.push_back(std::move(mask));
  return static_cast<std::uint32_t>(constraint_text_.size() - 1);
}

bool ClusterState::node_has_features(std::uint32_t node, std::uint32_t c) const {
  return c == 0 || constraint_masks_[c][node];
}

std::uint32_t ClusterState::round_cpus(std::uint32_t i, std::uint32_t cpus) const {
  if (!core_granularity_) return cpus;
  const auto t = nodes_[i].threads_per_core;
  return (cpus + t - 1) / t * t;
}

std::int64_t ClusterState::memory_needed(std::uint32_t i, const NodeRequest& r, std::uint32_t cpus) const {
  if (r.mem_per_cpu_mb > 0) return r.mem_per_cpu_mb * cpus;
  if (r.mem_per_node_mb < 0) return nodes_[i].memory_mb;  // no memory request: all of it
  return r.mem_per_node_mb;
}

void ClusterState::set_outage(std::uint32_t i, bool out) {
  auto& n = nodes_[i];
  assert(out || n.outages > 0);
  if (out) {
    if (n.outages++ == 0) ++out_of_service_;
  } else if (--n.outages == 0) {
    --out_of_service_;
  }
  ++n.changes;  // backfill's per-node values are stale
  index_free(i);
}

std::uint32_t ClusterState::usable_cpus(std::uint32_t i, const NodeRequest& r,
                                        std::uint32_t cpus_wanted) const {
  const auto& n = nodes_[i];
  return usable_cpus(i, r, cpus_wanted, NodeFree{n.free_cpus, n.jobs, n.free_mem_mb, n.exclusive},
                     n.free_gres.data());
}

std::uint32_t ClusterState::usable_cpus(std::uint32_t i, const NodeRequest& r, std::uint32_t cpus_wanted,
                                        const NodeFree& n, const std::int64_t* free_gres) const {
  if (n.exclusive || nodes_[i].outages > 0 || !node_has_features(i, r.features)) return 0;
  if (r.exclusive) {
    if (n.jobs > 0) return 0;
  }
  for (std::size_t k = 0; k < r.gres_per_node.size(); ++k)
    if (r.gres_per_node[k] > (k < gres_names_.size() ? free_gres[k] : 0)) return 0;
  if (r.gres_mem_floor_mb > n.free_mem_mb) return 0;
  // Whole tasks only: at most the free CPUs, in multiples of cpus_per_task.
  const std::uint32_t cpt = std::max<std::uint32_t>(1, r.cpus_per_task);
  const std::uint32_t node_cpus = nodes_[i].cpus;
  std::uint32_t cpus = r.exclusive ? node_cpus : std::min(cpus_wanted, n.free_cpus) / cpt * cpt;
  if (r.cpus_per_node > 0 && !r.exclusive) cpus = r.cpus_per_node <= n.free_cpus ? r.cpus_per_node : 0;
  // Memory per CPU bounds the CPUs before core rounding; the loop below settles the rounding.
  if (r.mem_per_cpu_mb > 0 && !r.exclusive && r.cpus_per_node == 0 && n.free_mem_mb >= 0)
    cpus = static_cast<std::uint32_t>(std::min<std::int64_t>(cpus, n.free_mem_mb / r.mem_per_cpu_mb)) / cpt *
           cpt;
  while (cpus > 0) {
    const auto alloc = r.exclusive ? node_cpus : round_cpus(i, cpus);
    const auto mem = memory_needed(i, r, alloc);
    if (alloc <= n.free_cpus && mem <= n.free_mem_mb) return cpus;
    if (r.mem_per_cpu_mb <= 0 || r.cpus_per_node > 0 || r.exclusive) return 0;  // memory does not shrink
    cpus = cpus > cpt ? cpus - cpt : 0;                                         // fewer CPUs need less memory
  }
  return 0;
}

void ClusterState::allocate(const NodeRequest& r, const std::vector<NodeAlloc>& alloc) {
  for (const auto& a : alloc) {
    auto& n = nodes_[a.node];
    n.free_cpus -= a.cpus;
    n.free_mem_mb -= a.mem_mb;
    for (std::size_t k = 0; k < r.gres_per_node.size(); ++k) {
      n.free_gres[k] -= r.gres_per_node[k];
      used_gres_[k] += r.gres_per_node[k];
    }
    ++n.jobs;
    ++n.changes;
    n.exclusive = r.exclusive;
    used_cpus_ += a.cpus;
    used_mem_mb_ += a.mem_mb;
    index_free(a.node);
  }
}

void ClusterState::release(const NodeRequest& r, const std::vector<NodeAlloc>& alloc) {
  for (const auto& a : alloc) {
    auto& n = nodes_[a.node];
    n.free_cpus += a.cpus;
    n.free_mem_mb += a.mem_mb;
    for (std::size_t k = 0; k < r.gres_per_node.size(); ++k) {
      n.free_gres[k] += r.gres_per_node[k];
      used_gres_[k] -= r.gres_per_node[k];
    }
    --n.jobs;
    ++n.changes;
    if (r.exclusive) n.exclusive = false;
    used_cpus_ -= a.cpus;
    used_mem_mb_ -= a.mem_mb;
    index_free(a.node);
  }
}

void ClusterState::suspend(const std::vector<NodeAlloc>& alloc) {
  for (const auto& a : alloc) {
    nodes_[a.node].free_cpus += a.cpus;
    ++nodes_[a.node].changes;
    used_cpus_ -= a.cpus;
    index_free(a.node);
  }
}

std::vector<std::uint32_t> ClusterState::hold(const std::vector<NodeAlloc>& alloc) {
  std::vector<std::uint32_t> held;
  for (const auto& a : alloc) {
    auto& n = nodes_[a.node];
    const auto h = std::min(n.free_cpus, a.cpus);
    n.free_cpus -= h;
    n.held_cpus += h;
    ++n.changes;
    index_free(a.node);
    held.push_back(h);
  }
  return held;
}

bool ClusterState::can_resume(const std::vector<NodeAlloc>& alloc,
                              const std::vector<std::uint32_t>& held) const {
  for (std::size_t k = 0; k < alloc.size(); ++k)
    if (nodes_[alloc[k].node].free_cpus + (k < held.size() ? held[k] : 0) < alloc[k].cpus) return false;
  return true;
}

void ClusterState::resume(const std::vector<NodeAlloc>& alloc, const std::vector<std::uint32_t>& held) {
  for (std::size_t k = 0; k < alloc.size(); ++k) {
    auto& n = nodes_[alloc[k].node];
    const auto own = k < held.size() ? held[k] : 0;
    n.held_cpus -= own;
    n.free_cpus -= alloc[k].cpus - own;
    ++n.changes;
    used_cpus_ += alloc[k].cpus;
    index_free(alloc[k].node);
  }
}

void ClusterState::check_invariants() const {
  std::uint64_t used = 0;
  std::int64_t used_mem = 0;
  std::vector<std::int64_t> used_gres(gres_names_.size(), 0);
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const auto& n = nodes_[i];
    used_mem += n.memory_mb - n.free_mem_mb;
    for (std::size_t k = 0; k < n.gres.size(); ++k) used_gres[k] += n.gres[k] - n.free_gres[k];
    if (n.free_cpus + n.held_cpus > n.cpus || n.free_mem_mb < 0 || n.free_mem_mb > n.memory_mb)
      throw std::logic_error(fmt::format("node {} over-allocated: free cpus {}/{} free mem {}/{}", i,
                                         n.free_cpus, n.cpus, n.free_mem_mb, n.memory_mb));
    for (std::size_t k = 0; k < n.gres.size(); ++k)
      if (n.free_gres[k] < 0 || n.free_gres[k] > n.gres[k])
        throw std::logic_error(fmt::format("node {} gres {} over-allocated", i, gres_names_[k]));
    if (n.jobs == 0 && (n.free_cpus != n.cpus || n.free_mem_mb != n.memory_mb))  // suspended jobs count
      throw std::logic_error(fmt::format("node {} has no jobs but resources in use", i));
    used += n.cpus - n.free_cpus - n.held_cpus;
    for (std::uint32_t k = 0; k < kFreeClasses; ++k)
      if ((((free_index_[k][i / 64] >> (i % 64)) & 1u) != 0) !=
          in_free_class(static_cast<std::uint32_t>(i), k))
        throw std::logic_error(fmt::format("node {}: free-CPU index out of step (class {})", i, k));
  }
  if (used != used_cpus_) throw std::logic_error("used CPU counter out of sync with nodes");
  if (used_mem != used_mem_mb_) throw std::logic_error("used memory counter out of sync with nodes");
  if (used_gres != used_gres_) throw std::logic_error("used GRES counters out of sync with nodes");
}

}  // namespace slurmtwin::sim
