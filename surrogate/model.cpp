#include "surrogate/model.hpp"

#include <ATen/autocast_mode.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>
#include <thread>
#include <tuple>

#include "surrogate/ridge.hpp"
#include "traces/file_io.hpp"

extern "C" void openblas_set_num_threads(int) __attribute__((weak));

namespace slurmtwin::surrogate {
namespace {

namespace nn = torch::nn;
using torch::Tensor;

constexpr char kMagic[8] = {'S', 'T', 'W', 'S', 'U', 'R', 'C', 'K'};
constexpr const char* kWhat = "surrogate checkpoint";
constexpr std::array<float, 3> kTaus = {0.1f, 0.5f, 0.9f};
constexpr std::int64_t kKeyWidth = 16;  // query/key width of each competition head
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// A pre-norm transformer block; with `film` ([N, 4d]: scale and shift of each sub-layer's input) it is
// conditioned on the setting.
struct BlockImpl : nn::Module {
  BlockImpl(std::int64_t d, std::int64_t heads, std::int64_t ffn, double dropout)
      : ln1(register_module("ln1", nn::LayerNorm(nn::LayerNormOptions({d})))),
        ln2(register_module("ln2", nn::LayerNorm(nn::LayerNormOptions({d})))),
        attn(register_module(
            "attn", nn::MultiheadAttention(nn::MultiheadAttentionOptions(d, heads).dropout(dropout)))),
        fc1(register_module("fc1", nn::Linear(d, ffn))),
        fc2(register_module("fc2", nn::Linear(ffn, d))),
        drop(register_module("drop", nn::Dropout(dropout))) {}

  // x: [L, N, d]; film: undefined or [N, 4d].
  Tensor forward(Tensor x, const Tensor& film) {
    Tensor h = ln1(x);
    std::vector<Tensor> f;
    if (film.defined()) {
      f = film.unsqueeze(0).chunk(4, -1);
      h = h * (1 + f[0]) + f[1];
    }
    h = std::get<0>(attn->forward(h, h, h, Tensor(), /*need_weights=*/false));
    x = x + drop(h);
    h = ln2(x);
    if (film.defined()) h = h * (1 + f[2]) + f[3];
    h = fc2(drop(torch::gelu(fc1(h))));
    return x + drop(h);
  }
  nn::LayerNorm ln1, ln2;
  nn::MultiheadAttention attn;
  nn::Linear fc1, fc2;
  nn::Dropout drop;
};
TORCH_MODULE(Block);

// The priority prior (reference features): which numeric column holds the normalized factor each axis
// weighs, and its sign. Priority = sum of weight × factor (Slurm's multifactor formula); between two
// jobs pending at the same instant the age factors differ by their submit times over PriorityMaxAge.
struct PriorColumn {
  std::int64_t column = -1;  // in FeatureSchema::numeric; -1 = this axis weighs no factor we have
  float sign = 1;
};
std::vector<PriorColumn> prior_columns(const FeatureSchema& schema, const std::vector<SettingAxis>& axes) {
  static const std::vector<std::tuple<std::string, std::string, float>> kWeighs = {
      {"PriorityWeightFairshare", "ref_fairshare", 1.0f},
      {"PriorityWeightJobSize", "ref_job_size", 1.0f},
      {"PriorityWeightPartition", "ref_partition", 1.0f},
      {"PriorityWeightQOS", "ref_qos", 1.0f},
      {"PriorityWeightAssoc", "ref_assoc", 1.0f},
      {"PriorityWeightAge", "ref_submit_over_max_age", -1.0f}};
  std::vector<PriorColumn> out(axes.size());
  if (!schema.reference) return out;
  for (std::size_t a = 0; a < axes.size(); ++a)
    for (const auto& [axis, column, sign] : kWeighs)
      if (axes[a].name == axis) {
        const auto it = std::find(schema.numeric.begin(), schema.numeric.end(), column);
        if (it != schema.numeric.end()) out[a] = {it - schema.numeric.begin(), sign};
      }
  return out;
}
bool has_prior(const std::vector<PriorColumn>& columns) {
  return std::any_of(columns.begin(), columns.end(), [](const PriorColumn& c) { return c.column >= 0; });
}

struct NetImpl : nn::Module {
  NetImpl(const ModelConfig& c, const FeatureSchema& s, std::int64_t axes, bool prior)
      : d(c.d_model),
        setting_inputs(std::max<std::int64_t>(axes, 1)),
        numeric(
            register_module("numeric", nn::Linear(static_cast<std::int64_t>(s.numeric.size()), c.d_model))),
        user(register_module("user", nn::Embedding(s.user_buckets, c.d_model))),
        account(register_module("account", nn::Embedding(s.account_buckets, c.d_model))),
        partition(register_module(
            "partition", nn::Embedding(static_cast<std::int64_t>(s.partitions.size()) + 1, c.d_model))),
        qos(register_module("qos", nn::Embedding(static_cast<std::int64_t>(s.qos.size()) + 1, c.d_model))),
        encoder(register_module("encoder", nn::ModuleList())),
        conditioned(register_module("conditioned", nn::ModuleList())),
        setting_mlp(register_module(
            "setting_mlp",
            nn::Sequential(nn::Linear(setting_inputs, c.d_model), nn::GELU(),
                           nn::Linear(c.d_model, c.d_model * (4 * c.conditioned_layers + 2))))),
        head_ln(register_module("head_ln", nn::LayerNorm(nn::LayerNormOptions({c.d_model})))),
        comp_heads(c.competition_heads),
        comp_q(register_module(
            "comp_q", nn::Linear(c.d_model, std::max<std::int64_t>(c.competition_heads, 1) * kKeyWidth))),
        comp_k(register_module(
            "comp_k", nn::Linear(c.d_model, std::max<std::int64_t>(c.competition_heads, 1) * kKeyWidth))),
        comp_p(
            register_module("comp_p", nn::Linear(c.d_model, std::max<std::int64_t>(c.competition_heads, 1)))),
        head1(register_module("head1", nn::Linear(c.d_model + c.competition_heads, c.d_model))),
        head2(register_module("head2", nn::Linear(c.d_model, 3))) {
    for (std::int64_t i = 0; i < c.encoder_layers; ++i)
      encoder->push_back(Block(c.d_model, c.heads, c.ffn, c.dropout));
    // How sharply each competition head follows the formula's priority: sigmoid(scale · (P_j - P_i)),
    // P in units of the largest swept weight; learned, from a start where a difference of a quarter of
    // the largest weight already decides.
    if (prior && c.competition_heads > 0)
      prior_scale = register_parameter("prior_scale", torch::full({c.competition_heads}, 4.0));
    for (std::int64_t i = 0; i < c.conditioned_layers; ++i)
      conditioned->push_back(Block(c.d_model, c.heads, c.ffn, c.dropout));
    // The FiLM output starts at zero: an untrained model ignores the setting rather than scrambling
    // the encoder's features.
    auto last = setting_mlp->ptr<nn::LinearImpl>(2);
    torch::NoGradGuard guard;
    last->weight.zero_();
    last->bias.zero_();
    if (c.ridge_base) {
      // The regression's terms (Impl::set_ridge fills them), fixed: buffers, not parameters.
      const auto f = static_cast<std::int64_t>(s.numeric.size());
      ridge_numeric = register_buffer("ridge_numeric", torch::zeros({f}));
      ridge_intercept = register_buffer("ridge_intercept", torch::zeros({1}));
      ridge_partition = register_buffer("ridge_partition",
                                        torch::zeros({static_cast<std::int64_t>(s.partitions.size()) + 1}));
      ridge_qos = register_buffer("ridge_qos", torch::zeros({static_cast<std::int64_t>(s.qos.size()) + 1}));
      ridge_setting = register_buffer("ridge_setting", torch::zeros({setting_inputs}));
      ridge_cross = register_buffer("ridge_cross", torch::zeros({setting_inputs, f}));
      // What the network adds to the ridge's median starts at zero, so the untrained model is the ridge.
      head2->weight[0].zero_();
      head2->bias[0].zero_();
    }
  }

  // The ridge base (ModelConfig::ridge_base) of every token under each setting: normalised features
  // x [n, f], partitions p and QOS q [n], settings [S, k] -> [n, S], in the target's normalised units.
  Tensor ridge(const Tensor& x, const Tensor& p, const Tensor& q, const Tensor& settings) const {
    const Tensor job = torch::mv(x, ridge_numeric) + ridge_partition.index_select(0, p) +
                       ridge_qos.index_select(0, q) + ridge_intercept;  // [n]
    return job.unsqueeze(1) + torch::mv(settings, ridge_setting).unsqueeze(0) +
           torch::matmul(torch::matmul(x, ridge_cross.transpose(0, 1)), settings.transpose(0, 1));
  }

  // Setting-independent part: tokens [n, 1, d], and the competition weights [H, n, n] (row i: how
  // much each job j competes with job i, a softmax over j).
  std::pair<Tensor, Tensor> encode(const Tensor& x, const Tensor& u, const Tensor& a, const Tensor& p,
                                   const Tensor& q) {
    Tensor h = (numeric(x) + user(u) + account(a) + partition(p) + qos(q)).unsqueeze(1);
    for (const auto& m : *encoder) h = m->as<BlockImpl>()->forward(h, {});
    Tensor comp;
    if (comp_heads > 0) {
      const auto n = h.size(0);
      Tensor t = h.squeeze(1);
      Tensor qh = comp_q(t).view({n, comp_heads, kKeyWidth}).transpose(0, 1);  // [H, n, k]
      Tensor kh = comp_k(t).view({n, comp_heads, kKeyWidth}).transpose(0, 1);
      comp =
          torch::softmax(torch::bmm(qh, kh.transpose(1, 2)) / std::sqrt(static_cast<double>(kKeyWidth)), -1);
    }
    return {h, comp};
  }

  // Conditioned part: tokens [n, 1, d], competition weights, settings [S, k], the indices of the target
  // tokens [r] (context tokens compete but are not predicted, so the output head and the competition sums
  // run on the r target rows only) and, with reference features, each job's formula priority under each
  // setting [S, n] and a base [n, 1] or [n, S] -> raw quantiles [r, S, 3] (normalised units). The base
  // (the reference wait, or the ridge's prediction) is added to the median: the network learns what moves
  // a job from it.
  Tensor condition(const Tensor& h, const Tensor& comp, const Tensor& settings, const Tensor& rows,
                   const Tensor& prior, const Tensor& base) {
    const auto s = settings.size(0);
    Tensor film = setting_mlp->forward(settings);  // [S, d * (4L + 2)]
    auto parts = film.split(4 * d, -1);
    auto gb = film.narrow(-1, film.size(-1) - 2 * d, 2 * d).unsqueeze(0).chunk(2, -1);
    // Without conditioned blocks the tokens stay [n, 1, d] up to the FiLM, so the norm runs once, not per
    // setting; the FiLM broadcasts them to [n, S, d].
    Tensor x = h;
    if (!conditioned->is_empty()) {
      x = h.expand({h.size(0), s, d});
      std::size_t k = 0;
      for (const auto& m : *conditioned) x = m->as<BlockImpl>()->forward(x, parts[k++]);
    }
    x = head_ln(x) * (1 + gb[0]) + gb[1];  // [n, S, d]: every token, FiLM-conditioned
    Tensor xr = x.index_select(0, rows);   // [r, S, d]
    if (comp_heads > 0) {
      // Each job's priority under this setting, one scalar per head; then how much of the competition
      // weight of each target job i lies on jobs (targets and context) that outrank it:
      // sum_j comp[i, j] * sigmoid(p_j - p_i).
      Tensor pr = comp_p(x).permute({1, 2, 0});  // [S, H, n]
      if (prior_scale.defined() && prior.defined())
        pr = pr + prior_scale.view({1, -1, 1}) * prior.unsqueeze(1);
      Tensor pr_rows = pr.index_select(2, rows);      // [S, H, r]
      Tensor comp_rows = comp.index_select(1, rows);  // [H, r, n]
      Tensor c;
      if (torch::GradMode::is_enabled()) {
        Tensor outrank = torch::sigmoid(pr.unsqueeze(2) - pr_rows.unsqueeze(3));  // [S, H, r(i), n(j)]
        c = (outrank * comp_rows.unsqueeze(0)).sum(-1);                           // [S, H, r]
      } else {
        // Inference: the same sum in blocks of rows i, so that the [S, H, block, n] temporaries (about
        // 2 MiB) stay in cache instead of streaming S·H·r·n floats through memory several times.
        const std::int64_t n = pr.size(2), r = pr_rows.size(2);
        const std::int64_t block = std::max<std::int64_t>(
            1, (std::int64_t{1} << 19) / std::max<std::int64_t>(1, s * comp_heads * n));
        std::vector<Tensor> blocks;
        for (std::int64_t i0 = 0; i0 < r; i0 += block) {
          const std::int64_t len = std::min(block, r - i0);
          Tensor outrank =
              torch::sigmoid(pr.unsqueeze(2) - pr_rows.narrow(2, i0, len).unsqueeze(3));    // [S, H, len, n]
          blocks.push_back((outrank * comp_rows.narrow(1, i0, len).unsqueeze(0)).sum(-1));  // [S, H, len]
        }
        c = torch::cat(blocks, 2);
      }
      xr = torch::cat({xr, c.permute({2, 0, 1})}, -1);  // c: [r, S, H]
    }
    Tensor o = head2(torch::gelu(head1(xr)));  // [r, S, 3]
    Tensor mid = base.defined() ? o.select(-1, 0) + base.index_select(0, rows) : o.select(-1, 0);
    return torch::stack({mid - torch::softplus(o.select(-1, 1)), mid, mid + torch::softplus(o.select(-1, 2))},
                        -1);
  }

  std::int64_t d, setting_inputs;
  nn::Linear numeric;
  nn::Embedding user, account, partition, qos;
  nn::ModuleList encoder, conditioned;
  nn::Sequential setting_mlp;
  nn::LayerNorm head_ln;
  std::int64_t comp_heads;
  nn::Linear comp_q, comp_k, comp_p;
  Tensor prior_scale;  // [H], with the priority prior only
  nn::Linear head1, head2;
  // ModelConfig::ridge_base only: [f], [1], [partitions + 1], [QOS + 1], [k], [k, f].
  Tensor ridge_numeric, ridge_intercept, ridge_partition, ridge_qos, ridge_setting, ridge_cross;
};
TORCH_MODULE(Net);

// The tensors a checkpoint stores: parameters, then buffers (none today), by their registered names.
std::vector<std::pair<std::string, Tensor>> stored_tensors(const nn::Module& net) {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& p : net.named_parameters()) out.emplace_back(p.key(), p.value());
  for (const auto& b : net.named_buffers()) out.emplace_back(b.key(), b.value());
  return out;
}

// Mixed precision on the GPU: matrix products in bfloat16 inside the scope, float32 elsewhere.
// bfloat16 keeps float32's exponent range, so gradients need no loss scaling (fp16 would).
// libtorch 2.4 replaced the CUDA-only autocast calls with per-device ones.
class CudaAutocast {
 public:
  explicit CudaAutocast(bool on) : on_(on) {
    if (!on_) return;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
    at::autocast::set_autocast_enabled(at::kCUDA, true);
#else
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
    at::autocast::set_enabled(true);
#endif
  }
  ~CudaAutocast() {
    if (!on_) return;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    at::autocast::set_autocast_enabled(at::kCUDA, false);
#else
    at::autocast::set_enabled(false);
#endif
    at::autocast::clear_cache();
  }
  CudaAutocast(const CudaAutocast&) = delete;
  CudaAutocast& operator=(const CudaAutocast&) = delete;

 private:
  bool on_;
};

// Calls f(log1p(wait s)) for every started job's wait in the split's training windows under its
// training settings: what the model trains on, and all that its statistics and bound may see.
template <class F>
void for_each_training_wait(const SurrogateDataset& d, const Split& split, F f) {
  for (auto w : split.train_windows)
    for (auto s : split.train_settings)
      for (std::size_t i = 0; i < d.windows[w].jobs; ++i)
        if (const float wait = d.waits[w][s * d.windows[w].jobs + i]; !std::isnan(wait))
          f(std::log1p(std::max(0.0f, wait)));
}

torch::Device pick_device(const std::string& name) {
  if (name == "cuda" || (name == "auto" && torch::cuda::is_available())) {
    if (!torch::cuda::is_available())
      throw std::runtime_error("--device cuda: CUDA is not available in this build");
    return torch::Device(torch::kCUDA);
  }
  if (name != "cpu" && name != "auto")
    throw std::invalid_argument("device must be auto, cpu or cuda, not " + name);
  return torch::Device(torch::kCPU);
}

}  // namespace

Loss parse_loss(const std::string& name) {
  if (name == "pinball") return Loss::kPinball;
  if (name == "mse") return Loss::kMse;
  if (name == "mae-mse") return Loss::kMaeMse;
  throw std::invalid_argument("loss must be pinball, mse or mae-mse, not " + name);
}

const char* to_string(Loss loss) {
  switch (loss) {
    case Loss::kPinball:
      return "pinball";
    case Loss::kMse:
      return "mse";
    case Loss::kMaeMse:
      return "mae-mse";
  }
  return "?";
}

namespace {

// Normalised input tensors of one window (on the model's device); `f` [n, axes]: each job's raw factor
// for each axis (signed), with the priority prior only; `base` [n, 1]: its reference wait in the
// target's normalised units, with reference features and no ridge base; `rows` [r]: the target tokens.
struct Inputs {
  Tensor x, u, a, p, q, f, base, rows;
};

}  // namespace

// A window's inputs and what the setting-independent encoder made of them (`comp` is undefined without
// competition heads), with which of its tokens are predicted.
struct EncodedWindow::Data {
  const void* model = nullptr;  // the Surrogate::Impl that encoded it (its normalisation and encoder)
  Inputs in;
  Tensor h, comp;
  std::vector<std::uint8_t> target;  // per token: 1 = predicted (its size is the window's jobs)
};

EncodedWindow::EncodedWindow(std::unique_ptr<Data> data) : data_(std::move(data)) {}
EncodedWindow::~EncodedWindow() = default;
EncodedWindow::EncodedWindow(EncodedWindow&&) noexcept = default;
EncodedWindow& EncodedWindow::operator=(EncodedWindow&&) noexcept = default;

std::size_t EncodedWindow::bytes() const {
  std::size_t total = data_->target.size();
  const auto& in = data_->in;
  for (const Tensor& t : {in.x, in.u, in.a, in.p, in.q, in.f, in.base, in.rows, data_->h, data_->comp})
    if (t.defined()) total += static_cast<std::size_t>(t.numel()) * t.element_size();
  return total;
}

struct Surrogate::Impl {
  ModelConfig config;
  FeatureSchema schema;
  std::vector<SettingAxis> axes;
  std::string fingerprint;
  std::vector<float> mean, stdev;  // per numeric feature
  float y_mean = 0, y_std = 1;     // of log1p(wait s) over training targets
  float interval_shift = 0;        // conformal widening of the 10/90% interval, log1p(wait s)
  // log1p(wait s) of the longest wait trained on: predictions stop there, as a setting far from the
  // training ones can otherwise extrapolate to waits of months (docs/surrogate.md). +inf: no bound
  // (checkpoints before version 4).
  float wait_bound = std::numeric_limits<float>::infinity();
  std::optional<SplitRecord> split;  // Surrogate::trained_split (checkpoints from version 6)
  // log1p(wait s): the median of the training targets (Surrogate::training_median; NaN: unknown, before
  // version 7).
  float training_median = std::numeric_limits<float>::quiet_NaN();
  // The ridge baseline fitted on the training split when the model was made (Surrogate::training_ridge;
  // checkpoints from version 6).
  std::optional<RidgeBaseline> ridge_fit;
  Net net{nullptr};
  torch::Device device{torch::kCPU};
  std::vector<PriorColumn> prior;  // per axis (prior_columns)
  float prior_unit = 1;            // the largest swept weight with a prior column

  // Normalisation statistics of the split's training part: features over its training windows, waits
  // over its training windows × training settings (a held-out setting's waits must not reach the model,
  // not even its scale).
  void normalise(const SurrogateDataset& d, const Split& split) {
    const std::size_t f = d.schema.numeric.size();
    std::vector<double> sum(f, 0), sq(f, 0);
    double n = 0, ys = 0, yq = 0, yn = 0;
    // The median from a histogram of 0.001-wide bins of log1p(wait s) (the wait to within 0.1%), not
    // from a copy of every training wait; the last bin holds anything beyond (waits over 2,000 years).
    constexpr double kBinsPerUnit = 1000;
    std::vector<std::uint64_t> bins(32'000, 0);
    for (auto w : split.train_windows) {
      const auto& win = d.windows[w];
      for (std::size_t i = 0; i < win.jobs; ++i) {
        for (std::size_t k = 0; k < f; ++k) {
          const double v = win.numeric[i * f + k];
          sum[k] += v;
          sq[k] += v * v;
        }
        n += 1;
      }
    }
    for_each_training_wait(d, split, [&](double y) {
      ys += y;
      yq += y * y;
      yn += 1;
      bins[std::min(bins.size() - 1, static_cast<std::size_t>(y * kBinsPerUnit))] += 1;
    });
    mean.resize(f);
    stdev.resize(f);
    for (std::size_t k = 0; k < f; ++k) {
      const double mu = n > 0 ? sum[k] / n : 0.0;
      const double var = n > 0 ? sq[k] / n - mu * mu : 0.0;
      mean[k] = static_cast<float>(mu);
      stdev[k] = static_cast<float>(var > 1e-12 ? std::sqrt(var) : 1.0);
    }
    if (yn > 0) {
      double below = 0;
      std::size_t b = 0;
      while (below + static_cast<double>(bins[b]) < yn / 2) below += static_cast<double>(bins[b++]);
      training_median = static_cast<float>((static_cast<double>(b) + 0.5) / kBinsPerUnit);
      y_mean = static_cast<float>(ys / yn);
      const double var = yq / yn - (ys / yn) * (ys / yn);
      y_std = static_cast<float>(var > 1e-12 ? std::sqrt(var) : 1.0);
    }
  }

  void build(std::uint64_t seed) {
    torch::manual_seed(seed);
    prior = prior_columns(schema, axes);
    prior_unit = 1;
    for (std::size_t a = 0; a < axes.size(); ++a)
      if (prior[a].column >= 0) prior_unit = std::max(prior_unit, static_cast<float>(axes[a].hi));
    net = Net(config, schema, static_cast<std::int64_t>(axes.size()), has_prior(prior));
    net->to(device);
  }

  Inputs inputs(const WindowTokens& w) const {
    const auto n = static_cast<std::int64_t>(w.jobs), f = static_cast<std::int64_t>(mean.size());
    std::vector<float> x(w.numeric);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t k = 0; k < f; ++k) {
        auto& v = x[static_cast<std::size_t>(i * f + k)];
        v = (v - mean[static_cast<std::size_t>(k)]) / stdev[static_cast<std::size_t>(k)];
      }
    auto longs = [&](const std::vector<std::int64_t>& v) {
      return torch::tensor(at::ArrayRef<std::int64_t>(v), torch::kLong).to(device);
    };
    Tensor factors;
    if (has_prior(prior)) {
      const auto na = static_cast<std::int64_t>(axes.size());
      std::vector<float> v(static_cast<std::size_t>(n * na), 0.0f);
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t a = 0; a < na; ++a)
          if (const auto& c = prior[static_cast<std::size_t>(a)]; c.column >= 0)
            v[static_cast<std::size_t>(i * na + a)] =
                c.sign * w.numeric[static_cast<std::size_t>(i * f + c.column)];
      factors = torch::from_blob(v.data(), {n, na}, torch::kFloat).clone().to(device);
    }
    Tensor base;
    if (const auto it = std::find(schema.numeric.begin(), schema.numeric.end(), "ref_log_wait");
        it != schema.numeric.end() && !config.ridge_base) {
      const auto c = it - schema.numeric.begin();
      std::vector<float> v(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i)
        v[static_cast<std::size_t>(i)] = (w.numeric[static_cast<std::size_t>(i * f + c)] - y_mean) / y_std;
      base = torch::from_blob(v.data(), {n, 1}, torch::kFloat).clone().to(device);
    }
    std::vector<std::int64_t> rows;
    for (std::int64_t i = 0; i < n; ++i)
      if (w.target[static_cast<std::size_t>(i)]) rows.push_back(i);
    return {torch::from_blob(x.data(), {n, f}, torch::kFloat).clone().to(device),
            longs(w.user),
            longs(w.account),
            longs(w.partition),
            longs(w.qos),
            factors,
            base,
            longs(rows)};
  }

  // The formula priority of every job of `in` under each setting (encoded): [S, n], in units of
  // prior_unit; undefined without the prior.
  Tensor prior_priority(const Inputs& in, const std::vector<std::vector<float>>& settings) const {
    if (!in.f.defined()) return {};
    const auto na = static_cast<std::int64_t>(axes.size());
    std::vector<float> weights(settings.size() * axes.size(), 0.0f);
    for (std::size_t s = 0; s < settings.size(); ++s)
      for (std::size_t a = 0; a < axes.size(); ++a)
        if (prior[a].column >= 0)
          weights[s * axes.size() + a] = static_cast<float>(axes[a].decode(settings[s][a]) / prior_unit);
    Tensor w =
        torch::from_blob(weights.data(), {static_cast<std::int64_t>(settings.size()), na}, torch::kFloat)
            .clone()
            .to(device);
    return torch::matmul(w, in.f.transpose(0, 1));
  }

  // What the median adds to under each setting [S, k] (see NetImpl::condition): the ridge's prediction
  // [n, S] with ModelConfig::ridge_base, else the reference wait [n, 1] (undefined without one).
  Tensor base(const Inputs& in, const Tensor& settings) const {
    return config.ridge_base ? net->ridge(in.x, in.p, in.q, settings) : in.base;
  }

  // Writes the terms of `ridge` (fitted on the training split) into the network, rewritten for the model's
  // own feature standardisation and normalised target: the ridge standardises with its own statistics (z_r =
  // a·z + b for the model's z), in log1p(wait s).
  void set_ridge(const SurrogateDataset& d, const RidgeBaseline& ridge) {
    const auto t = ridge.terms(d);
    const std::size_t f = mean.size(), k = t.setting.size();
    std::vector<double> a(f), b(f);
    for (std::size_t j = 0; j < f; ++j) {
      a[j] = stdev[j] / t.stdev[j];
      b[j] = (mean[j] - t.mean[j]) / t.stdev[j];
    }
    double intercept = t.intercept;
    std::vector<float> numeric(f), cross(static_cast<std::size_t>(net->setting_inputs) * f, 0.0f),
        setting(static_cast<std::size_t>(net->setting_inputs), 0.0f);
    for (std::size_t j = 0; j < f; ++j) {
      numeric[j] = static_cast<float>(t.numeric[j] * a[j] / y_std);
      intercept += t.numeric[j] * b[j];
    }
    for (std::size_t ax = 0; ax < k; ++ax) {
      double lin = t.setting[ax];
      for (std::size_t j = 0; j < f; ++j) {
        cross[ax * f + j] = static_cast<float>(t.cross[ax][j] * a[j] / y_std);
        lin += t.cross[ax][j] * b[j];
      }
      setting[ax] = static_cast<float>(lin / y_std);
    }
    const auto scaled = [&](const std::vector<double>& v) {
      std::vector<float> out(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<float>(v[i] / y_std);
      return out;
    };
    torch::NoGradGuard guard;
    const auto fill = [&](Tensor& dst, std::vector<float> v) {
      dst.copy_(torch::from_blob(v.data(), dst.sizes(), torch::kFloat));
    };
    fill(net->ridge_numeric, numeric);
    fill(net->ridge_intercept, {static_cast<float>((intercept - y_mean) / y_std)});
    fill(net->ridge_partition, scaled(t.partition));
    fill(net->ridge_qos, scaled(t.qos));
    fill(net->ridge_setting, setting);
    fill(net->ridge_cross, cross);
  }

  Tensor settings_tensor(const std::vector<std::vector<float>>& settings) const {
    const auto k = std::max<std::int64_t>(static_cast<std::int64_t>(axes.size()), 1);
    std::vector<float> flat(settings.size() * static_cast<std::size_t>(k), 0.0f);
    for (std::size_t s = 0; s < settings.size(); ++s)
      for (std::size_t a = 0; a < axes.size(); ++a)
        flat[s * static_cast<std::size_t>(k) + a] = settings[s][a];
    return torch::from_blob(flat.data(), {static_cast<std::int64_t>(settings.size()), k}, torch::kFloat)
        .clone()
        .to(device);
  }

  // Targets [r, S] of the window's r target jobs in normalised units, and their mask (the job started).
  std::pair<Tensor, Tensor> targets(const SurrogateDataset& d, std::uint32_t w,
                                    const std::vector<std::uint32_t>& settings) const {
    const auto& win = d.windows[w];
    const std::size_t n = win.jobs, ns = settings.size();
    std::vector<float> y;
    std::vector<std::uint8_t> m;
    for (std::size_t i = 0; i < n; ++i) {
      if (!win.target[i]) continue;
      for (std::size_t k = 0; k < ns; ++k) {
        const float wait = d.waits[w][settings[k] * n + i];
        y.push_back(std::isnan(wait) ? 0.0f : (std::log1p(std::max(0.0f, wait)) - y_mean) / y_std);
        m.push_back(std::isnan(wait) ? 0 : 1);
      }
    }
    const auto r = static_cast<std::int64_t>(y.size() / std::max<std::size_t>(ns, 1));
    const auto cols = static_cast<std::int64_t>(ns);
    return {torch::from_blob(y.data(), {r, cols}, torch::kFloat).clone().to(device),
            torch::from_blob(m.data(), {r, cols}, torch::kUInt8).clone().to(torch::kBool).to(device)};
  }

  Tensor loss(const Tensor& q, const Tensor& y, const Tensor& mask, Loss kind) const {
    Tensor total = torch::zeros({}, q.options());
    for (int k = 0; k < 3; ++k) {
      Tensor e = y - q.select(-1, k);  // [n, S]
      Tensor l;
      if (k == 1 && kind == Loss::kMse) {
        l = e * e;
      } else if (k == 1 && kind == Loss::kMaeMse) {
        // |e| below 1 (robust to the many near-zero waits), e² above (large errors cost more).
        Tensor a = e.abs();
        l = torch::where(a < 1, a, e * e);
      } else {
        l = torch::max(kTaus[static_cast<std::size_t>(k)] * e, (kTaus[static_cast<std::size_t>(k)] - 1) * e);
      }
      total = total + l.masked_select(mask).mean();
    }
    return total;
  }

  // TrainOptions::within_weight: the squared error of each job's median moves between the step's
  // settings (its exact and predicted values less their own means over the settings where it started).
  static Tensor within_loss(const Tensor& q, const Tensor& y, const Tensor& mask) {
    const Tensor m = mask.to(y.scalar_type());
    const Tensor count = m.sum(1, /*keepdim=*/true);  // [r, 1]
    const Tensor pred = q.select(-1, 1);
    const Tensor e = (pred - (pred * m).sum(1, true) / count.clamp_min(1)) -
                     (y - (y * m).sum(1, true) / count.clamp_min(1));
    const Tensor use = m * (count >= 2).to(m.scalar_type());
    return (e * e * use).sum() / use.sum().clamp_min(1);
  }
};

Surrogate::Surrogate() : impl_(std::make_unique<Impl>()) {}
Surrogate::~Surrogate() = default;
Surrogate::Surrogate(Surrogate&&) noexcept = default;
Surrogate& Surrogate::operator=(Surrogate&&) noexcept = default;

Surrogate::Surrogate(const SurrogateDataset& d, const Split& split, const ModelConfig& config,
                     std::uint64_t seed)
    : impl_(std::make_unique<Impl>()) {
  if (config.d_model % config.heads != 0) throw std::invalid_argument("d_model must be a multiple of heads");
  auto& m = *impl_;
  m.config = config;
  m.schema = d.schema;
  m.axes = d.axes;
  m.fingerprint = d.trace_fingerprint;
  m.normalise(d, split);
  m.build(seed);
  m.ridge_fit =
      RidgeBaseline::fit(d, split.train_windows, split.train_settings, split.val_windows, split.val_settings);
  if (config.ridge_base) m.set_ridge(d, *m.ridge_fit);
}

void Surrogate::renormalise(const SurrogateDataset& d, const Split& split) {
  impl_->normalise(d, split);
  impl_->ridge_fit =
      RidgeBaseline::fit(d, split.train_windows, split.train_settings, split.val_windows, split.val_settings);
  if (impl_->config.ridge_base) impl_->set_ridge(d, *impl_->ridge_fit);
}

void Surrogate::set_threads(int threads) {
  const int n = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  torch::set_num_threads(n);
  // Debian's libtorch calls the system BLAS (OpenBLAS), whose own thread pool ignores the above and
  // spins (sched_yield) on every core between calls: on 2 cores that cost a third of the CPU time of a
  // surrogate sweep. Absent when the BLAS is not OpenBLAS (weak symbol).
  if (openblas_set_num_threads) openblas_set_num_threads(n);
}

TrainReport Surrogate::train(const SurrogateDataset& d, const Split& split, const TrainOptions& o,
                             const std::function<void(const std::string&)>& progress) {
  auto& m = *impl_;
  if (split.train_windows.empty() || split.train_settings.empty())
    throw std::invalid_argument("the split leaves no training windows or settings");
  float longest = -1;  // log1p(s) of the longest training wait; -1: none
  for_each_training_wait(d, split, [&](float y) { longest = std::max(longest, y); });
  if (longest >= 0) m.wait_bound = std::isinf(m.wait_bound) ? longest : std::max(m.wait_bound, longest);
  set_threads(o.threads);
  m.device = pick_device(o.device);
  m.net->to(m.device);
  torch::manual_seed(o.seed);
  std::mt19937_64 rng(o.seed);
  TrainReport report;
  report.device = m.device.is_cuda() ? "cuda" : fmt::format("cpu ({} threads)", torch::get_num_threads());
  torch::optim::AdamW opt(m.net->parameters(), torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay));
  const bool amp = m.device.is_cuda();  // mixed precision (CudaAutocast) on the GPU only

  std::vector<Inputs> cache;  // inputs of every window, built once
  cache.reserve(d.windows.size());
  for (const auto& w : d.windows) cache.push_back(m.inputs(w));
  std::vector<std::vector<float>> encoded(d.setting_count());
  for (std::size_t s = 0; s < d.setting_count(); ++s) encoded[s] = d.encoded_setting(s);

  auto forward = [&](std::uint32_t w, const std::vector<std::uint32_t>& settings) {
    std::vector<std::vector<float>> enc;
    for (auto s : settings) enc.push_back(encoded[s]);
    const auto& in = cache[w];
    const Tensor st = m.settings_tensor(enc);
    const Tensor base = m.base(in, st);  // outside the autocast: the ridge's sums in float32
    Tensor q;
    {
      CudaAutocast autocast(amp);
      const auto [h, comp] = m.net->encode(in.x, in.u, in.a, in.p, in.q);
      q = m.net->condition(h, comp, st, in.rows, m.prior_priority(in, enc), base);
    }
    return q.to(torch::kFloat);
  };
  // Without held-out windows (--split all, or a dataset of fewer than 3 windows) validation scores the
  // training part, which cannot tell when to stop: every step runs and the last weights are kept.
  const bool held_out = !split.val_windows.empty();
  report.held_out = held_out;
  const auto& val_windows = held_out ? split.val_windows : split.train_windows;
  const auto& val_settings = split.val_settings.empty() ? split.train_settings : split.val_settings;
  auto validate = [&] {
    torch::NoGradGuard guard;
    m.net->eval();
    double sum = 0;
    for (auto w : val_windows) {
      auto [y, mask] = m.targets(d, w, val_settings);
      if (mask.sum().item<std::int64_t>() == 0) continue;
      const Tensor q = forward(w, val_settings);
      sum += (m.loss(q, y, mask, o.loss) + o.within_weight * Impl::within_loss(q, y, mask)).item<double>();
    }
    m.net->train();
    return sum / static_cast<double>(val_windows.size());
  };

  // TrainOptions::ema: an exponential moving average of the weights. Validation scores it, and the
  // checkpoint keeps it, in place of the weights the optimiser moves.
  std::vector<Tensor> average;
  if (o.ema > 0)
    for (const auto& p : m.net->parameters()) average.push_back(p.detach().clone());
  const auto swap_average = [&] {  // exchanges the network's weights and the average, in place
    torch::NoGradGuard guard;
    const auto params = m.net->parameters();
    for (std::size_t i = 0; i < average.size(); ++i) {
      const Tensor raw = params[i].detach().clone();
      params[i].copy_(average[i]);
      average[i] = raw;
    }
  };
  const auto update_average = [&](std::int64_t step) {
    torch::NoGradGuard guard;
    // The usual warm-up of the decay, so that the first steps' weights do not linger in the average.
    const double decay = std::min(o.ema, static_cast<double>(1 + step) / static_cast<double>(10 + step));
    const auto params = m.net->parameters();
    for (std::size_t i = 0; i < average.size(); ++i)
      average[i].mul_(decay).add_(params[i].detach(), 1 - decay);
  };

  const auto t_start = std::chrono::steady_clock::now();
  std::string best_state;
  double best = std::numeric_limits<double>::infinity();
  std::int64_t since_best = 0;
  const auto keep_best = [&](double v, std::int64_t step) {
    best = v;
    report.best_step = step;
    since_best = 0;
    torch::serialize::OutputArchive ar;
    m.net->save(ar);
    std::ostringstream os;
    ar.save_to(os);
    best_state = os.str();
  };
  // Step 0, the weights as they came: a fine-tuned checkpoint stays as it was unless a step validates
  // better, so a few new examples can narrow it down but never leave it worse on validation.
  {
    const double v = validate();  // the average starts as the initial weights
    const std::string line = fmt::format("step     0/{}  val {:.4f} (the initial weights)", o.steps, v);
    report.log.push_back(line);
    if (progress) progress(line);
    keep_best(v, 0);
  }
  m.net->train();
  for (std::int64_t step = 1; step <= o.steps; ++step) {
    if (o.stop && o.stop()) {
      report.stopped = true;
      break;
    }
    const double lr =
        step <= o.warmup
            ? o.lr * static_cast<double>(step) / static_cast<double>(std::max<std::int64_t>(o.warmup, 1))
            : o.lr / 20 +
                  (o.lr - o.lr / 20) * 0.5 *
                      (1 + std::cos(M_PI * static_cast<double>(step - o.warmup) /
                                    static_cast<double>(std::max<std::int64_t>(o.steps - o.warmup, 1))));
    for (auto& g : opt.param_groups()) static_cast<torch::optim::AdamWOptions&>(g.options()).lr(lr);
    const auto w = split.train_windows[rng() % split.train_windows.size()];
    std::vector<std::uint32_t> settings;
    for (std::int64_t k = 0;
         k <
         std::min<std::int64_t>(o.settings_per_step, static_cast<std::int64_t>(split.train_settings.size()));
         ++k)
      settings.push_back(split.train_settings[rng() % split.train_settings.size()]);
    auto [y, mask] = m.targets(d, w, settings);
    if (mask.sum().item<std::int64_t>() == 0) continue;
    opt.zero_grad();
    const Tensor q = forward(w, settings);
    Tensor l = m.loss(q, y, mask, o.loss);
    if (o.within_weight > 0) l = l + o.within_weight * Impl::within_loss(q, y, mask);
    l.backward();
    torch::nn::utils::clip_grad_norm_(m.net->parameters(), 1.0);
    opt.step();
    if (!average.empty()) update_average(step);
    report.steps = step;
    if (step % o.eval_every == 0 || step == o.steps) {
      swap_average();  // validate (and keep) the average
      const double v = validate();
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
      const double eta = secs / static_cast<double>(step) * static_cast<double>(o.steps - step);
      const std::string line = fmt::format(
          "step {:5d}/{}  lr {:.2e}  train {:.4f}  val {:.4f}  {:.0f} s, {:.2f} steps/s, ETA {:.0f} s{}",
          step, o.steps, lr, l.item<double>(), v, secs, static_cast<double>(step) / secs, eta,
          v < best ? "  *" : "");
      report.log.push_back(line);
      if (progress) progress(line);
      const bool improved = v < best;
      if (improved || !held_out) keep_best(v, step);
      swap_average();  // back to the optimiser's weights
      if (held_out && !improved && ++since_best >= o.patience) break;
    }
  }
  {
    torch::serialize::InputArchive ar;
    std::istringstream is(best_state);
    ar.load_from(is, m.device);
    m.net->load(ar);
  }
  m.net->eval();
  report.best_val_loss = best;
  // Only on held-out targets: calibrated on training targets the interval would come out too narrow.
  if (o.conformal_coverage > 0 && !split.val_windows.empty() && !split.val_settings.empty())
    calibrate_intervals(d, split.val_windows, split.val_settings, o.conformal_coverage, report);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  return report;
}

// Conformalized quantile regression (Romano, Patterson and Candès, NeurIPS 2019): on held-out targets,
// score each by how far it falls outside the network's 10/90% interval (negative inside), and shift
// both ends by the ceil((n + 1) · coverage)-th smallest score, so that the interval holds `coverage`
// of targets exchangeable with these. Validation windows and settings are held out from training.
void Surrogate::calibrate_intervals(const SurrogateDataset& d, const std::vector<std::uint32_t>& windows,
                                    const std::vector<std::uint32_t>& settings, double coverage,
                                    TrainReport& report) {
  auto& m = *impl_;
  m.interval_shift = 0;
  std::vector<std::vector<float>> encoded;
  for (auto s : settings) encoded.push_back(d.encoded_setting(s));
  std::vector<float> scores;
  std::size_t inside = 0;
  for (auto w : windows) {
    const auto& win = d.windows[w];
    const auto q = predict(win, encoded);
    for (std::size_t k = 0; k < settings.size(); ++k)
      for (std::size_t i = 0; i < win.jobs; ++i) {
        const float wait = d.waits[w][settings[k] * win.jobs + i];
        if (!win.target[i] || std::isnan(wait)) continue;
        const float y = std::log1p(std::max(0.0f, wait));
        const float lo = q[k][i][0], hi = q[k][i][2];
        scores.push_back(std::max(lo - y, y - hi));
        inside += (y >= lo && y <= hi) ? 1 : 0;
      }
  }
  report.calibration_targets = scores.size();
  if (scores.empty()) return;
  report.raw_coverage = static_cast<double>(inside) / static_cast<double>(scores.size());
  const auto n = static_cast<double>(scores.size());
  const auto rank = std::min(scores.size(), static_cast<std::size_t>(std::ceil((n + 1) * coverage)));
  std::nth_element(scores.begin(), scores.begin() + static_cast<std::ptrdiff_t>(rank - 1), scores.end());
  m.interval_shift = scores[rank - 1];
  report.interval_shift = m.interval_shift;
}

EncodedWindow Surrogate::encode(const WindowTokens& window) const {
  auto& m = *impl_;
  torch::NoGradGuard guard;
  m.net->eval();
  auto data = std::make_unique<EncodedWindow::Data>();
  data->model = &m;
  data->in = m.inputs(window);
  std::tie(data->h, data->comp) = m.net->encode(data->in.x, data->in.u, data->in.a, data->in.p, data->in.q);
  data->target = window.target;
  return EncodedWindow(std::move(data));
}

Quantiles Surrogate::predict(const WindowTokens& window,
                             const std::vector<std::vector<float>>& settings) const {
  return predict(encode(window), settings);
}

Quantiles Surrogate::predict(const EncodedWindow& window,
                             const std::vector<std::vector<float>>& settings) const {
  auto& m = *impl_;
  torch::NoGradGuard guard;
  m.net->eval();
  assert(window.data_->model == &m && "an EncodedWindow predicts only with the model that encoded it");
  const auto& in = window.data_->in;
  const auto& h = window.data_->h;
  const auto& comp = window.data_->comp;
  const auto& target = window.data_->target;
  Quantiles out(settings.size());
  constexpr std::size_t kChunk = 64;  // settings per conditioned batch (bounds memory)
  for (std::size_t from = 0; from < settings.size(); from += kChunk) {
    const std::size_t to = std::min(settings.size(), from + kChunk);
    std::vector<std::vector<float>> part(settings.begin() + static_cast<std::ptrdiff_t>(from),
                                         settings.begin() + static_cast<std::ptrdiff_t>(to));
    const Tensor st = m.settings_tensor(part);
    Tensor q = (m.net->condition(h, comp, st, in.rows, m.prior_priority(in, part), m.base(in, st)) * m.y_std +
                m.y_mean)
                   .to(torch::kCPU)
                   .contiguous();
    const auto n = target.size(), s = to - from;
    const float* p = q.data_ptr<float>();  // [r, s, 3], the target rows in token order
    for (std::size_t k = 0; k < s; ++k) {
      out[from + k].assign(n, {kNaN, kNaN, kNaN});
      for (std::size_t i = 0, row = 0; i < n; ++i) {
        if (!target[i]) continue;
        const float* o = p + (row++ * s + k) * 3;
        // The shift may narrow the interval (a negative shift) but never past the median.
        const float median = std::min(o[1], m.wait_bound);
        out[from + k][i] = {std::min(o[0] - m.interval_shift, median), median,
                            std::min(std::max(o[2] + m.interval_shift, median), m.wait_bound)};
      }
    }
  }
  return out;
}

void Surrogate::save(const std::string& path) const {
  const auto& m = *impl_;
  ByteWriter w;
  const auto& c = m.config;
  for (auto v : {c.d_model, c.heads, c.encoder_layers, c.conditioned_layers, c.ffn, c.competition_heads})
    w.put(v);
  w.put(c.dropout);
  w.put(static_cast<std::uint8_t>(c.ridge_base ? 1 : 0));
  put_schema(w, m.schema);
  put_axes(w, m.axes);
  w.put(m.fingerprint);
  w.put_vector(m.mean);
  w.put_vector(m.stdev);
  w.put(m.y_mean);
  w.put(m.y_std);
  w.put(m.interval_shift);
  w.put(m.wait_bound);
  // 0: no record (a model never trained), 1 tail, 2 interleaved, 3 all.
  w.put(static_cast<std::uint8_t>(!m.split                            ? 0
                                  : m.split->mode == SplitMode::kTail ? 1
                                  : m.split->mode == SplitMode::kAll  ? 3
                                                                      : 2));
  w.put(m.split ? m.split->seed : std::uint64_t{0});
  w.put(static_cast<std::uint8_t>(m.ridge_fit ? 1 : 0));
  if (m.ridge_fit) m.ridge_fit->put(w);
  w.put(m.training_median);
  ByteWriter weights;  // every parameter and buffer in registration order: name, shape, float32 values
  for (const auto& [name, tensor] : stored_tensors(*m.net)) {
    const Tensor t = tensor.detach().to(torch::kCPU, torch::kFloat).contiguous();
    weights.put(name);
    weights.put_vector(t.sizes().vec());
    const float* f = t.data_ptr<float>();
    weights.put_vector(std::vector<float>(f, f + t.numel()));
  }
  w.put(static_cast<std::uint64_t>(weights.bytes().size()));
  w.bytes() += weights.bytes();
  write_file_atomic(path, seal_container(kMagic, kCheckpointVersion, w.bytes()));
}

Surrogate Surrogate::load(const std::string& path) {
  return decode(read_input_file(path), path);
}

Surrogate Surrogate::decode(const std::string& bytes, const std::string& path) {
  std::uint32_t version = 0;
  ByteReader r(
      open_container(bytes, kMagic, kOldestCheckpointVersion, kCheckpointVersion, version, path, kWhat), path,
      kWhat);
  Surrogate s;
  auto& m = *s.impl_;
  auto& c = m.config;
  for (auto* v :
       {&c.d_model, &c.heads, &c.encoder_layers, &c.conditioned_layers, &c.ffn, &c.competition_heads})
    *v = r.get<std::int64_t>();
  c.dropout = r.get<double>();
  auto bad = [&](const std::string& why) {
    return InputError(path, 0, "", fmt::format("corrupt {}: {}", kWhat, why));
  };
  if (version >= 5) {
    const auto flag = r.get<std::uint8_t>();
    if (flag > 1) throw bad(fmt::format("ridge base flag {}", flag));
    c.ridge_base = flag == 1;
  }
  if (c.d_model <= 0 || c.d_model > 4096 || c.heads <= 0 || c.d_model % c.heads != 0 ||
      c.encoder_layers < 0 || c.encoder_layers > 64 || c.conditioned_layers < 0 ||
      c.conditioned_layers > 64 || c.ffn <= 0 || c.ffn > 65536 || c.competition_heads < 0 ||
      c.competition_heads > 64 || !(c.dropout >= 0 && c.dropout < 1))
    throw bad("model dimensions out of range");
  m.schema = get_schema(r);
  if (m.schema.user_buckets > (1u << 24) || m.schema.account_buckets > (1u << 24))
    throw bad("hash buckets out of range");
  if (m.schema.numeric.empty()) throw bad("no numeric features");
  m.axes = get_axes(r);
  m.fingerprint = r.get_string();
  m.mean = r.get_vector<float>();
  m.stdev = r.get_vector<float>();
  if (m.mean.size() != m.schema.numeric.size() || m.stdev.size() != m.schema.numeric.size())
    throw bad("normalisation statistics do not match the feature schema");
  m.y_mean = r.get<float>();
  m.y_std = r.get<float>();
  if (version >= 3) {
    m.interval_shift = r.get<float>();
    // log1p(wait s) spans 0 .. ~20 for any wait: a larger shift is corruption.
    if (!(std::abs(m.interval_shift) <= 100)) throw bad("interval shift out of range");
  }
  if (version >= 4) {
    m.wait_bound = r.get<float>();
    // +inf: an untrained model's (no bound); a finite bound is a log1p(wait s), 0 .. ~20.
    if (!(m.wait_bound >= 0 && (m.wait_bound <= 100 || std::isinf(m.wait_bound))))
      throw bad("wait bound out of range");
  }
  if (version >= 6) {
    const auto mode = r.get<std::uint8_t>();
    const auto seed = r.get<std::uint64_t>();
    if (mode > 3) throw bad(fmt::format("split mode {}", mode));
    if (mode != 0)
      m.split = SplitRecord{mode == 1   ? SplitMode::kTail
                            : mode == 3 ? SplitMode::kAll
                                        : SplitMode::kInterleaved,
                            seed};
    const auto has_ridge = r.get<std::uint8_t>();
    if (has_ridge > 1) throw bad(fmt::format("ridge flag {}", has_ridge));
    if (has_ridge == 1)
      m.ridge_fit = RidgeBaseline::get(r, m.schema.numeric.size(),
                                       RidgeBaseline::columns_for(m.schema, m.axes.size()), bad);
  }
  if (version >= 7) {
    m.training_median = r.get<float>();
    // NaN: a model never normalised on data; a median is a log1p(wait s) like the bound, 0 .. ~20.
    if (!(std::isnan(m.training_median) || (m.training_median >= 0 && m.training_median <= 100)))
      throw bad("training median out of range");
  }
  const auto n = r.get<std::uint64_t>();
  if (n != r.remaining()) throw bad("weights size");
  // The network is built before its weights are read: its float32 values alone must fit in the
  // stored bytes, or corrupt dimensions could ask for gigabytes (a lower bound: the weight matrices
  // and embeddings, without biases and layer norms).
  const auto d = static_cast<double>(c.d_model);
  const auto heads = static_cast<double>(std::max<std::int64_t>(c.competition_heads, 1));
  const double blocks = static_cast<double>(c.encoder_layers + c.conditioned_layers);
  const double weights_lower_bound =
      d * (static_cast<double>(m.schema.numeric.size() + m.schema.user_buckets + m.schema.account_buckets +
                               m.schema.partitions.size() + m.schema.qos.size() + m.axes.size())) +
      blocks * (4 * d * d + 2 * d * static_cast<double>(c.ffn)) +
      d * d * static_cast<double>(4 * c.conditioned_layers + 2) + d * heads * (2 * kKeyWidth + 1) + d * d;
  if (4 * weights_lower_bound > static_cast<double>(n))
    throw bad(
        fmt::format("{} bytes of weights cannot hold a model of these dimensions (at least {:.0f} "
                    "parameters)",
                    n, weights_lower_bound));
  try {
    m.build(0);
  } catch (const c10::Error& e) {
    throw bad(
        fmt::format("model dimensions rejected: {}", std::string(e.what_without_backtrace()).substr(0, 200)));
  }
  // Each stored tensor must be the one the dimensions call for, in the same order and shape.
  torch::NoGradGuard no_grad;
  for (auto& [name, tensor] : stored_tensors(*m.net)) {
    const auto stored = r.get_string();
    if (stored != name) throw bad(fmt::format("weights '{}' where '{}' was expected", stored, name));
    const auto shape = r.get_vector<std::int64_t>();
    if (shape != tensor.sizes().vec())
      throw bad(fmt::format("weights '{}' have shape [{}], the model's dimensions need [{}]", name,
                            fmt::join(shape, ", "), fmt::join(tensor.sizes().vec(), ", ")));
    auto values = r.get_vector<float>();
    if (static_cast<std::int64_t>(values.size()) != tensor.numel())
      throw bad(fmt::format("weights '{}' have {} values for shape [{}]", name, values.size(),
                            fmt::join(shape, ", ")));
    tensor.copy_(torch::from_blob(values.data(), tensor.sizes(), torch::kFloat));
  }
  if (!r.done()) throw bad("unread bytes after the weights");
  m.net->eval();
  return s;
}

void Surrogate::check_compatible(const SurrogateDataset& d, const std::string& dataset_file) const {
  const auto& m = *impl_;
  if (!(d.schema == m.schema))
    throw InputError(
        dataset_file, 0, "schema",
        "the dataset's feature schema differs from the checkpoint's (other partitions, QOS, features "
        "or submit-time-only mode): build the dataset with the same settings or retrain");
  if (!(d.axes == m.axes)) {
    std::string names;
    for (const auto& a : m.axes) names += (names.empty() ? "" : ",") + a.name;
    throw InputError(dataset_file, 0, "axes",
                     "the dataset's swept settings or ranges differ from the checkpoint's (" + names + ")");
  }
}

const FeatureSchema& Surrogate::schema() const {
  return impl_->schema;
}
const std::vector<SettingAxis>& Surrogate::axes() const {
  return impl_->axes;
}
const ModelConfig& Surrogate::config() const {
  return impl_->config;
}
const std::string& Surrogate::trace_fingerprint() const {
  return impl_->fingerprint;
}
float Surrogate::interval_shift() const {
  return impl_->interval_shift;
}
float Surrogate::wait_bound() const {
  return impl_->wait_bound;
}
const std::optional<SplitRecord>& Surrogate::trained_split() const {
  return impl_->split;
}
std::optional<float> Surrogate::training_median() const {
  if (std::isnan(impl_->training_median)) return std::nullopt;
  return impl_->training_median;
}

const RidgeBaseline* Surrogate::training_ridge() const {
  return impl_->ridge_fit ? &*impl_->ridge_fit : nullptr;
}
void Surrogate::set_trained_split(const SplitRecord& split) {
  impl_->split = split;
}

std::int64_t Surrogate::parameter_count() const {
  std::int64_t n = 0;
  for (const auto& p : impl_->net->parameters()) n += p.numel();
  return n;
}

}  // namespace slurmtwin::surrogate
