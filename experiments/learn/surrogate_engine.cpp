#include "experiments/learn/surrogate_engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "experiments/learn/surrogate_data.hpp"
#include "experiments/replay/replay.hpp"
#include "experiments/replay/stopwatch.hpp"
#include "surrogate/model.hpp"
#include "traces/read_report.hpp"

namespace slurmtwin::experiments {

sim::ReplayMetrics predicted_schedule_metrics(const ReplayResult& base, const Trace& trace,
                                              const std::vector<double>& waits, sim::SimState& work,
                                              bool series) {
  Seconds last = base.state->now;  // the clock ran at least that far
  for (std::size_t k = 0; k < work.jobs.size(); ++k) {
    auto& j = work.jobs[k];
    const auto& b = base.state->jobs[k];
    if (b.state == sim::SimJobState::kRejected || b.start == kUnsetTime) continue;
    // A wait counts from the (re)submission of the run that finished, as the replay's metrics do.
    const Seconds run = (b.end == kUnsetTime ? base.state->now : b.end) - b.start;
    j.submit = b.submit;
    j.start = b.submit + static_cast<Seconds>(std::llround(std::max(0.0, waits.at(j.trace_index))));
    j.end = j.start + run;
    j.past_runs.clear();
    last = std::max(last, j.end);
  }
  work.now = last;
  return sim::compute_metrics(work, trace, series ? sim::schedule_series(work) : sim::TimeSeriesRecorder{});
}

namespace {
// Memory for encoded windows: about 200 KiB a window of 512 jobs at d_model 64 without competition heads,
// so a year of a million jobs fits (competition heads add heads × n² floats a window).
constexpr std::size_t kEncodedBytes = std::size_t{1} << 30;
}  // namespace

struct SurrogateEngine::Impl {
  const SweepPlan* plan = nullptr;
  SurrogateEngineOptions options;
  surrogate::Surrogate model;
  // Exact replay of the base site: who starts, where, with how many CPUs, for how long. Held by pointer
  // and built in place: its state refers to its own site, so it must never move.
  std::unique_ptr<const ReplayResult> base;
  std::vector<surrogate::WindowTokens> windows;
  // The first windows encoded once (the encoder is most of a window's cost at small batches), as many
  // as fit in kEncodedBytes; the rest are encoded again for each batch of points.
  std::vector<surrogate::EncodedWindow> encoded;
  std::vector<std::uint32_t> not_started;  // trace indices of jobs the base replay rejected or never started
  // The spec's objectives or constraints read the time series: the 10% and 90% schedules build it
  // too (the median's is always built; only those metrics are read of the others).
  bool interval_series = false;
  double setup_seconds = 0;

  explicit Impl(surrogate::Surrogate m) : model(std::move(m)) {}

  // The model's input for a resolved site: every axis at the site's value.
  std::vector<float> encoded_setting(const Site& site) const {
    std::vector<float> out;
    for (const auto& a : model.axes()) out.push_back(a.encode(surrogate_setting(site, a.name)));
    return out;
  }
};

SurrogateEngine::SurrogateEngine(const SweepSpec& spec, const SweepPlan& plan,
                                 const SurrogateEngineOptions& options, std::vector<std::string>& warnings) {
  const auto t0 = std::chrono::steady_clock::now();
  if (options.model.empty())
    throw std::invalid_argument("the surrogate engine needs a model (--model CHECKPOINT)");
  surrogate::Surrogate::set_threads(options.threads);
  impl_ = std::make_unique<Impl>(surrogate::Surrogate::load(options.model));
  auto& m = *impl_;
  m.plan = &plan;
  m.options = options;
  for (const auto& o : spec.objectives)
    m.interval_series = m.interval_series || metric_reads_series(o.metric);
  for (const auto& c : spec.constraints)
    m.interval_series = m.interval_series || metric_reads_series(c.metric);
  const auto& schema = m.model.schema();
  if (schema.queue_state)
    throw InputError(options.model, 0, "schema",
                     "this model learned recorded waits from the recorded queue (real-wait mode); it cannot "
                     "predict what-if settings");
  std::string axes;
  for (const auto& a : m.model.axes()) axes += (axes.empty() ? "" : ", ") + a.name;
  for (const auto& p : spec.parameters) {
    const auto& ax = m.model.axes();
    const auto it = std::find_if(ax.begin(), ax.end(), [&](const auto& a) { return a.name == p.name; });
    if (it == ax.end())
      throw InputError(spec.file, p.line, p.name,
                       fmt::format("the surrogate {} was not trained on this setting (it varies: {})",
                                   options.model, axes.empty() ? "nothing" : axes));
  }
  if (m.model.trace_fingerprint() != plan.fingerprint)
    warnings.push_back(
        fmt::format("{} was trained on another trace (fingerprint {}, this one {}): its predictions "
                    "extrapolate",
                    options.model, m.model.trace_fingerprint(), plan.fingerprint));
  std::size_t outside = 0;
  for (const auto& task : plan.tasks)
    for (const auto& a : m.model.axes()) {
      const double v = surrogate_setting(task.site, a.name);
      outside += (v < a.lo || v > a.hi) ? 1 : 0;
    }
  if (outside > 0)
    warnings.push_back(fmt::format(
        "{} setting values of the sweep lie outside the range the surrogate was trained on", outside));

  ReplayOptions ro;
  ro.submit_factors = schema.reference;
  // Built in place, not by make_unique, which would move it: the replay's state points into its site.
  // NOLINTNEXTLINE(modernize-make-unique)
  m.base.reset(new ReplayResult(run_replay(load_sweep_site(spec), plan.trace, ro)));
  const auto context = surrogate_context(m.base->site, plan.trace, schema, m.base.get());
  for (const auto& w : cover_windows(plan.trace, options.window_jobs, options.context_jobs))
    m.windows.push_back(surrogate::window_tokens(plan.trace, context, w.jobs, w.target, schema));
  std::size_t bytes = 0;
  for (const auto& w : m.windows) {
    auto e = m.model.encode(w);
    bytes += e.bytes();
    if (bytes > kEncodedBytes) break;
    m.encoded.push_back(std::move(e));
  }
  for (const auto& j : m.base->state->jobs)
    if (j.state == sim::SimJobState::kRejected || j.start == kUnsetTime)
      m.not_started.push_back(j.trace_index);
  m.setup_seconds = seconds_since(t0);
}

SurrogateEngine::~SurrogateEngine() = default;

double SurrogateEngine::setup_seconds() const {
  return impl_->setup_seconds;
}

std::vector<SurrogatePrediction> SurrogateEngine::predict(const std::vector<std::size_t>& tasks) const {
  std::vector<const Site*> sites;
  for (auto t : tasks) sites.push_back(&impl_->plan->tasks.at(t).site);
  return predict_sites(sites);
}

std::vector<SurrogatePrediction> SurrogateEngine::predict_sites(const std::vector<const Site*>& sites) const {
  const auto& m = *impl_;
  const std::size_t n_jobs = m.plan->trace.jobs.size();
  std::vector<SurrogatePrediction> out(sites.size());
  sim::SimState work = *m.base->state;  // scratch copy whose starts and ends each prediction rewrites
  const std::size_t batch = std::max<std::size_t>(1, m.options.point_batch);
  for (std::size_t from = 0; from < sites.size(); from += batch) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t to = std::min(sites.size(), from + batch);
    std::vector<std::vector<float>> settings;
    for (std::size_t k = from; k < to; ++k) settings.push_back(m.encoded_setting(*sites[k]));
    // waits[q][point][trace job], s.
    std::array<std::vector<std::vector<double>>, 3> waits;
    for (auto& q : waits) q.assign(to - from, std::vector<double>(n_jobs, -1.0));
    for (std::size_t wi = 0; wi < m.windows.size(); ++wi) {
      const auto& w = m.windows[wi];
      const auto q =
          wi < m.encoded.size() ? m.model.predict(m.encoded[wi], settings) : m.model.predict(w, settings);
      for (std::size_t k = 0; k < settings.size(); ++k)
        for (std::size_t i = 0; i < w.jobs; ++i)
          if (w.target[i])
            for (std::size_t t = 0; t < 3; ++t)
              waits[t][k][w.job_index[i]] = std::expm1(std::max(0.0, static_cast<double>(q[k][i][t])));
    }
    const double model_seconds = seconds_since(t0) / static_cast<double>(to - from);
    for (std::size_t k = 0; k < to - from; ++k) {
      const auto t1 = std::chrono::steady_clock::now();
      auto& p = out[from + k];
      for (std::size_t t = 0; t < 3; ++t)
        p.metrics[t] = predicted_schedule_metrics(*m.base, m.plan->trace, waits[t][k], work,
                                                  t == 1 || m.interval_series);
      p.median_waits = std::move(waits[1][k]);
      for (const auto i : m.not_started) p.median_waits[i] = -1;
      p.seconds = model_seconds + seconds_since(t1);
    }
  }
  return out;
}

}  // namespace slurmtwin::experiments
