#include "experiments/replay/replay.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>

#include "experiments/replay/interrupt.hpp"
#include "policies/slurm_policy.hpp"
#include "sim/conservation.hpp"
#include "sim/controller.hpp"
#include "sim/job_resolver.hpp"
#include "traces/hostlist.hpp"
#include "traces/memory_guard.hpp"
#include "traces/sacct_writer.hpp"
#include "traces/time_format.hpp"

namespace slurmtwin::experiments {
namespace {

bool core_granularity(const Site& site) {
  for (const auto& p : site.scheduler.select_type_parameters) {
    const auto u = p.substr(0, 6);
    if (u == "CR_CPU" || u == "CR_Cpu" || u == "cr_cpu") return false;
  }
  return true;
}

std::string snapshot_text(const sim::SimState& s, const policies::SlurmPolicy& policy) {
  std::string out = fmt::format("# snapshot at {} ({} s after controller start)\n", format_timestamp(s.now),
                                s.now - s.origin);
  out +=
      "# sprio -l: JOBID PARTITION USER PRIORITY SITE AGE ASSOC FAIRSHARE JOBSIZE PARTITION QOS NICE TRES\n";
  std::vector<std::uint32_t> pending = s.pending;
  std::sort(pending.begin(), pending.end(), [&](auto a, auto b) { return s.jobs[a].id < s.jobs[b].id; });
  for (auto ji : pending) {
    const auto& j = s.jobs[ji];
    for (std::size_t k = 0; k < j.partitions.size(); ++k) {
      const auto f = policy.factors(s, ji, k);
      std::string tres;
      for (const auto& [name, v] : f.weighted_tres)
        tres += fmt::format("{}{}={:.0f}", tres.empty() ? "" : ",", name, v);
      out += fmt::format("{} {} {} {} 0 {:.0f} {:.0f} {:.0f} {:.0f} {:.0f} {:.0f} {} {}\n", j.id,
                         s.site.partitions[j.partitions[k]].name, s.users[j.user], f.priority, f.weighted_age,
                         f.weighted_assoc, f.weighted_fairshare, f.weighted_job_size, f.weighted_partition,
                         f.weighted_qos, j.nice, tres.empty() ? "-" : tres);
    }
  }
  out += "# sshare -l: ACCOUNT USER RAW_SHARES NORM_SHARES RAW_USAGE EFFECTV_USAGE LEVEL_FS FAIRSHARE\n";
  const auto& tree = policy.assoc_tree();
  for (auto i : tree.top_down()) {
    const auto& n = tree.node(i);
    out += fmt::format("{} {} {} {:.6f} {:.0f} {:.6f} {:.6g} {:.6f}\n", n.account, n.is_user ? n.user : "-",
                       n.shares_parent ? std::string("parent") : std::to_string(n.shares_raw), n.shares_norm,
                       n.usage_raw, n.usage_efctv, n.level_fs, n.fs_factor);
  }
  return out;
}

/// Unwinds the controller with Interrupted once the stop flag is raised (checked at every step of
/// simulated time: cheap, and a year replay advances time millions of times).
class StopObserver final : public sim::ReplayObserver {
 public:
  StopObserver(const std::atomic<bool>& stop, std::size_t jobs) : stop_(stop), jobs_(jobs) {}
  void on_end(const sim::SimState&, std::uint32_t) override { ++ended_; }
  void on_time_advance(const sim::SimState& s, Seconds, Seconds) override {
    if (stop_.load(std::memory_order_relaxed))
      throw Interrupted(fmt::format(
          "{}: replay stopped at simulated time {} ({} of {} jobs ended)",
          InterruptGuard::signal_name().empty() ? std::string("interrupted") : InterruptGuard::signal_name(),
          format_timestamp(s.now), ended_, jobs_));
  }

 private:
  const std::atomic<bool>& stop_;
  std::size_t jobs_;
  std::size_t ended_ = 0;
};

/// Reports job ends to ReplayOptions::on_progress.
class ProgressObserver final : public sim::ReplayObserver {
 public:
  ProgressObserver(const ReplayOptions& o, std::size_t jobs) : options_(o), jobs_(jobs) {}
  void on_end(const sim::SimState&, std::uint32_t) override {
    if (++ended_ % options_.progress_every == 0 || ended_ == jobs_) options_.on_progress(ended_, jobs_);
  }

 private:
  const ReplayOptions& options_;
  std::size_t jobs_;
  std::size_t ended_ = 0;
};

/// Takes the PrioritySamples of ReplayOptions::sample_at: the state after all events of an instant
/// holds until the next event, so a sample at S is taken when time advances past S.
class Sampler final : public sim::ReplayObserver {
 public:
  Sampler(const policies::SlurmPolicy& policy, std::vector<Seconds> at, Seconds decay_phase,
          std::vector<PrioritySample>& out)
      : policy_(policy), at_(std::move(at)), decay_phase_(decay_phase), out_(out) {}
  void on_time_advance(const sim::SimState& s, Seconds from, Seconds to) override {
    while (next_ < at_.size() && at_[next_] < to) {
      if (at_[next_] >= from) take(s, at_[next_]);
      ++next_;
    }
  }
  /// Samples after the last event see the final state.
  void finish(const sim::SimState& s) {
    for (; next_ < at_.size(); ++next_) take(s, at_[next_]);
  }

 private:
  void take(const sim::SimState& s, Seconds at) {
    PrioritySample sample;
    sample.at = at;
    // Priorities change at submit and at decay ticks only (ticks at origin + phase + k * period).
    const Seconds period = std::max<Seconds>(60, s.site.scheduler.calc_period);
    const Seconds first_tick = s.origin + decay_phase_;
    const Seconds last_tick = at < first_tick ? kUnsetTime : first_tick + (at - first_tick) / period * period;
    for (auto ji : s.pending) {
      const auto& j = s.jobs[ji];
      Seconds calc = last_tick == kUnsetTime ? j.submit : std::max(last_tick, j.submit);
      // A requeued job with no decay run since its requeue shows the factors of its last
      // recalculation before it (SlurmPolicy::on_submit).
      if (!j.past_runs.empty() && policy_.requeue_keeps_priority() &&
          (last_tick == kUnsetTime || last_tick < j.submit))
        calc = policies::SlurmPolicy::recalculated_before_requeue(j.past_runs.back(), last_tick, period);
      for (std::size_t k = 0; k < j.partitions.size(); ++k) {
        const auto f = policy_.factors_at(s, ji, k, calc);
        sample.jobs.push_back({j.id, s.site.partitions[j.partitions[k]].name, j.part_priority[k], f.age,
                               f.fairshare, f.job_size, f.partition, f.qos, j.reason});
      }
    }
    std::sort(sample.jobs.begin(), sample.jobs.end(), [](const auto& a, const auto& b) {
      return std::tie(a.job_id, a.partition) < std::tie(b.job_id, b.partition);
    });
    const auto& tree = policy_.assoc_tree();
    for (auto i : tree.top_down()) {
      const auto& n = tree.node(i);
      sample.shares.push_back({n.account, n.is_user ? n.user : "", n.shares_norm, n.usage_raw, n.usage_efctv,
                               n.level_fs, n.fs_factor});
    }
    out_.push_back(std::move(sample));
  }

 private:
  const policies::SlurmPolicy& policy_;
  std::vector<Seconds> at_;
  Seconds decay_phase_;
  std::size_t next_ = 0;
  std::vector<PrioritySample>& out_;
};

/// ReplayResult::submit_factors: each job's factors right after the policy computed its priority at
/// submit, every factor computed even where the site's weight is 0 (a sweep may make it non-zero).
class SubmitFactors final : public sim::ReplayObserver {
 public:
  SubmitFactors(const policies::SlurmPolicy& policy, const Site& site, std::vector<std::array<float, 5>>& out)
      : policy_(policy), all_weights_(site, all_weights(site.scheduler)), out_(out) {}
  void on_submit(const sim::SimState& s, std::uint32_t ji) override {
    const auto& j = s.jobs[ji];
    if (j.state == sim::SimJobState::kRejected || j.partitions.empty() || j.assoc < 0) return;
    const auto f = policy_.factors_with(all_weights_, s, ji, 0);
    out_.at(j.trace_index) = {static_cast<float>(f.fairshare), static_cast<float>(f.job_size),
                              static_cast<float>(f.partition), static_cast<float>(f.qos),
                              static_cast<float>(f.assoc)};
  }

 private:
  static SchedulerSettings all_weights(SchedulerSettings s) {
    for (auto* w : {&s.weight_age, &s.weight_assoc, &s.weight_fairshare, &s.weight_job_size,
                    &s.weight_partition, &s.weight_qos})
      if (*w == 0) *w = 1;
    return s;
  }
  const policies::SlurmPolicy& policy_;
  const policies::PriorityModel all_weights_;
  std::vector<std::array<float, 5>>& out_;
};

}  // namespace

ReplayResult run_replay(Site site, const Trace& trace, const ReplayOptions& options) {
  ReplayResult r;
  if (options.add_missing_associations) r.associations_added = sim::add_missing_associations(site, trace);
  validate(site);
  require_memory(replay_bytes(trace.jobs.size(), site.nodes.size()),
                 fmt::format("a replay of {} jobs on {} nodes", trace.jobs.size(), site.nodes.size()));
  r.site = std::move(site);
  r.state = std::make_unique<sim::SimState>(r.site, core_granularity(r.site));
  auto& state = *r.state;
  state.jobs = sim::resolve_jobs(trace, r.site, state.cluster, {}, state.users);
  policies::SlurmPolicyOptions popt;
  popt.backfill_cost.tests_per_second = options.bf_tests_per_second;
  popt.requeue_keeps_priority = options.requeue_keeps_priority;
  policies::SlurmPolicy policy(r.site, popt);
  sim::ControllerOptions copt;
  copt.check_invariants = options.check_invariants;
  copt.decay_phase = options.decay_phase;
  copt.start_offset = options.start_offset;
  copt.timeout_phase = options.timeout_phase;
  copt.backfill_phase = options.backfill_phase;
  copt.sched_phase = options.sched_phase;
  copt.requeue_delay = options.requeue_delay;
  copt.limit_check_after_decay = options.limit_check_after_decay;
  copt.backfill_end_lag_below = options.backfill_end_lag_below;
  copt.submit_order = options.submit_order;
  copt.snapshot_at = options.snapshot_at;
  const sim::Dependencies dependencies(trace, state.jobs);
  if (!dependencies.empty() || dependencies.has_refusals()) copt.dependencies = &dependencies;
  if (options.snapshot_at != kUnsetTime)
    copt.on_snapshot = [&](const sim::SimState& s) { r.snapshot = snapshot_text(s, policy); };
  sim::Controller controller(state, policy, copt);
  sim::TimeSeriesRecorder series;
  controller.add_observer(series);
  std::optional<StopObserver> stopper;
  if (options.stop) controller.add_observer(stopper.emplace(*options.stop, state.jobs.size()));
  std::optional<ProgressObserver> progress;
  if (options.on_progress && options.progress_every > 0)
    controller.add_observer(progress.emplace(options, state.jobs.size()));
  Sampler sampler(policy, options.sample_at, options.decay_phase, r.samples);
  if (!options.sample_at.empty()) controller.add_observer(sampler);
  std::optional<SubmitFactors> factors;  // built only when asked: it holds a second PriorityModel
  if (options.submit_factors) {
    r.submit_factors.assign(trace.jobs.size(), {});
    controller.add_observer(factors.emplace(policy, r.site, r.submit_factors));
  }
  r.events = controller.run();
  if (!options.sample_at.empty()) sampler.finish(state);
  r.metrics = sim::compute_metrics(state, trace, series);
  if (options.check_invariants) sim::check_job_conservation(state, trace.jobs.size(), &r.metrics);
  return r;
}

std::string slurm_nodelist(const Site& site, std::vector<std::uint32_t> nodes) {
  std::sort(nodes.begin(), nodes.end());
  std::vector<std::string> names;
  names.reserve(nodes.size());
  for (const auto n : nodes) names.push_back(site.nodes[n].name);
  return compress_hostlist(names);
}

namespace {

std::string nodelist(const ReplayResult& r, const sim::SimJob& j) {
  std::vector<std::uint32_t> nodes;
  for (const auto& a : j.alloc) nodes.push_back(a.node);
  return nodes.empty() ? std::string("None assigned") : slurm_nodelist(r.site, std::move(nodes));
}

std::string reasons(const sim::SimJob& j) {
  std::string out;
  for (unsigned k = 1; k < static_cast<unsigned>(sim::PendingReason::kCount); ++k)
    if (j.has_seen(static_cast<sim::PendingReason>(k))) {
      if (!out.empty()) out += ';';
      out += sim::to_string(static_cast<sim::PendingReason>(k));
    }
  return out;
}

}  // namespace

std::string jobs_csv(const ReplayResult& r, const Trace& trace) {
  std::string out =
      "job_id,user,account,partition,qos,submit,eligible,start,end,wait_s,state,nodes,alloc_cpus,priority_at_"
      "start,"
      "started_by,restarts,pending_reasons,reject_reason,recorded_start\n";
  for (const auto& j : r.state->jobs) {
    const auto& rec = trace.jobs[j.trace_index];
    const bool started = j.start != kUnsetTime;
    const auto state = j.state == sim::SimJobState::kRejected ? std::string("REJECTED")
                       : j.state == sim::SimJobState::kDone   ? std::string(to_string(j.end_state))
                       : started                              ? std::string("RUNNING")
                                                              : std::string("PENDING");
    const std::string id =
        rec.array_task >= 0 ? fmt::format("{}_{}", rec.job_id, rec.array_task) : std::to_string(rec.job_id);
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},\"{}\",{},{},{},{},{},\"{}\",{}\n", id, trace.user_name(rec),
        j.assoc >= 0 ? r.site.associations[static_cast<std::size_t>(j.assoc)].account
                     : trace.account_name(rec),
        started ? r.site.partitions[j.run_partition].name : trace.partition_name(rec),
        j.state == sim::SimJobState::kRejected ? trace.qos_name(rec) : r.site.qos[j.qos].name, j.submit,
        j.eligible != kUnsetTime ? std::to_string(j.eligible) : "", started ? std::to_string(j.start) : "",
        j.end != kUnsetTime ? std::to_string(j.end) : "", started ? std::to_string(j.start - j.submit) : "",
        state, started ? nodelist(r, j) : "", j.alloc_cpus, j.priority_at_start, to_string(j.started_by),
        j.restarts, reasons(j), j.reject_reason, rec.start != kUnsetTime ? std::to_string(rec.start) : "");
  }
  return out;
}

std::string rejection_examples(const ReplayResult& r, const Trace& trace, std::size_t top) {
  std::vector<std::pair<std::uint64_t, std::string>> reasons;
  for (const auto& [why, n] : r.metrics.rejected_by_reason) reasons.emplace_back(n, why);
  std::stable_sort(reasons.begin(), reasons.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  if (reasons.size() > top) reasons.resize(top);
  std::string out;
  for (const auto& reason : reasons) {
    const std::string& why = reason.second;  // a named variable: clang 14 cannot capture a binding
    // The name each reason is about, as the job gave it.
    const auto name_of = [&](const JobRecord& rec) -> std::string {
      if (why.find("partition") != std::string::npos) return "partition '" + trace.partition_name(rec) + "'";
      if (why.find("QOS") != std::string::npos) return "QOS '" + trace.qos_name(rec) + "'";
      if (why.find("association") != std::string::npos)
        return "user '" + trace.user_name(rec) + "' account '" + trace.account_name(rec) + "'";
      return fmt::format("job {}", rec.job_id);
    };
    std::vector<std::string> examples;
    for (const auto& j : r.state->jobs) {
      if (j.state != sim::SimJobState::kRejected || j.reject_reason != why) continue;
      auto name = name_of(trace.jobs[j.trace_index]);
      if (std::find(examples.begin(), examples.end(), name) == examples.end())
        examples.push_back(std::move(name));
      if (examples.size() == 3) break;
    }
    out += fmt::format("  {:>7}  {} (e.g. {})\n", reason.first, why, fmt::join(examples, ", "));
  }
  return out;
}

std::string jobs_sacct(const ReplayResult& r, const Trace& trace, const TimeZone* zone) {
  // Same dictionaries as the input; one record per run, as `sacct -D`: runs interrupted by preemption
  // (state PREEMPTED) first, then the final one. Outcome fields are the simulated ones.
  Trace out = trace;
  out.jobs.clear();
  std::vector<std::string> nodes;
  std::vector<std::uint32_t> node_counts;
  const auto add = [&](JobRecord rec, const sim::PastRun& run, std::uint32_t restarts, JobState state) {
    rec.submit = run.submit;
    rec.eligible = run.eligible;
    rec.start = run.start;
    rec.end = run.end;
    rec.alloc_cpus = run.alloc_cpus;
    rec.started_by = run.started_by;
    rec.priority = run.priority;
    rec.restarts = restarts;
    rec.state = state;
    if (run.start != kUnsetTime) rec.partition = out.partitions.intern(r.site.partitions[run.partition].name);
    out.jobs.push_back(std::move(rec));
    nodes.push_back(run.nodes.empty() ? std::string("None assigned") : slurm_nodelist(r.site, run.nodes));
    node_counts.push_back(static_cast<std::uint32_t>(run.nodes.size()));
  };
  for (const auto& j : r.state->jobs) {
    const auto& input = trace.jobs[j.trace_index];
    for (std::size_t k = 0; k < j.past_runs.size(); ++k)
      add(input, j.past_runs[k], static_cast<std::uint32_t>(k), JobState::kPreempted);
    add(input, sim::current_run(j), j.restarts,
        j.state == sim::SimJobState::kDone       ? j.end_state
        : j.state == sim::SimJobState::kRunning  ? JobState::kRunning
        : j.state == sim::SimJobState::kRejected ? JobState::kCancelled
                                                 : JobState::kPending);
  }
  return format_sacct_parsable(out, &nodes, &node_counts, zone);
}

std::vector<Seconds> phase_offsets(const Site& site, std::uint32_t phases, Seconds base) {
  const Seconds step = phases > 1 ? std::max<Seconds>(1, site.scheduler.params.bf_interval / phases) : 0;
  std::vector<Seconds> out;
  for (std::uint32_t k = 0; k < phases; ++k) out.push_back(base + k * step);
  return out;
}

}  // namespace slurmtwin::experiments
