#include "sim/metrics.hpp"

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "traces/time_format.hpp"
#include "traces/trace_summary.hpp"

namespace slurmtwin::sim {
namespace {

struct Group {
  std::vector<double> waits, bslds;
};

// Reorders g.waits (quantiles by selection).
WaitStats summarize(Group& g) {
  WaitStats s;
  s.jobs = g.waits.size();
  if (g.waits.empty()) return s;
  const Eigen::Map<const Eigen::ArrayXd> w(g.waits.data(), static_cast<Eigen::Index>(g.waits.size()));
  const Eigen::Map<const Eigen::ArrayXd> b(g.bslds.data(), static_cast<Eigen::Index>(g.bslds.size()));
  s.mean = w.mean();
  s.max = w.maxCoeff();
  s.mean_bsld = b.mean();
  const auto q = quantiles(g.waits);
  s.median = q.p50;
  s.p90 = q.p90;
  s.p95 = q.p95;
  s.p99 = q.p99;
  return s;
}

// Two-sample Kolmogorov-Smirnov statistic.
double ks_statistic(std::vector<double> a, std::vector<double> b) {
  if (a.empty() || b.empty()) return 0;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::size_t i = 0, j = 0;
  double d = 0;
  while (i < a.size() && j < b.size()) {
    const double x = std::min(a[i], b[j]);
    while (i < a.size() && a[i] <= x) ++i;
    while (j < b.size() && b[j] <= x) ++j;
    d = std::max(d, std::abs(static_cast<double>(i) / static_cast<double>(a.size()) -
                             static_cast<double>(j) / static_cast<double>(b.size())));
  }
  return d;
}

// The top-level account (child of root) of an account.
std::string top_account(const Site& site, const std::string& account) {
  std::string cur = account;
  for (int guard = 0; guard < 64; ++guard) {
    const auto* a = site.find_account(cur);
    if (!a || a->parent.empty() || a->parent == "root") return cur;
    cur = a->parent;
  }
  return cur;
}

}  // namespace

void TimeSeriesRecorder::on_time_advance(const SimState& state, Seconds from, Seconds to) {
  resources = true;
  const auto& c = state.cluster;
  add(state.origin, from, to, static_cast<double>(c.used_cpus()), state.pending.size(),
      static_cast<double>(c.used_memory_mb()), static_cast<double>(c.used_gres(c.find_gres_kind("gpu"))));
  // Pending reasons: counted once for the buckets this interval starts (O(queue) per bucket, not per
  // event); the queue is the same over the whole interval.
  if (to <= from) return;
  const auto b0 = static_cast<std::size_t>((from - first) / width);
  const auto b1 = std::min(buckets.size() - 1, static_cast<std::size_t>((to - 1 - first) / width));
  bool unsampled = false;
  for (auto b = b0; b <= b1 && !unsampled; ++b) unsampled = buckets[b].samples == 0;
  if (!unsampled) return;
  Bucket counted;
  for (const auto j : state.pending) ++counted.reasons[static_cast<std::size_t>(state.jobs[j].reason)];
  for (auto b = b0; b <= b1; ++b)
    if (buckets[b].samples == 0) {
      buckets[b].reasons = counted.reasons;
      buckets[b].samples = 1;
    }
}

void TimeSeriesRecorder::add(Seconds origin, Seconds from, Seconds to, double used, std::size_t pending,
                             double used_mem_mb, double used_gpus) {
  if (first == kUnsetTime) first = origin;
  const double queued = static_cast<double>(pending);
  queue_length_time[pending] += to - from;
  max_queue = std::max(max_queue, pending);
  for (Seconds t = from; t < to;) {
    auto b = static_cast<std::size_t>((t - first) / width);
    while (b >= kMaxSeriesBuckets) {  // twice as wide: pairs of buckets merged
      for (std::size_t i = 0; i < buckets.size(); ++i) {
        auto& into = buckets[i / 2];
        if (i % 2 == 0)
          into = buckets[i];
        else {
          into.cpu_seconds += buckets[i].cpu_seconds;
          into.queue_seconds += buckets[i].queue_seconds;
          into.mem_mb_seconds += buckets[i].mem_mb_seconds;
          into.gpu_seconds += buckets[i].gpu_seconds;
          for (std::size_t r = 0; r < into.reasons.size(); ++r) into.reasons[r] += buckets[i].reasons[r];
          into.samples += buckets[i].samples;
        }
      }
      buckets.resize((buckets.size() + 1) / 2);
      width *= 2;
      b = static_cast<std::size_t>((t - first) / width);
    }
    const Seconds bucket_end = first + static_cast<Seconds>(b + 1) * width;
    const Seconds until = std::min(to, bucket_end);
    if (buckets.size() <= b) buckets.resize(b + 1);
    const auto span = static_cast<double>(until - t);
    buckets[b].cpu_seconds += used * span;
    buckets[b].queue_seconds += queued * span;
    buckets[b].mem_mb_seconds += used_mem_mb * span;
    buckets[b].gpu_seconds += used_gpus * span;
    t = until;
  }
}

TimeSeriesRecorder schedule_series(const SimState& state) {
  // (time, change of pending jobs, of allocated CPUs, memory (MB) and GPUs), swept in time order. A
  // job holds the memory and GPUs of its allocation (kept from the replay the schedule came from).
  struct Change {
    Seconds t;
    std::int64_t pending;
    double cpus, mem_mb, gpus;
  };
  const auto gpu = state.cluster.find_gres_kind("gpu");
  std::vector<Change> changes;
  for (const auto& j : state.jobs) {
    if (j.state == SimJobState::kRejected || j.submit == kUnsetTime) continue;
    changes.push_back({j.submit, 1, 0, 0, 0});
    if (j.start == kUnsetTime) {
      if (j.state == SimJobState::kDone) changes.push_back({j.end, -1, 0, 0, 0});  // cancelled while pending
      continue;
    }
    double mem = 0;
    for (const auto& a : j.alloc) mem += static_cast<double>(a.mem_mb);
    const double gpus =
        gpu < j.request.gres_per_node.size()
            ? static_cast<double>(j.request.gres_per_node[gpu] * static_cast<std::int64_t>(j.alloc.size()))
            : 0.0;
    const auto cpus = static_cast<double>(j.alloc_cpus);
    changes.push_back({j.start, -1, cpus, mem, gpus});
    changes.push_back({j.end == kUnsetTime ? state.now : j.end, 0, -cpus, -mem, -gpus});
  }
  std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) { return a.t < b.t; });
  TimeSeriesRecorder r;
  r.resources = true;
  std::int64_t pending = 0;
  double used = 0, mem = 0, gpus = 0;
  const auto add = [&](Seconds from, Seconds to) {
    r.add(state.origin, from, to, used, static_cast<std::size_t>(std::max<std::int64_t>(0, pending)), mem,
          gpus);
  };
  Seconds now = changes.empty() ? state.origin : std::min(state.origin, changes.front().t);
  for (std::size_t i = 0; i < changes.size();) {
    const Seconds t = changes[i].t;
    if (t > now) add(now, t);
    now = std::max(now, t);
    for (; i < changes.size() && changes[i].t == t; ++i) {
      pending += changes[i].pending;
      used += changes[i].cpus;
      mem += changes[i].mem_mb;
      gpus += changes[i].gpus;
    }
  }
  // A replay's clock runs on to its last event (a timer after the last end, say), with an empty queue.
  if (state.now > now) add(now, state.now);
  return r;
}

ReplayMetrics compute_metrics(const SimState& state, const Trace& trace, const TimeSeriesRecorder& series) {
  ReplayMetrics m;
  m.input_jobs = state.jobs.size();
  const auto& site = state.site;
  // Groups by index (partition, QOS, account), named once at the end: no name is looked up per job.
  // Accounts are numbered by name, and each association knows its account's and its top-level
  // account's number.
  std::map<std::string, std::uint32_t> account_number;
  std::vector<const std::string*> account_name;
  const auto number = [&](const std::string& name) {
    const auto [it, added] = account_number.emplace(name, static_cast<std::uint32_t>(account_name.size()));
    if (added) account_name.push_back(&it->first);
    return it->second;
  };
  std::vector<std::uint32_t> assoc_account, assoc_top;
  for (const auto& a : site.associations) {
    assoc_account.push_back(number(a.account));
    assoc_top.push_back(number(top_account(site, a.account)));
  }
  Group all;
  std::vector<Group> by_part(site.partitions.size()), by_qos(site.qos.size()), by_acct(account_name.size());
  std::vector<double> acct_usage(account_name.size(), 0);  // per top-level account number
  std::vector<char> acct_active(account_name.size(), 0);   // with a job in the trace
  double cpu_seconds = 0;
  m.first_submit = kUnlimited;
  m.last_end = 0;
  Group rec_all;
  std::vector<double> start_errors;
  using Samples = std::pair<std::vector<double>, std::vector<double>>;  // (simulated, recorded) waits
  std::vector<Samples> ks_groups(site.partitions.size());               // per partition index
  std::map<Seconds, Samples> by_day;                                    // day -> (sim, recorded)
  // group -> (|start error|, simulated wait, recorded wait) sums and count
  struct Sums {
    double error = 0, simulated = 0, recorded = 0;
    std::uint64_t jobs = 0;
  };
  std::vector<Sums> fid_part(site.partitions.size()), fid_qos(site.qos.size());  // per index
  std::map<Seconds, Sums> fid_week;  // week index from the replay's start
  for (const auto& j : state.jobs) {
    if (j.state == SimJobState::kRejected) {
      ++m.rejected;
      ++m.rejected_by_reason[j.reject_reason];
      continue;
    }
    const Seconds first_submit = j.past_runs.empty() ? j.submit : j.past_runs.front().submit;
    m.first_submit = std::min(m.first_submit, first_submit);
    const auto lost = [&](const std::string& part, Seconds start, Seconds end, std::uint32_t cpus) {
      ++m.preemptions;
      ++m.preemptions_by_partition[part];
      ++m.preemptions_by_qos[site.qos[j.qos].name];
      m.preempted_core_hours += static_cast<double>(end - start) * cpus / 3600.0;
      cpu_seconds += static_cast<double>(end - start) * cpus;
    };
    m.suspensions += j.suspensions;
    m.suspended_hours += static_cast<double>(j.suspended_total) / 3600.0;
    const auto assoc = static_cast<std::size_t>(j.assoc);
    acct_active[assoc_top[assoc]] = 1;  // an account with a job in the trace, even one that never ran
    auto& top_usage = acct_usage[assoc_top[assoc]];
    for (const auto& run : j.past_runs) {
      lost(site.partitions[run.partition].name, run.start, run.end, run.alloc_cpus);
      top_usage += static_cast<double>(run.end - run.start) * run.alloc_cpus;
    }
    if (j.end_state == JobState::kPreempted)  // cancelled by preemption: its only run was interrupted
      lost(site.partitions[j.run_partition].name, j.start, j.end, j.alloc_cpus);
    if (j.start == kUnsetTime) {
      ++(j.state == SimJobState::kDone ? m.cancelled_before_start : m.never_started);
      continue;
    }
    ++m.started;
    if (j.state == SimJobState::kDone)
      ++m.end_states[to_string(j.end_state)];
    else
      ++m.end_states["RUNNING"];
    // Wait of the run that finished: from its (re)submission (a requeue resets Submit, as sacct shows).
    const double wait = static_cast<double>(j.start - j.submit);
    const double run =
        static_cast<double>(std::max<Seconds>(0, (j.end == kUnsetTime ? state.now : j.end) - j.start));
    const double bsld = std::max(1.0, (wait + run) / std::max(run, static_cast<double>(kSlowdownTau)));
    for (auto* g : {&all, &by_part[j.run_partition], &by_acct[assoc_account[assoc]], &by_qos[j.qos]}) {
      g->waits.push_back(wait);
      g->bslds.push_back(bsld);
    }
    if (j.end_state != JobState::kPreempted) cpu_seconds += run * j.alloc_cpus;
    top_usage += run * j.alloc_cpus;
    m.last_end = std::max(m.last_end, j.end == kUnsetTime ? state.now : j.end);

    const auto& r = trace.jobs[j.trace_index];
    if (r.start != kUnsetTime && r.submit != kUnsetTime) {
      const double rec_wait = static_cast<double>(r.start - r.submit);
      rec_all.waits.push_back(rec_wait);
      const double error = std::abs(static_cast<double>(j.start - r.start));
      start_errors.push_back(error);
      const Seconds week = std::max<Seconds>(0, r.submit - state.origin) / (7 * 86400);
      for (auto* sums : {&fid_part[j.run_partition], &fid_qos[j.qos], &fid_week[week]}) {
        sums->error += error;
        sums->simulated += wait;
        sums->recorded += rec_wait;
        ++sums->jobs;
      }
      ks_groups[j.run_partition].first.push_back(wait);
      ks_groups[j.run_partition].second.push_back(rec_wait);
      auto& day = by_day[(r.submit - state.origin) / 86400];
      day.first.push_back(wait);
      day.second.push_back(rec_wait);
    }
  }
  if (m.first_submit == kUnlimited) m.first_submit = 0;
  m.overall = summarize(all);
  // A group appears when a job of it started.
  for (std::size_t i = 0; i < by_part.size(); ++i)
    if (!by_part[i].waits.empty()) m.by_partition[site.partitions[i].name] = summarize(by_part[i]);
  for (std::size_t i = 0; i < by_acct.size(); ++i)
    if (!by_acct[i].waits.empty()) m.by_account[*account_name[i]] = summarize(by_acct[i]);
  for (std::size_t i = 0; i < by_qos.size(); ++i)
    if (!by_qos[i].waits.empty()) m.by_qos[site.qos[i].name] = summarize(by_qos[i]);
  m.makespan = std::max<Seconds>(0, m.last_end - m.first_submit);
  const double capacity = static_cast<double>(state.cluster.total_cpus()) * static_cast<double>(m.makespan);
  m.utilisation = capacity > 0 ? cpu_seconds / capacity : 0;

  // Queue length: time-weighted mean and CDF.
  double total_time = 0, weighted = 0;
  for (const auto& [len, secs] : series.queue_length_time) {
    total_time += static_cast<double>(secs);
    weighted += static_cast<double>(len) * static_cast<double>(secs);
  }
  m.mean_queue_length = total_time > 0 ? weighted / total_time : 0;
  m.max_queue_length = series.max_queue;
  double acc = 0;
  for (const auto& [len, secs] : series.queue_length_time) {
    acc += static_cast<double>(secs);
    m.queue_length_cdf.emplace_back(len, total_time > 0 ? acc / total_time : 0);
  }
  const double total_cpus = static_cast<double>(state.cluster.total_cpus());
  m.series_bucket = series.width;
  const auto width = static_cast<double>(series.width);
  for (const auto& b : series.buckets) {
    m.utilisation_series.push_back(total_cpus > 0 ? b.cpu_seconds / (total_cpus * width) : 0);
    m.queue_series.push_back(b.queue_seconds / width);
  }
  // Memory and GPUs: the held share per bucket, and over the makespan as `utilisation` is for CPUs.
  using Bucket = TimeSeriesRecorder::Bucket;
  const auto held_share = [&](double total, double Bucket::*held, std::vector<double>& out) {
    if (!series.resources || !(total > 0)) return -1.0;
    double sum = 0;
    for (const auto& b : series.buckets) {
      out.push_back(b.*held / (total * width));
      sum += b.*held;
    }
    return m.makespan > 0 ? sum / (total * static_cast<double>(m.makespan)) : 0.0;
  };
  const auto& cluster = state.cluster;
  m.memory_utilisation = held_share(static_cast<double>(cluster.total_memory_mb()), &Bucket::mem_mb_seconds,
                                    m.memory_utilisation_series);
  for (std::size_t r = 0; r < static_cast<std::size_t>(PendingReason::kCount); ++r) {
    std::vector<double> v;
    bool any = false;
    for (const auto& b : series.buckets) {
      v.push_back(b.samples > 0 ? b.reasons[r] / b.samples : 0);
      any = any || v.back() > 0;
    }
    if (any) m.pending_reasons_series[to_string(static_cast<PendingReason>(r))] = std::move(v);
  }
  m.gpu_utilisation = held_share(static_cast<double>(cluster.total_gres(cluster.find_gres_kind("gpu"))),
                                 &Bucket::gpu_seconds, m.gpu_utilisation_series);

  // Fairness: each top-level account's share of the CPU-seconds its jobs used (every run, preempted
  // ones included) vs its share target among the top-level accounts that have jobs in the trace: an
  // account that submits nothing is owed nothing here, and would make the index unreachable.
  std::vector<std::pair<const Account*, double>> active;  // (top-level account, CPU-seconds used)
  double share_sum = 0, used_sum = 0;
  for (const auto& a : site.accounts)
    if (const auto it = account_number.find(a.name);
        a.parent == "root" && it != account_number.end() && acct_active[it->second]) {
      const double used = acct_usage[it->second];
      active.emplace_back(&a, used);
      share_sum += a.shares.value;
      used_sum += used;
    }
  for (const auto& [a, used] : active)
    m.fairness[a->name] = {used_sum > 0 ? used / used_sum : 0,
                           share_sum > 0 ? a->shares.value / share_sum : 0};

  // Fidelity against recorded starts.
  if (!start_errors.empty()) {
    m.has_fidelity = true;
    auto& f = m.fidelity;
    f.jobs = start_errors.size();
    const Eigen::Map<const Eigen::ArrayXd> e(start_errors.data(),
                                             static_cast<Eigen::Index>(start_errors.size()));
    f.start_error_mean_abs = e.mean();
    const auto d = distribution(start_errors);
    f.start_error_p50_abs = d.p50;
    f.start_error_p90_abs = d.p90;
    // Partitions with jobs by name: the sums below add in that order, as they always have.
    std::map<std::string, std::size_t> partitions_by_name;
    for (std::size_t p = 0; p < ks_groups.size(); ++p)
      if (!ks_groups[p].first.empty()) partitions_by_name.emplace(site.partitions[p].name, p);
    double sim_sum = 0, rec_sum = 0;
    for (const auto& [part, p] : partitions_by_name) {
      const auto& g = ks_groups[p];
      f.ks_by_partition[part] = ks_statistic(g.first, g.second);
      for (double w : g.first) sim_sum += w;
      for (double w : g.second) rec_sum += w;
    }
    f.simulated_mean_wait = sim_sum / static_cast<double>(f.jobs);
    f.recorded_mean_wait = rec_sum / static_cast<double>(f.jobs);
    f.mean_wait_deviation =
        f.recorded_mean_wait > 0 ? (f.simulated_mean_wait - f.recorded_mean_wait) / f.recorded_mean_wait : 0;
    // 14-day moving average of daily mean waits; MAPE over days where the recorded average is > 0.
    double ape = 0;
    std::size_t n = 0;
    for (const auto& [day, unused] : by_day) {
      double s = 0, r = 0;
      std::size_t c = 0;
      for (auto it = by_day.lower_bound(day - 13); it != by_day.end() && it->first <= day; ++it) {
        for (double w : it->second.first) s += w;
        for (double w : it->second.second) r += w;
        c += it->second.first.size();
      }
      if (c == 0 || r <= 0) continue;
      ape += std::abs(s - r) / r;
      ++n;
    }
    f.moving_average_wait_mape = n > 0 ? ape / static_cast<double>(n) : 0;
    const auto groups = [](const std::map<std::string, Sums>& in, std::map<std::string, GroupFidelity>& out) {
      for (const auto& [name, s] : in) {
        auto& g = out[name];
        const auto jobs = static_cast<double>(s.jobs);
        g.jobs = s.jobs;
        g.start_error_mean_abs = s.error / jobs;
        g.simulated_mean_wait = s.simulated / jobs;
        g.recorded_mean_wait = s.recorded / jobs;
        g.mean_wait_deviation = s.recorded > 0 ? (s.simulated - s.recorded) / s.recorded : 0;
      }
    };
    // Named once here; a group with no job is left out, as before.
    const auto named = [](const std::vector<Sums>& in, const auto& name_of) {
      std::map<std::string, Sums> out;
      for (std::size_t i = 0; i < in.size(); ++i)
        if (in[i].jobs > 0) out.emplace(name_of(i), in[i]);
      return out;
    };
    groups(named(fid_part, [&](std::size_t i) { return site.partitions[i].name; }), f.by_partition);
    groups(named(fid_qos, [&](std::size_t i) { return site.qos[i].name; }), f.by_qos);
    std::map<std::string, Sums> by_week;  // named by the week's first day, YYYY-MM-DD
    for (const auto& [week, sums] : fid_week)
      by_week[format_timestamp(state.origin + week * 7 * 86400).substr(0, 10)] = sums;
    groups(by_week, f.by_week);
  }
  return m;
}

namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string num(double v) {
  return std::isfinite(v) ? fmt::format("{:.6g}", v) : "null";
}

std::string wait_json(const WaitStats& w) {
  return fmt::format(
      R"({{"jobs": {}, "wait_mean_s": {}, "wait_median_s": {}, "wait_p90_s": {}, "wait_p99_s": {}, "wait_max_s": {}, "bounded_slowdown_mean": {}}})",
      w.jobs, num(w.mean), num(w.median), num(w.p90), num(w.p99), num(w.max), num(w.mean_bsld));
}

std::string group_json(const std::map<std::string, WaitStats>& g) {
  std::string out = "{";
  bool first = true;
  for (const auto& [k, w] : g) {
    out += fmt::format("{}\n    {}: {}", first ? "" : ",", json_string(k), wait_json(w));
    first = false;
  }
  return out + "}";
}

template <class T, class F>
std::string array_json(const std::vector<T>& v, F f) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + f(v[i]);
  return out + "]";
}

template <class M>
std::string count_map_json(const M& m) {
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : m) {
    out += fmt::format("{}{}: {}", first ? "" : ", ", json_string(k), v);
    first = false;
  }
  return out + "}";
}

}  // namespace

std::string metrics_to_json(const ReplayMetrics& m) {
  std::string out = "{\n";
  out += fmt::format(
      "  \"jobs\": {{\"input\": {}, \"rejected\": {}, \"started\": {}, \"never_started\": {}, "
      "\"cancelled_before_start\": {}}},\n",
      m.input_jobs, m.rejected, m.started, m.never_started, m.cancelled_before_start);
  out += fmt::format("  \"rejected_by_reason\": {},\n", count_map_json(m.rejected_by_reason));
  out += fmt::format("  \"end_states\": {},\n", count_map_json(m.end_states));
  out += fmt::format("  \"overall\": {},\n", wait_json(m.overall));
  out += fmt::format("  \"by_partition\": {},\n", group_json(m.by_partition));
  out += fmt::format("  \"by_account\": {},\n", group_json(m.by_account));
  out += fmt::format("  \"by_qos\": {},\n", group_json(m.by_qos));
  out += fmt::format("  \"first_submit\": {}, \"last_end\": {}, \"makespan_s\": {},\n", m.first_submit,
                     m.last_end, m.makespan);
  out += fmt::format("  \"utilisation\": {},\n", num(m.utilisation));
  out += fmt::format("  \"memory_utilisation\": {}, \"gpu_utilisation\": {},\n", num(m.memory_utilisation),
                     num(m.gpu_utilisation));
  out += fmt::format(
      "  \"preemption\": {{\"runs_interrupted\": {}, \"lost_core_hours\": {}, \"suspensions\": {}, "
      "\"suspended_hours\": {}, \"by_partition\": {}, \"by_qos\": {}}},\n",
      m.preemptions, num(m.preempted_core_hours), m.suspensions, num(m.suspended_hours),
      count_map_json(m.preemptions_by_partition), count_map_json(m.preemptions_by_qos));
  out += fmt::format("  \"queue_length\": {{\"mean\": {}, \"max\": {}, \"cdf\": {}}},\n",
                     num(m.mean_queue_length), m.max_queue_length,
                     array_json(m.queue_length_cdf, [](const auto& p) {
                       return fmt::format("[{}, {}]", p.first, num(p.second));
                     }));
  out += fmt::format("  \"series_bucket_s\": {},\n", m.series_bucket);
  out += fmt::format("  \"utilisation_series\": {},\n", array_json(m.utilisation_series, num));
  out += fmt::format("  \"queue_length_series\": {},\n", array_json(m.queue_series, num));
  out += fmt::format("  \"memory_utilisation_series\": {},\n", array_json(m.memory_utilisation_series, num));
  out += fmt::format("  \"gpu_utilisation_series\": {},\n", array_json(m.gpu_utilisation_series, num));
  std::string reasons = "{";
  for (const auto& [name, v] : m.pending_reasons_series)
    reasons += fmt::format("{}{}: {}", reasons.size() > 1 ? ", " : "", json_string(name), array_json(v, num));
  out += fmt::format("  \"pending_reasons_series\": {}}},\n", reasons);
  std::string fair = "{";
  bool first = true;
  for (const auto& [k, v] : m.fairness) {
    fair += fmt::format("{}{}: {{\"usage_share\": {}, \"target_share\": {}}}", first ? "" : ", ",
                        json_string(k), num(v.first), num(v.second));
    first = false;
  }
  out += "  \"fairness\": " + fair + "}";
  if (m.has_fidelity) {
    const auto& f = m.fidelity;
    std::string ks = "{";
    first = true;
    for (const auto& [k, v] : f.ks_by_partition) {
      ks += fmt::format("{}{}: {}", first ? "" : ", ", json_string(k), num(v));
      first = false;
    }
    ks += "}";
    const auto groups = [](const std::map<std::string, GroupFidelity>& table) {
      std::string s = "{";
      for (const auto& [name, g] : table)
        s += fmt::format(
            "{}{}: {{\"jobs\": {}, \"start_error_mean_abs_s\": {}, \"recorded_mean_wait_s\": {}, "
            "\"simulated_mean_wait_s\": {}, \"mean_wait_deviation\": {}}}",
            s.size() > 1 ? ", " : "", json_string(name), g.jobs, num(g.start_error_mean_abs),
            num(g.recorded_mean_wait), num(g.simulated_mean_wait), num(g.mean_wait_deviation));
      return s + "}";
    };
    out += fmt::format(
        ",\n  \"fidelity\": {{\"jobs\": {}, \"start_error_mean_abs_s\": {}, \"start_error_p50_abs_s\": {}, "
        "\"start_error_p90_abs_s\": {}, \"recorded_mean_wait_s\": {}, \"simulated_mean_wait_s\": {}, "
        "\"mean_wait_deviation\": {}, \"two_week_moving_average_wait_mape\": {}, \"ks_by_partition\": {},\n"
        "    \"by_partition\": {},\n    \"by_qos\": {},\n    \"by_week\": {}}}",
        f.jobs, num(f.start_error_mean_abs), num(f.start_error_p50_abs), num(f.start_error_p90_abs),
        num(f.recorded_mean_wait), num(f.simulated_mean_wait), num(f.mean_wait_deviation),
        num(f.moving_average_wait_mape), ks, groups(f.by_partition), groups(f.by_qos), groups(f.by_week));
  }
  return out + "\n}\n";
}

}  // namespace slurmtwin::sim
