#pragma once
// The transformer surrogate, behind a libtorch-free interface (only surrogate/*.cpp include
// <torch/torch.h>, so the CLI compiles without it).
//
// Architecture (docs/surrogate.md): each job of a window becomes one token (a projection of its
// numeric features plus learned embeddings of its hashed user and account, partition and QOS).
// A setting-independent encoder (self-attention over the window, in submit order) runs once per
// window; the setting (scheduler weights, encoded to [0, 1]) enters only afterwards, through FiLM
// (feature-wise scale and shift) of a few conditioned attention blocks and of the output head, so a
// sweep pays the encoder once per window and only the conditioned part per setting. The head gives
// the 10th, 50th and 90th percentiles of log1p(wait s) per job (non-crossing by construction).
//
// Priority-competition heads: a job waits when jobs that compete for the same resources outrank it,
// and which jobs outrank which is what the priority weights change. The encoder computes, once per
// window, a competition weight between every pair of jobs (a softmax over the window, like attention
// probabilities); per setting, each head scores every job's priority (a linear read-out of its
// conditioned token) and gives each job the competition weight of the jobs that outrank it,
// sum_j comp[i, j] * sigmoid(p_j - p_i). That is O(n²) multiply-adds per setting and head, far less
// than a conditioned attention block, which remains available (conditioned_layers).
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "surrogate/dataset.hpp"
#include "surrogate/ridge.hpp"
#include "surrogate/split.hpp"

namespace slurmtwin::surrogate {

/// Checkpoint format version. 7: the training targets' median (Surrogate::training_median) after the
/// ridge (older files are read without it). 6: the split the model was trained with
/// (Surrogate::trained_split) and the ridge baseline fitted with it (Surrogate::training_ridge) after the
/// wait bound (older files are read without them). 5: ModelConfig::ridge_base after the dropout (older files
/// are read without it). 4: the bound on predicted waits (the longest training wait) after the interval shift
/// (older files are read without a bound). 3: the conformal interval shift after the target statistics
/// (version 2 files are still read, with no shift). 2: the weights are plain float32 arrays (name, shape,
/// values) that Surrogate::decode reads itself. Version 1 stored a libtorch archive, a TorchScript module
/// whose code libtorch parses on load: corrupt archives crashed inside libtorch (docs/reliability.md), so
/// version 1 is no longer read.
inline constexpr std::uint32_t kCheckpointVersion = 7;
inline constexpr std::uint32_t kOldestCheckpointVersion = 2;

struct ModelConfig {
  std::int64_t d_model = 64;
  std::int64_t heads = 4;
  std::int64_t encoder_layers = 2;      // setting-independent blocks (run once per window)
  std::int64_t conditioned_layers = 0;  // FiLM-conditioned attention blocks (run per setting)
  // Priority-competition heads (see above; O(n²) per setting). Off by default: on the ub_medium week
  // they did not change the per-job or ranking figures and cost 6-10× the training and inference time
  // (docs/log/surrogate.md, "Where the time goes").
  std::int64_t competition_heads = 0;
  std::int64_t ffn = 128;  // hidden width of each block's feed-forward part
  double dropout = 0.1;
  // The median is the ridge baseline's prediction (surrogate/ridge.hpp, fitted on the split when the
  // model is made, then fixed) plus what the network adds, which starts at zero: an untrained model
  // predicts what the ridge does, and training (which keeps the initial weights unless a step validates
  // better) learns only what the ridge misses. Replaces the reference skip: the ridge weighs the
  // reference wait among its features.
  bool ridge_base = false;
  bool operator==(const ModelConfig&) const = default;
};

enum class Loss { kPinball, kMse, kMaeMse };  // the median's loss (the 10/90% heads always use pinball)
Loss parse_loss(const std::string& name);
const char* to_string(Loss loss);

struct TrainOptions {
  Loss loss = Loss::kPinball;
  std::int64_t steps = 1500;  // optimiser steps (one window × `settings_per_step` settings each)
  std::int64_t settings_per_step = 8;
  double lr = 2e-3;  // peak learning rate (AdamW)
  double weight_decay = 0.01;
  std::int64_t warmup = 100;      // linear warm-up steps, then cosine decay to lr / 20
  std::int64_t eval_every = 100;  // validation every this many steps
  std::int64_t patience = 5;      // stop after this many evaluations without improvement (with held-out
                                  // validation windows; without, every step runs)
  std::uint64_t seed = 1;
  int threads = 0;              // CPU threads (0 = all cores)
  std::string device = "auto";  // auto | cpu | cuda
  /// After training, the 10/90% interval is widened (or narrowed) by one shift in log1p(wait s) so that
  /// it holds this share of the validation targets (conformalized quantile regression); 0: no shift.
  double conformal_coverage = 0.8;
  /// Weight of a second loss on how each job's median moves between the step's settings (its values
  /// less their mean over the settings): the settings hold a few % of the variance of log wait, which the
  /// per-job loss can ignore, and ranking settings needs exactly those moves. 0 = off.
  double within_weight = 0;
  /// Decay of an exponential moving average of the weights (e.g. 0.999), validated and kept instead of
  /// the optimiser's own weights; 0 = off. At step t the decay is min(ema, (1 + t) / (10 + t)), so over a
  /// few thousand steps it is the warm-up's (an average over about the last t / 9 steps) for any ema
  /// above 0.997.
  double ema = 0;
  /// Checked once per step (e.g. a SIGINT flag): when it returns true, training stops before the
  /// next step and TrainReport::stopped is set; the model then holds the best weights so far.
  std::function<bool()> stop;
};

/// Per-job predicted quantiles of log1p(wait s): [setting][job][3] = 10%, 50%, 90%.
using Quantiles = std::vector<std::vector<std::array<float, 3>>>;

struct TrainReport {
  std::int64_t steps = 0;
  std::int64_t best_step = 0;  // the step whose weights were kept; 0: no step validated better than the start
  double best_val_loss = 0;
  double seconds = 0;
  std::string device;
  std::vector<std::string> log;  // one line per evaluation
  bool stopped = false;          // TrainOptions::stop ended training early
  /// Validation scored held-out windows; false without any (--split all, a dataset of fewer than 3
  /// windows): it scored the training part, every step ran and the last weights were kept.
  bool held_out = true;
  /// Conformal calibration on the validation targets (TrainOptions::conformal_coverage).
  std::size_t calibration_targets = 0;
  double raw_coverage = 0;    // share inside the network's own 10/90% interval
  double interval_shift = 0;  // log1p(wait s) taken from the 10% and added to the 90% quantile
};

/// How a model's training dataset was split (`surrogate train --split --split-seed`): an evaluation on
/// the same trace must hold out the same windows, or it scores windows the model trained on.
struct SplitRecord {
  SplitMode mode = SplitMode::kInterleaved;
  std::uint64_t seed = 0;
  bool operator==(const SplitRecord&) const = default;
};
/// A window's setting-independent part: its normalised inputs and the encoder's output, made by
/// Surrogate::encode, so that a sweep pays the encoder once per window however many batches of
/// settings it predicts there. Only the model that made it may predict from it.
class EncodedWindow {
 public:
  ~EncodedWindow();
  EncodedWindow(EncodedWindow&&) noexcept;
  EncodedWindow& operator=(EncodedWindow&&) noexcept;
  /// Bytes of its tensors (a cache's budget counts these).
  std::size_t bytes() const;

 private:
  friend class Surrogate;
  struct Data;
  explicit EncodedWindow(std::unique_ptr<Data> data);
  std::unique_ptr<Data> data_;
};

class Surrogate {
 public:
  /// A fresh model for `d`'s schema and axes, normalised with statistics of the split's training part:
  /// features over its training windows, waits over its training windows × training settings.
  Surrogate(const SurrogateDataset& d, const Split& split, const ModelConfig& config, std::uint64_t seed);
  ~Surrogate();
  Surrogate(Surrogate&&) noexcept;
  Surrogate& operator=(Surrogate&&) noexcept;
  /// Recomputes the normalisation statistics from the split's training part of `d` (as a fresh model
  /// does), keeping the weights: for fine-tuning on another site or trace. A ridge base is refitted.
  void renormalise(const SurrogateDataset& d, const Split& split);

  /// Loads a checkpoint; throws InputError (naming the file) when it is corrupt or of another version.
  static Surrogate load(const std::string& path);
  /// The same from the file's bytes (`file` names it in errors); what load() and the fuzz target call.
  static Surrogate decode(const std::string& bytes, const std::string& file);
  void save(const std::string& path) const;

  /// Trains on `split` (train windows × train settings), early-stopping on validation; keeps the best
  /// weights. `progress` receives one line per evaluation.
  TrainReport train(const SurrogateDataset& d, const Split& split, const TrainOptions& options,
                    const std::function<void(const std::string&)>& progress = {});

  /// Quantiles for each of `settings` (encoded, axes().size() values each) on one window, the
  /// interval widened by interval_shift(); NaN for the window's context tokens, which are not predicted.
  /// The setting-independent encoder runs once for all settings.
  Quantiles predict(const WindowTokens& window, const std::vector<std::vector<float>>& settings) const;
  /// The same from a window encoded before: the same values, without running the encoder again.
  Quantiles predict(const EncodedWindow& window, const std::vector<std::vector<float>>& settings) const;
  EncodedWindow encode(const WindowTokens& window) const;

  /// Throws InputError when `d` was built with another feature schema or other axes than the model.
  void check_compatible(const SurrogateDataset& d, const std::string& dataset_file) const;

  const FeatureSchema& schema() const;
  const std::vector<SettingAxis>& axes() const;
  const ModelConfig& config() const;
  const std::string& trace_fingerprint() const;
  std::int64_t parameter_count() const;
  /// What the conformal calibration added to each side of the 10/90% interval, in log1p(wait s).
  float interval_shift() const;
  /// log1p(wait s) of the longest wait trained on, where every predicted quantile stops; +inf for an
  /// untrained model or a checkpoint before version 4.
  float wait_bound() const;
  /// The split this model was trained with; nullopt for a fresh model or a checkpoint before version 6.
  const std::optional<SplitRecord>& trained_split() const;
  void set_trained_split(const SplitRecord& split);
  /// The ridge baseline fitted on the training split when the model was made (or renormalised): the
  /// baseline the model was compared with in training; nullptr for a checkpoint before version 6.
  const RidgeBaseline* training_ridge() const;
  /// The median of log1p(wait s) over the training part when the model was made (or renormalised), to
  /// 0.001: the trivial baseline eval scores beside it; nullopt before checkpoint version 7.
  std::optional<float> training_median() const;
  /// Sets the CPU threads libtorch uses (0 = all cores).
  static void set_threads(int threads);

 private:
  Surrogate();
  /// Sets the interval shift from `windows` × `settings` of `d` (conformal calibration, see train()).
  void calibrate_intervals(const SurrogateDataset& d, const std::vector<std::uint32_t>& windows,
                           const std::vector<std::uint32_t>& settings, double coverage, TrainReport& report);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace slurmtwin::surrogate
