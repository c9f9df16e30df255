#include "surrogate/features.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <deque>
#include <numbers>
#include <stdexcept>
#include <unordered_map>

#include "traces/binary_io.hpp"

namespace slurmtwin::surrogate {
namespace {

// Column order of WindowTokens::numeric; names are saved with datasets and checkpoints.
const std::vector<std::string> kNumeric = {
    "log_cpus",            // log1p(requested CPUs)
    "log_nodes",           // log1p(requested nodes; 0 = any)
    "log_mem_gb",          // log1p(requested memory of the whole job, GB; 0 when whole nodes)
    "mem_whole_node",      // 1 = --mem=0 or no memory request resolved to whole nodes
    "log_gpus",            // log1p(GPUs of the whole job)
    "log_limit_min",       // log1p(time limit, minutes; 0 when unset)
    "log_runtime_min",     // log1p(real runtime, minutes); 0 in submit-time-only mode
    "runtime_over_limit",  // runtime / limit in [0, 1]; 0 in submit-time-only mode
    "tod_sin", "tod_cos",  // time of day (UTC) on the unit circle
    "dow_sin", "dow_cos",  // day of week likewise
    "hours_since_t0",      // (submit - first target's submit) / 1 h; negative for context jobs
    "is_target", "exclusive",
    // History of the 7 days before this job's submission (TraceContext): the same for a trace that
    // starts a month earlier, once the trace holds those 7 days.
    "log_jobs_prev_hour",            // jobs submitted in the hour before
    "log_cpuh_prev_day",             // CPU-hours requested (CPUs × limit) in the 24 h before, all users
    "log_user_jobs_prev_day",        // the same user's jobs in the 24 h before
    "log_acct_cpuh_prev_day",        // the same account's requested CPU-hours in the 24 h before
    "log_cpuh_prev_3days",           // all users, 72 h
    "log_cpuh_prev_week",            // all users, 7 days
    "log_acct_cpuh_prev_week",       // the same account, 7 days
    "log_fluid_backlog_week_hours",  // work of the last 7 days queued ahead in a fluid model (TraceContext)
    "log_cpuh_before_in_window",     // requested CPU-hours of the earlier tokens of the window
};
constexpr std::size_t kHistoryColumns = 8;  // the TraceContext columns, from "log_jobs_prev_hour"
constexpr std::size_t kFirstHistory = 15;
// Added when FeatureSchema::queue_state is set.
constexpr std::size_t kQueueColumns = 5;
const std::vector<std::string> kQueueState = {
    "log_pending_jobs", "log_pending_cpuh", "log_running_jobs", "log_running_cpus",
    "log_priority",  // the recorded priority (sacct Priority, known once submitted); 0 when unknown
};

// Added when FeatureSchema::reference is set (TraceContext::reference, from a ReferenceRun).
constexpr std::size_t kReferenceColumns = 11;
const std::vector<std::string> kReference = {
    "ref_log_wait",          // log1p(wait in the reference replay, s); log1p(30 days) when it never started
    "ref_log_pending_jobs",  // the reference replay's queue when this job was submitted
    "ref_log_pending_cpuh",
    "ref_log_running_jobs",
    "ref_log_running_cpus",
    "ref_fairshare",
    "ref_job_size",
    "ref_partition",
    "ref_qos",
    "ref_assoc",  // factors at submit, [0, 1]
    // (submit - first target's submit) / PriorityMaxAge: between two jobs pending at the same instant
    // (younger than the maximum age) the age factor differs by the difference of this, negated.
    "ref_submit_over_max_age",
};

double job_gpus(const JobRecord& j) {
  double n = 0;
  for (const auto& g : j.gres)
    if (g.name == "gpu")
      n += static_cast<double>(g.count) * (g.per_node ? std::max<std::uint32_t>(j.nodes, 1) : 1);
  return n;
}

double job_cpus(const JobRecord& j) {
  if (j.req_cpus > 0) return j.req_cpus;
  return static_cast<double>(std::max<std::uint32_t>(j.tasks, 1)) *
         std::max<std::uint32_t>(j.cpus_per_task, 1);
}

double limit_seconds(const JobRecord& j) {
  return (j.time_limit == kUnsetTime || j.time_limit == kUnlimited || j.time_limit < 0)
             ? 0.0
             : static_cast<double>(j.time_limit);
}

// Requested CPU-hours; jobs without a limit count their CPUs for one day (a rough stand-in: the
// partition's MaxTime is not known here).
double requested_cpu_hours(const JobRecord& j) {
  const double limit = limit_seconds(j);
  return job_cpus(j) * (limit > 0 ? limit : 86400.0) / 3600.0;
}

// Sums over a sliding time window of earlier jobs, keyed by an optional group.
class SlidingSum {
 public:
  explicit SlidingSum(std::int64_t span) : span_(span) {}
  // Drops entries older than now - span, then returns the current sum for `key`.
  double at(std::int64_t now, std::int64_t key) {
    while (!q_.empty() && q_.front().time < now - span_) {
      sums_[q_.front().key] -= q_.front().value;
      q_.pop_front();
    }
    const auto it = sums_.find(key);
    return it == sums_.end() ? 0.0 : std::max(0.0, it->second);
  }
  void add(std::int64_t time, std::int64_t key, double value) {
    q_.push_back({time, key, value});
    sums_[key] += value;
  }

 private:
  struct Entry {
    std::int64_t time, key;
    double value;
  };
  std::int64_t span_;
  std::deque<Entry> q_;
  std::unordered_map<std::int64_t, double> sums_;
};

std::int64_t category(const std::vector<std::string>& names, const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? 0 : static_cast<std::int64_t>(it - names.begin()) + 1;
}

}  // namespace

std::int64_t hash_bucket(const std::string& name, std::uint32_t buckets) {
  return static_cast<std::int64_t>(fnv1a_bytes(name.data(), name.size()) % buckets);
}

FeatureSchema make_schema(const Trace& trace, bool submit_time_only, bool queue_state, bool reference) {
  FeatureSchema s;
  s.numeric = kNumeric;
  if (queue_state) s.numeric.insert(s.numeric.end(), kQueueState.begin(), kQueueState.end());
  if (reference) s.numeric.insert(s.numeric.end(), kReference.begin(), kReference.end());
  s.queue_state = queue_state;
  s.reference = reference;
  s.partitions = trace.partitions.names();
  s.qos = trace.qos.names();
  s.submit_time_only = submit_time_only;
  return s;
}

QueueState recorded_queue_state(const Trace& trace) {
  // pending(t) = #(submit < t) - #(start <= t), running(t) = #(start <= t) - #(end <= t), with prefix
  // sums of CPU-hours and CPUs over the sorted times.
  struct Timed {
    std::int64_t t;
    double w;
  };
  auto sorted = [&](auto time_of, auto weight_of) {
    std::vector<Timed> v;
    for (const auto& j : trace.jobs)
      if (const std::int64_t t = time_of(j); t != kUnsetTime) v.push_back({t, weight_of(j)});
    std::sort(v.begin(), v.end(), [](const Timed& a, const Timed& b) { return a.t < b.t; });
    std::vector<double> prefix(v.size() + 1, 0.0);
    for (std::size_t i = 0; i < v.size(); ++i) prefix[i + 1] = prefix[i] + v[i].w;
    return std::make_pair(std::move(v), std::move(prefix));
  };
  // Count and weight of entries with time < t (strict) or <= t.
  auto upto = [](const std::pair<std::vector<Timed>, std::vector<double>>& s, std::int64_t t,
                 bool inclusive) {
    const auto it = inclusive ? std::upper_bound(s.first.begin(), s.first.end(), t,
                                                 [](std::int64_t x, const Timed& e) { return x < e.t; })
                              : std::lower_bound(s.first.begin(), s.first.end(), t,
                                                 [](const Timed& e, std::int64_t x) { return e.t < x; });
    const auto n = static_cast<std::size_t>(it - s.first.begin());
    return std::make_pair(static_cast<double>(n), s.second[n]);
  };
  auto started = [](const JobRecord& j) { return j.start != kUnsetTime && j.submit != kUnsetTime; };
  const auto submits = sorted([&](const JobRecord& j) { return started(j) ? j.submit : kUnsetTime; },
                              [](const JobRecord& j) { return requested_cpu_hours(j); });
  const auto starts_cpuh = sorted([&](const JobRecord& j) { return started(j) ? j.start : kUnsetTime; },
                                  [](const JobRecord& j) { return requested_cpu_hours(j); });
  const auto starts_cpus = sorted([&](const JobRecord& j) { return started(j) ? j.start : kUnsetTime; },
                                  [](const JobRecord& j) { return job_cpus(j); });
  const auto ends_cpus =
      sorted([&](const JobRecord& j) { return started(j) && j.end != kUnsetTime ? j.end : kUnsetTime; },
             [](const JobRecord& j) { return job_cpus(j); });
  QueueState q;
  for (const auto& j : trace.jobs) {
    float pj = 0, pc = 0, rj = 0, rc = 0;
    if (j.submit != kUnsetTime) {
      const auto [ns, ws] = upto(submits, j.submit, false);
      const auto [nst, wst] = upto(starts_cpuh, j.submit, true);
      const auto [nsc, wsc] = upto(starts_cpus, j.submit, true);
      const auto [ne, we] = upto(ends_cpus, j.submit, true);
      pj = static_cast<float>(std::max(0.0, ns - nst));
      pc = static_cast<float>(std::max(0.0, ws - wst));
      rj = static_cast<float>(std::max(0.0, nsc - ne));
      rc = static_cast<float>(std::max(0.0, wsc - we));
    }
    q.pending_jobs.push_back(pj);
    q.pending_cpu_hours.push_back(pc);
    q.running_jobs.push_back(rj);
    q.running_cpus.push_back(rc);
  }
  return q;
}

TraceContext trace_context(const Trace& trace, bool queue_state, double capacity_cpus, bool submit_time_only,
                           const ReferenceRun* reference) {
  TraceContext c;
  c.queue_state = queue_state;
  c.history.assign(trace.jobs.size(), {});
  std::vector<std::uint32_t> order;
  for (std::uint32_t i = 0; i < trace.jobs.size(); ++i)
    if (trace.jobs[i].submit != kUnsetTime) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](auto a, auto b) { return trace.jobs[a].submit < trace.jobs[b].submit; });
  SlidingSum jobs_hour(3600), cpuh_day(86400), user_day(86400), acct_day(86400), cpuh_3days(3 * 86400),
      cpuh_week(7 * 86400), acct_week(7 * 86400);
  // Fluid backlog: CPU-seconds of work submitted in the 7 days before the job and not yet served by a
  // cluster of capacity_cpus CPUs that serves work as fast as it can (no packing losses, no priorities)
  // and was empty 7 days before: backlog / capacity is the delay a job would see in that idealised
  // cluster. Uses real runtimes unless runtimes are unknown at submit time (then the limits).
  // Unbounded (empty at the trace's start), an overloaded trace's backlog grew with the distance from
  // its first job. The Lindley recursion's closed form, limited to the horizon: with P_k the work of the
  // jobs before job k in submit order and C the capacity, job i sees
  //   max(0, P_i - C t_i + max over jobs k <= i with t_k >= t_i - 7 days of (C t_k - P_k)),
  // the inner maximum kept by a monotone deque (times from the first submission, for precision).
  constexpr std::int64_t kBacklogHorizon = 7 * 86400;
  std::deque<std::pair<std::int64_t, double>> best_start;  // (t_k, C t_k - P_k), values decreasing
  double work_before = 0;                                  // P_i
  const std::int64_t origin = order.empty() ? 0 : trace.jobs[order.front()].submit;
  for (auto i : order) {
    const JobRecord& j = trace.jobs[i];
    const std::int64_t t = j.submit, user_key = j.user,
                       acct_key = static_cast<std::int64_t>(j.account) + (1ll << 40);
    const double cpuh = requested_cpu_hours(j);
    auto& h = c.history[i];
    h[0] = static_cast<float>(std::log1p(jobs_hour.at(t, 0)));
    h[1] = static_cast<float>(std::log1p(cpuh_day.at(t, 0)));
    h[2] = static_cast<float>(std::log1p(user_day.at(t, user_key)));
    h[3] = static_cast<float>(std::log1p(acct_day.at(t, acct_key)));
    h[4] = static_cast<float>(std::log1p(cpuh_3days.at(t, 0)));
    h[5] = static_cast<float>(std::log1p(cpuh_week.at(t, 0)));
    h[6] = static_cast<float>(std::log1p(acct_week.at(t, acct_key)));
    const double served = capacity_cpus * static_cast<double>(t - origin);  // C t_i
    const double start_value = served - work_before;
    while (!best_start.empty() && best_start.back().second <= start_value) best_start.pop_back();
    best_start.emplace_back(t, start_value);
    while (best_start.front().first < t - kBacklogHorizon) best_start.pop_front();  // never the job itself
    const double backlog = std::max(0.0, work_before - served + best_start.front().second);
    h[7] = capacity_cpus > 0 ? static_cast<float>(std::log1p(backlog / capacity_cpus / 3600.0)) : 0.0f;
    const double work_s =
        submit_time_only || j.runtime <= 0 ? limit_seconds(j) : static_cast<double>(j.runtime);
    work_before += job_cpus(j) * (work_s > 0 ? work_s : 86400.0);
    jobs_hour.add(t, 0, 1.0);
    cpuh_day.add(t, 0, cpuh);
    user_day.add(t, user_key, 1.0);
    acct_day.add(t, acct_key, cpuh);
    cpuh_3days.add(t, 0, cpuh);
    cpuh_week.add(t, 0, cpuh);
    acct_week.add(t, acct_key, cpuh);
  }
  if (queue_state) {
    const auto q = recorded_queue_state(trace);
    c.queue.resize(trace.jobs.size());
    for (std::size_t i = 0; i < trace.jobs.size(); ++i) {
      const auto& j = trace.jobs[i];
      c.queue[i] = {static_cast<float>(std::log1p(q.pending_jobs[i])),
                    static_cast<float>(std::log1p(q.pending_cpu_hours[i])),
                    static_cast<float>(std::log1p(q.running_jobs[i])),
                    static_cast<float>(std::log1p(q.running_cpus[i])),
                    j.priority > 0 ? static_cast<float>(std::log1p(static_cast<double>(j.priority))) : 0.0f};
    }
  }
  if (reference) {
    if (reference->start.size() != trace.jobs.size() || reference->end.size() != trace.jobs.size() ||
        reference->factors.size() != trace.jobs.size())
      throw std::invalid_argument("the reference replay does not cover the trace's jobs");
    // The reference schedule's queue at each submit: the trace with the replay's start and end times.
    Trace replayed = trace;
    for (std::size_t i = 0; i < trace.jobs.size(); ++i) {
      replayed.jobs[i].start = reference->start[i];
      replayed.jobs[i].end = reference->end[i];
    }
    const auto q = recorded_queue_state(replayed);
    c.reference.resize(trace.jobs.size());
    c.max_age = std::max<std::int64_t>(1, reference->max_age);
    for (std::size_t i = 0; i < trace.jobs.size(); ++i) {
      const auto& j = trace.jobs[i];
      const double wait =
          reference->start[i] == kUnsetTime || j.submit == kUnsetTime
              ? kNeverStartedWait
              : static_cast<double>(std::max<std::int64_t>(0, reference->start[i] - j.submit));
      auto& r = c.reference[i];
      r = {static_cast<float>(std::log1p(wait)), static_cast<float>(std::log1p(q.pending_jobs[i])),
           static_cast<float>(std::log1p(q.pending_cpu_hours[i])),
           static_cast<float>(std::log1p(q.running_jobs[i])),
           static_cast<float>(std::log1p(q.running_cpus[i]))};
      for (std::size_t k = 0; k < 5; ++k) r[5 + k] = reference->factors[i][k];
    }
  }
  return c;
}

WindowTokens window_tokens(const Trace& trace, const TraceContext& context,
                           std::span<const std::uint32_t> jobs, std::span<const std::uint8_t> targets,
                           const FeatureSchema& schema) {
  assert(jobs.size() == targets.size());
  if (schema.queue_state && !context.queue_state)
    throw std::invalid_argument("queue-state features need a trace context with the recorded queue state");
  if (schema.reference && context.reference.empty())
    throw std::invalid_argument("reference features need a trace context with a reference replay");
  const std::size_t f = schema.numeric.size();
  const std::size_t columns =
      kNumeric.size() + (schema.queue_state ? kQueueColumns : 0) + (schema.reference ? kReferenceColumns : 0);
  if (f != columns)
    throw std::invalid_argument("the feature schema names " + std::to_string(f) +
                                " numeric columns; its flags say " + std::to_string(columns));
  WindowTokens w;
  w.jobs = static_cast<std::uint32_t>(jobs.size());
  w.numeric.assign(jobs.size() * f, 0.0f);
  w.target.assign(targets.begin(), targets.end());
  w.job_index.assign(jobs.begin(), jobs.end());
  for (std::size_t i = 0; i < jobs.size(); ++i)
    if (targets[i]) {
      w.t0 = trace.jobs[jobs[i]].submit;
      break;
    }
  double cpuh_before = 0;
  constexpr double kTwoPi = 2.0 * std::numbers::pi;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const JobRecord& j = trace.jobs[jobs[i]];
    assert(i == 0 || trace.jobs[jobs[i - 1]].submit <= j.submit);
    float* row = &w.numeric[i * f];
    const double cpus = job_cpus(j), limit = limit_seconds(j);
    const bool whole_node = j.mem_mb == 0 || j.exclusive;
    double mem_gb = 0;
    if (j.mem_mb > 0)
      mem_gb = static_cast<double>(j.mem_mb) / 1024.0 *
               (j.mem_per_cpu ? cpus : std::max<std::uint32_t>(j.nodes, 1));
    const double runtime = j.runtime > 0 ? static_cast<double>(j.runtime) : 0.0;
    const std::int64_t t = j.submit;
    const double tod = static_cast<double>(((t % 86400) + 86400) % 86400) / 86400.0;
    const double dow =
        static_cast<double>((((t / 86400) + 3) % 7 + 7) % 7) / 7.0;  // 1970-01-01 was a Thursday
    row[0] = static_cast<float>(std::log1p(cpus));
    row[1] = static_cast<float>(std::log1p(j.nodes));
    row[2] = static_cast<float>(std::log1p(mem_gb));
    row[3] = whole_node ? 1.0f : 0.0f;
    row[4] = static_cast<float>(std::log1p(job_gpus(j)));
    row[5] = static_cast<float>(std::log1p(limit / 60.0));
    if (!schema.submit_time_only) {
      row[6] = static_cast<float>(std::log1p(runtime / 60.0));
      row[7] = limit > 0 ? static_cast<float>(std::min(1.0, runtime / limit)) : 0.0f;
    }
    row[8] = static_cast<float>(std::sin(kTwoPi * tod));
    row[9] = static_cast<float>(std::cos(kTwoPi * tod));
    row[10] = static_cast<float>(std::sin(kTwoPi * dow));
    row[11] = static_cast<float>(std::cos(kTwoPi * dow));
    row[12] = static_cast<float>(static_cast<double>(t - w.t0) / 3600.0);
    row[13] = targets[i] ? 1.0f : 0.0f;
    row[14] = j.exclusive ? 1.0f : 0.0f;
    const auto k = jobs[i];
    for (std::size_t c = 0; c < kHistoryColumns; ++c) row[kFirstHistory + c] = context.history[k][c];
    row[kFirstHistory + kHistoryColumns] = static_cast<float>(std::log1p(cpuh_before));
    if (schema.queue_state)
      for (std::size_t c = 0; c < kQueueColumns; ++c) row[kNumeric.size() + c] = context.queue[k][c];
    if (schema.reference) {
      const std::size_t first = kNumeric.size() + (schema.queue_state ? kQueueColumns : 0);
      for (std::size_t c = 0; c + 1 < kReferenceColumns; ++c) row[first + c] = context.reference[k][c];
      row[first + kReferenceColumns - 1] =
          static_cast<float>(static_cast<double>(t - w.t0) / context.max_age);
    }
    cpuh_before += requested_cpu_hours(j);
    w.user.push_back(hash_bucket(trace.user_name(j), schema.user_buckets));
    w.account.push_back(hash_bucket(trace.account_name(j), schema.account_buckets));
    w.partition.push_back(category(schema.partitions, trace.partition_name(j)));
    w.qos.push_back(category(schema.qos, trace.qos_name(j)));
  }
  return w;
}

}  // namespace slurmtwin::surrogate
