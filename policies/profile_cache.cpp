#include "policies/profile_cache.hpp"

#include <algorithm>
#include <cassert>

namespace slurmtwin::policies {

bool same_shape(const sim::NodeRequest& a, const sim::NodeRequest& b) {
  return a.shape_tie() == b.shape_tie();
}

void ProfileCache::start(const sim::ClusterState& cluster) {
  const auto nodes = cluster.nodes().size();
  if (&cluster != cluster_ || gen_.size() != nodes) {
    cluster_ = &cluster;
    known_.assign(nodes, kUnknown);
    gen_.assign(nodes, 1);
    shapes_.clear();
    releases.clear();
  }
  ++serial_;
  for (std::uint32_t n = 0; n < nodes; ++n) {
    const auto changes = cluster.node(n).changes;
    if (changes != known_[n]) {
      ++gen_[n];
      known_[n] = changes;
    }
  }
}

void ProfileCache::settle(const sim::ClusterState& cluster) {
  assert(&cluster == cluster_);
  for (std::uint32_t n = 0; n < known_.size(); ++n)
    if (known_[n] != kUnknown) known_[n] = cluster.node(n).changes;
}

void ProfileCache::invalidate(std::uint32_t node) {
  known_[node] = kUnknown;
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
