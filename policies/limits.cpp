#include "policies/limits.hpp"

#include <algorithm>
#include <cassert>
#include <optional>
#include <span>

#include "policies/usage.hpp"
#include "sim/job_resolver.hpp"
#include "traces/text.hpp"

namespace slurmtwin::policies {
namespace {

using Tres = sim::LimitUsage::Tres;
using TresUsed = sim::LimitUsage::TresUsed;
using R = sim::PendingReason;

// The user key under which per-QOS totals over all users are kept.
constexpr std::uint32_t kAllUsers = 0xFFFFFFFF;
// A job without a time limit counts as Slurm's INFINITE minutes in TRES-minute limits.
constexpr std::int64_t kInfiniteMinutes = 0xfffffffe;

// TRES names of Tres's slots, as GrpTRES and friends spell them.
constexpr const auto& kTresNames = kLimitTres;

std::int64_t tres_limit(const TresMap& m, const char* key) {
  if (m.empty()) return -1;  // the usual case: no need to build a key string to look up
  auto it = m.find(key);
  return it == m.end() ? -1 : it->second;
}

// TRES slots a limit map sets (bit k for kTresNames[k]).
unsigned slots(const TresMap& m) {
  unsigned out = 0;
  if (m.empty()) return out;
  for (std::size_t k = 0; k < kTresNames.size(); ++k)
    if (m.count(kTresNames[k]) != 0) out |= 1u << k;
  return out;
}

bool has_flag(const Qos& q, std::string_view flag) {
  return std::any_of(q.flags.begin(), q.flags.end(),
                     [&](const std::string& f) { return text::iequals(f, flag); });
}

constexpr std::size_t kBilling = 4;  // Tres slot of billing (kLimitTres)
static_assert(std::string_view(kLimitTres[kBilling]) == "billing");

// Billing of `tres` in `partition` as a TRES count: assoc_mgr_tres_weighted's double stored in a
// uint64_t count, so truncated (a job billed 10.98 counts 10 against GrpTRES=billing).
std::int64_t billing_count(const sim::SimState& s, const TresMap& tres, std::uint16_t partition) {
  return static_cast<std::int64_t>(billable_tres(tres, s.site.partitions[partition].tres_billing_weights,
                                                 static_cast<BillingMode>(s.usage.billing_mode)));
}

// The CPUs, memory (MB) and nodes a job counts: what it was allocated once started, else what it asks
// for over `nodes` nodes (memory 0 when it asks for each node's whole memory: not known until placed).
struct BaseCounts {
  std::int64_t cpus = 0;
  std::int64_t mem = 0;
  std::int64_t nodes = 0;
};
BaseCounts base_counts(const sim::SimJob& j, std::int64_t nodes) {
  if (!j.alloc.empty()) {
    std::int64_t mem = 0;
    for (const auto& a : j.alloc) mem += a.mem_mb;
    return {j.alloc_cpus, mem, static_cast<std::int64_t>(j.alloc.size())};
  }
  const auto& r = j.request;
  const std::int64_t mem = r.mem_per_cpu_mb > 0    ? r.mem_per_cpu_mb * r.total_cpus
                           : r.mem_per_node_mb > 0 ? r.mem_per_node_mb * nodes
                                                   : 0;
  return {r.total_cpus, mem, nodes};
}

std::int64_t gpus_per_node(const sim::SimState& s, const sim::SimJob& j) {
  const auto gpu = s.cluster.find_gres_kind("gpu");
  return gpu < j.request.gres_per_node.size() ? j.request.gres_per_node[gpu] : 0;
}

// What the job counts against limits in `partition` (CPUs, memory in MB, nodes, GPUs, billing; billing
// only where a limit reads it): pending, its minimum node count.
Tres job_tres(const sim::SimState& s, const sim::SimJob& j, std::uint16_t partition) {
  const auto c = base_counts(j, j.request.min_nodes);
  // (billing as computed at its start, calc_job_billable_tres, once running)
  const std::int64_t billing = !s.usage.billing  ? 0
                               : j.alloc.empty() ? billing_count(s, job_tres_counts(s, j), partition)
                                                 : static_cast<std::int64_t>(j.billing);
  return {c.cpus, c.mem, c.nodes, gpus_per_node(s, j) * c.nodes, billing};
}

// A job's TRES in a partition, computed on first use: check_limits runs for every record a pass
// examines, and most meet no TRES limit at all.
class JobTres {
 public:
  JobTres(const sim::SimState& s, const sim::SimJob& j, std::uint16_t partition)
      : s_(s), j_(j), partition_(partition) {}
  const Tres& get() {
    if (!tres_) tres_ = job_tres(s_, j_, partition_);
    return *tres_;
  }

 private:
  const sim::SimState& s_;
  const sim::SimJob& j_;
  std::uint16_t partition_;
  std::optional<Tres> tres_;
};

// The first TRES slot that `limits` sets, of those not in `skip` (set by a QOS checked before), for
// which `fails(slot, cap)` (-1 = none).
template <class Fails>
int first_failing(const TresMap& limits, unsigned skip, Fails fails) {
  if (limits.empty()) return -1;
  for (std::size_t k = 0; k < kTresNames.size(); ++k)
    if (const auto cap = tres_limit(limits, kTresNames[k]); cap >= 0 && !(skip >> k & 1u) && fails(k, cap))
      return static_cast<int>(k);
  return -1;
}

// The first TRES slot not in `skip` where `used` + the job's TRES exceeds `limits` (-1 = none).
int over(const TresMap& limits, const Tres& used, JobTres& job, unsigned skip = 0) {
  if (limits.empty()) return -1;
  const Tres& t = job.get();
  return first_failing(limits, skip, [&](std::size_t k, std::int64_t cap) { return used[k] + t[k] > cap; });
}

R grp_reason(int slot, bool qos) {
  constexpr std::array<R, sim::kTresSlots> kQos = {R::kQosGrpTres, R::kQosGrpMem, R::kQosGrpNode,
                                                   R::kQosGrpGres, R::kQosGrpBilling};
  constexpr std::array<R, sim::kTresSlots> kAssoc = {R::kAssocGrpTres, R::kAssocGrpMem, R::kAssocGrpNode,
                                                     R::kAssocGrpGres, R::kAssocGrpBilling};
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
const Tres& at(const std::map<std::pair<std::uint16_t, std::uint32_t>, Tres>& m, std::uint16_t q,
               std::uint32_t k) {
  const auto it = m.find({q, k});
  return it == m.end() ? kNoTres : it->second;
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

// The QOS that bind a job in a partition, in the order they set limits (acct_policy_set_qos_order):
// the partition's first unless the job's has OverPartQOS; -1 = none.
std::array<std::int32_t, 2> qos_order(const sim::SimState& s, const sim::SimJob& j, std::uint16_t partition) {
  const auto& u = s.usage;
  const std::int32_t pq = partition < u.partition_qos.size() ? u.partition_qos[partition] : -1;
  const std::int32_t jq = j.qos;
  if (pq < 0 || pq == jq) return {jq, -1};
  if (u.over_part_qos[static_cast<std::size_t>(jq)]) return {jq, pq};
  return {pq, jq};
}

// Minutes of a job's time limit as TRES-minute limits count them (job_tres_time_limit; a QOS with
// UsageFactorSafe scales them by its UsageFactor).
std::int64_t limit_minutes(const sim::SimState& s, const sim::SimJob& j) {
  std::int64_t minutes = j.time_limit == kUnlimited ? kInfiniteMinutes : (j.time_limit + 59) / 60;
  const auto& q = s.site.qos[j.qos];
  if (q.usage_factor >= 0.0 && has_flag(q, "UsageFactorSafe") &&
      (minutes != kInfiniteMinutes || q.usage_factor < 1.0))
    minutes = static_cast<std::int64_t>(static_cast<double>(minutes) * q.usage_factor);
  return minutes;
}

double usage_factor(const sim::SimState& s, const sim::SimJob& j) {
  const double uf = s.site.qos[j.qos].usage_factor;
  return uf >= 0.0 ? uf : 1.0;
}

// The TRES-minute checks of one QOS or association (acct_policy.c _validate_tres_usage_limits):
// t = the job's TRES, tt = t x its time limit (minutes), used = TRES-minutes used, run = running
// TRES-minutes. -1 = passes.
int grp_minutes_fail(const TresMap& limits, unsigned skip, const Tres& tt, const Tres& used, const Tres& run,
                     bool safe) {
  return first_failing(limits, skip, [&](std::size_t k, std::int64_t cap) {
    if (tt[k] != 0 && used[k] >= cap) return true;  // used up
    return safe && (tt[k] > cap || (tt[k] != 0 && tt[k] + run[k] > cap - used[k]));
  });
}
int run_minutes_fail(const TresMap& limits, unsigned skip, const Tres& tt, const Tres& run) {
  return first_failing(limits, skip, [&](std::size_t k, std::int64_t cap) {
    return tt[k] > cap || (tt[k] != 0 && tt[k] + run[k] > cap);
  });
}
int max_fail(const TresMap& limits, unsigned skip, const Tres& v) {
  return first_failing(limits, skip, [&](std::size_t k, std::int64_t cap) { return v[k] > cap; });
}

Tres minutes_of(const Tres& secs) {
  Tres m{};
  for (std::size_t k = 0; k < m.size(); ++k) m[k] = secs[k] / 60;
  return m;
}
Tres minutes_of(const TresUsed& secs) {
  Tres m{};
  for (std::size_t k = 0; k < m.size(); ++k) m[k] = static_cast<std::int64_t>(secs[k] / 60.0);
  return m;
}
const TresUsed kNoUse{};
const TresUsed& at(const std::vector<TresUsed>& v, std::size_t i) {
  return i < v.size() ? v[i] : kNoUse;
}

bool selected_limit_set(const Limits& l, bool qos, bool per_user_run_mins) {
  return !l.grp_tres_mins.empty() || !l.grp_tres_run_mins.empty() || !l.max_tres_mins_per_job.empty() ||
         !l.max_tres_per_node.empty() || (qos && !l.min_tres_per_job.empty()) ||
         (qos && per_user_run_mins &&
          (!l.max_tres_run_mins_per_user.empty() || !l.max_tres_run_mins_per_account.empty()));
}
bool tres_minutes_set(const Limits& l, bool per_user_run_mins) {
  return !l.grp_tres_mins.empty() || !l.grp_tres_run_mins.empty() ||
         (per_user_run_mins &&
          (!l.max_tres_run_mins_per_user.empty() || !l.max_tres_run_mins_per_account.empty()));
}

}  // namespace

TresMap job_tres_counts(const sim::SimState& s, const sim::SimJob& j) {
  const auto& r = j.request;
  const auto c = base_counts(j, r.min_nodes);
  TresMap t{{"cpu", c.cpus}, {"mem", c.mem}, {"node", c.nodes}};
  for (std::size_t k = 0; k < r.gres_per_node.size(); ++k)
    if (r.gres_per_node[k] > 0) t["gres/" + s.cluster.gres_name(k)] += r.gres_per_node[k] * c.nodes;
  return t;
}

void prepare_limits(sim::SimState& s) {
  auto& u = s.usage;
  auto& chains = u.assoc_chains;
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
    const auto tres = [&](TresMap Limits::*field) {
      return first_set(up, [field](const Limits& x) -> const TresMap* {
        return (x.*field).empty() ? nullptr : &(x.*field);
      });
    };
    c.max_tres_per_job = tres(&Limits::max_tres_per_job);
    c.max_tres_per_node = tres(&Limits::max_tres_per_node);
    c.max_tres_mins_per_job = tres(&Limits::max_tres_mins_per_job);
    c.max_jobs_per_user = first_set(up, [](const Limits& x) { return x.max_jobs_per_user; });
    c.max_submit_jobs_per_user = first_set(up, [](const Limits& x) { return x.max_submit_jobs_per_user; });
    c.max_jobs_accrue = first_set(up, [](const Limits& x) { return x.max_jobs_accrue_per_user; });
    c.grp = std::any_of(up.begin(), up.end(),
                        [](const Limits* x) { return x->grp_jobs.has_value() || !x->grp_tres.empty(); });
    c.grp_minutes = std::any_of(up.begin(), up.end(), [](const Limits* x) {
      return !x->grp_tres_mins.empty() || !x->grp_tres_run_mins.empty();
    });
  }

  u.partition_qos.clear();
  for (const auto& p : s.site.partitions) {
    const Qos* q = p.qos.empty() ? nullptr : s.site.find_qos(p.qos);
    u.partition_qos.push_back(q == nullptr ? -1 : static_cast<std::int32_t>(q - s.site.qos.data()));
  }
  u.over_part_qos.clear();
  u.qos_no_decay.clear();
  u.account_limits = std::any_of(s.site.qos.begin(), s.site.qos.end(), [](const Qos& q) {
    return q.limits.max_jobs_per_account || q.limits.max_submit_jobs_per_account ||
           !q.limits.max_tres_per_account.empty();
  });
  for (const auto& q : s.site.qos) {
    u.over_part_qos.push_back(has_flag(q, "OverPartQOS"));
    u.qos_no_decay.push_back(has_flag(q, "NoDecay"));
  }
  // Without AccountingStorageEnforce=limits (safe implies it) slurmctld checks no QOS or association
  // limit: acct_policy.c returns before any (submit, queue, post-select, time-out kill, accrue).
  const auto& enforce = s.site.scheduler.accounting_storage_enforce;
  u.safe = enforce.count("safe") != 0;
  u.enforced = u.safe || enforce.count("limits") != 0;

  // MaxTRESRunMinsPU/PA: read by every Slurm, enforced from 24.05 on.
  const bool per_user_run_mins = s.site.scheduler.slurm_version >= 2405;
  u.selected_limits = u.tres_minutes = false;
  for (const auto& q : s.site.qos) {
    u.selected_limits |= selected_limit_set(q.limits, true, per_user_run_mins);
    u.tres_minutes |= tres_minutes_set(q.limits, per_user_run_mins);
  }
  const auto assoc_limits = [&](const Limits& l) {
    u.selected_limits |= selected_limit_set(l, false, false);
    u.tres_minutes |= tres_minutes_set(l, false);
  };
  for (const auto& a : s.site.associations) assoc_limits(a.limits);
  for (const auto& a : s.site.accounts) assoc_limits(a.limits);
  if (!u.enforced) u.selected_limits = u.tres_minutes = false;
  const auto bills = [](const Limits& l) {
    return std::any_of(kTresLimitFields.begin(), kTresLimitFields.end(),
                       [&](const TresLimitField& f) { return (l.*f.field).count("billing") != 0; });
  };
  u.billing = u.enforced && (std::any_of(s.site.qos.begin(), s.site.qos.end(),
                                         [&](const Qos& q) { return bills(q.limits); }) ||
                             std::any_of(s.site.associations.begin(), s.site.associations.end(),
                                         [&](const UserAssoc& a) { return bills(a.limits); }) ||
                             std::any_of(s.site.accounts.begin(), s.site.accounts.end(),
                                         [&](const Account& a) { return bills(a.limits); }));
  u.billing_mode = static_cast<std::uint8_t>(billing_mode(s.site.scheduler.priority_flags));
  if (u.tres_minutes) {
    u.qos_tres_used.assign(s.site.qos.size(), TresUsed{});
    u.assoc_tres_used.assign(s.site.associations.size(), TresUsed{});
    u.account_tres_used.assign(s.site.accounts.size(), TresUsed{});
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
  const auto& u = s.usage;
  if (!u.enforced) return R::kNone;
  JobTres job(s, j, partition);
  // As slurmctld orders them, which decides the reason when several bind: the job-count and time limits
  // of both QOS (in qos_order) and then of the association tree (acct_policy_job_runnable_pre_select),
  // then the TRES limits of both QOS and of the tree (..._post_select: slurmctld checks those once nodes
  // are chosen; they bind the request alike). What a QOS sets, a later QOS and the associations do not
  // check again. Seen on real Slurm in scenario 13: AssocGrpJobsLimit of an account above the one whose
  // GrpTRES also binds.
  bool wall = false, max_jobs = false, max_jobs_pa = false, grp_jobs = false;
  const auto account = sim::account_of(s, j);
  const auto order = qos_order(s, j, partition);
  for (const auto qi : order) {  // _qos_job_runnable_pre_select: GrpJobs, MaxJobsPA, MaxJobsPU, MaxWall
    if (qi < 0) continue;
    const auto q = static_cast<std::uint16_t>(qi);
    const auto& l = s.site.qos[q].limits;
    if (l.grp_jobs && !grp_jobs) {
      grp_jobs = true;
      if (at(u.qos_jobs, q) >= *l.grp_jobs) return R::kQosGrpJobs;
    }
    if (l.max_jobs_per_account && !max_jobs_pa) {
      max_jobs_pa = true;
      if (account && sim::count_at(u.qos_account_jobs, q, *account) >= *l.max_jobs_per_account)
        return R::kQosMaxJobsPerAccount;
    }
    if (l.max_jobs_per_user && !max_jobs) {
      max_jobs = true;
      if (sim::count_at(u.qos_user_jobs, q, j.user) >= *l.max_jobs_per_user) return R::kQosMaxJobsPerUser;
    }
    if (l.max_wall && !wall) {
      wall = true;
      if (j.time_limit != kUnlimited && j.time_limit > *l.max_wall) return R::kQosMaxWall;
    }
  }
  const auto ai = static_cast<std::size_t>(j.assoc);
  const auto* c = j.assoc < 0 ? nullptr : &chain_of(s, ai);
  if (c != nullptr) {  // the user's association: GrpJobs, MaxJobs, MaxWall; then each account's GrpJobs
    const auto& a = s.site.associations[ai];
    if (!grp_jobs && a.limits.grp_jobs && at(u.assoc_jobs, ai) >= *a.limits.grp_jobs) return R::kAssocGrpJobs;
    // A QOS's MaxJobsPA or MaxJobsPU replaces the association's MaxJobs (acct_policy.c: both must be
    // INFINITE for it to be checked).
    if (!max_jobs && !max_jobs_pa && c->max_jobs_per_user && at(u.assoc_jobs, ai) >= *c->max_jobs_per_user)
      return R::kAssocMaxJobs;
    if (!wall && c->max_wall && j.time_limit != kUnlimited && j.time_limit > *c->max_wall)
      return R::kAssocMaxWall;
    if (c->grp && !grp_jobs)
      for (const auto acc : c->accounts)
        if (const auto& cap = s.site.accounts[acc].limits.grp_jobs; cap && at(u.account_jobs, acc) >= *cap)
          return R::kAssocGrpJobs;
  }
  unsigned max_tres = 0, grp_tres = 0, max_tres_pu = 0, max_tres_pa = 0;
  for (const auto qi : order) {
    if (qi < 0) continue;
    const auto q = static_cast<std::uint16_t>(qi);
    const auto& l = s.site.qos[q].limits;
    if (const int k = over(l.grp_tres, at(u.qos_tres, q), job, grp_tres); k >= 0) return grp_reason(k, true);
    grp_tres |= slots(l.grp_tres);
    if (const int k = over(l.max_tres_per_job, Tres{}, job, max_tres); k >= 0)
      return sim::tres_reason(R::kQosMaxTresPerJob, k);
    max_tres |= slots(l.max_tres_per_job);
    if (!l.max_tres_per_account.empty() && account) {
      const auto it = u.qos_account_tres.find({q, *account});
      if (const int k = over(l.max_tres_per_account, it == u.qos_account_tres.end() ? Tres{} : it->second,
                             job, max_tres_pa);
          k >= 0)
        return sim::tres_reason(R::kQosMaxTresPerAccount, k);
      max_tres_pa |= slots(l.max_tres_per_account);
    }
    if (!l.max_tres_per_user.empty()) {
      const auto it = u.qos_user_tres.find({q, j.user});
      if (const int k =
              over(l.max_tres_per_user, it == u.qos_user_tres.end() ? Tres{} : it->second, job, max_tres_pu);
          k >= 0)
        return sim::tres_reason(R::kQosMaxTresPerUser, k);
      max_tres_pu |= slots(l.max_tres_per_user);
    }
  }
  if (c == nullptr) return R::kNone;
  // The user's association (GrpTRES, then its MaxTRESPerJob as inherited), then each account above.
  if (c->grp)
    if (const int k = over(s.site.associations[ai].limits.grp_tres, at(u.assoc_tres, ai), job, grp_tres);
        k >= 0)
      return grp_reason(k, false);
  if (c->max_tres_per_job != nullptr)
    if (const int k = over(*c->max_tres_per_job, Tres{}, job, max_tres); k >= 0)
      return sim::tres_reason(R::kAssocMaxTresPerJob, k);
  if (c->grp)
    for (const auto acc : c->accounts)
      if (const int k = over(s.site.accounts[acc].limits.grp_tres, at(u.account_tres, acc), job, grp_tres);
          k >= 0)
        return grp_reason(k, false);
  return R::kNone;
}

namespace {

// acct_policy_job_runnable_post_select on the job's totals `t` (CPUs, memory in MB, nodes, GPUs; billing
// is weighed here from them with the partition's weights, as node_scheduler.c does after select).
R post_select(const sim::SimState& s, const sim::SimJob& j, std::uint16_t partition, Tres t) {
  const auto& u = s.usage;
  const auto nodes = std::max<std::int64_t>(t[2], 1);
  if (u.billing) {
    TresMap counts = job_tres_counts(s, j);
    counts["cpu"] = t[0];
    counts["mem"] = t[1];
    counts["node"] = t[2];
    t[kBilling] = billing_count(s, counts, partition);
  }
  Tres per_node{}, tt{};
  const auto minutes = limit_minutes(s, j);
  for (std::size_t k = 0; k < t.size(); ++k) {
    per_node[k] = t[k] / nodes;
    tt[k] = t[k] * minutes;
  }
  const bool per_user_run_mins = s.site.scheduler.slurm_version >= 2405;
  const auto account = j.assoc < 0 ? 0u : chain_of(s, static_cast<std::size_t>(j.assoc)).accounts.front();
  // acct_policy.c _qos_job_runnable_post_select's order, QOS by QOS; what a QOS sets, later ones and
  // the associations skip.
  unsigned mins = 0, run = 0, max_mins = 0, pn = 0, min = 0, pu = 0, pa = 0;
  for (const auto qi : qos_order(s, j, partition)) {
    if (qi < 0) continue;
    const auto q = static_cast<std::uint16_t>(qi);
    const auto& l = s.site.qos[q].limits;
    const Tres run_mins = minutes_of(at(u.qos_run_secs, q));
    if (const int k =
            grp_minutes_fail(l.grp_tres_mins, mins, tt, minutes_of(at(u.qos_tres_used, q)), run_mins, u.safe);
        k >= 0)
      return sim::tres_reason(R::kQosGrpTresMins, k);
    if (const int k = run_minutes_fail(l.grp_tres_run_mins, run, tt, run_mins); k >= 0)
      return sim::tres_reason(R::kQosGrpTresRunMins, k);
    if (const int k = max_fail(l.max_tres_mins_per_job, max_mins, tt); k >= 0)
      return sim::tres_reason(R::kQosMaxTresMinsPerJob, k);
    if (const int k = max_fail(l.max_tres_per_node, pn, per_node); k >= 0)
      return sim::tres_reason(R::kQosMaxTresPerNode, k);
    if (const int k = first_failing(l.min_tres_per_job, min,
                                    [&](std::size_t x, std::int64_t cap) { return t[x] < cap; });
        k >= 0)
      return sim::tres_reason(R::kQosMinTres, k);
    if (per_user_run_mins) {
      if (const int k = run_minutes_fail(l.max_tres_run_mins_per_account, pa, tt,
                                         minutes_of(at(u.qos_account_run_secs, q, account)));
          k >= 0)
        return sim::tres_reason(R::kQosMaxTresRunMinsPerAccount, k);
      if (const int k = run_minutes_fail(l.max_tres_run_mins_per_user, pu, tt,
                                         minutes_of(at(u.qos_user_run_secs, q, j.user)));
          k >= 0)
        return sim::tres_reason(R::kQosMaxTresRunMinsPerUser, k);
      pa |= slots(l.max_tres_run_mins_per_account);
      pu |= slots(l.max_tres_run_mins_per_user);
    }
    mins |= slots(l.grp_tres_mins);
    run |= slots(l.grp_tres_run_mins);
    max_mins |= slots(l.max_tres_mins_per_job);
    pn |= slots(l.max_tres_per_node);
    min |= slots(l.min_tres_per_job);
  }
  if (j.assoc < 0) return R::kNone;
  const auto ai = static_cast<std::size_t>(j.assoc);
  const auto& c = chain_of(s, ai);
  // The user's association (its Max* limits as inherited), then every account above it (Grp* only).
  const auto grp = [&](const Limits& l, const TresUsed& used, const Tres& run_secs) {
    const Tres run_mins = minutes_of(run_secs);
    if (const int k = grp_minutes_fail(l.grp_tres_mins, mins, tt, minutes_of(used), run_mins, u.safe); k >= 0)
      return sim::tres_reason(R::kAssocGrpTresMins, k);
    if (const int k = run_minutes_fail(l.grp_tres_run_mins, run, tt, run_mins); k >= 0)
      return sim::tres_reason(R::kAssocGrpTresRunMins, k);
    return R::kNone;
  };
  if (c.grp_minutes)
    if (const auto why =
            grp(s.site.associations[ai].limits, at(u.assoc_tres_used, ai), at(u.assoc_run_secs, ai));
        why != R::kNone)
      return why;
  if (c.max_tres_mins_per_job != nullptr)
    if (const int k = max_fail(*c.max_tres_mins_per_job, max_mins, tt); k >= 0)
      return sim::tres_reason(R::kAssocMaxTresMinsPerJob, k);
  if (c.max_tres_per_node != nullptr)
    if (const int k = max_fail(*c.max_tres_per_node, pn, per_node); k >= 0)
      return sim::tres_reason(R::kAssocMaxTresPerNode, k);
  if (c.grp_minutes)
    for (const auto acc : c.accounts)
      if (const auto why =
              grp(s.site.accounts[acc].limits, at(u.account_tres_used, acc), at(u.account_run_secs, acc));
          why != R::kNone)
        return why;
  return R::kNone;
}

}  // namespace

sim::PendingReason check_selected_limits(const sim::SimState& s, const sim::SimJob& j,
                                         std::uint16_t partition, const std::vector<sim::NodeAlloc>& alloc) {
  if (!s.usage.selected_limits || alloc.empty()) return R::kNone;
  // What the chosen nodes give it (Slurm's tres_req_cnt after select).
  const auto nodes = static_cast<std::int64_t>(alloc.size());
  Tres t{0, 0, nodes, gpus_per_node(s, j) * nodes, 0};
  for (const auto& a : alloc) {
    t[0] += a.cpus;
    t[1] += a.mem_mb;
  }
  return post_select(s, j, partition, t);
}

sim::PendingReason check_requested_limits(const sim::SimState& s, const sim::SimJob& j,
                                          std::uint16_t partition) {
  if (!s.usage.selected_limits) return R::kNone;
  // select_nodes' counts when no node was chosen: req_nodes (the job's maximum when it gave one, else
  // its minimum: _get_req_node_cnt) and the requested CPUs and memory.
  const auto& r = j.request;
  const auto c = base_counts(j, r.max_nodes == sim::kUnboundedNodes ? r.min_nodes : r.max_nodes);
  return post_select(s, j, partition, {c.cpus, c.mem, c.nodes, gpus_per_node(s, j) * c.nodes, 0});
}

namespace {

// Under strict checking (Flags=DenyOnLimit on either QOS of the pair that binds the job in
// `partition`: _acct_policy_validate's strict_checking), the limit the request alone breaks, whatever
// else runs: per-job limits, and what it asks for against group, per-user and per-account caps. The
// QOS in qos_order first, then the association and the accounts above it; what a QOS sets, the later
// ones do not check again. Seen on real Slurm 22.05 (docs/fidelity.md, scenarios 14, 28 and 35): the
// partition's QOS counts as the job's, and an association limit is refused too. "" when none is
// broken or neither QOS has the flag.
std::string strict_reason(const sim::SimState& s, const sim::SimJob& j, std::uint16_t partition) {
  const auto order = qos_order(s, j, partition);
  if (std::none_of(order.begin(), order.end(), [&](std::int32_t q) {
        return q >= 0 && has_flag(s.site.qos[static_cast<std::size_t>(q)], "DenyOnLimit");
      }))
    return {};
  JobTres job(s, j, partition);
  const Tres& t = job.get();
  // What it asks for: per node over its minimum node count, and times its time limit.
  Tres per_node{}, tt{};
  const auto minutes = limit_minutes(s, j);
  for (std::size_t k = 0; k < t.size(); ++k) {
    per_node[k] = t[k] / std::max<std::int64_t>(1, j.request.min_nodes);
    tt[k] = t[k] * minutes;
  }
  const auto name = [](R r) { return std::string(sim::to_string(r)); };
  bool wall = false;
  unsigned per_job = 0, pn = 0, min = 0, mins = 0, grp_mins = 0, grp_run = 0, grp = 0, pu = 0, pa = 0;
  for (const auto qi : order) {
    if (qi < 0) continue;
    const auto& l = s.site.qos[static_cast<std::size_t>(qi)].limits;
    if (l.max_wall && !wall) {
      wall = true;
      if (j.time_limit != kUnlimited && j.time_limit > *l.max_wall) return name(R::kQosMaxWall);
    }
    if (const int k = max_fail(l.max_tres_per_job, per_job, t); k >= 0)
      return name(sim::tres_reason(R::kQosMaxTresPerJob, k));
    if (const int k = max_fail(l.max_tres_per_node, pn, per_node); k >= 0)
      return name(sim::tres_reason(R::kQosMaxTresPerNode, k));
    if (const int k = first_failing(l.min_tres_per_job, min,
                                    [&](std::size_t x, std::int64_t cap) { return t[x] < cap; });
        k >= 0)
      return name(sim::tres_reason(R::kQosMinTres, k));
    if (const int k = max_fail(l.max_tres_mins_per_job, mins, tt); k >= 0)
      return name(sim::tres_reason(R::kQosMaxTresMinsPerJob, k));
    if (const int k = max_fail(l.grp_tres_mins, grp_mins, tt); k >= 0)
      return name(sim::tres_reason(R::kQosGrpTresMins, k));
    if (const int k = max_fail(l.grp_tres_run_mins, grp_run, tt); k >= 0)
      return name(sim::tres_reason(R::kQosGrpTresRunMins, k));
    if (const int k = max_fail(l.grp_tres, grp, t); k >= 0) return name(grp_reason(k, true));
    if (const int k = max_fail(l.max_tres_per_user, pu, t); k >= 0)
      return name(sim::tres_reason(R::kQosMaxTresPerUser, k));
    if (const int k = max_fail(l.max_tres_per_account, pa, t); k >= 0)
      return name(sim::tres_reason(R::kQosMaxTresPerAccount, k));
    per_job |= slots(l.max_tres_per_job);
    pn |= slots(l.max_tres_per_node);
    min |= slots(l.min_tres_per_job);
    mins |= slots(l.max_tres_mins_per_job);
    grp_mins |= slots(l.grp_tres_mins);
    grp_run |= slots(l.grp_tres_run_mins);
    grp |= slots(l.grp_tres);
    pu |= slots(l.max_tres_per_user);
    pa |= slots(l.max_tres_per_account);
  }
  if (j.assoc < 0) return {};
  const auto ai = static_cast<std::size_t>(j.assoc);
  const auto& c = chain_of(s, ai);
  if (!wall && c.max_wall && j.time_limit != kUnlimited && j.time_limit > *c.max_wall)
    return name(R::kAssocMaxWall);
  if (c.max_tres_per_job != nullptr)
    if (const int k = max_fail(*c.max_tres_per_job, per_job, t); k >= 0)
      return name(sim::tres_reason(R::kAssocMaxTresPerJob, k));
  if (c.max_tres_per_node != nullptr)
    if (const int k = max_fail(*c.max_tres_per_node, pn, per_node); k >= 0)
      return name(sim::tres_reason(R::kAssocMaxTresPerNode, k));
  if (c.max_tres_mins_per_job != nullptr)
    if (const int k = max_fail(*c.max_tres_mins_per_job, mins, tt); k >= 0)
      return name(sim::tres_reason(R::kAssocMaxTresMinsPerJob, k));
  const auto group = [&](const Limits& l) -> std::string {
    if (const int k = max_fail(l.grp_tres, grp, t); k >= 0) return name(grp_reason(k, false));
    if (const int k = max_fail(l.grp_tres_mins, grp_mins, tt); k >= 0)
      return name(sim::tres_reason(R::kAssocGrpTresMins, k));
    if (const int k = max_fail(l.grp_tres_run_mins, grp_run, tt); k >= 0)
      return name(sim::tres_reason(R::kAssocGrpTresRunMins, k));
    return {};
  };
  if (auto why = group(s.site.associations[ai].limits); !why.empty()) return why;
  for (const auto acc : c.accounts)
    if (auto why = group(s.site.accounts[acc].limits); !why.empty()) return why;
  return {};
}

// The submit-count limits the job's submission breaks in `partition` (its QOS pair, then the
// association tree; what a QOS sets, the associations skip: acct_policy_validate), or "".
std::string count_reason(const sim::SimState& s, const sim::SimJob& j, std::uint16_t partition) {
  bool max_submit = false, max_submit_pa = false, grp_submit = false;
  const auto account = sim::account_of(s, j);
  for (const auto qi : qos_order(s, j, partition)) {
    if (qi < 0) continue;
    const auto qn = static_cast<std::uint16_t>(qi);
    const auto& l = s.site.qos[qn].limits;
    if (l.max_submit_jobs_per_account && !max_submit_pa) {
      max_submit_pa = true;
      if (account &&
          sim::count_at(s.usage.qos_account_submit, qn, *account) >= *l.max_submit_jobs_per_account)
        return "MaxSubmitJobsPerAccount";
    }
    if (l.max_submit_jobs_per_user && !max_submit) {
      max_submit = true;
      if (sim::count_at(s.usage.qos_user_submit, qn, j.user) >= *l.max_submit_jobs_per_user)
        return "QOSMaxSubmitJobPerUserLimit";
    }
    if (l.grp_submit_jobs && !grp_submit) {
      grp_submit = true;
      if (sim::count_at(s.usage.qos_user_submit, qn, kAllUsers) >= *l.grp_submit_jobs)
        return "QOSGrpSubmitJobsLimit";
    }
  }
  if (j.assoc < 0) return {};
  const auto ai = static_cast<std::size_t>(j.assoc);
  const auto& a = s.site.associations[ai];
  const auto& c = chain_of(s, ai);
  const auto submitted = sim::count_at(s.usage.assoc_submit, 0, static_cast<std::uint32_t>(j.assoc));
  if (!max_submit && !max_submit_pa && c.max_submit_jobs_per_user && submitted >= *c.max_submit_jobs_per_user)
    return "AssocMaxSubmitJobLimit";
  if (grp_submit) return {};
  if (a.limits.grp_submit_jobs && submitted >= *a.limits.grp_submit_jobs) return "AssocGrpSubmitJobsLimit";
  for (const auto acc : c.accounts)
    if (const auto& cap = s.site.accounts[acc].limits.grp_submit_jobs;
        cap && at(s.usage.account_submit, acc) >= *cap)
      return "AssocGrpSubmitJobsLimit";
  return {};
}

}  // namespace

std::string check_submit_limits(const sim::SimState& s, const sim::SimJob& j) {
  if (!s.usage.enforced) return "";
  // Each partition of its list is validated, and the first that fails refuses the job
  // (acct_policy_validate: list_for_each over part_ptr_list).
  static constexpr std::uint16_t kFirst[] = {0};
  for (const auto p : j.partitions.empty() ? std::span<const std::uint16_t>(kFirst)
                                           : std::span<const std::uint16_t>(j.partitions)) {
    if (auto why = strict_reason(s, j, p); !why.empty()) return why;
    if (auto why = count_reason(s, j, p); !why.empty()) return why;
  }
  return "";
}

namespace {

// The QOS a job's submission counts in: its own and each of its partitions' (once each).
std::vector<std::uint16_t> submit_qos(const sim::SimState& s, const sim::SimJob& j) {
  std::vector<std::uint16_t> out{j.qos};
  for (const auto p : j.partitions)
    if (p < s.usage.partition_qos.size())
      if (const auto pq = s.usage.partition_qos[p];
          pq >= 0 && std::find(out.begin(), out.end(), static_cast<std::uint16_t>(pq)) == out.end())
        out.push_back(static_cast<std::uint16_t>(pq));
  return out;
}

}  // namespace

void count_submit(sim::SimState& s, const sim::SimJob& j) {
  // (per-account totals only where a QOS reads them)
  std::optional<std::uint32_t> account;
  if (s.usage.account_limits) account = sim::account_of(s, j);
  for (const auto q : submit_qos(s, j)) {
    ++s.usage.qos_user_submit[{q, j.user}];
    ++s.usage.qos_user_submit[{q, kAllUsers}];
    if (account) ++s.usage.qos_account_submit[{q, *account}];
  }
  if (j.assoc < 0) return;
  ++s.usage.assoc_submit[{0, static_cast<std::uint32_t>(j.assoc)}];
  for (const auto acc : chain_of(s, static_cast<std::size_t>(j.assoc)).accounts) {
    if (s.usage.account_submit.size() <= acc) s.usage.account_submit.resize(acc + 1, 0);
    ++s.usage.account_submit[acc];
  }
}

namespace {

// Adds `v` x `sign` to a running-minutes total, which never goes below 0 (Slurm clamps an underflow).
void add_run(Tres& total, const Tres& v, std::int64_t sign) {
  for (std::size_t k = 0; k < total.size(); ++k) total[k] = std::max<std::int64_t>(0, total[k] + sign * v[k]);
}

// Adds (sign 1) or removes (-1) `secs` s of a running job's TRES from every running-minutes total it
// counts in: its QOS (both, in qos_order), per user and account of each, its association and accounts.
void count_run_secs(sim::SimState& s, const sim::SimJob& j, std::int64_t secs, std::int64_t sign) {
  auto& u = s.usage;
  Tres v = job_tres(s, j, j.run_partition);
  for (auto& x : v) x *= secs;
  const auto account = j.assoc < 0 ? 0u : chain_of(s, static_cast<std::size_t>(j.assoc)).accounts.front();
  for (const auto qi : qos_order(s, j, j.run_partition)) {
    if (qi < 0) continue;
    const auto q = static_cast<std::uint16_t>(qi);
    add_run(at(u.qos_run_secs, q), v, sign);
    add_run(u.qos_user_run_secs[{q, j.user}], v, sign);
    add_run(u.qos_account_run_secs[{q, account}], v, sign);
  }
  if (j.assoc < 0) return;
  const auto ai = static_cast<std::size_t>(j.assoc);
  add_run(at(u.assoc_run_secs, ai), v, sign);
  for (const auto acc : chain_of(s, ai).accounts) add_run(at(u.account_run_secs, acc), v, sign);
}

// Adds (sign 1) or removes (-1) a running job from every total it counts in.
void count_running(sim::SimState& s, const sim::SimJob& j, std::int64_t sign) {
  auto& u = s.usage;
  const Tres job = job_tres(s, j, j.run_partition);
  std::optional<std::uint32_t> account;
  if (u.account_limits) account = sim::account_of(s, j);
  for (const auto qi : qos_order(s, j, j.run_partition)) {
    if (qi < 0) continue;
    const auto q = static_cast<std::uint16_t>(qi);
    u.qos_user_jobs[{q, j.user}] += sign;
    add(u.qos_user_tres[{q, j.user}], job, sign);
    if (account) {
      u.qos_account_jobs[{q, *account}] += sign;
      add(u.qos_account_tres[{q, *account}], job, sign);
    }
    if (u.qos_jobs.size() <= q) u.qos_jobs.resize(q + 1, 0);
    u.qos_jobs[q] += sign;
    add(at(u.qos_tres, q), job, sign);
  }
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

std::size_t index_of(const sim::SimState& s, const sim::SimJob& j) {
  return static_cast<std::size_t>(&j - s.jobs.data());
}

}  // namespace

void count_start(sim::SimState& s, const sim::SimJob& j) {
  count_running(s, j, 1);
  if (!s.usage.tres_minutes) return;
  // acct_policy_job_begin: the job's TRES x its time limit (s, x UsageFactor) join the running minutes.
  auto& left = s.usage.job_run_secs;
  if (left.size() < s.jobs.size()) left.resize(s.jobs.size(), 0);
  const auto secs = static_cast<std::int64_t>(
      static_cast<double>((j.time_limit == kUnlimited ? kInfiniteMinutes * 60 : j.time_limit)) *
      usage_factor(s, j));
  left[index_of(s, j)] = secs;
  count_run_secs(s, j, secs, 1);
}

void count_end(sim::SimState& s, const sim::SimJob& j) {
  count_running(s, j, -1);
  if (s.usage.tres_minutes) {  // what it had left of its time limit leaves with it
    auto& left = s.usage.job_run_secs[index_of(s, j)];
    count_run_secs(s, j, left, -1);
    left = 0;
  }
  // A requeued job stays submitted; one that is done leaves the submit counts.
  if (j.preempt != sim::PreemptAction::kRequeue) count_withdrawn(s, j);
}

void count_withdrawn(sim::SimState& s, const sim::SimJob& j) {
  auto& u = s.usage;
  // (per-account totals only where a QOS reads them)
  std::optional<std::uint32_t> account;
  if (s.usage.account_limits) account = sim::account_of(s, j);
  for (const auto q : submit_qos(s, j)) {
    --u.qos_user_submit[{q, j.user}];
    --u.qos_user_submit[{q, kAllUsers}];
    if (account) --u.qos_account_submit[{q, *account}];
  }
  if (j.assoc < 0) return;
  --u.assoc_submit[{0, static_cast<std::uint32_t>(j.assoc)}];
  for (const auto acc : chain_of(s, static_cast<std::size_t>(j.assoc)).accounts) --u.account_submit[acc];
}

void charge_tres_minutes(sim::SimState& s, const sim::SimJob& j, Seconds from, Seconds to, double decayed,
                         double undecayed) {
  auto& u = s.usage;
  if (!u.tres_minutes) return;
  const Tres t = job_tres(s, j, j.run_partition);
  const auto charge = [&](TresUsed& used, double secs) {
    for (std::size_t k = 0; k < used.size(); ++k) used[k] += static_cast<double>(t[k]) * secs;
  };
  for (const auto qi : qos_order(s, j, j.run_partition))
    if (qi >= 0)
      charge(u.qos_tres_used[static_cast<std::size_t>(qi)],
             u.qos_no_decay[static_cast<std::size_t>(qi)] ? undecayed : decayed);
  if (j.assoc >= 0) {
    const auto ai = static_cast<std::size_t>(j.assoc);
    charge(u.assoc_tres_used[ai], decayed);
    for (const auto acc : chain_of(s, ai).accounts) charge(u.account_tres_used[acc], decayed);
  }
  // The seconds of [from, to] within its time limit (x UsageFactor) leave its running minutes.
  const Seconds a = std::max(from, j.start);
  const Seconds limit_end = j.time_limit == kUnlimited ? to : j.start + j.time_limit;
  if (a >= limit_end) return;
  auto& left = u.job_run_secs[index_of(s, j)];
  const auto secs = std::min<std::int64_t>(
      left, static_cast<std::int64_t>(static_cast<double>(std::min(to, limit_end) - a) * usage_factor(s, j)));
  if (secs <= 0) return;
  left -= secs;
  count_run_secs(s, j, secs, -1);
}

void find_limit_kills(sim::SimState& s) {
  auto& u = s.usage;
  u.limit_kills.clear();
  if (!u.tres_minutes || u.safe) return;
  // A TRES the job holds whose used minutes reached the limit (CUR_EXCEEDS); what a QOS sets, the
  // associations skip.
  const auto used_up = [](const TresMap& limits, unsigned skip, const Tres& t, const TresUsed& used) {
    const Tres mins = minutes_of(used);
    return first_failing(limits, skip,
                         [&](std::size_t k, std::int64_t cap) { return t[k] != 0 && mins[k] >= cap; }) >= 0;
  };
  for (const auto ji : s.running) {
    const auto& j = s.jobs[ji];
    const Tres t = job_tres(s, j, j.run_partition);
    unsigned taken = 0;
    bool kill = false;
    for (const auto qi : qos_order(s, j, j.run_partition)) {
      if (qi < 0 || kill) continue;
      const auto& l = s.site.qos[static_cast<std::size_t>(qi)].limits;
      kill = used_up(l.grp_tres_mins, taken, t, u.qos_tres_used[static_cast<std::size_t>(qi)]);
      taken |= slots(l.grp_tres_mins);
    }
    if (!kill && j.assoc >= 0) {
      const auto ai = static_cast<std::size_t>(j.assoc);
      const auto& c = chain_of(s, ai);
      if (c.grp_minutes) {
        kill = used_up(s.site.associations[ai].limits.grp_tres_mins, taken, t, u.assoc_tres_used[ai]);
        for (const auto acc : c.accounts)  // up to root, which the check leaves out
          kill = kill ||
                 (!s.site.accounts[acc].parent.empty() &&
                  used_up(s.site.accounts[acc].limits.grp_tres_mins, taken, t, u.account_tres_used[acc]));
      }
    }
    if (kill) u.limit_kills.push_back(ji);
  }
}

void decay_tres_minutes(sim::SimState& s, double factor) {
  auto& u = s.usage;
  if (!u.tres_minutes) return;
  for (std::size_t q = 0; q < u.qos_tres_used.size(); ++q)
    if (!u.qos_no_decay[q])
      for (auto& x : u.qos_tres_used[q]) x *= factor;
  for (auto* v : {&u.assoc_tres_used, &u.account_tres_used})
    for (auto& used : *v)
      for (auto& x : used) x *= factor;
}

void reset_tres_minutes(sim::SimState& s) {
  auto& u = s.usage;
  for (auto* v : {&u.qos_tres_used, &u.assoc_tres_used, &u.account_tres_used})
    std::fill(v->begin(), v->end(), TresUsed{});
}

}  // namespace slurmtwin::policies
