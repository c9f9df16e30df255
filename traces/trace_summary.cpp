#include "traces/trace_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_set>

#include "traces/time_format.hpp"

namespace slurmtwin {

Quantiles quantiles(std::vector<double>& v) {
  Quantiles out;
  if (v.empty()) return out;
  // Quantile p interpolates between the order statistics lo and lo + 1 of pos = p (n - 1). After
  // nth_element puts statistic lo in place, the next one is the least of those after it, and every
  // later quantile's statistics lie in that part too.
  auto from = v.begin();
  const auto q = [&](double p) {
    const double pos = p * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const auto at = v.begin() + static_cast<std::ptrdiff_t>(lo);
    std::nth_element(from, at, v.end());
    from = at;
    const double a = *at;
    const double b = lo + 1 < v.size() ? *std::min_element(at + 1, v.end()) : a;
    return a + (b - a) * (pos - static_cast<double>(lo));
  };
  out.p50 = q(0.5);
  out.p90 = q(0.9);
  out.p95 = q(0.95);
  out.p99 = q(0.99);
  return out;
}

Distribution distribution(std::vector<double> v) {
  Distribution d;
  d.count = v.size();
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());  // the mean sums in this order (before quantiles reorders v)
  d.min = v.front();
  d.max = v.back();
  d.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  const auto q = quantiles(v);
  d.p50 = q.p50;
  d.p90 = q.p90;
  d.p95 = q.p95;
  d.p99 = q.p99;
  return d;
}

TraceSummary summarize_trace(const Trace& t) {
  TraceSummary s;
  s.jobs = t.jobs.size();
  std::unordered_set<NameIndex> users, accounts, parts, qos;
  std::vector<double> cpus, nodes, limits, runtimes, gpus, waits;
  for (const auto& j : t.jobs) {
    if (j.submit != kUnsetTime) {
      if (s.first_submit == kUnsetTime || j.submit < s.first_submit) s.first_submit = j.submit;
      if (s.last_submit == kUnsetTime || j.submit > s.last_submit) s.last_submit = j.submit;
    }
    users.insert(j.user);
    accounts.insert(j.account);
    parts.insert(j.partition);
    qos.insert(j.qos);
    ++s.jobs_by_partition[t.partition_name(j).empty() ? "(default)" : t.partition_name(j)];
    ++s.jobs_by_qos[t.qos_name(j).empty() ? "(default)" : t.qos_name(j)];
    ++s.jobs_by_state[to_string(j.state)];
    cpus.push_back(std::max<double>(j.req_cpus, static_cast<double>(j.tasks) * j.cpus_per_task));
    nodes.push_back(j.nodes);
    if (j.time_limit != kUnsetTime && j.time_limit != kUnlimited)
      limits.push_back(static_cast<double>(j.time_limit));
    if (j.runtime != kUnsetTime) runtimes.push_back(static_cast<double>(j.runtime));
    double g = 0;
    for (const auto& r : j.gres)
      if (r.name == "gpu")
        g += static_cast<double>(r.count) * (r.per_node ? std::max<std::uint32_t>(1, j.nodes) : 1);
    gpus.push_back(g);
    if (j.start != kUnsetTime && j.submit != kUnsetTime) {
      ++s.with_recorded_start;
      waits.push_back(static_cast<double>(j.start - j.submit));
    }
  }
  users.erase(kNoName);
  accounts.erase(kNoName);
  parts.erase(kNoName);
  qos.erase(kNoName);
  s.users = users.size();
  s.accounts = accounts.size();
  s.partitions = parts.size();
  s.qos = qos.size();
  s.cpus = distribution(cpus);
  s.nodes = distribution(nodes);
  s.time_limit_s = distribution(limits);
  s.runtime_s = distribution(runtimes);
  s.gpus = distribution(gpus);
  s.recorded_wait_s = distribution(waits);
  return s;
}

namespace {

std::string dist_line(const char* name, const Distribution& d) {
  return fmt::format(
      "  {:<14} n={:<8} min={:<10g} p50={:<10g} p90={:<10g} p99={:<10g} max={:<10g} mean={:.4g}\n", name,
      d.count, d.min, d.p50, d.p90, d.p99, d.max, d.mean);
}

std::string counts(const std::map<std::string, std::uint64_t>& m) {
  std::string out;
  for (const auto& [k, n] : m) out += fmt::format("{}{}={}", out.empty() ? "" : ", ", k, n);
  return out;
}

}  // namespace

std::string format_trace_summary(const TraceSummary& s, const ReadReport& report) {
  std::string out;
  const auto files = std::count(report.file.begin(), report.file.end(), ',') + 1;
  out += files <= 3 ? fmt::format("file(s):      {}\n", report.file)
                    : fmt::format("file(s):      {} files: {} ...\n", files,
                                  report.file.substr(0, report.file.find(',')));
  out += fmt::format("jobs:         {}\n", s.jobs);
  out += fmt::format(
      "submit span:  {} .. {} ({:.2f} days)\n", format_timestamp(s.first_submit),
      format_timestamp(s.last_submit),
      s.first_submit == kUnsetTime ? 0.0 : static_cast<double>(s.last_submit - s.first_submit) / 86400.0);
  out += fmt::format("users: {}  accounts: {}  partitions: {}  qos: {}\n", s.users, s.accounts, s.partitions,
                     s.qos);
  out += fmt::format("by partition: {}\n", counts(s.jobs_by_partition));
  out += fmt::format("by qos:       {}\n", counts(s.jobs_by_qos));
  out += fmt::format("by state:     {}\n", counts(s.jobs_by_state));
  out += "requests:\n";
  out += dist_line("cpus", s.cpus);
  out += dist_line("nodes", s.nodes);
  out += dist_line("gpus", s.gpus);
  out += dist_line("time_limit_s", s.time_limit_s);
  out += dist_line("runtime_s", s.runtime_s);
  if (s.with_recorded_start > 0) {
    out += fmt::format("recorded waits ({} jobs with a start):\n", s.with_recorded_start);
    out += dist_line("wait_s", s.recorded_wait_s);
  }
  out += "input accounting: " + format_report(report);
  return out;
}

}  // namespace slurmtwin
