#pragma once
// The surrogate and hybrid engines of a sweep (`sweep run --engine surrogate|hybrid`, `compare`): the
// trained surrogate scores points (surrogate_engine.hpp), the response surface over them chooses which
// the exact simulator re-evaluates (sweep_hybrid.hpp). The runner (experiments/sweep/sweep.hpp) sees
// only its PointScorer side.
#include <memory>
#include <string>
#include <vector>

#include "experiments/learn/surrogate_engine.hpp"
#include "experiments/learn/sweep_hybrid.hpp"
#include "experiments/sweep/sweep.hpp"

namespace slurmtwin::experiments {

class SurrogateScorer final : public PointScorer {
 public:
  /// `surrogate.model` empty: no model (a hybrid sweep screens with the response surface alone).
  SurrogateScorer(SurrogateEngineOptions surrogate, HybridOptions hybrid);
  ~SurrogateScorer() override;

  bool has_model() const override { return !surrogate_.model.empty(); }
  /// Loads the checkpoint and sets the engine up for the plan (libtorch threads: the options', else
  /// `threads`); returns the options' point batch.
  std::size_t prepare(const SweepSpec& spec, const SweepPlan& plan, unsigned threads,
                      std::vector<std::string>& warnings) override;
  std::vector<SurrogatePrediction> predict(const std::vector<std::size_t>& tasks) const override;
  /// choose_for_exact with the options' budget, on the quadratic_features of each point's coordinates.
  std::vector<std::size_t> choose_exact(const SweepSpec& spec, const SweepPlan& plan,
                                        const std::vector<std::size_t>& tasks,
                                        const std::vector<PointPrediction>& predictions,
                                        const ExactEvaluator& evaluate) const override;

 private:
  SurrogateEngineOptions surrogate_;
  HybridOptions hybrid_;
  std::unique_ptr<SurrogateEngine> engine_;  // after prepare, with a model
};

}  // namespace slurmtwin::experiments
