#include "policies/limits.hpp"

#include <algorithm>
#include <cassert>
#include <optional>

#include "sim/job_resolver.hpp"
#include "traces/text.hpp"

namespace slurmtwin::policies {
namespace {

using Tres = sim::LimitUsage::Tres;
using R = sim::PendingReason;

// The user key under which per-QOS totals over all users are kept.
constexpr std::uint32_t kAllUsers = 0xFFFFFFFF;

// TRES names of Tres's slots, as GrpTRES and friends spell them.
constexpr std::array<const char*, 4> kTresNames = {"cpu", "mem", "node", "gres/gpu"};

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

// What the job counts against limits: what it was allocated once started, else what it asks for
// (CPUs, memory in MB, nodes, GPUs).
Tres job_tres(const sim::SimState& s, const sim::SimJob& j) {
  const auto& r = j.request;
  const auto gpu = s.cluster.find_gres_kind("gpu");
  const std::int64_t gpus_per_node = gpu < r.gres_per_node.size() ? r.gres_per_node[gpu] : 0;
  if (!j.alloc.empty()) {
    std::int64_t mem = 0;
    for (const auto& a : j.alloc) mem += a.mem_mb;
    const auto nodes = static_cast<std::int64_t>(j.alloc.size());
    return {j.alloc_cpus, mem, nodes, gpus_per_node * nodes};
  }
  const std::int64_t nodes = r.min_nodes;
  const std::int64_t mem = r.mem_per_cpu_mb > 0    ? r.mem_per_cpu_mb * r.total_cpus
                           : r.mem_per_node_mb > 0 ? r.mem_per_node_mb * nodes
                                                   : 0;  // all of each node's memory: not known yet
  return {static_cast<std::int64_t>(r.total_cpus), mem, nodes, gpus_per_node * nodes};
}

// A job's TRES, computed on first use: check_limits runs for every record a pass examines, and most
// meet no TRES limit at all.
class JobTres {
 public:
  JobTres(const sim::SimState& s, const sim::SimJob& j) : s_(s), j_(j) {}
  const Tres& get() {
    if (!tres_) tres_ = job_tres(s_, j_);
    return *tres_;
  }

 private:
  const sim::SimState& s_;
  const sim::SimJob& j_;
  std::optional<Tres> tres_;
};

// The first TRES slot where `used` + the job's TRES exceeds `limits` (-1 = none).
int over(const TresMap& limits, const Tres& used, JobTres& job) {
  if (limits.empty()) return -1;
  const Tres& t = job.get();
  for (std::size_t k = 0; k < kTresNames.size(); ++k)
    if (const auto cap = tres_limit(limits, kTresNames[k]); cap >= 0 && used[k] + t[k] > cap)
      return static_cast<int>(k);
  return -1;
}

R grp_reason(int slot, bool qos) {
  constexpr std::array<R, 4> kQos = {R::kQosGrpTres, R::kQosGrpMem, R::kQosGrpNode, R::kQosGrpGres};
  constexpr std::array<R, 4> kAssoc = {R::kAssocGrpTres, R::kAssocGrpMem, R::kAssocGrpNode, R::kAssocGrpGres};
  return (qos ? kQos : kAssoc)[static_cast<std::size_t>(slot)];
}

Tres& at(std::vector<Tres>& v, std::size_t i) {
  if (v.size() <= i) v.resize(i + 1, Tres{});
  return v[i];
}
const Tres kNoTres{};
const Tres& at(const std::vector<Tres>& v, std::size_t i) {
  return i < v.size() ? v[i] : kNoTres;
}
std::int64_t at(const std::vector<std::int64_t>& v, std::size_t i) {
  return i < v.size() ? v[i] : 0;
}

void add(Tres& a, const Tres& b, std::int64_t sign) {
  for (std::size_t k = 0; k < a.size(); ++k) a[k] += sign * b[k];
}

// The first of `limits`' values that `get` finds set, in order.
template <class Get>
auto first_set(const std::vector<const Limits*>& limits, Get get) -> decltype(get(*limits.front())) {
  for (const auto* l : limits)
    if (auto v = get(*l)) return v;
  return {};
}

// The tree above a user association (prepare_limits built it).
const sim::LimitUsage::AssocChain& chain_of(const sim::SimState& s, std::size_t assoc) {
  assert(assoc < s.usage.assoc_chains.size());
  return s.usage.assoc_chains[assoc];
}

}  // namespace

void prepare_limits(sim::SimState& s) {
  auto& chains = s.usage.assoc_chains;
  chains.assign(s.site.associations.size(), {});
  for (std::size_t a = 0; a < chains.size(); ++a) {
    auto& c = chains[a];
    std::vector<const Limits*> up{&s.site.associations[a].limits};  // nearest first
    const Account* acc = s.site.find_account(s.site.associations[a].account);
    // A cycle cannot come from sacctmgr, but a hand-written site could hold one: stop at its size.
    for (std::size_t depth = 0; acc != nullptr && depth <= s.site.accounts.size(); ++depth) {
      c.accounts.push_back(static_cast<std::uint32_t>(acc - s.site.accounts.data()));
      up.push_back(&acc->limits);
      if (acc->parent.empty()) break;
      acc = s.site.find_account(acc->parent);
    }
    c.max_wall = first_set(up, [](const Limits& x) { return x.max_wall; });
    c.max_tres_per_job = first_set(up, [](const Limits& x) -> const TresMap* {
      return x.max_tres_per_job.empty() ? nullptr : &x.max_tres_per_job;
    });
    c.max_jobs_per_user = first_set(up, [](const Limits& x) { return x.max_jobs_per_user; });
    c.max_submit_jobs_per_user = first_set(up, [](const Limits& x) { return x.max_submit_jobs_per_user; });
    c.grp = std::any_of(up.begin(), up.end(),
                        [](const Limits* x) { return x->grp_jobs.has_value() || !x->grp_tres.empty(); });
  }
}

sim::PendingReason check_limits(const sim::SimState& s, const sim::SimJob& j, std::uint16_t partition) {
  const auto& part = s.site.partitions[partition];
  if (j.time_limit != kUnlimited && part.max_time != kUnlimited && j.time_limit > part.max_time)
    return R::kPartitionTimeLimit;
  if ((part.max_nodes > 0 && j.request.min_nodes > part.max_nodes) || j.request.min_nodes < part.min_nodes ||
      j.request.min_nodes > s.partition_nodes[partition].size())
    return R::kPartitionNodeLimit;
  if (partition < s.partition_cpus.size() && j.request.total_cpus > s.partition_cpus[partition])
    return R::kPartitionConfig;
  if (part.max_mem_per_node_mb > 0) {
    const auto& nodes = s.partition_nodes[partition];
    if (sim::memory_over_node_cap(part, nodes.empty() ? nullptr : &s.site.nodes[nodes.front()], j.request) >
        0)
      return R::kPnMemLimit;
  }
  const auto& l = s.site.qos[j.qos].limits;
  const auto& u = s.usage;
  const auto qi = j.qos;
  JobTres job(s, j);
  // QOS limits first, then the association's and those of every account above it (Slurm's
  // acct_policy_job_runnable_*: QOS, then associations from the user's upwards).
  if (l.max_wall && j.time_limit != kUnlimited && j.time_limit > *l.max_wall) return R::kQosMaxWall;
  if (over(l.max_tres_per_job, Tres{}, job) >= 0) return R::kQosMaxTresPerJob;
  if (l.max_jobs_per_user && get(u.qos_user_jobs, qi, j.user) >= *l.max_jobs_per_user)
    return R::kQosMaxJobsPerUser;
  if (l.grp_jobs && at(u.qos_jobs, qi) >= *l.grp_jobs) return R::kQosGrpJobs;
  if (const int k = over(l.grp_tres, at(u.qos_tres, qi), job); k >= 0) return grp_reason(k, true);
  if (!l.max_tres_per_user.empty()) {
    const auto it = u.qos_user_tres.find({qi, j.user});
    if (over(l.max_tres_per_user, it == u.qos_user_tres.end() ? Tres{} : it->second, job) >= 0)
      return R::kQosMaxTresPerUser;
  }
  if (j.assoc < 0) return R::kNone;
  const auto ai = static_cast<std::size_t>(j.assoc);
  const auto& c = chain_of(s, ai);
  if (c.max_wall && j.time_limit != kUnlimited && j.time_limit > *c.max_wall) return R::kAssocMaxWall;
  if (c.max_tres_per_job != nullptr && over(*c.max_tres_per_job, Tres{}, job) >= 0)
    return R::kAssocMaxTresPerJob;
  if (c.max_jobs_per_user && at(u.assoc_jobs, ai) >= *c.max_jobs_per_user) return R::kAssocMaxJobs;
  if (!c.grp) return R::kNone;
  const auto& a = s.site.associations[ai];
  if (a.limits.grp_jobs && at(u.assoc_jobs, ai) >= *a.limits.grp_jobs) return R::kAssocGrpJobs;
  if (const int k = over(a.limits.grp_tres, at(u.assoc_tres, ai), job); k >= 0) return grp_reason(k, false);
  for (const auto acc : c.accounts) {
    const auto& al = s.site.accounts[acc].limits;
    if (al.grp_jobs && at(u.account_jobs, acc) >= *al.grp_jobs) return R::kAssocGrpJobs;
    if (const int k = over(al.grp_tres, at(u.account_tres, acc), job); k >= 0) return grp_reason(k, false);
  }
  return R::kNone;
}

std::string check_submit_limits(const sim::SimState& s, const sim::SimJob& j) {
  const auto& q = s.site.qos[j.qos].limits;
  // A QOS with Flags=DenyOnLimit refuses at submit a job over its per-job limits, which would
  // otherwise pend for ever (seen on real Slurm 22.05: MaxWall, "Job violates accounting/QOS policy").
  const auto& flags = s.site.qos[j.qos].flags;
  if (std::any_of(flags.begin(), flags.end(),
                  [](const std::string& f) { return text::iequals(f, "DenyOnLimit"); })) {
    if (q.max_wall && j.time_limit != kUnlimited && j.time_limit > *q.max_wall)
      return "QOSMaxWallDurationPerJobLimit";
    JobTres job(s, j);
    if (over(q.max_tres_per_job, Tres{}, job) >= 0) return "QOSMaxTRESPerJob";
  }
  if (q.max_submit_jobs_per_user &&
      get(s.usage.qos_user_submit, j.qos, j.user) >= *q.max_submit_jobs_per_user)
    return "QOSMaxSubmitJobPerUserLimit";
  if (q.grp_submit_jobs && get(s.usage.qos_user_submit, j.qos, kAllUsers) >= *q.grp_submit_jobs)
    return "QOSGrpSubmitJobsLimit";
  if (j.assoc < 0) return {};
  const auto ai = static_cast<std::size_t>(j.assoc);
  const auto& a = s.site.associations[ai];
  const auto& c = chain_of(s, ai);
  const auto submitted = get(s.usage.assoc_submit, 0, static_cast<std::uint32_t>(j.assoc));
  if (c.max_submit_jobs_per_user && submitted >= *c.max_submit_jobs_per_user) return "AssocMaxSubmitJobLimit";
  if (a.limits.grp_submit_jobs && submitted >= *a.limits.grp_submit_jobs) return "AssocGrpSubmitJobsLimit";
  for (const auto acc : c.accounts)
    if (const auto& cap = s.site.accounts[acc].limits.grp_submit_jobs;
        cap && at(s.usage.account_submit, acc) >= *cap)
      return "AssocGrpSubmitJobsLimit";
  return {};
}

void count_submit(sim::SimState& s, const sim::SimJob& j) {
  ++s.usage.qos_user_submit[{j.qos, j.user}];
  ++s.usage.qos_user_submit[{j.qos, kAllUsers}];
  if (j.assoc < 0) return;
  ++s.usage.assoc_submit[{0, static_cast<std::uint32_t>(j.assoc)}];
  for (const auto acc : chain_of(s, static_cast<std::size_t>(j.assoc)).accounts) {
    if (s.usage.account_submit.size() <= acc) s.usage.account_submit.resize(acc + 1, 0);
    ++s.usage.account_submit[acc];
  }
}

namespace {

// Adds (sign 1) or removes (-1) a running job from every total it counts in.
void count_running(sim::SimState& s, const sim::SimJob& j, std::int64_t sign) {
  auto& u = s.usage;
  const Tres job = job_tres(s, j);
  u.qos_user_jobs[{j.qos, j.user}] += sign;
  add(u.qos_user_tres[{j.qos, j.user}], job, sign);
  if (u.qos_jobs.size() <= j.qos) u.qos_jobs.resize(j.qos + 1, 0);
  u.qos_jobs[j.qos] += sign;
  add(at(u.qos_tres, j.qos), job, sign);
  if (j.assoc < 0) return;
  const auto ai = static_cast<std::size_t>(j.assoc);
  if (u.assoc_jobs.size() <= ai) u.assoc_jobs.resize(ai + 1, 0);
  u.assoc_jobs[ai] += sign;
  add(at(u.assoc_tres, ai), job, sign);
  for (const auto acc : chain_of(s, ai).accounts) {
    if (u.account_jobs.size() <= acc) u.account_jobs.resize(acc + 1, 0);
    u.account_jobs[acc] += sign;
    add(at(u.account_tres, acc), job, sign);
  }
}

}  // namespace

void count_start(sim::SimState& s, const sim::SimJob& j) {
  count_running(s, j, 1);
}

void count_end(sim::SimState& s, const sim::SimJob& j) {
  count_running(s, j, -1);
  // A requeued job stays submitted; one that is done leaves the submit counts.
  if (j.preempt != sim::PreemptAction::kRequeue) count_withdrawn(s, j);
}

void count_withdrawn(sim::SimState& s, const sim::SimJob& j) {
  auto& u = s.usage;
  --u.qos_user_submit[{j.qos, j.user}];
  --u.qos_user_submit[{j.qos, kAllUsers}];
  if (j.assoc < 0) return;
  --u.assoc_submit[{0, static_cast<std::uint32_t>(j.assoc)}];
  for (const auto acc : chain_of(s, static_cast<std::size_t>(j.assoc)).accounts) --u.account_submit[acc];
}

}  // namespace slurmtwin::policies
