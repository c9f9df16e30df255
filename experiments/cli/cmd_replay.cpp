// slurmtwin replay: a trace on a site -> per-job results, sacct output and metrics.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>

#include "experiments/cli/cli.hpp"
#include "experiments/cli/site_options.hpp"
#include "experiments/cli/trace_options.hpp"
#include "experiments/replay/interrupt.hpp"
#include "experiments/replay/progress.hpp"
#include "experiments/replay/replay.hpp"
#include "experiments/replay/stopwatch.hpp"
#include "experiments/replay/trace_input.hpp"
#include "traces/file_io.hpp"
#include "traces/licenses.hpp"
#include "traces/synthetic.hpp"
#include "traces/time_format.hpp"

namespace slurmtwin::cli {

int command_replay(const Args& args) {
  return guarded([&]() -> int {
    po::options_description o("replay options");
    o.add_options()("trace", po::value<std::vector<std::string>>()->multitoken(),
                    "trace file(s) (default: the built-in synthetic week)")(
        "seed", po::value<std::uint64_t>()->default_value(42), "seed of the built-in synthetic workload")(
        "out", po::value<std::string>()->default_value("out/replay"), "output directory")(
        "check-invariants", po::bool_switch(), "check resources and job states after every event")(
        "no-auto-assoc", po::bool_switch(),
        "reject jobs whose user/account has no association (default: add one with Fairshare=1)")(
        "decay-phase", po::value<Seconds>()->default_value(0),
        "first PriorityCalcPeriod tick this many s after controller start")(
        "start-offset", po::value<Seconds>()->default_value(0),
        "controller starts this many s before the first submit")(
        "bf-tests-per-second", po::value<double>()->default_value(0),
        "backfill cost model: will-run tests per second of the real slurmctld (sdiag); caps each cycle at "
        "bf_max_time and delays the next by the cycle's length (0 = off)")(
        "snapshot-at", po::value<std::string>()->default_value(""),
        "dump sprio/sshare-like state at this time (YYYY-MM-DDTHH:MM:SS, or +SECONDS after start)")(
        "max-rejected", po::value<double>()->default_value(kDefaultMaxRejectedPct),
        "exit 2 when more than this % of the job records are refused: rejected when read (before the replay) "
        "or, with those, refused at submit (after writing the outputs)");
    add_site_options(o);
    add_trace_read_options(o);
    const auto vm = parse(
        "slurmtwin replay [--site site.yaml | --slurm-conf ...] [--trace FILE...] [--out DIR]", o, args);
    // A rate of will-run tests: 0 (off) or a positive number (issue 27, D8: nan, inf and -1 were taken).
    if (const double rate = vm["bf-tests-per-second"].as<double>(); !std::isfinite(rate) || rate < 0)
      throw po::error(
          "--bf-tests-per-second must be 0 (off) or a positive number of will-run tests per second");

    std::vector<std::string> warnings;
    Site site = load_site(vm, warnings);
    for (const auto& w : warnings) std::cerr << "warning: " << w << "\n";
    ReadReport report;
    Trace trace;
    if (vm.count("trace")) {
      trace = load_traces(vm["trace"].as<std::vector<std::string>>(), vm, report);
    } else {
      auto config = default_synthetic_config();
      config.seed = vm["seed"].as<std::uint64_t>();
      trace = generate_synthetic(config);
      report.file = trace.source;
      report.records = report.accepted = trace.jobs.size();
    }
    // Licences the site has but no job asks for: most often a sacct dump without the column that carries
    // them, which would replay every licence-bound job as if it needed none.
    if (!site.licenses.empty() && vm.count("trace") &&
        std::none_of(trace.jobs.begin(), trace.jobs.end(),
                     [](const JobRecord& j) { return j.licenses != kNoName; }))
      std::cerr << fmt::format(
          "warning: the site has licences ({}) but no job of the trace asks for one: sacct gives them in "
          "SubmitLine (-L, 22.05) or Licenses (23.02 on), or ReqTRES where they are tracked as TRES\n",
          format_licenses(site.licenses));
    ReplayOptions ro;
    ro.add_missing_associations = !vm["no-auto-assoc"].as<bool>();
    ro.check_invariants = vm["check-invariants"].as<bool>();
    ro.decay_phase = vm["decay-phase"].as<Seconds>();
    ro.start_offset = vm["start-offset"].as<Seconds>();
    ro.bf_tests_per_second = vm["bf-tests-per-second"].as<double>();
    if (const auto& at = vm["snapshot-at"].as<std::string>(); !at.empty()) {
      if (at.front() == '+') {
        Seconds first = kUnlimited;
        for (const auto& j : trace.jobs)
          if (j.submit != kUnsetTime) first = std::min(first, j.submit);
        ro.snapshot_at = first - ro.start_offset + std::stoll(at.substr(1));
      } else {
        const auto t = parse_timestamp(at);
        if (!t || *t == kUnsetTime) throw po::error("--snapshot-at expects YYYY-MM-DDTHH:MM:SS or +SECONDS");
        ro.snapshot_at = *t;
      }
    }

    // The results replace an earlier run's in the same directory only once all are written: a run
    // stopped by SIGINT or an error leaves the earlier ones as they were (StagedDirectory).
    const std::filesystem::path dir = vm["out"].as<std::string>();
    const InterruptGuard interrupt;
    ro.stop = &interrupt.flag();
    // A bar with rate and ETA on a terminal only: logs and tests see the same output as before.
    std::optional<Progress> bar;
    if (progress_style_for(2) == ProgressStyle::kBar) {
      ProgressOptions po;
      po.label = "replay";
      po.unit = "jobs ended";
      po.total = trace.jobs.size();
      po.style = ProgressStyle::kBar;
      bar.emplace(std::cerr, po);
      ro.on_progress = [&](std::size_t ended, std::size_t) { bar->update(ended); };
    }
    std::cerr << fmt::format("replaying {} jobs (Ctrl-C stops cleanly, writing nothing)\n",
                             trace.jobs.size());
    const auto t0 = std::chrono::steady_clock::now();
    const auto result = run_replay(std::move(site), trace, ro);
    if (bar) bar->finish();
    const double secs = seconds_since(t0);

    StagedDirectory out(dir, {"jobs.csv", "jobs.sacct", "metrics.json", "snapshot.txt"});
    out.write("jobs.csv", jobs_csv(result, trace));
    // in the zone the trace's sacct times were read in, so that it reads back the same way
    const TimeZone zone(vm["timezone"].as<std::string>());
    out.write("jobs.sacct", jobs_sacct(result, trace, &zone));
    out.write("metrics.json", sim::metrics_to_json(result.metrics));
    if (!result.snapshot.empty()) out.write("snapshot.txt", result.snapshot);
    out.commit();

    const auto& m = result.metrics;
    std::cout << fmt::format("site {}: {} nodes, {} CPUs; trace {}: {} jobs\n", result.site.cluster_name,
                             result.site.nodes.size(), result.state->cluster.total_cpus(), trace.source,
                             trace.jobs.size());
    std::cout << "input accounting: " << format_report(report);
    if (result.associations_added > 0)
      std::cout << fmt::format("associations added for users the site lacks: {}\n",
                               result.associations_added);
    std::cout << fmt::format("jobs: {} started, {} never started, {} rejected at submit", m.started,
                             m.never_started, m.rejected);
    if (m.cancelled_before_start > 0)
      std::cout << fmt::format(", {} cancelled before they started (as recorded)", m.cancelled_before_start);
    std::cout << "\n";
    for (const auto& [why, n] : m.rejected_by_reason)
      std::cout << fmt::format("  rejected {:>7}  {}\n", n, why);
    std::cout << fmt::format(
        "wait (s): mean {:.0f}  median {:.0f}  p90 {:.0f}  p99 {:.0f}; bounded slowdown mean {:.2f}\n",
        m.overall.mean, m.overall.median, m.overall.p90, m.overall.p99, m.overall.mean_bsld);
    for (const auto& [p, w] : m.by_partition)
      std::cout << fmt::format("  partition {:<18} jobs {:>7}  wait mean {:>8.0f}  p90 {:>8.0f}\n", p, w.jobs,
                               w.mean, w.p90);
    // Memory and GPU shares are negative where not recorded (no job ran) or, for GPUs, the nodes have none.
    const auto share = [](const char* what, double v) {
      return v < 0 ? std::string() : fmt::format(", {} {:.1f}%", what, 100 * v);
    };
    std::cout << fmt::format(
        "utilisation: CPUs {:.1f}%{}{}  makespan {:.2f} days  mean queue length {:.1f}\n",
        100 * m.utilisation, share("memory", m.memory_utilisation), share("GPUs", m.gpu_utilisation),
        static_cast<double>(m.makespan) / 86400.0, m.mean_queue_length);
    std::uint64_t by_backfill = 0;
    for (const auto& j : result.state->jobs) by_backfill += j.started_by == SchedulerPass::kBackfill ? 1 : 0;
    std::cout << fmt::format(
        "started by backfill {:.1f}%; preemption: {} runs interrupted ({:.0f} CPU-hours lost), {} "
        "suspensions\n",
        m.started > 0 ? 100.0 * static_cast<double>(by_backfill) / static_cast<double>(m.started) : 0.0,
        m.preemptions, m.preempted_core_hours, m.suspensions);
    if (m.has_fidelity)
      std::cout << fmt::format(
          "fidelity vs recorded starts: |start error| mean {:.0f} s, p90 {:.0f} s; mean wait {:.0f} s vs "
          "recorded {:.0f} s\n",
          m.fidelity.start_error_mean_abs, m.fidelity.start_error_p90_abs, m.fidelity.simulated_mean_wait,
          m.fidelity.recorded_mean_wait);
    std::cout << fmt::format("replayed {} events in {:.2f} s; results in {}\n", result.events, secs,
                             dir.string());
    // A replay that refuses (nearly) every job answers nothing about the site: fail closed. The job
    // records rejected when read count too (load_traces refused the trace when they alone were too many).
    const double limit = vm["max-rejected"].as<double>();
    const auto at_read = report.rejected(), refused = at_read + m.rejected, records = at_read + m.input_jobs;
    if (records > 0 && (m.rejected == m.input_jobs ||
                        100.0 * static_cast<double>(refused) > limit * static_cast<double>(records))) {
      std::cerr << fmt::format(
                       "slurmtwin: error: {} of {} job records ({:.1f}%) were refused{} (more than "
                       "--max-rejected {}%):\n",
                       refused, records, 100.0 * static_cast<double>(refused) / static_cast<double>(records),
                       at_read > 0
                           ? fmt::format(": {} at submit, {} when read (listed above)", m.rejected, at_read)
                           : std::string(" at submit"),
                       limit)
                << rejection_examples(result, trace, 3);
      return kExitUsage;
    }
    return kExitOk;
  });
}

}  // namespace slurmtwin::cli
