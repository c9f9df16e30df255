#include "policies/limits.hpp"

#include <algorithm>

namespace slurmtwin::policies {
namespace {

// The user key under which per-QOS totals over all users are kept.
constexpr std::uint32_t kAllUsers = 0xFFFFFFFF;

std::int64_t get(const std::map<std::pair<std::uint16_t, std::uint32_t>, std::int64_t>& m, std::uint16_t q,
                 std::uint32_t u) {
  auto it = m.find({q, u});
  return it == m.end() ? 0 : it->second;
}

std::int64_t tres_limit(const TresMap& m, const char* key) {
  if (m.empty()) return -1;  // the usual case: no need to build a key string to look up
  auto it = m.find(key);
  return it == m.end() ? -1 : it->second;
}

// CPUs the job will be charged for limits: the requested total (allocation is not known yet).
std::int64_t job_cpus(const sim::SimJob& j) {
  return j.alloc_cpus > 0 ? j.alloc_cpus : static_cast<std::int64_t>(j.request.total_cpus);
}

void ensure(sim::SimState& s) {
  auto& u = s.usage;
  if (u.qos_jobs.size() < s.site.qos.size()) {
    u.qos_jobs.resize(s.site.qos.size(), 0);
    u.qos_cpus.resize(s.site.qos.size(), 0);
    u.qos_nodes.resize(s.site.qos.size(), 0);
  }
  if (u.assoc_jobs.size() < s.site.associations.size()) u.assoc_jobs.resize(s.site.associations.size(), 0);
}

}  // namespace

sim::PendingReason check_limits(const sim::SimState& s, const sim::SimJob& j, std::uint16_t partition) {
  using R = sim::PendingReason;
  const auto& part = s.site.partitions[partition];
  if (j.time_limit != kUnlimited && part.max_time != kUnlimited && j.time_limit > part.max_time)
    return R::kPartitionTimeLimit;
  if ((part.max_nodes > 0 && j.request.min_nodes > part.max_nodes) || j.request.min_nodes < part.min_nodes ||
      j.request.min_nodes > s.partition_nodes[partition].size())
    return R::kPartitionNodeLimit;
  const auto& q = s.site.qos[j.qos];
  const auto& l = q.limits;
  const auto& u = s.usage;
  const auto qi = j.qos;
  const std::int64_t running_qos = qi < u.qos_jobs.size() ? u.qos_jobs[qi] : 0;
  if (l.max_wall && j.time_limit != kUnlimited && j.time_limit > *l.max_wall) return R::kPartitionTimeLimit;
  if (l.max_jobs_per_user && get(u.qos_user_jobs, qi, j.user) >= *l.max_jobs_per_user)
    return R::kQosMaxJobsPerUser;
  if (l.grp_jobs && running_qos >= *l.grp_jobs) return R::kQosGrpJobs;
  if (const auto cap = tres_limit(l.grp_tres, "cpu");
      cap >= 0 && (qi < u.qos_cpus.size() ? u.qos_cpus[qi] : 0) + job_cpus(j) > cap)
    return R::kQosGrpTres;
  if (const auto cap = tres_limit(l.grp_tres, "node");
      cap >= 0 && (qi < u.qos_nodes.size() ? u.qos_nodes[qi] : 0) + j.request.min_nodes > cap)
    return R::kQosGrpTres;
  if (const auto cap = tres_limit(l.max_tres_per_user, "cpu");
      cap >= 0 && get(u.qos_user_cpus, qi, j.user) + job_cpus(j) > cap)
    return R::kQosMaxTresPerUser;
  if (j.assoc >= 0) {
    const auto& a = s.site.associations[static_cast<std::size_t>(j.assoc)];
    const auto ai = static_cast<std::size_t>(j.assoc);
    if (a.limits.max_jobs_per_user && ai < u.assoc_jobs.size() &&
        u.assoc_jobs[ai] >= *a.limits.max_jobs_per_user)
      return R::kAssocMaxJobs;
  }
  return R::kNone;
}

std::string check_submit_limits(const sim::SimState& s, const sim::SimJob& j) {
  const auto& q = s.site.qos[j.qos].limits;
  if (q.max_submit_jobs_per_user &&
      get(s.usage.qos_user_submit, j.qos, j.user) >= *q.max_submit_jobs_per_user)
    return "QOSMaxSubmitJobPerUserLimit";
  if (q.grp_submit_jobs && get(s.usage.qos_user_submit, j.qos, kAllUsers) >= *q.grp_submit_jobs)
    return "QOSGrpSubmitJobsLimit";
  if (j.assoc >= 0) {
    const auto& a = s.site.associations[static_cast<std::size_t>(j.assoc)].limits;
    if (a.max_submit_jobs_per_user &&
        get(s.usage.assoc_submit, 0, static_cast<std::uint32_t>(j.assoc)) >= *a.max_submit_jobs_per_user)
      return "AssocMaxSubmitJobLimit";
  }
  return {};
}

void count_submit(sim::SimState& s, const sim::SimJob& j) {
  ++s.usage.qos_user_submit[{j.qos, j.user}];
  ++s.usage.qos_user_submit[{j.qos, kAllUsers}];
  if (j.assoc >= 0) ++s.usage.assoc_submit[{0, static_cast<std::uint32_t>(j.assoc)}];
}

void count_start(sim::SimState& s, const sim::SimJob& j) {
  ensure(s);
  auto& u = s.usage;
  ++u.qos_user_jobs[{j.qos, j.user}];
  u.qos_user_cpus[{j.qos, j.user}] += j.alloc_cpus;
  ++u.qos_jobs[j.qos];
  u.qos_cpus[j.qos] += j.alloc_cpus;
  u.qos_nodes[j.qos] += static_cast<std::int64_t>(j.alloc.size());
  if (j.assoc >= 0) ++u.assoc_jobs[static_cast<std::size_t>(j.assoc)];
}

void count_end(sim::SimState& s, const sim::SimJob& j) {
  auto& u = s.usage;
  --u.qos_user_jobs[{j.qos, j.user}];
  u.qos_user_cpus[{j.qos, j.user}] -= j.alloc_cpus;
  --u.qos_jobs[j.qos];
  u.qos_cpus[j.qos] -= j.alloc_cpus;
  u.qos_nodes[j.qos] -= static_cast<std::int64_t>(j.alloc.size());
  if (j.assoc >= 0) --u.assoc_jobs[static_cast<std::size_t>(j.assoc)];
  // A requeued job stays submitted; one that is done leaves the submit counts.
  if (j.preempt != sim::PreemptAction::kRequeue) {
    --u.qos_user_submit[{j.qos, j.user}];
    --u.qos_user_submit[{j.qos, kAllUsers}];
    if (j.assoc >= 0) --u.assoc_submit[{0, static_cast<std::uint32_t>(j.assoc)}];
  }
}

}  // namespace slurmtwin::policies
