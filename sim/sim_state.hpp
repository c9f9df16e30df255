#pragma once
// Everything a scheduling policy reads and changes during a replay: the site, the cluster's free
// resources, every job and the running totals that QOS/association limits are checked against.
// Plain data plus small helpers; the Controller owns it and hands it to the policy.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/cluster_state.hpp"
#include "sim/sim_job.hpp"
#include "traces/site.hpp"

namespace slurmtwin::sim {

/// Running totals used by QOS and association limits.
struct LimitUsage {
  std::map<std::pair<std::uint16_t, std::uint32_t>, std::int64_t> qos_user_jobs;    // (qos, user) -> running
  std::map<std::pair<std::uint16_t, std::uint32_t>, std::int64_t> qos_user_submit;  // pending + running
  std::map<std::pair<std::uint16_t, std::uint32_t>, std::array<std::int64_t, kTresSlots>>
      qos_user_tres;  // see Tres
  // (qos, account) -> running jobs, pending + running jobs, running TRES: a QOS's per-account limits,
  // kept only when a QOS sets one (account_limits)
  std::map<std::pair<std::uint16_t, std::uint32_t>, std::int64_t> qos_account_jobs, qos_account_submit;
  std::map<std::pair<std::uint16_t, std::uint32_t>, std::array<std::int64_t, kTresSlots>> qos_account_tres;
  std::vector<std::int64_t> qos_jobs;    // running per QOS
  std::vector<std::int64_t> assoc_jobs;  // running per user association
  std::map<std::pair<std::uint16_t, std::uint32_t>, std::int64_t>
      assoc_submit;  // (0, assoc) -> pending + running
  // TRES counted against limits, in kLimitTres order: CPUs, memory (MB), nodes, GPUs, billing.
  using Tres = std::array<std::int64_t, kTresSlots>;
  std::vector<Tres> qos_tres;    // running per QOS
  std::vector<Tres> assoc_tres;  // running per user association
  // Per user association, what limit checks read of its tree, resolved once per replay (the site is
  // const): every pass checks every pending job, and walking the tree each time cost 11% of a
  // congested week's replay in cache misses.
  struct AssocChain {
    // Site account indices from the association's own account up to root (Grp* limits of every
    // one of them bind its jobs).
    std::vector<std::uint32_t> accounts;
    // Max* limits: the association's own, else the nearest account's above it (sacctmgr gives a
    // new association its parent's Max* limits).
    std::optional<Seconds> max_wall;
    const TresMap* max_tres_per_job = nullptr;  // into the site; nullptr = none
    const TresMap* max_tres_per_node = nullptr;
    const TresMap* max_tres_mins_per_job = nullptr;
    std::optional<std::int64_t> max_jobs_per_user;
    std::optional<std::int64_t> max_submit_jobs_per_user;
    std::optional<std::int64_t> max_jobs_accrue;  // MaxJobsAccrue
    bool grp = false;          // GrpJobs or GrpTRES on the association or an account above it
    bool grp_minutes = false;  // GrpTRESMins or GrpTRESRunMins there
  };
  std::vector<AssocChain> assoc_chains;
  std::vector<std::int64_t> account_jobs;    // running in the account's subtree
  std::vector<std::int64_t> account_submit;  // pending + running in the account's subtree
  std::vector<Tres> account_tres;            // running in the account's subtree

  // Which QOS sets a limit first (acct_policy_set_qos_order): the partition's QOS (index into
  // Site::qos, -1 = none) before the job's, unless the job's has Flags=OverPartQOS.
  std::vector<std::int32_t> partition_qos;
  std::vector<bool> over_part_qos;  // per QOS
  std::vector<bool> qos_no_decay;   // per QOS: Flags=NoDecay (its TRES-minutes used never decay)
  bool account_limits = false;      // a QOS sets MaxJobsPA, MaxSubmitJobsPA or MaxTRESPA
  bool enforced = true;             // AccountingStorageEnforce=limits (or safe): else no limit is checked
  bool safe = false;                // AccountingStorageEnforce=safe
  // Limits checked once a job's nodes are chosen: any set (else that check is skipped), and whether
  // one reads TRES-minutes (else the totals below are not kept).
  bool selected_limits = false;
  bool tres_minutes = false;
  // Whether a limit counts billing (else that slot stays 0), and PriorityFlags' policies::BillingMode
  // (MAX_TRES...) as its number.
  bool billing = false;
  std::uint8_t billing_mode = 0;
  // TRES-minutes: what jobs used (TRES-seconds, decayed as fair-share usage is; GrpTRESMins) and what
  // running jobs have left of their time limit (TRES x s, GrpTRESRunMins), per QOS, user association
  // and account (its subtree), and per (QOS, user) and (QOS, account) for MaxTRESRunMinsPU/PA.
  using TresUsed = std::array<double, kTresSlots>;
  std::vector<TresUsed> qos_tres_used, assoc_tres_used, account_tres_used;
  std::vector<Tres> qos_run_secs, assoc_run_secs, account_run_secs;
  std::map<std::pair<std::uint16_t, std::uint32_t>, Tres> qos_user_run_secs, qos_account_run_secs;
  std::vector<std::int64_t> job_run_secs;  // per job: s of its time limit (x UsageFactor) not yet charged
  // Accrue limits (GrpJobsAccrue, MaxJobsAccrue*; policies/accrue.hpp): kept only when one is set and
  // enforced. Pending jobs counted as accruing age, per QOS, (QOS, account), (QOS, user), user
  // association and account subtree; and the pending jobs not counted yet, in job-list order.
  bool accrue_limits = false;
  std::vector<std::int64_t> qos_accrue, assoc_accrue, account_accrue;
  std::map<std::pair<std::uint16_t, std::uint32_t>, std::int64_t> qos_account_accrue, qos_user_accrue;
  std::set<std::uint32_t> accrue_waiting;
  // Running jobs the last decay run found over a limit that ends them (GrpTRESMins used up): the
  // controller ends them at the next time-limit check, TIMEOUT (acct_policy_job_time_out).
  std::vector<std::uint32_t> limit_kills;
};

struct SimState {
  SimState(const Site& s, bool core_granularity) : site(s), cluster(s, core_granularity) {}

  const Site& site;
  ClusterState cluster;
  std::vector<SimJob> jobs;
  std::vector<std::string> users;                           // SimJob::user -> name
  std::vector<std::uint32_t> pending;                       // indices into jobs, in no particular order
  std::vector<std::uint32_t> running;                       // indices into jobs, in no particular order
  std::vector<std::uint32_t> suspended;                     // indices into jobs, in no particular order
  std::vector<std::vector<std::uint32_t>> partition_nodes;  // per partition: node indices, ascending
  std::vector<std::vector<std::uint64_t>> partition_bits;   // per partition: its nodes as a node bitset
  std::vector<std::uint64_t> partition_cpus;                // per partition: CPUs of its nodes
  LimitUsage usage;
  std::vector<std::uint32_t>
      array_running;  // per capped array (SimJob::array_slot): tasks started, not ended
  std::vector<std::uint32_t> licenses_used;  // per Site::licenses: held by started jobs not yet ended
  Seconds now = 0;
  Seconds origin = 0;  // controller start (timer phase reference)
};

/// Whether `j` is a task of an array whose cap (--array=...%N) is reached: it may not start now
/// (job_array_start_test; a suspended task still counts, it has not ended).
inline bool array_capped(const SimState& s, const SimJob& j) {
  return j.array_slot >= 0 && s.array_running[static_cast<std::size_t>(j.array_slot)] >= j.array_cap;
}

/// Whether every licence `j` asks is free now (licenses.c license_job_test: no planning ahead without
/// SchedulerParameters=bf_licenses, which is not modelled).
inline bool licenses_free(const SimState& s, const SimJob& j) {
  for (const auto& l : j.licenses)
    if (s.licenses_used[l.license] + l.count > s.site.licenses[l.license].count) return false;
  return true;
}

/// A (QOS, user or account) count of LimitUsage's maps, 0 where none was kept.
inline std::int64_t count_at(const std::map<std::pair<std::uint16_t, std::uint32_t>, std::int64_t>& m,
                             std::uint16_t q, std::uint32_t k) {
  const auto it = m.find({q, k});
  return it == m.end() ? 0 : it->second;
}

/// The site account (index into Site::accounts) of a job's association, nullopt without one.
inline std::optional<std::uint32_t> account_of(const SimState& s, const SimJob& j) {
  if (j.assoc < 0 || static_cast<std::size_t>(j.assoc) >= s.usage.assoc_chains.size()) return std::nullopt;
  const auto& accounts = s.usage.assoc_chains[static_cast<std::size_t>(j.assoc)].accounts;
  if (accounts.empty()) return std::nullopt;
  return accounts.front();
}

}  // namespace slurmtwin::sim
