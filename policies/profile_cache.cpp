#include "policies/profile_cache.hpp"

#include <algorithm>

namespace slurmtwin::policies {

bool same_shape(const sim::NodeRequest& a, const sim::NodeRequest& b) {
  return a.total_cpus == b.total_cpus && a.cpus_per_task == b.cpus_per_task &&
         a.cpus_per_node == b.cpus_per_node && a.mem_per_node_mb == b.mem_per_node_mb &&
         a.mem_per_cpu_mb == b.mem_per_cpu_mb && a.exclusive == b.exclusive && a.features == b.features &&
         a.gres_per_node == b.gres_per_node;
}

std::vector<std::vector<std::uint64_t>>& ProfileCache::next_keys(const sim::ClusterState& cluster) {
  const auto nodes = cluster.nodes().size();
  if (&cluster != cluster_ || keys_.size() != nodes) {
    cluster_ = &cluster;
    keys_.assign(nodes, {});  // an empty key matches no filled one
    next_.assign(nodes, {});
    gen_.assign(nodes, 1);
    shapes_.clear();
  }
  ++serial_;
  for (auto& k : next_) k.clear();
  return next_;
}

void ProfileCache::commit_keys() {
  for (std::size_t n = 0; n < keys_.size(); ++n)
    if (next_[n] != keys_[n]) {
      keys_[n].swap(next_[n]);
      ++gen_[n];
    }
}

void ProfileCache::invalidate(std::uint32_t node) {
  keys_[node].clear();
  ++gen_[node];
}

ProfileCache::Shape& ProfileCache::shape(const sim::NodeRequest& request) {
  for (auto& s : shapes_)
    if (same_shape(s->request, request)) {
      s->used = serial_;
      return *s;
    }
  std::unique_ptr<Shape>* slot = nullptr;
  if (shapes_.size() >= kMaxShapes) {
    auto oldest = std::min_element(shapes_.begin(), shapes_.end(),
                                   [](const auto& a, const auto& b) { return a->used < b->used; });
    if ((*oldest)->used != serial_) slot = &*oldest;  // never one the current planner holds
  }
  if (slot == nullptr) slot = &shapes_.emplace_back();
  *slot = std::make_unique<Shape>();
  auto& s = **slot;
  s.request = request;
  s.now_gen.assign(keys_.size(), 0);
  s.after_gen.assign(keys_.size(), 0);
  s.values.resize(keys_.size());
  s.used = serial_;
  return s;
}

}  // namespace slurmtwin::policies
