#include "experiments/learn/surrogate_sweep.hpp"

#include <stdexcept>
#include <utility>

namespace slurmtwin::experiments {

SurrogateScorer::SurrogateScorer(SurrogateEngineOptions surrogate, HybridOptions hybrid)
    : surrogate_(std::move(surrogate)), hybrid_(hybrid) {}

SurrogateScorer::~SurrogateScorer() = default;

std::size_t SurrogateScorer::prepare(const SweepSpec& spec, const SweepPlan& plan, unsigned threads,
                                     std::vector<std::string>& warnings) {
  engine_.reset();
  if (!has_model()) return surrogate_.point_batch;
  SurrogateEngineOptions so = surrogate_;
  if (so.threads == 0) so.threads = static_cast<int>(threads);
  engine_ = std::make_unique<SurrogateEngine>(spec, plan, so, warnings);
  return so.point_batch;
}

std::vector<SurrogatePrediction> SurrogateScorer::predict(const std::vector<std::size_t>& tasks) const {
  if (!engine_) throw std::logic_error("SurrogateScorer::predict before prepare, or without a model");
  return engine_->predict(tasks);
}

std::vector<std::size_t> SurrogateScorer::choose_exact(const SweepSpec& spec, const SweepPlan& plan,
                                                       const std::vector<std::size_t>& tasks,
                                                       const std::vector<PointPrediction>& predictions,
                                                       const ExactEvaluator& evaluate) const {
  std::vector<std::vector<double>> features;
  for (auto i : tasks) features.push_back(quadratic_features(point_coordinates(spec, plan.tasks[i].point)));
  return choose_for_exact(predictions, features, spec.objectives, spec.constraints, hybrid_, evaluate);
}

}  // namespace slurmtwin::experiments
