#include "policies/profile_cache.hpp"

#include <algorithm>
#include <cassert>

namespace slurmtwin::policies {

bool same_shape(const sim::NodeRequest& a, const sim::NodeRequest& b) {
  return a.total_cpus == b.total_cpus && a.cpus_per_task == b.cpus_per_task &&
         a.cpus_per_node == b.cpus_per_node && a.mem_per_node_mb == b.mem_per_node_mb &&
         a.mem_per_cpu_mb == b.mem_per_cpu_mb && a.exclusive == b.exclusive && a.features == b.features &&
         a.gres_per_node == b.gres_per_node;
}

void ProfileCache::start_keys(const sim::ClusterState& cluster, const std::vector<std::uint32_t>& sizes) {
  const auto nodes = cluster.nodes().size();
  assert(sizes.size() == nodes);
  if (&cluster != cluster_ || gen_.size() != nodes) {
    cluster_ = &cluster;
    keys_.clear();
    begin_.assign(nodes + 1, 0);
    invalid_.assign(nodes, 1);  // no key yet
    gen_.assign(nodes, 1);
    shapes_.clear();
  }
  ++serial_;
  next_begin_.resize(nodes + 1);
  next_begin_[0] = 0;
  for (std::size_t n = 0; n < nodes; ++n) next_begin_[n + 1] = next_begin_[n] + sizes[n];
  next_.resize(next_begin_[nodes]);
}

void ProfileCache::commit_keys() {
  for (std::size_t n = 0; n < gen_.size(); ++n) {
    const auto size = next_begin_[n + 1] - next_begin_[n];
    if (invalid_[n] != 0 || size != begin_[n + 1] - begin_[n] ||
        !std::equal(next_.begin() + static_cast<std::ptrdiff_t>(next_begin_[n]),
                    next_.begin() + static_cast<std::ptrdiff_t>(next_begin_[n + 1]),
                    keys_.begin() + static_cast<std::ptrdiff_t>(begin_[n])))
      ++gen_[n];
    invalid_[n] = 0;
  }
  keys_.swap(next_);
  begin_.swap(next_begin_);
}

void ProfileCache::invalidate(std::uint32_t node) {
  invalid_[node] = 1;
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
  s.now_gen.assign(gen_.size(), 0);
  s.after_gen.assign(gen_.size(), 0);
  s.values.resize(gen_.size());
  s.used = serial_;
  return s;
}

}  // namespace slurmtwin::policies
