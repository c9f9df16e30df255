#include "experiments/sweep/sweep.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <limits>
#include <map>
#include <mutex>
#include <ostream>
#include <random>
#include <set>
#include <span>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "experiments/replay/parallel.hpp"
#include "experiments/replay/replay.hpp"
#include "experiments/replay/stopwatch.hpp"
#include "experiments/replay/trace_input.hpp"
#include "experiments/sweep/feasibility.hpp"
#include "traces/default_site.hpp"
#include "traces/native_format.hpp"
#include "traces/read_report.hpp"
#include "traces/site_import.hpp"
#include "traces/site_yaml.hpp"
#include "traces/synthetic.hpp"
#include "traces/text.hpp"
#include "traces/time_format.hpp"

#ifndef SLURMTWIN_VERSION
#define SLURMTWIN_VERSION "unknown"
#endif

namespace slurmtwin::experiments {

Site load_sweep_site(const SweepSpec& spec) {
  if (!spec.site_yaml.empty()) return load_site_yaml(spec.site_yaml);
  if (!spec.site_files.paths().empty()) {
    std::vector<std::string> warnings;
    return import_site(spec.site_files, warnings);
  }
  return scaled_default_site(spec.default_cpu_nodes);
}

Trace load_sweep_trace(const SweepSpec& spec) {
  Trace trace;
  if (spec.trace_paths.empty()) {
    auto config = default_synthetic_config();
    config.seed = spec.synthetic_seed;
    config.days = spec.synthetic_days;
    trace = generate_synthetic(config);
  } else {
    // As `replay --format F --users-from U` reads it.
    ReadReport report;
    trace =
        read_trace(spec.trace_paths, default_trace_read_options(spec.trace_format, spec.users_from), report);
    require_usable_trace(report, kDefaultMaxRejectedPct);
  }
  apply_trace_window(trace, spec);
  return trace;
}

void apply_trace_window(Trace& trace, const SweepSpec& spec) {
  if (!spec.window_from.set && !spec.window_to.set) return;
  const auto [from, to] = keep_submitted_in(trace, spec.window_from, spec.window_to);
  if (trace.jobs.empty())
    throw InputError(spec.file, spec.window_line, "window",
                     fmt::format("no job of the trace is submitted in [{}, {})", format_timestamp(from),
                                 format_timestamp(to)));
}

namespace {

std::string now_utc() {
  return format_timestamp(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

/// The store row of task `index` from the metrics of its runs (one replay or prediction, or the spec's
/// replicates, the controller started `offsets` before the first submit), produced by `engine` in
/// `seconds`: each objective and constraint value is the mean over the runs, with its standard error
/// when there are several.
SweepRow task_row(const SweepSpec& spec, const SweepPlan& plan, std::size_t index,
                  std::span<const sim::ReplayMetrics> runs, const std::vector<Seconds>& offsets,
                  const std::string& engine, double seconds) {
  const auto& task = plan.tasks.at(index);
  SweepRow row;
  row.key = task.key;
  row.params_json = point_json(task.point);
  if (runs.size() == 1) {
    row.metrics_json = sim::metrics_to_json(runs[0]);
  } else {
    row.metrics_json = fmt::format("{{\"start_offsets\": [{}], \"replicates\": [", fmt::join(offsets, ", "));
    for (std::size_t k = 0; k < runs.size(); ++k)
      row.metrics_json += (k ? ", " : "") + sim::metrics_to_json(runs[k]);
    row.metrics_json += "]}";
  }
  row.engine = engine;
  row.run_seconds = seconds;
  row.version = SLURMTWIN_VERSION;
  row.trace_fingerprint = plan.fingerprint;
  row.created = now_utc();
  row.replicates = static_cast<std::uint32_t>(runs.size());
  const auto add = [&](const std::string& metric, std::vector<double>& values) {
    std::vector<double> v;
    for (const auto& m : runs) v.push_back(metric_value(m, metric));
    const auto [mean, se] = mean_and_standard_error(v);
    values.push_back(mean);
    if (runs.size() > 1) row.standard_errors.push_back(se);
  };
  for (const auto& o : spec.objectives) add(o.metric, row.objectives);
  for (const auto& c : spec.constraints) add(c.metric, row.constraint_values);
  return row;
}

/// Points of this run's design (and shard) in the store that meet every constraint of the spec.
std::size_t count_feasible(const SweepStore& store, const SweepPlan& plan, const SweepRunOptions& options) {
  std::set<std::string> keys;
  for (std::size_t i = 0; i < plan.tasks.size(); ++i)
    if (in_shard(i, options.shard, options.shards)) keys.insert(plan.tasks[i].key);
  const auto rows = store.rows();
  std::vector<bool> in_run;
  for (const auto& r : rows) in_run.push_back(keys.count(r.key) > 0);
  return assess_constraints(rows, store.constraints(), in_run).count;
}

}  // namespace

std::string trace_fingerprint(const Trace& trace) {
  // The jobs, not where they were read from: a spec run from another directory, or naming the same
  // file by another path, must give its points the same keys.
  return fmt::format("{:016x}", fnv1a64(encode_native_trace(trace, /*with_source=*/false)));
}

std::string point_key(const Site& resolved_site, const std::string& trace_fingerprint) {
  return PointKeyer(resolved_site, trace_fingerprint)(resolved_site);
}

PointKeyer::PointKeyer(Site base, std::string trace_fingerprint, std::uint32_t replicates)
    : base_(std::move(base)), fingerprint_(std::move(trace_fingerprint)), replicates_(replicates) {
  for (std::size_t i = 0; i < kSiteSections; ++i)
    base_sections_[i] = site_yaml_section(base_, SiteSection(i));
}

std::string PointKeyer::operator()(const Site& resolved_site) const {
  // The hash of site_to_yaml(site) + "\n", section by section (FNV-1a runs on from any prefix's hash).
  std::uint64_t hash = fnv1a64("");
  for (std::size_t i = 0; i < kSiteSections; ++i) {
    const auto section = SiteSection(i);
    const auto text = same_site_section(resolved_site, base_, section)
                          ? base_sections_[i]
                          : site_yaml_section(resolved_site, section);
    if (!text.empty()) hash = fnv1a64("\n", fnv1a64(text, hash));  // site_to_yaml skips empty sections
  }
  hash = fnv1a64(fingerprint_, fnv1a64("\n", hash));
  // A replicated point is another measurement than one replay; one replay keeps the keys of old stores.
  if (replicates_ > 1) hash = fnv1a64(fmt::format("\nreplicates {}", replicates_), hash);
  return fmt::format("{:016x}", hash);
}

SweepPlan plan_sweep(const SweepSpec& spec) {
  const Site base = load_sweep_site(spec);
  check_metric_groups(spec, base);
  SweepPlan plan;
  plan.trace = load_sweep_trace(spec);
  plan.fingerprint = trace_fingerprint(plan.trace);
  const PointKeyer keyer(base, plan.fingerprint, spec.replicates);
  // Resolve every point before running anything: a QOS the site lacks fails here, naming the line.
  for (auto& p : design_points(spec)) {
    Site site = base;
    for (const auto& [name, value] : p) {
      try {
        apply_setting(site, name, value);
      } catch (const std::invalid_argument& e) {
        std::uint64_t line = 0;
        for (const auto& sp : spec.parameters)
          if (sp.name == name) line = sp.line;
        throw InputError(spec.file, line, name, e.what());
      }
    }
    auto key = keyer(site);
    plan.tasks.push_back({std::move(p), std::move(site), std::move(key)});
  }
  if (!spec.current_settings) return plan;
  SweepPoint current;
  for (const auto& sp : spec.parameters) current[sp.name] = current_setting(base, sp.name);
  Site site = base;
  apply_point(site, current);
  auto key = keyer(site);
  const auto it =
      std::find_if(plan.tasks.begin(), plan.tasks.end(), [&](const auto& t) { return t.key == key; });
  plan.current = static_cast<std::size_t>(it - plan.tasks.begin());
  plan.current_added = it == plan.tasks.end();
  if (plan.current_added) plan.tasks.push_back({std::move(current), std::move(site), std::move(key)});
  return plan;
}

void replay_replicates(const Site& site, const Trace& trace, std::uint32_t replicates, bool check_invariants,
                       const std::function<void(Seconds, ReplayResult&)>& each) {
  for (const Seconds offset : phase_offsets(site, replicates)) {
    ReplayOptions ro;
    ro.check_invariants = check_invariants;
    ro.start_offset = offset;
    auto result = run_replay(site, trace, ro);
    each(offset, result);
  }
}

SweepRow evaluate_task(const SweepSpec& spec, const SweepPlan& plan, std::size_t index) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Seconds> offsets;
  std::vector<sim::ReplayMetrics> runs;
  // Per trace job: the sum of its waits over the replicates (s), and in how many it started.
  std::vector<std::int64_t> wait_sum(spec.job_waits ? plan.trace.jobs.size() : 0, 0);
  std::vector<std::uint32_t> started(wait_sum.size(), 0);
  replay_replicates(plan.tasks.at(index).site, plan.trace, spec.replicates, plan.check_invariants,
                    [&](Seconds offset, ReplayResult& result) {
                      offsets.push_back(offset);
                      runs.push_back(std::move(result.metrics));
                      for (const auto& j : result.state->jobs)
                        if (j.start != kUnsetTime && j.trace_index < wait_sum.size()) {
                          wait_sum[j.trace_index] += j.start - j.submit;
                          ++started[j.trace_index];
                        }
                    });
  SweepRow row = task_row(spec, plan, index, runs, offsets, "exact", seconds_since(t0));
  if (spec.job_waits) {
    // The mean over the replicates, rounded to the second; -1 unless the job started in every one.
    std::vector<std::int64_t> waits(wait_sum.size(), -1);
    const auto n = static_cast<std::int64_t>(offsets.size());
    for (std::size_t i = 0; i < waits.size(); ++i)
      if (started[i] == offsets.size()) waits[i] = (2 * wait_sum[i] + n) / (2 * n);
    row.job_waits = encode_job_waits(waits);
  }
  return row;
}

std::pair<double, double> mean_and_standard_error(const std::vector<double>& values) {
  const auto n = static_cast<double>(values.size());
  if (values.empty())
    return {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
  double sum = 0;
  for (double v : values) sum += v;
  const double mean = sum / n;
  if (values.size() < 2) return {mean, std::numeric_limits<double>::quiet_NaN()};
  double sq = 0;
  for (double v : values) sq += (v - mean) * (v - mean);
  return {mean, std::sqrt(sq / (n - 1) / n)};
}

SweepEngine parse_sweep_engine(const std::string& name) {
  if (name == "exact") return SweepEngine::kExact;
  if (name == "surrogate") return SweepEngine::kSurrogate;
  if (name == "hybrid") return SweepEngine::kHybrid;
  throw std::invalid_argument(fmt::format("engine '{}': expected exact, surrogate or hybrid", name));
}

namespace {

Progress make_progress(const SweepRunOptions& options, std::ostream& discard, const std::string& label,
                       std::size_t total, std::size_t initial) {
  ProgressOptions po;
  po.label = label;
  po.unit = "points";
  po.total = total;
  po.initial = initial;
  po.style = options.progress ? options.progress_style : ProgressStyle::kOff;
  po.interval_s = std::max(0.05, options.progress_interval_s);
  return Progress(options.progress ? *options.progress : discard, po);
}

/// Wall-clock seconds since the epoch: claims are compared across processes.
std::int64_t epoch_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string host_name() {
  std::array<char, 256> host{};
  gethostname(host.data(), host.size() - 1);
  return host.data();
}

/// This run's name in the store's claims: host, pid and a random tag (pids are reused).
std::string claim_owner() {
  std::random_device tag;
  return fmt::format("{}:{}:{:08x}", host_name(), getpid(), tag());
}

/// Whether the run named `owner` (claim_owner) may still be running: false only for a process of this
/// host that is gone (a run killed here leaves its points at once, not after its claims expire).
bool claim_owner_alive(const std::string& owner) {
  const auto colon = owner.find(':');
  const auto second = owner.find(':', colon + 1);
  if (colon == std::string::npos || second == std::string::npos || owner.substr(0, colon) != host_name())
    return true;
  const auto pid = text::parse_int(owner.substr(colon + 1, second - colon - 1));
  if (!pid || *pid <= 0) return true;
  return kill(static_cast<pid_t>(*pid), 0) == 0 || errno == EPERM;
}

// A claim lasts kClaimLease s and is renewed every kClaimRenew s while the run's replays go on, so a
// killed run's points wait at most kClaimLease s for another run; a wait for another run's points
// looks again every kClaimPoll.
constexpr std::int64_t kClaimLease = 300, kClaimRenew = 30;
constexpr std::chrono::milliseconds kClaimPoll{1000};

/// Replays the plan's tasks `todo` on `workers` threads, storing each row as it comes, and returns how
/// many this run replayed. Points are claimed in the store first: one that another run sharing the
/// database is replaying is left to it, and waited for (or taken over when that run's claim expires),
/// so that on return every point of `todo` is in the store. The first error stops the workers, drops
/// this run's claims and is rethrown.
std::size_t run_exact(const SweepSpec& spec, const SweepPlan& plan, SweepStore& store,
                      const std::vector<std::size_t>& todo, unsigned workers, Progress& progress) {
  const std::string owner = claim_owner();
  std::mutex mutex;  // guards store, busy and renewed
  std::int64_t renewed = epoch_seconds();
  ParallelOptions po;
  po.threads = workers;
  po.poll = [&] {
    progress.poll();  // progress lines keep coming while replays are long
    std::lock_guard lock(mutex);
    if (const auto now = epoch_seconds(); now - renewed >= kClaimRenew) {
      store.renew_claims(owner, now, kClaimLease);
      renewed = now;
    }
  };
  std::size_t replayed = 0;
  std::vector<std::size_t> queue = todo, busy;
  try {
    while (!queue.empty()) {
      busy.clear();
      parallel_for(
          queue.size(),
          [&](std::size_t i) {
            const auto task = queue[i];
            const auto& key = plan.tasks[task].key;
            SweepStore::Claim claim{};
            {
              std::lock_guard lock(mutex);
              claim = store.claim(key, owner, epoch_seconds(), kClaimLease, claim_owner_alive);
              if (claim == SweepStore::Claim::kBusy) busy.push_back(task);
            }
            if (claim == SweepStore::Claim::kDone) progress.add();  // another run stored it meanwhile
            if (claim != SweepStore::Claim::kMine) return;
            const auto row = evaluate_task(spec, plan, task);
            {
              std::lock_guard lock(mutex);
              store.insert(row, spec.objectives, spec.constraints);
              store.release_claim(key, owner);
              ++replayed;
            }
            progress.add();
          },
          po);
      if (busy.empty()) break;
      // Another run is replaying these: look again after a while (they are done, or ours once its
      // claims expire), in plan order.
      std::sort(busy.begin(), busy.end());
      queue = busy;
      const auto until = std::chrono::steady_clock::now() + kClaimPoll;
      while (std::chrono::steady_clock::now() < until) {
        po.poll();
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
  } catch (...) {
    std::lock_guard lock(mutex);
    try {
      store.release_claims(owner);
    } catch (const std::exception&) {  // the first error is the one to report
    }
    throw;
  }
  return replayed;
}

/// The store row of a surrogate prediction: its medians as the values, and the prediction.
SweepRow prediction_row(const SweepSpec& spec, const SweepPlan& plan, std::size_t task,
                        const SurrogatePrediction& p) {
  SweepRow row = task_row(spec, plan, task, std::span(&p.metrics[1], 1), {0}, "surrogate", p.seconds);
  // The medians are the row's values; the 10% and 90% schedules bound the interval.
  row.predicted = row.objectives;
  row.predicted.insert(row.predicted.end(), row.constraint_values.begin(), row.constraint_values.end());
  std::vector<std::string> metrics;
  for (const auto& o : spec.objectives) metrics.push_back(o.metric);
  for (const auto& c : spec.constraints) metrics.push_back(c.metric);
  for (const auto& metric : metrics) {
    const double a = metric_value(p.metrics[0], metric), b = metric_value(p.metrics[2], metric);
    row.predicted_lo.push_back(std::min(a, b));
    row.predicted_hi.push_back(std::max(a, b));
  }
  row.predicted_seconds = p.seconds;
  if (spec.job_waits) {
    std::vector<std::int64_t> waits;
    for (double w : p.median_waits) waits.push_back(w < 0 ? -1 : std::llround(w));
    row.predicted_job_waits = encode_job_waits(waits);
  }
  return row;
}

}  // namespace

namespace {

/// The surrogate phase: predicts the plan's tasks `todo` in batches and stores each prediction.
void predict_points(const SweepSpec& spec, const SweepPlan& plan, SweepStore& store,
                    const std::vector<std::size_t>& todo, const SweepRunOptions& options, unsigned workers,
                    std::ostream& discard) {
  std::vector<std::string> warnings;
  auto& scorer = *options.scorer;
  const std::size_t batch = std::max<std::size_t>(1, scorer.prepare(spec, plan, workers, warnings));
  for (const auto& w : warnings) {
    if (options.warnings) options.warnings->push_back(w);
    if (options.progress) *options.progress << "warning: " << w << "\n" << std::flush;
  }
  auto progress = make_progress(options, discard, "surrogate", todo.size(), 0);
  for (std::size_t from = 0; from < todo.size(); from += batch) {
    const std::vector<std::size_t> part(
        todo.begin() + static_cast<std::ptrdiff_t>(from),
        todo.begin() + static_cast<std::ptrdiff_t>(std::min(todo.size(), from + batch)));
    const auto predictions = scorer.predict(part);
    for (std::size_t k = 0; k < part.size(); ++k) {
      store.insert(prediction_row(spec, plan, part[k], predictions[k]), spec.objectives, spec.constraints);
      progress.add();
    }
    progress.poll();
  }
  progress.finish();
}

/// A stored row's values in the spec's order (objectives, then constraints), and its surrogate
/// prediction likewise: the store keeps objectives in the order they were first added, which another
/// spec may have begun, and constraints in this spec's order.
class SpecValues {
 public:
  SpecValues(const SweepSpec& spec, const SweepStore& store) : constraints_(spec.constraints.size()) {
    const auto stored = store.objectives();
    stored_objectives_ = stored.size();
    for (const auto& o : spec.objectives)
      for (std::size_t k = 0; k < stored.size(); ++k)
        if (stored[k].metric == o.metric) objectives_.push_back(k);
  }
  std::vector<double> exact(const SweepRow& r) const {
    std::vector<double> out;
    for (auto k : objectives_) out.push_back(r.objectives.at(k));
    out.insert(out.end(), r.constraint_values.begin(), r.constraint_values.end());
    return out;
  }
  PointPrediction predicted(const SweepRow& r) const {
    if (!r.has_prediction()) {
      const auto n = objectives_.size() + constraints_;
      const double nan = std::numeric_limits<double>::quiet_NaN();
      return {std::vector<double>(n, nan), std::vector<double>(n, nan), std::vector<double>(n, nan)};
    }
    const auto pick = [&](const std::vector<double>& v) {
      std::vector<double> out;
      for (auto k : objectives_) out.push_back(v.at(k));
      for (std::size_t c = 0; c < constraints_; ++c) out.push_back(v.at(stored_objectives_ + c));
      return out;
    };
    return {pick(r.predicted), pick(r.predicted_lo), pick(r.predicted_hi)};
  }

 private:
  std::vector<std::size_t> objectives_;  // store position of each spec objective
  std::size_t stored_objectives_ = 0, constraints_ = 0;
};

/// The hybrid's exact evaluations among the plan's tasks `mine` (choose_for_exact over their stored
/// predictions), replayed round by round; returns how many points it chose, `replayed` how many of
/// them it replayed (the others were exact in the store already).
std::size_t hybrid_exact(const SweepSpec& spec, const SweepPlan& plan, SweepStore& store,
                         const std::vector<std::size_t>& mine, const SweepRunOptions& options,
                         unsigned workers, std::ostream& discard, std::size_t& replayed) {
  const SpecValues values(spec, store);
  std::vector<PointPrediction> predictions;
  {
    std::map<std::string, SweepRow> by_key;
    for (auto& r : store.rows()) by_key[r.key] = std::move(r);
    for (auto i : mine) {
      const auto it = by_key.find(plan.tasks[i].key);
      predictions.push_back(values.predicted(it == by_key.end() ? SweepRow{} : it->second));
    }
  }
  replayed = 0;
  bool first = true;
  const auto evaluate = [&](const std::vector<std::size_t>& part) {
    std::vector<std::vector<double>> out;
    const bool calibration = first;
    first = false;
    if (part.empty()) return out;
    const auto status = store.status();
    std::vector<std::size_t> todo;
    for (auto c : part)
      if (const auto it = status.find(plan.tasks[mine[c]].key); it == status.end() || !it->second.exact)
        todo.push_back(mine[c]);
    if (calibration && options.progress)
      *options.progress << fmt::format("sweep: calibration: {} points spread over the design\n", part.size())
                        << std::flush;
    auto progress = make_progress(options, discard, calibration ? "calibration" : "verification", part.size(),
                                  part.size() - todo.size());
    replayed += run_exact(spec, plan, store, todo, workers, progress);
    progress.finish();
    std::map<std::string, const SweepRow*> by_key;
    const auto rows = store.rows();
    for (const auto& r : rows) by_key[r.key] = &r;
    for (auto c : part) out.push_back(values.exact(*by_key.at(plan.tasks[mine[c]].key)));
    return out;
  };
  auto chosen = options.scorer->choose_exact(spec, plan, mine, predictions, evaluate);
  // You are here: the site's own settings, the point every other is compared with, are always
  // evaluated exactly (one exact replay more when the scorer did not choose them).
  if (plan.current)
    if (const auto it = std::find(mine.begin(), mine.end(), *plan.current); it != mine.end()) {
      const auto c = static_cast<std::size_t>(it - mine.begin());
      if (std::find(chosen.begin(), chosen.end(), c) == chosen.end()) {
        evaluate({c});
        chosen.push_back(c);
      }
    }
  return chosen.size();
}

}  // namespace

std::string shard_note(const SweepRunOptions& options) {
  return options.shards > 1 ? fmt::format(" (shard {}/{})", options.shard, options.shards) : std::string();
}

void describe_sweep(SweepStore& store, const SweepSpec& spec, const SweepPlan& plan) {
  store.add_objectives(spec.objectives);
  store.set_constraints(spec.constraints);
  if (plan.current) store.set_current(plan.tasks.at(*plan.current).key, plan.tasks[*plan.current].point);
}

SweepRunSummary run_sweep_spec(const SweepSpec& spec, const std::string& db, const SweepRunOptions& options) {
  SweepPlan plan = plan_sweep(spec);
  plan.check_invariants = options.check_invariants;
  SweepStore store(db);
  describe_sweep(store, spec, plan);
  const auto status = store.status();
  const auto state = [&](std::size_t i) {
    const auto it = status.find(plan.tasks[i].key);
    return it == status.end() ? PointStatus{} : it->second;
  };
  std::vector<std::size_t> mine;  // task indices of this shard
  for (std::size_t i = 0; i < plan.tasks.size(); ++i)
    if (in_shard(i, options.shard, options.shards)) mine.push_back(i);
  SweepRunSummary summary;
  summary.total = mine.size();
  const unsigned workers = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::ostringstream discard;
  const auto say = [&](const std::string& text) {
    if (options.progress) *options.progress << text << std::flush;
  };
  const std::string where =
      options.shards > 1 ? fmt::format(" in shard {}/{}", options.shard, options.shards) : std::string();

  if (options.engine != SweepEngine::kExact) {
    if (!options.scorer)
      throw std::logic_error("run_sweep_spec: the surrogate and hybrid engines need a scorer");
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::size_t> to_predict;
    if (!options.scorer->has_model()) {
      say(fmt::format(
          "sweep: {} points{}; no model: the exact values chosen so far screen the rest (response "
          "surface)\n",
          summary.total, where));
    } else {
      for (auto i : mine)
        if (!state(i).predicted) to_predict.push_back(i);
      say(fmt::format("sweep: {} points{}, {} already predicted in {}, {} for the surrogate\n", summary.total,
                      where, summary.total - to_predict.size(), db, to_predict.size()));
    }
    if (!to_predict.empty()) predict_points(spec, plan, store, to_predict, options, workers, discard);
    summary.predicted = to_predict.size();
    summary.surrogate_seconds = seconds_since(t0);
    if (options.engine == SweepEngine::kHybrid) {
      const auto t1 = std::chrono::steady_clock::now();
      summary.verified = hybrid_exact(spec, plan, store, mine, options, workers, discard, summary.evaluated);
      summary.skipped = summary.verified - summary.evaluated;
      summary.exact_seconds = seconds_since(t1);
    }
  } else {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::size_t> todo;
    for (auto i : mine) {
      if (state(i).exact)
        ++summary.skipped;
      else
        todo.push_back(i);
    }
    const std::size_t n = mine.size();
    say(fmt::format(
        "sweep: {} points{} for the exact simulator{}, {} already in {}, {} to run on {} threads\n", n, where,
        plan.current_added ? " (the design's and the site's current settings)" : "", n - todo.size(), db,
        todo.size(), std::min<std::size_t>(workers, std::max<std::size_t>(todo.size(), 1))));
    auto progress = make_progress(options, discard, "sweep", n, n - todo.size());
    summary.evaluated = run_exact(spec, plan, store, todo, workers, progress);
    summary.skipped = n - summary.evaluated;  // with the points a run sharing the store replayed meanwhile
    progress.finish();
    summary.exact_seconds = seconds_since(t0);
  }
  summary.feasible = count_feasible(store, plan, options);
  return summary;
}

}  // namespace slurmtwin::experiments
