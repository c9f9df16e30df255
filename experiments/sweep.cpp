#include "experiments/sweep.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <ostream>
#include <thread>

#include "experiments/replay.hpp"
#include "experiments/site_options.hpp"
#include "experiments/sweep_store.hpp"
#include "experiments/trace_options.hpp"
#include "traces/default_site.hpp"
#include "traces/native_format.hpp"
#include "traces/read_report.hpp"
#include "traces/site_yaml.hpp"
#include "traces/synthetic.hpp"
#include "traces/time_format.hpp"

#ifndef SLURMTWIN_VERSION
#define SLURMTWIN_VERSION "unknown"
#endif

namespace slurmtwin::cli {

Site load_sweep_site(const SweepSpec& spec) {
  if (!spec.site_yaml.empty()) return load_site_yaml(spec.site_yaml);
  if (!spec.slurm_conf.empty()) {
    std::vector<std::string> warnings;
    return import_site(spec.slurm_conf, spec.gres_conf, spec.sacctmgr, spec.assoc_dump, warnings);
  }
  return scaled_default_site(spec.default_cpu_nodes);
}

Trace load_sweep_trace(const SweepSpec& spec) {
  if (spec.trace_paths.empty()) {
    auto config = default_synthetic_config();
    config.seed = spec.synthetic_seed;
    config.days = spec.synthetic_days;
    return generate_synthetic(config);
  }
  // The trace options of `replay`, so that format names and --users-from read the same way.
  po::options_description o;
  add_trace_read_options(o);
  Args args = {"--format", spec.trace_format};
  if (!spec.users_from.empty()) args.insert(args.end(), {"--users-from", spec.users_from});
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(o).run(), vm);
  po::notify(vm);
  ReadReport report;
  return read_trace(spec.trace_paths, trace_read_options(vm), report);
}

std::string trace_fingerprint(const Trace& trace) {
  return fmt::format("{:016x}", fnv1a64(encode_native_trace(trace)));
}

std::string point_key(const Site& resolved_site, const std::string& trace_fingerprint) {
  return fmt::format("{:016x}", fnv1a64(trace_fingerprint, fnv1a64(site_to_yaml(resolved_site) + "\n")));
}

std::string point_json(const SweepPoint& point) {
  std::string out = "{";
  for (const auto& [name, value] : point)
    out += fmt::format("{}\"{}\": {:.17g}", out.size() > 1 ? ", " : "", name, value);
  return out + "}";
}

SweepRunSummary run_sweep_spec(const SweepSpec& spec, const std::string& db, const SweepRunOptions& options) {
  const Site base = load_sweep_site(spec);
  const Trace trace = load_sweep_trace(spec);
  const auto fingerprint = trace_fingerprint(trace);
  const auto points = design_points(spec);

  // Resolve every point before running anything: a QOS the site lacks fails here, naming the line.
  struct Task {
    const SweepPoint* point;
    Site site;
    std::string key;
  };
  std::vector<Task> all;
  for (const auto& p : points) {
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
    auto key = point_key(site, fingerprint);
    all.push_back({&p, std::move(site), std::move(key)});
  }

  SweepStore store(db);
  store.add_objectives(spec.objectives);
  const auto done = store.keys();
  std::vector<Task*> todo;
  SweepRunSummary summary;
  summary.total = all.size();
  for (auto& t : all) {
    if (done.count(t.key))
      ++summary.skipped;
    else
      todo.push_back(&t);
  }

  unsigned workers = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  workers = static_cast<unsigned>(std::min<std::size_t>(workers, std::max<std::size_t>(todo.size(), 1)));
  std::atomic<std::size_t> next{0};
  std::mutex mutex;  // guards store, finished, error
  std::condition_variable cv;
  std::size_t finished = 0;
  std::exception_ptr error;
  std::atomic<bool> stop{false};

  const auto worker = [&] {
    while (!stop) {
      const auto i = next++;
      if (i >= todo.size()) break;
      const auto& task = *todo[i];
      try {
        const auto t0 = std::chrono::steady_clock::now();
        const auto result = run_replay(task.site, trace, ReplayOptions{});
        SweepRow row;
        row.run_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        row.key = task.key;
        row.params_json = point_json(*task.point);
        row.metrics_json = sim::metrics_to_json(result.metrics);
        row.version = SLURMTWIN_VERSION;
        row.trace_fingerprint = fingerprint;
        row.created = format_timestamp(std::chrono::duration_cast<std::chrono::seconds>(
                                           std::chrono::system_clock::now().time_since_epoch())
                                           .count());
        for (const auto& o : spec.objectives)
          row.objectives.push_back(metric_value(result.metrics, o.metric));
        std::lock_guard lock(mutex);
        store.insert(row, spec.objectives);
        ++finished;
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
        stop = true;
      }
      cv.notify_all();
    }
  };

  const auto t0 = std::chrono::steady_clock::now();
  const auto report = [&](std::size_t n) {
    if (!options.progress) return;
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double rate = secs > 0 ? static_cast<double>(n) / secs : 0;
    const auto left = todo.size() - n;
    *options.progress << fmt::format(
                             "sweep: {}/{} points done ({} from earlier runs), {:.2f} points/s, ETA {}\n",
                             summary.skipped + n, summary.total, summary.skipped, rate,
                             rate > 0 ? fmt::format("{:.0f} s", static_cast<double>(left) / rate)
                                      : std::string("unknown"))
                      << std::flush;
  };
  if (options.progress)
    *options.progress << fmt::format("sweep: {} points, {} already in {}, {} to run on {} threads\n",
                                     summary.total, summary.skipped, db, todo.size(), workers)
                      << std::flush;

  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers && !todo.empty(); ++w) pool.emplace_back(worker);
  {
    std::unique_lock lock(mutex);
    const auto interval = std::chrono::duration<double>(std::max(0.05, options.progress_interval_s));
    const auto all_done = [&] { return finished >= todo.size() || error; };
    while (!all_done()) {
      if (cv.wait_for(lock, interval, all_done)) break;
      const auto n = finished;
      lock.unlock();
      report(n);
      lock.lock();
    }
  }
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  summary.evaluated = finished;
  report(finished);
  return summary;
}

}  // namespace slurmtwin::cli
