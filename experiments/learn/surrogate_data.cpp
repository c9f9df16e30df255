#include "experiments/learn/surrogate_data.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>

#include "experiments/replay/interrupt.hpp"
#include "experiments/replay/parallel.hpp"
#include "experiments/replay/replay.hpp"
#include "experiments/sweep/sweep.hpp"

namespace slurmtwin::experiments {
namespace {
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
// The six PriorityWeight* settings: the default sweep space, and settings the surrogate may vary.
constexpr const char* kPriorityWeights[] = {"PriorityWeightAge",     "PriorityWeightFairshare",
                                            "PriorityWeightJobSize", "PriorityWeightPartition",
                                            "PriorityWeightQOS",     "PriorityWeightAssoc"};
}  // namespace

std::vector<SweepParameter> default_surrogate_parameters() {
  std::vector<SweepParameter> ps;
  for (const char* name : kPriorityWeights) {
    SweepParameter p;
    p.name = name;
    p.lo = 0;
    p.hi = 100000;
    p.scale = SweepScale::kLinear;  // sampled linearly; the model sees log1p (SettingAxis::log)
    ps.push_back(p);
  }
  return ps;
}

bool surrogate_log_scale(const SweepParameter& p) {
  return p.name.starts_with("PriorityWeight") || p.scale == SweepScale::kLog;
}

double surrogate_setting(const Site& site, const std::string& name) {
  bool integer = false;
  if (!setting_is_known(name, integer))
    throw std::invalid_argument(fmt::format("the surrogate cannot vary setting '{}'", name));
  return current_setting(site, name);
}

namespace {
// Indices of the trace's jobs that have a submit time, in submit order (stable).
std::vector<std::uint32_t> submit_order(const Trace& trace) {
  std::vector<std::uint32_t> order;
  for (std::uint32_t i = 0; i < trace.jobs.size(); ++i)
    if (trace.jobs[i].submit != kUnsetTime) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](auto a, auto b) { return trace.jobs[a].submit < trace.jobs[b].submit; });
  return order;
}

// Targets order[first, last) with up to `context` jobs before them.
WindowJobs window_of(const std::vector<std::uint32_t>& order, std::size_t first, std::size_t last,
                     std::size_t context) {
  WindowJobs w;
  for (std::size_t k = first - std::min(first, context); k < last; ++k) {
    w.jobs.push_back(order[k]);
    w.target.push_back(k >= first ? 1 : 0);
  }
  return w;
}
}  // namespace

std::vector<WindowJobs> cut_windows(const Trace& trace, const DatasetOptions& o) {
  if (o.window_jobs == 0) throw std::invalid_argument("--window-jobs must be positive");
  const auto order = submit_order(trace);
  const std::size_t stride = o.stride_jobs ? o.stride_jobs : o.window_jobs;
  std::vector<WindowJobs> windows;
  for (std::size_t first = std::min<std::size_t>(o.context_jobs, order.size());
       first + o.window_jobs <= order.size(); first += stride) {
    if (o.max_windows && windows.size() >= o.max_windows) break;
    windows.push_back(window_of(order, first, first + o.window_jobs, o.context_jobs));
  }
  return windows;
}

std::vector<WindowJobs> cover_windows(const Trace& trace, std::uint32_t window_jobs,
                                      std::uint32_t context_jobs) {
  if (window_jobs == 0) throw std::invalid_argument("window_jobs must be positive");
  const auto order = submit_order(trace);
  std::vector<WindowJobs> windows;
  for (std::size_t first = 0; first < order.size(); first += window_jobs)
    windows.push_back(window_of(order, first, std::min(order.size(), first + window_jobs), context_jobs));
  return windows;
}

Trace sub_trace(const Trace& trace, const std::vector<std::uint32_t>& jobs) {
  Trace t;
  t.users = trace.users;
  t.accounts = trace.accounts;
  t.partitions = trace.partitions;
  t.qos = trace.qos;
  t.strings = trace.strings;
  t.origin = trace.origin;
  t.source = trace.source;
  t.jobs.reserve(jobs.size());
  for (auto j : jobs) t.jobs.push_back(trace.jobs[j]);
  return t;
}

namespace {
// When a job first started (a requeued job's first run), kUnsetTime when it never did: the reference
// features' queue holds it from then on.
Seconds first_start(const sim::SimJob& j) {
  return j.past_runs.empty() ? j.start : j.past_runs.front().start;
}
}  // namespace

std::vector<float> simulated_waits(const Site& site, const Trace& trace, const std::atomic<bool>* stop,
                                   Seconds start_offset) {
  ReplayOptions ro;
  ro.stop = stop;
  ro.start_offset = start_offset;
  return replay_waits(run_replay(site, trace, ro), trace);
}

std::vector<float> replay_waits(const ReplayResult& r, const Trace& trace) {
  std::vector<float> waits(trace.jobs.size(), kNaN);
  for (const auto& j : r.state->jobs)
    if (j.start != kUnsetTime) waits[j.trace_index] = static_cast<float>(j.start - j.submit);
  return waits;
}

surrogate::ReferenceRun reference_run(const ReplayResult& replay, const Trace& trace) {
  if (replay.submit_factors.size() != trace.jobs.size())
    throw std::logic_error("reference_run needs a replay made with ReplayOptions::submit_factors");
  surrogate::ReferenceRun ref;
  ref.start.assign(trace.jobs.size(), kUnsetTime);
  ref.end.assign(trace.jobs.size(), kUnsetTime);
  ref.factors = replay.submit_factors;
  ref.max_age = replay.site.scheduler.max_age;
  for (const auto& j : replay.state->jobs) {
    ref.start[j.trace_index] = first_start(j);
    ref.end[j.trace_index] = j.end;
  }
  return ref;
}

surrogate::TraceContext surrogate_context(const Site& site, const Trace& trace,
                                          const surrogate::FeatureSchema& schema,
                                          const ReplayResult* reference) {
  if (schema.reference && !reference) throw std::logic_error("reference features need the reference replay");
  double capacity = 0;
  for (const auto& n : site.nodes) capacity += n.cpus;
  std::optional<surrogate::ReferenceRun> ref;
  if (schema.reference) ref = reference_run(*reference, trace);
  return surrogate::trace_context(trace, schema.queue_state, capacity, schema.submit_time_only,
                                  ref ? &*ref : nullptr);
}

namespace {
// The exact replay of `site` as it is, with the factors the reference features need.
ReplayResult reference_replay(const Site& site, const Trace& trace, const std::atomic<bool>* stop,
                              Seconds start_offset = 0) {
  ReplayOptions ro;
  ro.stop = stop;
  ro.start_offset = start_offset;
  ro.submit_factors = true;
  return run_replay(site, trace, ro);
}
}  // namespace

surrogate::SurrogateDataset dataset_from_sweep(const Site& base, const Trace& trace,
                                               const std::vector<SweepRow>& rows,
                                               const surrogate::FeatureSchema& schema,
                                               const std::vector<surrogate::SettingAxis>& axes,
                                               std::uint32_t window_jobs, std::uint32_t context_jobs) {
  surrogate::SurrogateDataset d;
  d.trace_fingerprint = trace_fingerprint(trace);
  d.site_name = base.cluster_name;
  d.schema = schema;
  d.axes = axes;
  std::vector<std::vector<std::int64_t>> waits;  // per used row, per trace job
  for (const auto& r : rows) {
    if (r.engine != "exact" || r.job_waits.empty() || r.trace_fingerprint != d.trace_fingerprint) continue;
    auto w = decode_job_waits(r.job_waits);
    if (w.size() != trace.jobs.size()) continue;
    Site site = base;
    for (const auto& [name, value] : r.params) apply_setting(site, name, value);
    std::vector<double> values;
    for (const auto& a : axes) values.push_back(surrogate_setting(site, a.name));
    d.settings.push_back(std::move(values));
    waits.push_back(std::move(w));
  }
  if (d.settings.empty())
    throw std::invalid_argument(
        "the sweep has no exact result with per-job waits for this trace (run it with `job_waits: true` in "
        "the spec)");
  std::optional<ReplayResult> reference;
  if (schema.reference) reference.emplace(reference_replay(base, trace, nullptr));
  const auto context = surrogate_context(base, trace, schema, reference ? &*reference : nullptr);
  DatasetOptions o;
  o.window_jobs = window_jobs;
  o.context_jobs = context_jobs;
  for (const auto& win : cut_windows(trace, o)) {
    d.windows.push_back(surrogate::window_tokens(trace, context, win.jobs, win.target, schema));
    auto& out = d.waits.emplace_back(d.settings.size() * win.jobs.size(), kNaN);
    for (std::size_t s = 0; s < d.settings.size(); ++s)
      for (std::size_t i = 0; i < win.jobs.size(); ++i)
        if (win.target[i] && waits[s][win.jobs[i]] >= 0)
          out[s * win.jobs.size() + i] = static_cast<float>(waits[s][win.jobs[i]]);
  }
  if (d.windows.empty())
    throw std::invalid_argument(
        fmt::format("the trace has {} jobs: too few for one window of {} + {} context", trace.jobs.size(),
                    window_jobs, context_jobs));
  return d;
}

surrogate::SurrogateDataset build_dataset(const Site& site, const Trace& trace, const DatasetOptions& o,
                                          const std::function<void(std::size_t, std::size_t)>& progress) {
  surrogate::SurrogateDataset d;
  d.trace_fingerprint = trace_fingerprint(trace);
  d.site_name = site.cluster_name;
  d.recorded = o.recorded;
  d.window_replay = o.window_replay && !o.recorded;
  d.schema =
      o.schema ? *o.schema : surrogate::make_schema(trace, o.submit_time_only, o.queue_state, o.reference);
  if (d.schema.queue_state && !o.recorded)
    throw std::invalid_argument(
        "queue-state features come from recorded start times: use them with --recorded");
  if (d.schema.reference && (o.recorded || o.window_replay))
    throw std::invalid_argument(
        "reference features come from a replay of the whole trace: not with --recorded or "
        "--window-replay");
  // The reference replay is the site's own setting, which is also the dataset's setting 0.
  std::optional<ReplayResult> reference;
  if (d.schema.reference) reference.emplace(reference_replay(site, trace, o.stop, o.start_offset));
  const auto context = surrogate_context(site, trace, d.schema, reference ? &*reference : nullptr);
  if (o.schema && o.schema->submit_time_only != o.submit_time_only)
    throw std::invalid_argument("--submit-time-only must match the checkpoint's feature schema");
  const auto windows = cut_windows(trace, o);
  if (windows.empty())
    throw std::invalid_argument(
        fmt::format("the trace has {} jobs: too few for one window of {} + {} context", trace.jobs.size(),
                    o.window_jobs, o.context_jobs));

  // Settings: the site's own first, then a Latin hypercube over the parameters.
  if (!o.recorded) {
    for (const auto& p : o.parameters) {
      bool integer = true;
      if (!setting_is_known(p.name, integer)) throw std::invalid_argument("unknown setting " + p.name);
      d.axes.push_back({p.name, p.lo, p.hi, surrogate_log_scale(p)});
    }
    std::vector<double> own;
    for (const auto& p : o.parameters) own.push_back(surrogate_setting(site, p.name));
    d.settings.push_back(own);
    if (o.settings > 0 && !o.parameters.empty()) {
      SweepSpec spec;
      spec.parameters = o.parameters;
      for (auto& p : spec.parameters) setting_is_known(p.name, p.integer);
      spec.design = SweepDesign::kLhs;
      spec.points = o.settings;
      spec.seed = o.seed;
      for (const auto& point : design_points(spec)) {
        std::vector<double> v;
        for (const auto& p : o.parameters) v.push_back(point.at(p.name));
        d.settings.push_back(v);
      }
    }
  } else {
    d.settings.emplace_back();
  }

  const std::size_t ns = d.settings.size(), nw = windows.size();
  d.windows.resize(nw);
  d.waits.resize(nw);
  std::vector<Trace> window_traces(nw);
  for (std::size_t w = 0; w < nw; ++w) {
    d.windows[w] = surrogate::window_tokens(trace, context, windows[w].jobs, windows[w].target, d.schema);
    d.waits[w].assign(ns * windows[w].jobs.size(), kNaN);
    if (o.recorded) {
      for (std::size_t i = 0; i < windows[w].jobs.size(); ++i) {
        const auto& j = trace.jobs[windows[w].jobs[i]];
        if (windows[w].target[i] && j.start != kUnsetTime && j.submit != kUnsetTime && j.start >= j.submit)
          d.waits[w][i] = static_cast<float>(j.start - j.submit);
      }
    } else if (o.window_replay) {
      window_traces[w] = sub_trace(trace, windows[w].jobs);
    }
  }
  if (o.recorded) return d;

  std::vector<Site> sites(ns, site);
  for (std::size_t s = 0; s < ns; ++s)
    for (std::size_t a = 0; a < d.axes.size(); ++a) apply_setting(sites[s], d.axes[a].name, d.settings[s][a]);
  // Tasks: one replay of the whole trace per setting, or one replay per (window, setting), each made at
  // o.phases timer phases. The reference replay is setting 0's (the site's own) first phase.
  if (o.phases == 0) throw std::invalid_argument("phases must be at least 1");
  const std::size_t total = o.window_replay ? nw * ns : ns;
  std::atomic<std::size_t> done{0};  // replays finished
  std::mutex mu;                     // guards progress
  auto store = [&](std::size_t w, std::size_t s, const std::vector<float>& waits, bool by_trace_index) {
    const auto& win = windows[w];
    for (std::size_t i = 0; i < win.jobs.size(); ++i)
      if (win.target[i]) d.waits[w][s * win.jobs.size() + i] = waits[by_trace_index ? win.jobs[i] : i];
  };
  // The mean wait of each job over the phases (NaN when it never started in one of them); `waits`:
  // the first phase's when already replayed, else empty.
  auto phase_mean = [&](const Site& s, const Trace& t, std::vector<float> waits) {
    const auto offsets = phase_offsets(s, o.phases, o.start_offset);
    if (waits.empty()) waits = simulated_waits(s, t, o.stop, offsets[0]);
    for (std::uint32_t k = 1; k < o.phases; ++k) {
      const auto more = simulated_waits(s, t, o.stop, offsets[k]);
      for (std::size_t i = 0; i < waits.size(); ++i) waits[i] += more[i];
    }
    for (auto& v : waits) v /= static_cast<float>(o.phases);
    return waits;
  };
  const auto stopped = [&] { return o.stop && o.stop->load(); };
  const auto body = [&](std::size_t task) {
    if (o.window_replay) {
      const std::size_t w = task / ns, s = task % ns;
      store(w, s, phase_mean(sites[s], window_traces[w], {}), false);
    } else {
      const auto waits =
          phase_mean(sites[task], trace,
                     task == 0 && reference ? replay_waits(*reference, trace) : std::vector<float>{});
      for (std::size_t w = 0; w < nw; ++w) store(w, task, waits, true);
    }
    const auto n = ++done;
    if (progress) {
      std::lock_guard lock(mu);
      progress(n, total);
    }
  };
  ParallelOptions po;
  po.threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  po.stop = stopped;
  try {
    parallel_for(total, body, po);
  } catch (...) {
    if (!stopped()) throw;  // a stop unwinds the running replays with their own Interrupted
  }
  if (stopped())
    throw Interrupted(fmt::format(
        "{}: dataset generation stopped with {} of {} replays finished; no dataset written",
        InterruptGuard::signal_name().empty() ? std::string("interrupted") : InterruptGuard::signal_name(),
        done.load(), total));
  return d;
}

}  // namespace slurmtwin::experiments
