#include "experiments/learn/surrogate_eval.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>

#include "experiments/replay/stopwatch.hpp"
#include "surrogate/features.hpp"
#include "surrogate/ridge.hpp"
#include "traces/trace_summary.hpp"

namespace slurmtwin::experiments {
namespace {

using namespace surrogate;
using surrogate::Quantiles;  // not the traces' order statistics (slurmtwin::quantiles)

/// [setting][job] quantiles of log1p(wait s) for window w under `settings`.
using Predict = std::function<Quantiles(std::uint32_t w, const std::vector<std::uint32_t>& settings)>;

/// Each job's groups among `groups`, by its QOS category and its account bucket.
struct GroupIndex {
  std::vector<std::vector<std::size_t>> by_qos, by_account;  // [category] -> positions in `groups`
  explicit GroupIndex(const std::vector<EvalGroup>& groups) {
    for (std::size_t g = 0; g < groups.size(); ++g) {
      auto& table = groups[g].kind == EvalGroup::Kind::kQos ? by_qos : by_account;
      const auto c = static_cast<std::size_t>(groups[g].category);
      if (table.size() <= c) table.resize(c + 1);
      table[c].push_back(g);
    }
  }
  template <class F>
  void each(const WindowTokens& win, std::size_t i, F&& f) const {
    for (const auto* table : {&by_qos, &by_account}) {
      const auto c = static_cast<std::size_t>(table == &by_qos ? win.qos[i] : win.account[i]);
      if (c < table->size())
        for (auto g : (*table)[c]) f(g);
    }
  }
};

double statistic(EvalGroup::Stat stat, std::vector<double>& values) {
  if (stat == EvalGroup::Stat::kP90)
    return slurmtwin::quantiles(values).p90;  // as the sweep's wait_p90 takes it
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

EvalResult evaluate(const SurrogateDataset& d, const EvalPart& part, const std::vector<EvalGroup>& groups,
                    std::size_t resamples, const Predict& predict) {
  std::vector<JobPrediction> jobs;
  std::vector<std::size_t> job_windows;
  std::vector<SettingAggregate> agg;
  std::vector<double> pooled_exact(part.settings.size(), 0.0), pooled_predicted(part.settings.size(), 0.0);
  const GroupIndex index(groups);
  std::vector<std::vector<SettingAggregate>> group_rows(groups.size());
  std::vector<GroupResult> by_group(groups.size());
  for (auto& g : by_group) {
    g.pooled_exact.assign(part.settings.size(), 0.0);
    g.pooled_predicted.assign(part.settings.size(), 0.0);
  }
  std::vector<std::vector<double>> group_exact(groups.size()), group_pred(groups.size());
  for (auto w : part.windows) {
    const auto q = predict(w, part.settings);
    const auto& win = d.windows[w];
    for (std::size_t k = 0; k < part.settings.size(); ++k) {
      double exact_sum = 0, pred_sum = 0, n = 0;
      for (auto& v : group_exact) v.clear();
      for (auto& v : group_pred) v.clear();
      for (std::size_t i = 0; i < win.jobs; ++i) {
        const float wait = d.waits[w][part.settings[k] * win.jobs + i];
        if (!win.target[i] || std::isnan(wait)) continue;
        jobs.push_back({wait, q[k][i][0], q[k][i][1], q[k][i][2], std::uint64_t{w} << 32 | i});
        job_windows.push_back(w);
        const double pred = std::expm1(std::max(0.0f, q[k][i][1]));
        exact_sum += wait;
        pred_sum += pred;
        n += 1;
        index.each(win, i, [&](std::size_t g) {
          group_exact[g].push_back(wait);
          group_pred[g].push_back(pred);
        });
      }
      for (std::size_t g = 0; g < groups.size(); ++g) {
        if (group_exact[g].empty()) continue;
        const double e = statistic(groups[g].stat, group_exact[g]);
        const double p = statistic(groups[g].stat, group_pred[g]);
        group_rows[g].push_back({w, part.settings[k], e, p});
        by_group[g].pooled_exact[k] += e;
        by_group[g].pooled_predicted[k] += p;
      }
      if (n == 0) continue;
      agg.push_back({w, part.settings[k], exact_sum / n, pred_sum / n});
      pooled_exact[k] += exact_sum / n;
      pooled_predicted[k] += pred_sum / n;
    }
  }
  for (std::size_t g = 0; g < groups.size(); ++g) {
    by_group[g].ranking = ranking_errors(group_rows[g]);
    if (resamples > 0) by_group[g].ci = bootstrap_by_window({}, {}, group_rows[g], resamples);
  }
  return {job_errors(jobs),
          ranking_errors(agg),
          resamples > 0 ? bootstrap_by_window(jobs, job_windows, agg, resamples) : Bootstrap{},
          false,
          std::move(pooled_exact),
          std::move(pooled_predicted),
          std::move(by_group)};
}

const std::vector<std::uint32_t>& part_of(const Split& split, const std::string& name, bool windows) {
  if (name == "test") return windows ? split.test_windows : split.test_settings;
  if (name == "val") return windows ? split.val_windows : split.val_settings;
  if (name == "train") return windows ? split.train_windows : split.train_settings;
  throw std::invalid_argument("part '" + name + "': expected test, val, train or WINDOWS:SETTINGS of those");
}

}  // namespace

EvalPart eval_part(const SurrogateDataset& d, const Split& split, const std::string& part) {
  if (part == "all") {  // every window and setting of the dataset, whatever part (if any) holds it
    EvalPart p;
    p.windows.resize(d.windows.size());
    std::iota(p.windows.begin(), p.windows.end(), 0u);
    p.settings.resize(d.setting_count());
    std::iota(p.settings.begin(), p.settings.end(), 0u);
    if (p.windows.empty()) throw std::invalid_argument("the dataset has no windows");
    return p;
  }
  const auto colon = part.find(':');
  const auto window_part = part.substr(0, colon);
  const auto setting_part = colon == std::string::npos ? window_part : part.substr(colon + 1);
  EvalPart p{part_of(split, window_part, true), part_of(split, setting_part, false)};
  if (p.windows.empty())
    throw std::invalid_argument("the dataset has too few windows for a " + part + " part");
  return p;
}

std::vector<EvalGroup> eval_groups(const SurrogateDataset& d, const EvalPart& part,
                                   std::size_t* small_accounts) {
  std::map<std::int64_t, std::size_t> qos, accounts;  // category -> started target jobs
  std::size_t total = 0;
  if (!part.settings.empty())
    for (auto w : part.windows) {
      const auto& win = d.windows[w];
      for (std::size_t i = 0; i < win.jobs; ++i)
        if (win.target[i] && !std::isnan(d.waits[w][part.settings.front() * win.jobs + i])) {
          if (win.qos[i] > 0) ++qos[win.qos[i]];
          ++accounts[win.account[i]];
          ++total;
        }
    }
  std::vector<EvalGroup> groups;
  using K = EvalGroup::Kind;
  using S = EvalGroup::Stat;
  for (const auto& [c, n] : qos)
    for (auto stat : {S::kMean, S::kP90}) groups.push_back({K::kQos, stat, c, n});
  // Accounts by their jobs, most first; those with under kMinAccountShare of the part's are no group.
  std::vector<EvalGroup> by_account;
  for (const auto& [c, n] : accounts)
    if (static_cast<double>(n) >= kMinAccountShare * static_cast<double>(total))
      by_account.push_back({K::kAccount, S::kMean, c, n});
  std::stable_sort(by_account.begin(), by_account.end(),
                   [](const auto& a, const auto& b) { return a.jobs > b.jobs; });
  if (small_accounts) *small_accounts = accounts.size() - by_account.size();
  groups.insert(groups.end(), by_account.begin(), by_account.end());
  return groups;
}

SurrogateEval evaluate_surrogate(const Surrogate& model, const SurrogateDataset& data, const Split& split,
                                 const EvalOptions& options) {
  SurrogateEval out;
  out.part = eval_part(data, split, options.part);
  const auto& part = out.part;
  out.groups = eval_groups(data, part, &out.small_accounts);
  std::vector<std::vector<float>> encoded(data.setting_count());
  for (std::size_t s = 0; s < data.setting_count(); ++s) encoded[s] = data.encoded_setting(s);
  const auto encoded_of = [&](const std::vector<std::uint32_t>& ss) {
    std::vector<std::vector<float>> enc;
    for (auto s : ss) enc.push_back(encoded[s]);
    return enc;
  };
  const auto add = [&](std::string name, std::string key, EvalResult r) {
    out.lines.push_back({std::move(name), std::move(key), std::move(r)});
  };
  double surrogate_s = 0;
  std::size_t surrogate_evals = 0;
  add("transformer", "transformer",
      evaluate(data, part, out.groups, options.bootstrap, [&](std::uint32_t w, const auto& ss) {
        const auto enc = encoded_of(ss);
        const auto t0 = std::chrono::steady_clock::now();
        auto q = model.predict(data.windows[w], enc);
        surrogate_s += seconds_since(t0);
        surrogate_evals += ss.size();
        return q;
      }));
  // The cost as a sweep pays it: the setting-independent encoder once per window (timed alone, as a
  // prediction for no settings), then the conditioned part per setting (timed on a batch of kSweepBatch
  // settings, the part's own cycled, less the encoder). The least of three passes: timing noise only adds.
  double encoder_s = 0, batch_s = 0;
  if (!part.settings.empty()) {
    std::vector<std::vector<float>> batch;
    for (std::size_t k = 0; k < SurrogateEval::kSweepBatch; ++k)
      batch.push_back(encoded[part.settings[k % part.settings.size()]]);
    encoder_s = batch_s = std::numeric_limits<double>::infinity();
    for (int pass = 0; pass < 3; ++pass) {
      double enc = 0, all = 0;
      for (auto w : part.windows) {
        const auto t0 = std::chrono::steady_clock::now();
        model.predict(data.windows[w], {});
        enc += seconds_since(t0);
        const auto t1 = std::chrono::steady_clock::now();
        model.predict(data.windows[w], batch);
        all += seconds_since(t1);
      }
      encoder_s = std::min(encoder_s, enc);
      batch_s = std::min(batch_s, all);
    }
  }
  const auto n_windows = static_cast<double>(std::max<std::size_t>(part.windows.size(), 1));
  const auto batch = static_cast<double>(SurrogateEval::kSweepBatch);
  out.per_setting_ms = 1000.0 * surrogate_s / static_cast<double>(std::max<std::size_t>(surrogate_evals, 1));
  out.encoder_ms = 1000.0 * encoder_s / n_windows;
  out.marginal_ms = std::max(0.0, 1000.0 * (batch_s - encoder_s) / (n_windows * batch));
  out.batched_ms = 1000.0 * batch_s / (n_windows * batch);

  if (options.against)
    add("against", "against",
        evaluate(data, part, out.groups, options.bootstrap, [&](std::uint32_t w, const auto& ss) {
          return options.against->predict(data.windows[w], encoded_of(ss));
        }));
  if (options.ridge) {
    // The model's own (fitted on its training split): the baseline it was compared with in training,
    // which never saw this dataset unless the model did. Only a checkpoint older than version 6 lacks
    // it; then the ridge is fitted on this dataset's training part.
    std::optional<RidgeBaseline> fitted;
    if (!model.training_ridge())
      fitted = RidgeBaseline::fit(data, split.train_windows, split.train_settings, split.val_windows,
                                  split.val_settings);
    const RidgeBaseline& ridge = fitted ? *fitted : *model.training_ridge();
    out.ridge_from_model = !fitted;
    out.ridge_columns = ridge.columns();
    out.ridge_lambda = ridge.lambda();
    add("ridge", "ridge",
        evaluate(data, part, out.groups, options.bootstrap, [&](std::uint32_t w, const auto& ss) {
          Quantiles q;
          for (auto s : ss) q.push_back(ridge.predict(data, w, s));
          return q;
        }));
  }
  // The trivial baseline: every job waits the training part's median, whatever the setting (the model's
  // own, stored in the checkpoint; none before checkpoint version 7). No interval.
  if (const auto median = model.training_median()) {
    auto constant = evaluate(data, part, out.groups, options.bootstrap, [&](std::uint32_t w, const auto& ss) {
      return Quantiles(ss.size(),
                       std::vector<std::array<float, 3>>(data.windows[w].jobs, {*median, *median, *median}));
    });
    constant.point = true;
    add("median", "median", std::move(constant));
  }
  // The baseline any surrogate must beat: each job's wait in the reference replay (the site's own
  // setting, which a sweep runs anyway), whatever the setting. No interval (coverage means nothing).
  const auto& cols = data.schema.numeric;
  if (const auto ref = std::find(cols.begin(), cols.end(), "ref_log_wait"); ref != cols.end()) {
    const auto col = static_cast<std::size_t>(ref - cols.begin());
    auto copied = evaluate(data, part, out.groups, options.bootstrap, [&](std::uint32_t w, const auto& ss) {
      const auto& win = data.windows[w];
      std::vector<std::array<float, 3>> q(win.jobs);
      for (std::size_t i = 0; i < win.jobs; ++i) q[i].fill(win.numeric[i * cols.size() + col]);
      return Quantiles(ss.size(), q);
    });
    copied.point = true;
    add("reference", "reference", std::move(copied));
  }
  if (const auto* other = options.noise_floor) {
    bool same = other->trace_fingerprint == data.trace_fingerprint && other->settings == data.settings &&
                other->windows.size() == data.windows.size();
    for (std::size_t w = 0; same && w < data.windows.size(); ++w)
      same = other->windows[w].job_index == data.windows[w].job_index;
    if (!same)
      throw std::invalid_argument(
          options.noise_floor_name +
          ": the noise floor needs the same trace, windows and settings as the dataset");
    auto floor = evaluate(data, part, out.groups, options.bootstrap, [&](std::uint32_t w, const auto& ss) {
      const auto jobs = data.windows[w].jobs;
      Quantiles q(ss.size(), std::vector<std::array<float, 3>>(jobs));
      for (std::size_t k = 0; k < ss.size(); ++k)
        for (std::size_t i = 0; i < jobs; ++i) {
          const float wait = other->waits[w][ss[k] * jobs + i];
          q[k][i].fill(static_cast<float>(std::log1p(std::isnan(wait) ? kNeverStartedWait : wait)));
        }
      return q;
    });
    floor.point = true;
    add("noise floor", "noise_floor", std::move(floor));
  }
  return out;
}

DecisionStudy decision_study(const SurrogateDataset& data, const SurrogateEval& eval, std::size_t orders,
                             std::uint64_t seed) {
  const auto& transformer = eval.lines.front().result;
  const auto& exact = transformer.pooled_exact;
  DecisionStudy out;
  out.settings = exact.size();
  out.orders = orders;
  if (exact.empty()) return out;
  out.best_exact = *std::min_element(exact.begin(), exact.end());
  std::vector<std::vector<double>> coordinates;
  for (auto s : eval.part.settings) {
    const auto encoded = data.encoded_setting(s);
    coordinates.emplace_back(encoded.begin(), encoded.end());
  }
  std::vector<std::size_t> budgets;
  for (std::size_t b : {5, 8, 12, 16, 24, 32, 48, 64})
    if (b < exact.size()) budgets.push_back(b);
  const HybridOptions defaults;  // as `sweep run --engine hybrid` with its defaults
  out.surface = hybrid_regret_over_orders(coordinates, exact, {}, budgets, defaults, orders, seed);
  out.with_model = hybrid_regret_over_orders(coordinates, exact, transformer.pooled_predicted, budgets,
                                             defaults, orders, seed);
  HybridOptions top = defaults;
  top.calibrate = 0;
  top.top_k = exact.size();  // the budget, not top_k, bounds what it verifies
  out.model_top =
      hybrid_regret_over_orders(coordinates, exact, transformer.pooled_predicted, budgets, top, 1, seed);
  HybridOptions first = defaults;
  first.model_first = 0.5;
  out.model_first = hybrid_regret_over_orders(coordinates, exact, transformer.pooled_predicted, budgets,
                                              first, orders, seed);
  for (const auto& g : transformer.groups) {
    auto& d = out.groups.emplace_back();
    d.best_exact = *std::min_element(g.pooled_exact.begin(), g.pooled_exact.end());
    d.surface = hybrid_regret_over_orders(coordinates, g.pooled_exact, {}, budgets, defaults, orders, seed);
    d.model_top =
        hybrid_regret_over_orders(coordinates, g.pooled_exact, g.pooled_predicted, budgets, top, 1, seed);
  }
  return out;
}

}  // namespace slurmtwin::experiments
