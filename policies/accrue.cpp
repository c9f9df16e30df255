#include "policies/accrue.hpp"

#include <fmt/format.h>

#include <cassert>
#include <optional>
#include <stdexcept>

namespace slurmtwin::policies {
namespace {

using Key = std::pair<std::uint16_t, std::uint32_t>;

bool accrue_limit_set(const Limits& l) {
  return l.grp_jobs_accrue || l.max_jobs_accrue_per_user || l.max_jobs_accrue_per_account;
}

// Whether the first accrue limit set for `j` (acct_policy.c _get_accrue_limits; later ones are not
// looked at) has room for one more; nullopt when none is set.
std::optional<bool> has_room(const sim::SimState& s, const sim::SimJob& j) {
  const auto& u = s.usage;
  const auto account = sim::account_of(s, j);
  const auto& q = s.site.qos[j.qos].limits;
  if (q.grp_jobs_accrue) return u.qos_accrue[j.qos] < *q.grp_jobs_accrue;
  if (q.max_jobs_accrue_per_account && account)
    return sim::count_at(u.qos_account_accrue, j.qos, *account) < *q.max_jobs_accrue_per_account;
  if (q.max_jobs_accrue_per_user)
    return sim::count_at(u.qos_user_accrue, j.qos, j.user) < *q.max_jobs_accrue_per_user;
  if (j.assoc < 0) return std::nullopt;
  const auto a = static_cast<std::size_t>(j.assoc);
  const auto& chain = u.assoc_chains[a];
  // The association's own GrpJobsAccrue, then its MaxJobsAccrue (own or an account's above, which
  // slurmdbd copies down), then each account's GrpJobsAccrue.
  if (const auto& g = s.site.associations[a].limits.grp_jobs_accrue) return u.assoc_accrue[a] < *g;
  if (chain.max_jobs_accrue) return u.assoc_accrue[a] < *chain.max_jobs_accrue;
  for (const auto acc : chain.accounts)
    if (const auto& g = s.site.accounts[acc].limits.grp_jobs_accrue) return u.account_accrue[acc] < *g;
  return std::nullopt;
}

// Adds `sign` to every count the job is in (_add_accrue_time_internal: all of them, whichever limit
// decided).
void count(sim::LimitUsage& u, const sim::SimState& s, const sim::SimJob& j, std::int64_t sign) {
  u.qos_accrue[j.qos] += sign;
  if (const auto account = sim::account_of(s, j)) u.qos_account_accrue[{j.qos, *account}] += sign;
  u.qos_user_accrue[{j.qos, j.user}] += sign;
  if (j.assoc < 0) return;
  u.assoc_accrue[static_cast<std::size_t>(j.assoc)] += sign;
  for (const auto acc : s.usage.assoc_chains[static_cast<std::size_t>(j.assoc)].accounts)
    u.account_accrue[acc] += sign;
}

}  // namespace

void prepare_accrue(sim::SimState& s, bool accrue_always) {
  auto& u = s.usage;
  bool any = false;
  for (const auto& q : s.site.qos) any |= accrue_limit_set(q.limits);
  for (const auto& a : s.site.associations) any |= accrue_limit_set(a.limits);
  for (const auto& a : s.site.accounts) any |= accrue_limit_set(a.limits);
  u.accrue_limits = any && !accrue_always && u.enforced;
  u.qos_accrue.assign(u.accrue_limits ? s.site.qos.size() : 0, 0);
  u.assoc_accrue.assign(u.accrue_limits ? s.site.associations.size() : 0, 0);
  u.account_accrue.assign(u.accrue_limits ? s.site.accounts.size() : 0, 0);
  u.qos_account_accrue.clear();
  u.qos_user_accrue.clear();
  u.accrue_waiting.clear();
}

void accrue_wait(sim::SimState& s, std::uint32_t job) {
  if (!s.usage.accrue_limits) return;
  assert(s.jobs[job].accrue == kUnsetTime);
  s.usage.accrue_waiting.insert(job);
}

std::vector<std::uint32_t> accrue_count(sim::SimState& s) {
  std::vector<std::uint32_t> counted;
  auto& waiting = s.usage.accrue_waiting;
  for (auto it = waiting.begin(); it != waiting.end();) {
    auto& j = s.jobs[*it];
    // A job held back by --begin or a dependency does not accrue yet.
    const auto room = sim::in_queue(j, s.now) ? has_room(s, j) : std::optional<bool>(false);
    if (room == false) {
      ++it;
      continue;
    }
    count(s.usage, s, j, 1);
    // _handle_add_accrue: from its begin time where no limit is set, else from now.
    j.accrue = room.has_value() ? s.now : j.eligible;
    counted.push_back(*it);
    it = waiting.erase(it);
  }
  return counted;
}

void accrue_leave(sim::SimState& s, std::uint32_t job) {
  if (!s.usage.accrue_limits) return;
  auto& j = s.jobs[job];
  if (j.accrue == kUnsetTime) {
    s.usage.accrue_waiting.erase(job);
    return;
  }
  count(s.usage, s, j, -1);
}

void check_accrue(const sim::SimState& s) {
  const auto& u = s.usage;
  if (!u.accrue_limits) return;
  sim::LimitUsage fresh;
  fresh.qos_accrue.assign(u.qos_accrue.size(), 0);
  fresh.assoc_accrue.assign(u.assoc_accrue.size(), 0);
  fresh.account_accrue.assign(u.account_accrue.size(), 0);
  std::size_t waiting = 0;
  // (SimState::pending holds only the queued jobs; one held by --begin or a dependency waits too.)
  for (std::uint32_t ji = 0; ji < s.jobs.size(); ++ji) {
    const auto& j = s.jobs[ji];
    if (j.state != sim::SimJobState::kPending) continue;
    if (j.accrue != kUnsetTime)
      count(fresh, s, j, 1);
    else if (u.accrue_waiting.count(ji) == 0)
      throw std::logic_error(fmt::format("accrue: pending job {} neither counted nor waiting", j.id));
    else
      ++waiting;
  }
  if (waiting != u.accrue_waiting.size())
    throw std::logic_error(fmt::format("accrue: {} jobs wait to be counted, {} pending ones are not counted",
                                       u.accrue_waiting.size(), waiting));
  const auto nonzero = [](std::map<Key, std::int64_t> m) {
    std::erase_if(m, [](const auto& kv) { return kv.second == 0; });
    return m;
  };
  if (fresh.qos_accrue != u.qos_accrue || fresh.assoc_accrue != u.assoc_accrue ||
      fresh.account_accrue != u.account_accrue ||
      nonzero(fresh.qos_account_accrue) != nonzero(u.qos_account_accrue) ||
      nonzero(fresh.qos_user_accrue) != nonzero(u.qos_user_accrue))
    throw std::logic_error("accrue: the counts differ from the pending jobs counted");
}

}  // namespace slurmtwin::policies
