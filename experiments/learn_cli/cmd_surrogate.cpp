// slurmtwin surrogate: build a dataset from the exact simulator, train the transformer surrogate,
// evaluate it (and the ridge baseline) on held-out windows and settings. docs/surrogate.md.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "experiments/cli/cli.hpp"
#include "experiments/cli/site_options.hpp"
#include "experiments/cli/trace_options.hpp"
#include "experiments/learn/surrogate_data.hpp"
#include "experiments/learn/surrogate_eval.hpp"
#include "experiments/replay/interrupt.hpp"
#include "experiments/replay/progress.hpp"
#include "experiments/replay/stopwatch.hpp"
#include "experiments/sweep/sweep.hpp"
#include "experiments/sweep/sweep_store.hpp"
#include "surrogate/device.hpp"
#include "surrogate/evaluation.hpp"
#include "surrogate/model.hpp"
#include "traces/file_io.hpp"
#include "traces/synthetic.hpp"

namespace slurmtwin::cli {
namespace {

using namespace surrogate;

const char* kUsage =
    "slurmtwin surrogate dataset [--site ...] [--trace FILE] -o DATA [--settings N] [--param NAME=LO:HI]\n"
    "       slurmtwin surrogate train --data DATA -o MODEL [--steps N] [--loss pinball|mse|mae-mse] [--init "
    "MODEL]\n"
    "       slurmtwin surrogate eval --model MODEL --data DATA [--site ... --trace FILE] [--json FILE]\n"
    "       slurmtwin surrogate update --model MODEL --spec SPEC.yaml --db SWEEP.db -o NEW_MODEL\n"
    "       slurmtwin surrogate info";

Trace load_trace_or_default(const po::variables_map& vm) {
  ReadReport report;
  if (vm.count("trace")) return load_traces(vm["trace"].as<std::vector<std::string>>(), vm, report);
  auto config = default_synthetic_config();
  config.seed = vm["seed"].as<std::uint64_t>();
  return generate_synthetic(config);
}

// NAME=LO:HI
SweepParameter parse_param(const std::string& text) {
  const auto eq = text.find('='), colon = text.find(':', eq == std::string::npos ? 0 : eq);
  if (eq == std::string::npos || colon == std::string::npos)
    throw po::error(fmt::format("--param expects NAME=LO:HI, got '{}'", text));
  SweepParameter p;
  p.name = text.substr(0, eq);
  try {
    p.lo = std::stod(text.substr(eq + 1, colon - eq - 1));
    p.hi = std::stod(text.substr(colon + 1));
  } catch (const std::exception&) {
    throw po::error(fmt::format("--param '{}': LO and HI must be numbers", text));
  }
  bool integer = true;
  if (!setting_is_known(p.name, integer))
    throw po::error(fmt::format("--param: unknown setting '{}'", p.name));
  if (!(p.hi > p.lo)) throw po::error(fmt::format("--param '{}': empty range", text));
  p.integer = integer;
  return p;
}

int dataset(const Args& args) {
  po::options_description o("surrogate dataset options");
  o.add_options()("trace", po::value<std::vector<std::string>>()->multitoken(),
                  "trace file(s) (default: the built-in synthetic week)")(
      "seed", po::value<std::uint64_t>()->default_value(42), "seed of the built-in synthetic workload")(
      "out,o", po::value<std::string>()->required(), "dataset file to write")(
      "window-jobs", po::value<std::uint32_t>()->default_value(768), "target jobs per window")(
      "context-jobs", po::value<std::uint32_t>()->default_value(256),
      "jobs before each window replayed and seen as context")("stride-jobs",
                                                              po::value<std::uint32_t>()->default_value(0),
                                                              "jobs between window starts (0 = window-jobs)")(
      "max-windows", po::value<std::uint32_t>()->default_value(0), "at most this many windows (0 = all)")(
      "settings", po::value<std::uint32_t>()->default_value(40),
      "Latin-hypercube settings besides the site's own")(
      "param", po::value<std::vector<std::string>>()->multitoken(),
      "swept setting NAME=LO:HI (repeatable; default: the six PriorityWeight* over 0:100000)")(
      "design-seed", po::value<std::uint64_t>()->default_value(1), "seed of the Latin hypercube")(
      "recorded", po::bool_switch(), "use the trace's recorded waits instead of simulating (real-wait mode)")(
      "window-replay", po::bool_switch(),
      "replay each window alone from an empty cluster (default: one replay of the whole trace per setting)")(
      "submit-time-only", po::bool_switch(), "leave real runtimes out of the features")(
      "queue-state", po::bool_switch(),
      "add the recorded queue at each submission and the recorded priority to the features (with "
      "--recorded)")("reference", po::bool_switch(),
                     "add what an exact replay of the site's own setting did to the features (each job's "
                     "wait, the queue it met, "
                     "its priority factors at submit); a sweep replays that setting once")(
      "schema-from", po::value<std::string>()->default_value(""),
      "use this checkpoint's feature schema (to fine-tune it on another trace)")(
      "start-offset", po::value<Seconds>()->default_value(0),
      "every replay's controller starts this many s before the first submit (the phase of its timers; "
      "a dataset built with another offset is `eval --noise-floor`'s yardstick)")(
      "phases", po::value<std::uint32_t>()->default_value(1),
      "replays per setting, their controller starts spread over one bf_interval: each job's wait is the mean "
      "over them (its expected wait whatever the phase of the timers)")("jobs,j", jobs_value(),
                                                                        "replays in parallel");
  add_site_options(o);
  add_trace_read_options(o);
  const auto vm = parse("slurmtwin surrogate dataset [--site ...] [--trace FILE] -o DATA", o, args);
  std::vector<std::string> warnings;
  const Site site = load_site(vm, warnings);
  for (const auto& w : warnings) std::cerr << "warning: " << w << "\n";
  const Trace trace = load_trace_or_default(vm);
  DatasetOptions d;
  d.window_jobs = vm["window-jobs"].as<std::uint32_t>();
  d.context_jobs = vm["context-jobs"].as<std::uint32_t>();
  d.stride_jobs = vm["stride-jobs"].as<std::uint32_t>();
  d.max_windows = vm["max-windows"].as<std::uint32_t>();
  d.settings = vm["settings"].as<std::uint32_t>();
  d.seed = vm["design-seed"].as<std::uint64_t>();
  d.recorded = vm["recorded"].as<bool>();
  d.window_replay = vm["window-replay"].as<bool>();
  d.submit_time_only = vm["submit-time-only"].as<bool>();
  d.queue_state = vm["queue-state"].as<bool>();
  d.reference = vm["reference"].as<bool>();
  d.start_offset = vm["start-offset"].as<Seconds>();
  if (d.start_offset < 0) throw po::error("--start-offset must not be negative");
  d.phases = vm["phases"].as<std::uint32_t>();
  if (d.phases == 0 || d.phases > 1000) throw po::error("--phases must be in [1, 1000]");
  d.threads = jobs_option(vm);
  if (vm.count("param"))
    for (const auto& p : vm["param"].as<std::vector<std::string>>()) d.parameters.push_back(parse_param(p));
  else
    d.parameters = default_surrogate_parameters();
  std::optional<Surrogate> base;
  if (const auto& from = vm["schema-from"].as<std::string>(); !from.empty()) {
    base = Surrogate::load(from);
    d.schema = &base->schema();
  }
  const auto t0 = std::chrono::steady_clock::now();
  const InterruptGuard interrupt;  // SIGINT/SIGTERM: stop the replays, write nothing, exit 130
  d.stop = &interrupt.flag();
  std::cerr << fmt::format("building a dataset from {} jobs (Ctrl-C stops cleanly, writing nothing)\n",
                           trace.jobs.size());
  ProgressOptions po;
  po.label = "dataset";
  po.unit = d.phases > 1 ? fmt::format("settings of {} replays", d.phases) : "replays";
  po.style = progress_style_for(2);
  std::optional<Progress> bar;
  const auto data = build_dataset(site, trace, d, [&](std::size_t done, std::size_t total) {
    if (!bar) {
      po.total = total;
      bar.emplace(std::cerr, po);
    }
    bar->update(done);
  });
  if (bar) bar->finish();
  write_dataset(data, vm["out"].as<std::string>());
  std::size_t targets = 0;
  for (const auto& w : data.windows)
    for (auto t : w.target) targets += t;
  std::cout << fmt::format("dataset {}: {} windows ({} target jobs), {} settings, {} waits; {} in {:.1f} s\n",
                           vm["out"].as<std::string>(), data.windows.size(), targets, data.setting_count(),
                           targets * data.setting_count(),
                           data.recorded  ? "recorded waits"
                           : d.phases > 1 ? fmt::format("exact replays at {} phases", d.phases)
                                          : "exact replays",
                           seconds_since(t0));
  return kExitOk;
}

// Said after "best validation ... at step N" when no step improved on the weights training started from.
std::string kept_initial(const TrainReport& report) {
  return report.best_step == 0 ? " (no step validated better than the initial weights, which are kept)" : "";
}

int train(const Args& args) {
  po::options_description o("surrogate train options");
  ModelConfig c;
  TrainOptions t;
  o.add_options()("data", po::value<std::string>()->required(), "dataset (surrogate dataset)")(
      "out,o", po::value<std::string>()->required(), "checkpoint to write")(
      "init", po::value<std::string>()->default_value(""), "start from this checkpoint (fine-tuning)")(
      "renormalise", po::bool_switch(), "with --init: normalise with this data's training part")(
      "d-model", po::value<std::int64_t>(&c.d_model)->default_value(c.d_model), "token width")(
      "heads", po::value<std::int64_t>(&c.heads)->default_value(c.heads), "attention heads")(
      "encoder-layers", po::value<std::int64_t>(&c.encoder_layers)->default_value(c.encoder_layers),
      "setting-independent blocks")(
      "conditioned-layers",
      po::value<std::int64_t>(&c.conditioned_layers)->default_value(c.conditioned_layers),
      "setting-conditioned attention blocks")(
      "competition-heads", po::value<std::int64_t>(&c.competition_heads)->default_value(c.competition_heads),
      "priority-competition heads")("ffn", po::value<std::int64_t>(&c.ffn)->default_value(c.ffn),
                                    "feed-forward width")(
      "dropout", po::value<double>(&c.dropout)->default_value(c.dropout), "dropout")(
      "ridge-base", po::bool_switch(&c.ridge_base),
      "the median adds to the ridge baseline's prediction (fitted on this split), starting from it")(
      "loss", po::value<std::string>()->default_value("pinball"), "median loss: pinball, mse or mae-mse")(
      "steps", po::value<std::int64_t>(&t.steps)->default_value(t.steps), "optimiser steps")(
      "settings-per-step", po::value<std::int64_t>(&t.settings_per_step)->default_value(t.settings_per_step),
      "settings per step (one window each)")("lr", po::value<double>(&t.lr)->default_value(t.lr),
                                             "peak learning rate")(
      "warmup", po::value<std::int64_t>(&t.warmup)->default_value(t.warmup), "warm-up steps")(
      "eval-every", po::value<std::int64_t>(&t.eval_every)->default_value(t.eval_every),
      "steps between validations")("patience",
                                   po::value<std::int64_t>(&t.patience)->default_value(t.patience),
                                   "validations without improvement before stopping")(
      "seed", po::value<std::uint64_t>(&t.seed)->default_value(t.seed), "initialisation and sampling seed")(
      "split-seed", po::value<std::uint64_t>()->default_value(7), "seed of the held-out settings")(
      "split", po::value<std::string>()->default_value("interleaved"),
      "held-out windows: interleaved (every 7th tests), tail (the last 15% in time) or all (nothing held "
      "out, for use: every step runs, the last weights are kept, the interval is not calibrated)")(
      "train-windows", po::value<std::uint32_t>()->default_value(0),
      "use only the first N training windows (few-shot; 0 = all)")(
      "train-settings", po::value<std::uint32_t>()->default_value(0),
      "use only the first N training settings (few-shot; 0 = all)")(
      "threads", po::value<int>(&t.threads)->default_value(0), "CPU threads (0 = all cores)")(
      "device", po::value<std::string>(&t.device)->default_value("auto"), "auto, cpu or cuda")(
      "within-weight", po::value<double>(&t.within_weight)->default_value(0),
      "weight of a loss on each job's moves between settings (0 = off)")(
      "ema", po::value<double>(&t.ema)->default_value(0),
      "decay of a moving average of the weights, validated and kept instead of them (e.g. 0.999; 0 = off)")(
      "conformal-coverage",
      po::value<double>(&t.conformal_coverage)->default_value(t.conformal_coverage, "0.8"),
      "after training, shift the 10/90% interval to hold this share of the validation targets (0 = off)");
  const auto vm = parse("slurmtwin surrogate train --data DATA -o MODEL", o, args);
  if (!(t.conformal_coverage >= 0 && t.conformal_coverage < 1))
    throw po::error("--conformal-coverage must be in [0, 1)");
  if (!(t.ema >= 0 && t.ema < 1)) throw po::error("--ema must be in [0, 1)");
  t.loss = parse_loss(vm["loss"].as<std::string>());
  const auto& data_file = vm["data"].as<std::string>();
  const auto data = read_dataset(data_file);
  const SplitRecord split_record{parse_split_mode(vm["split"].as<std::string>()),
                                 vm["split-seed"].as<std::uint64_t>()};
  auto split = make_split(data, split_record.seed, split_record.mode);
  if (const auto n = vm["train-windows"].as<std::uint32_t>(); n > 0 && n < split.train_windows.size())
    split.train_windows.resize(n);
  if (const auto n = vm["train-settings"].as<std::uint32_t>(); n > 0 && n < split.train_settings.size())
    split.train_settings.resize(n);
  Surrogate model = [&] {
    if (const auto& init = vm["init"].as<std::string>(); !init.empty()) {
      auto m = Surrogate::load(init);
      m.check_compatible(data, data_file);
      if (vm["renormalise"].as<bool>()) m.renormalise(data, split);
      return m;
    }
    return Surrogate(data, split, c, t.seed);
  }();
  Surrogate::set_threads(t.threads);  // before the summary, which states them (train sets them again)
  std::cout << fmt::format("{}; model {} parameters; {} train windows × {} settings, validation {} × {}\n",
                           torch_summary(), model.parameter_count(), split.train_windows.size(),
                           split.train_settings.size(), split.val_windows.size(), split.val_settings.size());
  const InterruptGuard interrupt;  // SIGINT/SIGTERM: stop before the next step, write nothing, exit 130
  t.stop = [&interrupt] { return interrupt.flag().load(std::memory_order_relaxed); };
  const auto report =
      model.train(data, split, t, [](const std::string& line) { std::cout << line << std::endl; });
  if (report.stopped)
    throw Interrupted(fmt::format(
        "{}: training stopped after step {} of {}; no checkpoint written",
        InterruptGuard::signal_name().empty() ? std::string("interrupted") : InterruptGuard::signal_name(),
        report.steps, t.steps));
  model.set_trained_split(split_record);  // eval of the same trace holds out the same windows
  model.save(vm["out"].as<std::string>());
  const bool held_out = report.held_out;
  std::cout << fmt::format(
      "trained on {} for {} steps in {:.1f} s ({:.2f} steps/s); {} {:.4f} at step {}{}; saved {}\n",
      report.device, report.steps, report.seconds, report.steps / std::max(1e-9, report.seconds),
      held_out ? "best validation" : "nothing held out: the last weights kept, training loss",
      report.best_val_loss, report.best_step, held_out ? kept_initial(report) : "",
      vm["out"].as<std::string>());
  if (report.calibration_targets > 0)
    std::cout << fmt::format(
        "80% interval on {} validation targets: coverage {:.3f} as trained; shifted by {:+.3f} "
        "in log1p(wait s) to hold {:.0f}%\n",
        report.calibration_targets, report.raw_coverage, report.interval_shift, 100 * t.conformal_coverage);
  return kExitOk;
}

// A JSON number, or null for NaN (e.g. a rank correlation over a single setting).
std::string json_number(double v, int decimals = 4) {
  return std::isnan(v) ? "null" : fmt::format("{:.{}f}", v, decimals);
}

// The figures eval --bootstrap reports, by their JSON names (coverage only for an interval prediction).
std::vector<std::pair<const char*, Figure>> bootstrap_figures(const EvalResult& r) {
  std::vector<std::pair<const char*, Figure>> out = {{"r2_hours", Figure::kR2Hours},
                                                     {"mse_log10", Figure::kMseLog10}};
  if (!r.point) out.emplace_back("coverage80", Figure::kCoverage80);
  out.insert(out.end(), {{"r2_setting_effect", Figure::kR2SettingEffect},
                         {"mean_wait_mape_pct", Figure::kMeanWaitPctError},
                         {"mean_wait_bias_pct", Figure::kMeanWaitPctBias},
                         {"spearman_mean_wait", Figure::kSpearman},
                         {"spearman_pooled", Figure::kSpearmanPooled},
                         {"regret_pooled_pct", Figure::kRegretPooled}});
  return out;
}

// "name [lo, hi], ..." of the intervals `of` gives for r's figures, leaving out those without one.
template <class Of>
std::string interval_list(const EvalResult& r, Of of) {
  std::string line;
  for (const auto& [name, figure] : bootstrap_figures(r))
    if (const Interval v = of(figure); !std::isnan(v.lo))
      line += fmt::format("{}{} [{:.3f}, {:.3f}]", line.empty() ? "" : ", ", name, v.lo, v.hi);
  return line;
}

// The same as JSON members: "name": [lo, hi].
template <class Of>
std::string interval_json(const EvalResult& r, Of of) {
  std::string out;
  for (const auto& [name, figure] : bootstrap_figures(r)) {
    const Interval v = of(figure);
    out += fmt::format(", \"{}\": [{}, {}]", name, json_number(v.lo), json_number(v.hi));
  }
  return out;
}

std::string result_json(const EvalResult& r) {
  const auto& j = r.jobs;
  const auto& g = r.ranking;
  std::string out = fmt::format("{{\"jobs\": {}", j.jobs);
  const std::pair<const char*, double> fields[] = {{"mae_hours", j.mae_hours},
                                                   {"rmse_hours", j.rmse_hours},
                                                   {"r2_hours", j.r2_hours},
                                                   {"r2_log", j.r2_log},
                                                   {"mse_log10", j.mse_log10},
                                                   {"fvu_log10", j.fvu_log10},
                                                   {"coverage80", r.point ? std::nan("") : j.coverage80},
                                                   {"mae_hours_longest10", j.mae_hours_longest10},
                                                   {"mae_hours_shortest10", j.mae_hours_shortest10},
                                                   {"setting_variance_share", j.setting_variance_share},
                                                   {"r2_setting_effect", j.r2_setting_effect},
                                                   {"mean_wait_mape_pct", g.mean_abs_pct_error},
                                                   {"mean_wait_bias_pct", g.mean_pct_bias},
                                                   {"spearman_mean_wait", g.spearman},
                                                   {"kendall_mean_wait", g.kendall},
                                                   {"spearman_pooled", g.spearman_pooled},
                                                   {"regret_pooled_pct", g.regret_pooled_pct}};
  for (const auto& [name, value] : fields) out += fmt::format(", \"{}\": {}", name, json_number(value));
  if (const auto& ci = r.ci; ci.resamples > 0)
    out += fmt::format(", \"ci90\": {{\"resamples\": {}, \"windows\": {}{}}}", ci.resamples, ci.windows,
                       interval_json(r, [&](Figure f) { return ci.interval(f); }));
  return out + "}";
}

void print_result(const std::string& name, const EvalResult& r) {
  const auto& j = r.jobs;
  const auto& g = r.ranking;
  std::cout << fmt::format(
      "{:<12} jobs {:>7}  MAE {:.3f} h  RMSE {:.3f} h  R² {:.3f} (log {:.3f})  "
      "MSE log10 {:.4f} (FVU {:.3f})  80% coverage {}\n"
      "{:<12} MAE longest 10% {:.3f} h, shortest 10% {:.3f} h; mean-wait error {:.2f}% (bias {:+.2f}%); "
      "Spearman {:.3f}, Kendall {:.3f} (pooled Spearman {:.3f}, regret of its best {:.2f}%)\n",
      name, j.jobs, j.mae_hours, j.rmse_hours, j.r2_hours, j.r2_log, j.mse_log10, j.fvu_log10,
      r.point ? "- (no interval)" : fmt::format("{:.3f}", j.coverage80), "", j.mae_hours_longest10,
      j.mae_hours_shortest10, g.mean_abs_pct_error, g.mean_pct_bias, g.spearman, g.kendall, g.spearman_pooled,
      g.regret_pooled_pct);
  if (!std::isnan(j.r2_setting_effect))  // one setting (e.g. recorded waits): no moves between settings
    std::cout << fmt::format(
        "{:<12} setting effect: R² {:.3f} of each job's moves between settings "
        "(the settings hold {:.1f}% of the variance of log wait)\n",
        "", j.r2_setting_effect, 100.0 * j.setting_variance_share);
  if (const auto& ci = r.ci; ci.resamples > 0)
    std::cout << fmt::format("{:<12} 90% intervals ({} resamples of the {} windows): {}\n", "", ci.resamples,
                             ci.windows, interval_list(r, [&](Figure f) { return ci.interval(f); }));
}

// eval --bootstrap: the transformer's figures less another predictor's, resample by resample (the same
// windows in both), so that a difference smaller than either interval can still be told apart.
void print_paired(const EvalResult& transformer, const std::string& name, const EvalResult& other,
                  std::string& json, const std::string& json_name) {
  if (transformer.ci.resamples == 0) return;
  const auto of = [&](Figure f) { return transformer.ci.difference(other.ci, f); };
  std::cout << fmt::format("{:<12} transformer − {}, paired 90% intervals: {}\n", "", name,
                           interval_list(other, of));
  json += fmt::format(", \"transformer_minus_{}\": {{{}}}", json_name, interval_json(other, of).substr(2));
}

// How each group is printed: "qos NAME mean|p90", "account NAME mean" (NAME: the trace's accounts in
// that hash bucket, joined by '+', when eval was given the trace; else "#BUCKET").
std::vector<std::string> group_names(const std::vector<EvalGroup>& groups, const FeatureSchema& schema,
                                     const Trace* trace) {
  std::map<std::int64_t, std::string> accounts;
  if (trace)
    for (const auto& name : trace->accounts.names()) {
      auto& joined = accounts[hash_bucket(name, schema.account_buckets)];
      joined += (joined.empty() ? "" : "+") + name;
    }
  std::vector<std::string> names;
  for (const auto& g : groups) {
    const auto c = static_cast<std::size_t>(g.category);
    const auto stat = g.stat == EvalGroup::Stat::kP90 ? "p90" : "mean";
    if (g.kind == EvalGroup::Kind::kQos)
      names.push_back(fmt::format("qos {} {}", schema.qos.at(c - 1), stat));
    else if (const auto a = accounts.find(g.category); a != accounts.end())
      names.push_back(fmt::format("account {} {}", a->second, stat));
    else
      names.push_back(fmt::format("account #{} {}", g.category, stat));
  }
  return names;
}

// The ranking of the settings by each group's own wait statistic, from the same predictions: per-group
// objectives that a response surface would need a fit each for. With --bootstrap and a noise floor, the
// transformer's pooled Spearman less the floor's, paired over the same resamples of the group's windows.
void print_groups(const SurrogateEval& r, const std::vector<std::string>& names, std::string& json) {
  std::size_t width = 12;
  for (const auto& name : names) width = std::max(width, name.size());
  const auto floor =
      std::find_if(r.lines.begin(), r.lines.end(), [](const auto& l) { return l.key == "noise_floor"; });
  const auto& transformer = r.lines.front().result;
  const bool paired = floor != r.lines.end() && transformer.ci.resamples > 0;
  std::string head = fmt::format("  {:<{}}  {:>7}", "group", width, "jobs");
  for (const auto& line : r.lines) head += fmt::format("  {:<18}", line.name);
  if (paired) head += "  transformer − floor, Spearman (paired 90%)";
  std::cout
      << "per group: pooled Spearman of the settings by the group's own wait statistic / regret of the best\n"
      << head << "\n";
  json += ", \"groups\": [";
  for (std::size_t g = 0; g < r.groups.size(); ++g) {
    std::string row = fmt::format("  {:<{}}  {:>7}", names[g], width, r.groups[g].jobs);
    json += fmt::format("{}{{\"name\": \"{}\", \"jobs\": {}", g == 0 ? "" : ", ", names[g], r.groups[g].jobs);
    for (const auto& line : r.lines) {
      const auto& e = line.result.groups.at(g).ranking;
      row += fmt::format("  {:<18}",
                         std::isnan(e.spearman_pooled) && std::isnan(e.regret_pooled_pct)
                             ? std::string("-")
                             : fmt::format("{:.3f} / {}", e.spearman_pooled,
                                           std::isnan(e.regret_pooled_pct)  // the best waits 0: no ratio
                                               ? std::string("-")
                                               : fmt::format("{:.1f}%", e.regret_pooled_pct)));
      json += fmt::format(", \"{}\": {{\"spearman_pooled\": {}, \"regret_pooled_pct\": {}}}", line.key,
                          json_number(e.spearman_pooled), json_number(e.regret_pooled_pct));
    }
    if (paired) {
      const auto d = transformer.groups[g].ci.difference(floor->result.groups[g].ci, Figure::kSpearmanPooled);
      row += fmt::format("  [{:.3f}, {:.3f}]", d.lo, d.hi);
      json += fmt::format(", \"transformer_minus_noise_floor_spearman_pooled\": [{}, {}]", json_number(d.lo),
                          json_number(d.hi));
    }
    std::cout << row << "\n";
    json += "}";
  }
  json += "]";
  if (r.small_accounts > 0)
    std::cout << fmt::format("  ({} more accounts, each under {:.0f}% of the part's jobs, are no group)\n",
                             r.small_accounts, 100 * kMinAccountShare);
}

// A decision's setting is "found" within this % of the exact best (eval --decision-orders).
constexpr double kWithin = 1.0;

// Per group: the exact replays until the choice is within kWithin % of the group's own best, for the
// surface alone (the fewest with which that share of the design orders gets there) and for the
// transformer's top settings verified; 0 when its first choice with no replay already is. Printed
// "-" and written null when no budget of the study gets there.
void print_group_decisions(const DecisionStudy& d, const EvalResult& transformer,
                           const std::vector<std::string>& names, std::string& json) {
  using Replays = std::optional<std::size_t>;
  const auto surface_needs = [&](const std::vector<HybridRegret>& rows, double share) -> Replays {
    for (const auto& h : rows)
      if (h.hit_rate(kWithin) >= share) return h.budget;
    return std::nullopt;
  };
  const auto top_needs = [&](const DecisionStudy::Group& g, double first_choice_pct) -> Replays {
    if (first_choice_pct <= kWithin) return 0;
    for (const auto& h : g.model_top)
      if (h.regret_pct.front() <= kWithin) return h.budget;
    return std::nullopt;
  };
  const auto text = [](Replays r) { return r ? fmt::format("{}", *r) : std::string("-"); };
  const auto number = [](Replays r) { return r ? fmt::format("{}", *r) : std::string("null"); };
  std::size_t width = 12;
  for (const auto& name : names) width = std::max(width, name.size());
  std::cout << fmt::format(
      "decision per group: exact replays until the setting chosen is within {:.0f}% of the group's own best "
      "(- : not within {} replays)\n  {:<{}}  surface alone: half / 90% of orders   transformer's top\n",
      kWithin, d.surface.empty() ? 0 : d.surface.back().budget, "group", width);
  json += ", \"groups\": [";
  for (std::size_t g = 0; g < d.groups.size(); ++g) {
    const auto& dg = d.groups[g];
    const auto half = surface_needs(dg.surface, 0.5), most = surface_needs(dg.surface, 0.9);
    const auto top = top_needs(dg, transformer.groups[g].ranking.regret_pooled_pct);
    std::cout << fmt::format("  {:<{}}  {:>13} / {:<19}  {}\n", names[g], width, text(half), text(most),
                             text(top));
    json += fmt::format(
        "{}{{\"name\": \"{}\", \"best_exact_s\": {:.1f}, \"surface_half\": {}, \"surface_90\": {}, "
        "\"transformer_top\": {}}}",
        g == 0 ? "" : ", ", names[g], dg.best_exact, number(half), number(most), number(top));
  }
  json += "]";
}

// eval --decision-orders: the exact replays a hybrid sweep spends to choose the part's best setting,
// with and without the transformer, beside the transformer's choice with none.
void print_decision(const DecisionStudy& d, const EvalResult& transformer,
                    const std::vector<std::string>& names, std::string& json) {
  std::cout << fmt::format(
      "decision: the least mean wait among {} settings (best {:.0f} s); regret of the setting chosen, % of "
      "the best, over {} design orders (median / worst; share within {:.0f}%)\n"
      "  exact replays   surface alone            transformer + surface    its top half first       "
      "transformer's top\n"
      "  {:>13}   {:<23}  {:<23}  {:<23}  {:.2f}%\n",
      d.settings, d.best_exact, d.orders, kWithin, 0, "-", "-", "-", transformer.ranking.regret_pooled_pct);
  const auto cell = [&](const HybridRegret& h) {
    return fmt::format("{:.2f} / {:.2f}% ({:.0f}%)", h.median_pct(), h.worst_pct(),
                       100 * h.hit_rate(kWithin));
  };
  json +=
      fmt::format(", \"decision\": {{\"settings\": {}, \"orders\": {}, \"best_exact_s\": {:.1f}, \"rows\": [",
                  d.settings, d.orders, d.best_exact);
  for (std::size_t i = 0; i < d.surface.size(); ++i) {
    std::cout << fmt::format("  {:>13}   {:<23}  {:<23}  {:<23}  {:.2f}%\n", d.surface[i].budget,
                             cell(d.surface[i]), cell(d.with_model[i]), cell(d.model_first[i]),
                             d.model_top[i].regret_pct.front());
    json += fmt::format(
        "{}{{\"exact_replays\": {}, \"surface_median_pct\": {}, \"surface_within1\": {}, "
        "\"with_model_median_pct\": {}, \"with_model_within1\": {}, \"model_first_median_pct\": {}, "
        "\"model_first_within1\": {}, \"model_top_pct\": {}}}",
        i == 0 ? "" : ", ", d.surface[i].budget, json_number(d.surface[i].median_pct()),
        json_number(d.surface[i].hit_rate(kWithin)), json_number(d.with_model[i].median_pct()),
        json_number(d.with_model[i].hit_rate(kWithin)), json_number(d.model_first[i].median_pct()),
        json_number(d.model_first[i].hit_rate(kWithin)), json_number(d.model_top[i].regret_pct.front()));
  }
  json += "]";
  print_group_decisions(d, transformer, names, json);
  json += "}";
}

int eval(const Args& args) {
  po::options_description o("surrogate eval options");
  o.add_options()("model", po::value<std::string>()->required(), "checkpoint")(
      "data", po::value<std::string>()->required(), "dataset")("split-seed",
                                                               po::value<std::uint64_t>()->default_value(7),
                                                               "seed of the held-out settings (as in train)")(
      "split", po::value<std::string>()->default_value("interleaved"),
      "held-out windows (as in train; on the model's own trace, the model's split unless given)")(
      "part", po::value<std::string>()->default_value("test"),
      "test, val or train windows × settings, or WINDOWS:SETTINGS (e.g. test:train, the held-out windows "
      "under the training settings), or all (every window and setting: another trace's dataset)")(
      "no-baseline", po::bool_switch(), "skip the ridge baseline")(
      "against", po::value<std::string>()->default_value(""),
      "another checkpoint for the same data, scored beside the model (with --bootstrap: paired against it)")(
      "noise-floor", po::value<std::string>()->default_value(""),
      "another dataset of the same trace, windows and settings made with an immaterial difference (e.g. "
      "dataset --start-offset: slurmctld started earlier): its exact waits are scored as predictions, the "
      "floor set by the simulator's own sensitivity")("json", po::value<std::string>()->default_value(""),
                                                      "write the figures as JSON here")(
      "trace", po::value<std::vector<std::string>>()->multitoken(),
      "the dataset's trace, to time the exact replays of the same windows (default: the synthetic week)")(
      "time-exact", po::bool_switch(),
      "time exact replays of the windows (needs the dataset's site and trace)")(
      "seed", po::value<std::uint64_t>()->default_value(42), "seed of the built-in synthetic workload")(
      "threads", po::value<int>()->default_value(1), "CPU threads for inference")(
      "bootstrap", po::value<std::size_t>()->default_value(0),
      "resample the part's windows this many times for 90% intervals of the figures (0 = off)")(
      "decision-orders", po::value<std::size_t>()->default_value(0),
      "also choose the part's setting of least mean wait as a hybrid sweep would, over this many random "
      "design orders: the exact replays each way needs, the surface alone against the transformer (0 = off)");
  add_site_options(o);
  add_trace_read_options(o);
  const auto vm = parse("slurmtwin surrogate eval --model MODEL --data DATA", o, args);
  const auto& data_file = vm["data"].as<std::string>();
  const auto data = read_dataset(data_file);
  const auto model = Surrogate::load(vm["model"].as<std::string>());
  model.check_compatible(data, data_file);
  Surrogate::set_threads(vm["threads"].as<int>());
  // On the trace the model was trained on, only the split it was trained with holds out windows it has
  // not seen: that one by default, another refused. Another trace's dataset takes any split.
  SplitRecord split_record{parse_split_mode(vm["split"].as<std::string>()),
                           vm["split-seed"].as<std::uint64_t>()};
  if (const auto& trained = model.trained_split();
      trained && model.trace_fingerprint() == data.trace_fingerprint) {
    if (trained->mode == SplitMode::kAll)
      throw std::invalid_argument(fmt::format(
          "{} was trained on every window and setting of this trace (--split all): nothing here is held out "
          "to score it; evaluate it on another trace's dataset (--part all)",
          vm["model"].as<std::string>()));
    if (vm["part"].as<std::string>() == "all")
      throw std::invalid_argument(fmt::format(
          "{} was trained on this trace: --part all would score the windows and settings it trained on "
          "(name a part: test, val, train or WINDOWS:SETTINGS; --part all is for another trace's dataset)",
          vm["model"].as<std::string>()));
    const bool given = !vm["split"].defaulted() || !vm["split-seed"].defaulted();
    if (given && split_record != *trained)
      throw std::invalid_argument(fmt::format(
          "{} was trained on this trace with --split {} --split-seed {}: another split would score windows "
          "it trained on (leave both out to use the model's)",
          vm["model"].as<std::string>(), split_mode_name(trained->mode), trained->seed));
    split_record = *trained;
  }
  const auto split = make_split(data, split_record.seed, split_record.mode);
  EvalOptions eo;
  eo.part = vm["part"].as<std::string>();
  eo.bootstrap = vm["bootstrap"].as<std::size_t>();
  eo.ridge = !vm["no-baseline"].as<bool>();
  std::optional<Surrogate> against;
  if (const auto& path = vm["against"].as<std::string>(); !path.empty()) {
    against = Surrogate::load(path);
    against->check_compatible(data, data_file);
    eo.against = &*against;
  }
  std::optional<SurrogateDataset> floor;
  if (const auto& path = vm["noise-floor"].as<std::string>(); !path.empty()) {
    floor = read_dataset(path);
    eo.noise_floor = &*floor;
    eo.noise_floor_name = path;
  }
  const auto r = evaluate_surrogate(model, data, split, eo);
  const auto& windows = r.part.windows;
  const auto& settings = r.part.settings;
  std::cout << fmt::format("{} part: {} windows × {} settings ({} × {} in the dataset; split {}, seed {})\n",
                           eo.part, windows.size(), settings.size(), data.windows.size(),
                           data.setting_count(), split_mode_name(split_record.mode), split_record.seed);
  const auto& transformer = r.lines.front().result;
  std::string json = fmt::format("{{\"part\": \"{}\", \"windows\": {}, \"settings\": {}", eo.part,
                                 windows.size(), settings.size());
  for (const auto& line : r.lines) {
    print_result(line.name, line.result);
    json += fmt::format(", \"{}\": {}", line.key, result_json(line.result));
    if (line.key == "ridge")
      std::cout << fmt::format(
          "ridge ({}): {} columns, lambda {:g}; transformer / ridge MSE on log10 wait: {:.3f}\n",
          r.ridge_from_model ? "the model's own, fitted on its training split"
                             : "fitted on this dataset's training part: the checkpoint has none",
          r.ridge_columns, r.ridge_lambda, transformer.jobs.mse_log10 / line.result.jobs.mse_log10);
    if (&line != &r.lines.front()) print_paired(transformer, line.name, line.result, json, line.key);
  }
  // The trace names the account groups (checked to be the dataset's); without it they are hash buckets.
  std::optional<Trace> named_by;
  if (vm.count("trace") > 0) {
    named_by = load_trace_or_default(vm);
    if (trace_fingerprint(*named_by) != data.trace_fingerprint)
      throw std::invalid_argument("--trace: the trace is not the one the dataset was built from");
  }
  const auto names = group_names(r.groups, data.schema, named_by ? &*named_by : nullptr);
  print_groups(r, names, json);
  if (const auto orders = vm["decision-orders"].as<std::size_t>(); orders > 0)
    print_decision(decision_study(data, r, orders, vm["seed"].as<std::uint64_t>()), transformer, names, json);
  const auto kSweepBatch = SurrogateEval::kSweepBatch;
  const double per_setting_ms = r.per_setting_ms, encoder_ms = r.encoder_ms, marginal_ms = r.marginal_ms,
               batched_ms = r.batched_ms;
  std::cout << fmt::format(
      "surrogate: {:.2f} ms per setting per window ({} settings per call, {} thread(s)): the encoder {:.2f} "
      "ms once "
      "per window, then {:.3f} ms per setting (batches of {})\n",
      per_setting_ms, settings.size(), vm["threads"].as<int>(), encoder_ms, marginal_ms, kSweepBatch);
  json += fmt::format(
      ", \"surrogate_ms_per_setting\": {:.3f}, \"encoder_ms_per_window\": {:.3f}, "
      "\"marginal_ms_per_setting\": {:.4f}, \"batched_ms_per_setting\": {:.4f}",
      per_setting_ms, encoder_ms, marginal_ms, batched_ms);
  if (vm["time-exact"].as<bool>()) {
    std::vector<std::string> warnings;
    const Site site = load_site(vm, warnings);
    const Trace trace = named_by ? *named_by : load_trace_or_default(vm);
    if (trace_fingerprint(trace) != data.trace_fingerprint)
      throw std::invalid_argument("--time-exact: the trace is not the one the dataset was built from");
    // The exact simulator's cost of one setting: a replay of the whole trace (whole-trace datasets:
    // the surrogate's equivalent is every window of the dataset) or of one window.
    Site s = site;
    for (std::size_t a = 0; a < data.axes.size(); ++a)
      apply_setting(s, data.axes[a].name, data.settings[settings.front()][a]);
    double exact_ms = 0, per_window = 1;
    if (data.window_replay) {
      const auto t0 = std::chrono::steady_clock::now();
      for (auto w : windows) simulated_waits(s, sub_trace(trace, data.windows[w].job_index));
      exact_ms = 1000.0 * seconds_since(t0) / static_cast<double>(windows.size());
    } else {
      const auto t0 = std::chrono::steady_clock::now();
      simulated_waits(s, trace);
      exact_ms = 1000.0 * seconds_since(t0);
      // The surrogate's equivalent: windows that hold every job of the trace once as a target (as a
      // sweep's surrogate engine cuts them; a dataset's windows may overlap).
      const auto targets = std::count(data.windows[windows.front()].target.begin(),
                                      data.windows[windows.front()].target.end(), std::uint8_t{1});
      per_window = std::ceil(static_cast<double>(trace.jobs.size()) /
                             static_cast<double>(std::max<std::ptrdiff_t>(targets, 1)));
    }
    std::cout << fmt::format(
        "exact replay: {:.1f} ms per setting ({}); surrogate for the same jobs {:.1f} ms at {} settings per "
        "call "
        "({:.0f}× faster), {:.1f} ms per setting in batches of {} ({:.0f}× faster); the encoder's {:.1f} ms "
        "once "
        "per sweep, then {:.2f} ms per setting ({:.0f}× faster)\n",
        exact_ms, data.window_replay ? "one window" : "the whole trace, one core",
        per_setting_ms * per_window, settings.size(), exact_ms / (per_setting_ms * per_window),
        batched_ms * per_window, kSweepBatch, exact_ms / (batched_ms * per_window), encoder_ms * per_window,
        marginal_ms * per_window, exact_ms / std::max(marginal_ms * per_window, 1e-9));
    json += fmt::format(", \"exact_ms_per_setting\": {:.3f}", exact_ms);
  }
  json += "}\n";
  if (const auto& path = vm["json"].as<std::string>(); !path.empty()) write_file_atomic(path, json);
  return kExitOk;
}

// Active learning: fine-tunes a model on the exact results a sweep gathered (hybrid runs verify the
// points that matter, so that is where the model most needs to be right).
int update(const Args& args) {
  po::options_description o("surrogate update options");
  TrainOptions t;
  t.steps = 300;
  t.lr = 5e-4;
  t.warmup = 20;
  t.eval_every = 50;
  o.add_options()("model", po::value<std::string>()->required(), "checkpoint to fine-tune")(
      "spec", po::value<std::string>()->required(), "the sweep's specification (its site and trace)")(
      "db", po::value<std::string>()->required(),
      "the sweep's database: its exact rows with per-job waits (`job_waits: true`) become training data")(
      "out,o", po::value<std::string>()->required(), "fine-tuned checkpoint to write")(
      "window-jobs", po::value<std::uint32_t>()->default_value(384),
      "target jobs per window (as the model's dataset)")(
      "context-jobs", po::value<std::uint32_t>()->default_value(128), "context jobs per window")(
      "data-out", po::value<std::string>()->default_value(""),
      "also write the new examples as a dataset file")(
      "steps", po::value<std::int64_t>(&t.steps)->default_value(t.steps), "optimiser steps")(
      "lr", po::value<double>(&t.lr)->default_value(t.lr), "peak learning rate")(
      "eval-every", po::value<std::int64_t>(&t.eval_every)->default_value(t.eval_every),
      "steps between validations")("seed", po::value<std::uint64_t>(&t.seed)->default_value(t.seed),
                                   "sampling seed")("threads", po::value<int>(&t.threads)->default_value(0),
                                                    "CPU threads (0 = all cores)")(
      "device", po::value<std::string>(&t.device)->default_value("auto"), "auto, cpu or cuda");
  const auto vm =
      parse("slurmtwin surrogate update --model MODEL --spec SPEC.yaml --db SWEEP.db -o NEW_MODEL", o, args);
  t.warmup = std::min<std::int64_t>(t.warmup, t.steps / 5);
  const auto spec = load_sweep_spec(vm["spec"].as<std::string>());
  const auto& db = vm["db"].as<std::string>();
  if (!std::filesystem::exists(db)) throw std::runtime_error(db + ": no such database");
  auto model = Surrogate::load(vm["model"].as<std::string>());
  const auto data =
      dataset_from_sweep(load_sweep_site(spec), load_sweep_trace(spec),
                         SweepStore(db, StoreAccess::kRead).rows(true), model.schema(), model.axes(),
                         vm["window-jobs"].as<std::uint32_t>(), vm["context-jobs"].as<std::uint32_t>());
  if (const auto& out = vm["data-out"].as<std::string>(); !out.empty()) write_dataset(data, out);
  const auto split = make_split(data, t.seed, SplitMode::kInterleaved);
  Surrogate::set_threads(t.threads);  // before the summary, which states them
  std::cout << fmt::format(
      "{}; {} exact sweep results × {} windows; fine-tuning on {} windows × {} settings, "
      "validation {} × {}\n",
      torch_summary(), data.setting_count(), data.windows.size(), split.train_windows.size(),
      split.train_settings.size(), split.val_windows.size(), split.val_settings.size());
  const auto report =
      model.train(data, split, t, [](const std::string& line) { std::cout << line << std::endl; });
  model.save(vm["out"].as<std::string>());
  std::cout << fmt::format(
      "fine-tuned for {} steps in {:.1f} s; best validation {:.4f} at step {}{}; saved {}\n", report.steps,
      report.seconds, report.best_val_loss, report.best_step, kept_initial(report),
      vm["out"].as<std::string>());
  return kExitOk;
}

}  // namespace

int command_surrogate(const Args& args) {
  return run_subcommand(
      "surrogate", fmt::format("usage: {}\n", kUsage), args,
      {{"dataset", dataset}, {"train", train}, {"eval", eval}, {"update", update}, {"info", [](const Args&) {
                                                                                      std::cout
                                                                                          << torch_summary()
                                                                                          << "\n";
                                                                                      return kExitOk;
                                                                                    }}});
}

}  // namespace slurmtwin::cli
