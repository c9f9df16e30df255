#pragma once
// The surrogate's evaluation protocol (`slurmtwin surrogate eval`, docs/surrogate.md): a model scored on
// one part of its dataset's split, beside the predictors any surrogate must beat (the ridge baseline,
// the reference replay's waits copied to every setting, the simulator's own noise floor), and what a
// prediction costs per setting.
#include <cstdint>
#include <string>
#include <vector>

#include "experiments/learn/sweep_hybrid.hpp"
#include "surrogate/dataset.hpp"
#include "surrogate/evaluation.hpp"
#include "surrogate/model.hpp"
#include "surrogate/split.hpp"

namespace slurmtwin::experiments {

/// A per-group objective, answered from the same per-job predictions: one statistic of the waits of
/// one group's target jobs, as a sweep's `wait_mean@qos:X`, `wait_p90@qos:X` or `wait_mean@account:X`
/// would ask. Its rows are each window's statistic per setting; pooled, summed over the part's windows
/// (as the overall ranking pools each window's mean wait).
struct EvalGroup {
  enum class Kind { kQos, kAccount };
  enum class Stat { kMean, kP90 };
  Kind kind = Kind::kQos;
  Stat stat = Stat::kMean;
  /// The jobs' token: the schema's QOS category (1..n; an unseen QOS, 0, is no group), or the account's
  /// hash bucket (surrogate::hash_bucket; accounts that share a bucket are one group, as the model sees
  /// them).
  std::int64_t category = 0;
  std::size_t jobs = 0;  // the part's target jobs in it that started, under the part's first setting
};

/// One predictor's figures for one EvalGroup.
struct GroupResult {
  surrogate::RankingErrors ranking;
  surrogate::Bootstrap ci;  // EvalOptions::bootstrap, of the group's rows alone (paired across lines)
  /// Per setting of the part: the group's statistic summed over the part's windows (s).
  std::vector<double> pooled_exact, pooled_predicted;
};

/// One predictor's figures over a part.
struct EvalResult {
  surrogate::JobErrors jobs;
  surrogate::RankingErrors ranking;
  surrogate::Bootstrap ci;  // EvalOptions::bootstrap (resamples 0: not asked for)
  bool point = false;       // a point prediction (no interval): no coverage to report
  /// Per setting of the part (its order): the exact and predicted mean wait summed over its windows (s).
  std::vector<double> pooled_exact, pooled_predicted;
  /// Per group of SurrogateEval::groups (its order): the settings ranked by that group's statistic.
  std::vector<GroupResult> groups;
};

/// The windows and settings a part names: "test", "val" or "train" (windows and settings of that part)
/// or WINDOWS:SETTINGS of those (e.g. "test:train": held-out windows under the training settings), or
/// "all" (every window and setting of the dataset, ascending: a dataset of another trace).
/// std::invalid_argument for another name, or when the split has no windows in that part.
struct EvalPart {
  std::vector<std::uint32_t> windows, settings;
};
EvalPart eval_part(const surrogate::SurrogateDataset& d, const surrogate::Split& split,
                   const std::string& part);

struct EvalOptions {
  std::string part = "test";  // as eval_part reads it
  std::size_t bootstrap = 0;  // resamples of the part's windows for 90% intervals (0 = off)
  bool ridge = true;  // the ridge baseline: the model's own (Surrogate::training_ridge), else fitted on the
                      // split's train part (val for lambda)
  const surrogate::Surrogate* against = nullptr;  // another model for the same data, scored beside
  /// Another dataset of the same trace, windows and settings made with an immaterial difference: its
  /// exact waits scored as predictions (the floor set by the simulator's own sensitivity).
  const surrogate::SurrogateDataset* noise_floor = nullptr;
  std::string noise_floor_name;  // for the error when it does not match
};

struct EvalLine {
  std::string name;  // as printed: "transformer", "against", "ridge", "median", "reference", "noise floor"
  std::string key;   // as JSON names it: the same, "noise_floor" for "noise floor"
  EvalResult result;
};

/// The groups of the part worth a ranking of their own: per QOS of the schema with jobs in the part,
/// its mean and its p90 wait (by category); per account bucket holding at least kMinAccountShare of the
/// part's jobs, its mean wait (most jobs first; `small_accounts`, when given, counts those left out:
/// a handful of jobs ranks nothing). Every predictor is scored on the same groups.
inline constexpr double kMinAccountShare = 0.01;
std::vector<EvalGroup> eval_groups(const surrogate::SurrogateDataset& d, const EvalPart& part,
                                   std::size_t* small_accounts = nullptr);

struct SurrogateEval {
  EvalPart part;
  std::vector<EvalGroup> groups;
  std::size_t small_accounts = 0;  // accounts with jobs in the part too few to be a group
  /// The model first, then each predictor asked for or available (the reference: when the dataset
  /// has the ref_log_wait column).
  std::vector<EvalLine> lines;
  std::size_t ridge_columns = 0;
  double ridge_lambda = 0;
  bool ridge_from_model = false;  // the ridge line is the model's own, not one fitted on this dataset
  /// What a prediction costs, as a sweep pays it (ms): per setting as evaluated (the part's settings
  /// in one call), the setting-independent encoder once per window, then each further setting in
  /// batches of kSweepBatch, and per setting of such a batch with its encoder.
  double per_setting_ms = 0, encoder_ms = 0, marginal_ms = 0, batched_ms = 0;
  static constexpr std::size_t kSweepBatch = 64;
};

/// Scores `model` (checked compatible with `data`) on the part of `split` that `options` names.
SurrogateEval evaluate_surrogate(const surrogate::Surrogate& model, const surrogate::SurrogateDataset& data,
                                 const surrogate::Split& split, const EvalOptions& options);

/// The decision a sweep asks of the part: the setting of least mean wait (summed over the part's windows).
/// Each of the part's settings stands for one exact replay whose values are in the dataset, so the hybrid's
/// choices can be replayed offline (hybrid_regret_over_orders) for every budget and design order:
/// - surface: the response surface alone (`--engine hybrid` without a model), calibrated first;
/// - with_model: the surface with the transformer's pooled prediction as one more regressor;
/// - model_top: the transformer's best `budget` predictions verified (calibrate 0; order-independent);
/// - model_first: half the budget on those first, then the defaults (`--model-first 0.5`).
/// Budgets the hybrid can run without a model (>= 5: two calibration points) and below the part's
/// settings count.
/// - groups: the same choice for each group's own statistic (SurrogateEval::groups' order), by the
///   surface alone (a fit of its own per group, from the same replays) and by the transformer's top.
struct DecisionStudy {
  std::size_t settings = 0, orders = 0;
  double best_exact = 0;  // s, the best setting's pooled mean wait
  std::vector<HybridRegret> surface, with_model, model_top, model_first;
  struct Group {
    double best_exact = 0;  // s, the best setting's pooled statistic
    std::vector<HybridRegret> surface, model_top;
  };
  std::vector<Group> groups;
};
DecisionStudy decision_study(const surrogate::SurrogateDataset& data, const SurrogateEval& eval,
                             std::size_t orders, std::uint64_t seed);

}  // namespace slurmtwin::experiments
