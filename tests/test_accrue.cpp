// Accrue limits on a hand-made cluster, from slurmctld 22.05's acct_policy.c
// (acct_policy_handle_accrue_time, _get_accrue_limits): a pending job's age counts only once it is
// counted as accruing, which happens as the job queue is built (each pass: here every second), in
// submit order, while the first limit set has room; a start frees its place. Real Slurm did the same
// with these limits in tests/oracle/scenarios/31_accrue_limits.
#include <doctest/doctest.h>

#include "replay_support.hpp"
#include "scenario_support.hpp"

using namespace slurmtwin;

namespace {

using testing::JobSpec;
using testing::kT0;
using testing::make_trace;

// Two 8-CPU nodes, a pass every second, a decay run (priority recalculation) every 60 s from kT0,
// age the only priority factor (1000 at PriorityMaxAge, 1,000 s), limits enforced (small_site).
Site site_2x8() {
  auto site = testing::every_second_site(2, 8);
  site.scheduler.weight_age = 1000;
  site.scheduler.max_age = 1000;
  return site;
}

Seconds rel(Seconds t) {
  return t == kUnsetTime ? kUnsetTime : t - kT0;
}

// alice's J1 takes both nodes for 200 s; alice's J2 and J3 (one node each) wait behind it, then bob's
// J4 (submitted at 30).
Trace blocked_trace() {
  JobSpec bob{30, 1, 8, 100, 600};
  bob.user = "bob";
  return make_trace({{0, 2, 16, 200, 600}, {0, 1, 8, 100, 600}, {0, 1, 8, 100, 600}, bob});
}

}  // namespace

TEST_CASE("MaxJobsAccruePerUser: a user's jobs past the limit wait at age 0 and lose their place") {
  // QOS normal MaxJobsAccruePU=1. The main pass at t=1 counts J1 (alice 1 of 1; J2, J3 find no room)
  // and starts it (alice 0 of 1); the backfill cycle of the same second builds the queue again and
  // counts J2; J3 still finds no room (J2 pends). Bob's J4 is counted by the first pass after its
  // submit, at t=30. At the decay run of t=180 J2 has age 179 s, J4 150 s, J3 0: when J1 ends (t=201) J2 and
  // J4 take the two nodes, and J3, counted once J2 started, waits for one of them (t=301). Without the limit
  // the queue is FIFO: J2 and J3 at 201.
  auto site = site_2x8();
  site.qos[0].limits.max_jobs_accrue_per_user = 1;
  const auto r = testing::checked_replay(site, blocked_trace());
  const auto& jobs = r.state->jobs;
  CHECK(rel(jobs[1].accrue) == 1);
  CHECK(rel(jobs[3].accrue) == 30);
  CHECK(rel(jobs[2].accrue) == 201);
  CHECK(rel(jobs[0].start) == 1);
  CHECK(rel(jobs[1].start) == 201);
  CHECK(rel(jobs[3].start) == 201);
  CHECK(rel(jobs[2].start) == 301);

  // Off with PriorityFlags=ACCRUE_ALWAYS or without AccountingStorageEnforce=limits: Slurm then sets
  // every accrue time to the submit (begin) time and counts nothing.
  for (const bool flag : {true, false}) {
    CAPTURE(flag);
    auto off = site;
    if (flag)
      off.scheduler.priority_flags.insert("ACCRUE_ALWAYS");
    else
      off.scheduler.accounting_storage_enforce = {"associations"};
    const auto fifo = testing::checked_replay(off, blocked_trace());
    CHECK(rel(fifo.state->jobs[1].start) == 201);
    CHECK(rel(fifo.state->jobs[2].start) == 201);
    CHECK(rel(fifo.state->jobs[3].start) == 301);
    CHECK(fifo.state->jobs[2].accrue == kUnsetTime);
  }
}

TEST_CASE("accrue limits: only the first limit set decides, and every count includes the job") {
  // QOS normal MaxJobsAccruePU=2 is found before account acct's GrpJobsAccrue=1, so alice's J2 and J3
  // both accrue (t=1, in the backfill cycle after the main pass started J1). Bob's J4 runs in QOS free, which
  // sets no accrue limit: the account's GrpJobsAccrue=1 decides, and alice's two accruing jobs already count
  // in acct (2 >= 1), so J4 stays at age 0 until they start (t=201) and is counted then.
  auto site = site_2x8();
  site.qos[0].limits.max_jobs_accrue_per_user = 2;
  site.accounts[1].limits.grp_jobs_accrue = 1;
  Qos free;
  free.name = "free";
  site.qos.push_back(free);
  auto trace = blocked_trace();
  trace.jobs[3].qos = trace.qos.intern("free");
  const auto r = testing::checked_replay(site, trace);
  const auto& jobs = r.state->jobs;
  CHECK(rel(jobs[1].accrue) == 1);
  CHECK(rel(jobs[2].accrue) == 1);
  CHECK(rel(jobs[3].accrue) == 201);
  CHECK(rel(jobs[1].start) == 201);
  CHECK(rel(jobs[2].start) == 201);
  CHECK(rel(jobs[3].start) == 301);
}

TEST_CASE("an association's MaxJobsAccrue comes from its account when it sets none") {
  // Account acct MaxJobsAccrue=1 is copied down to alice's association (as slurmdbd does): the same
  // schedule as the QOS's per-user limit of the first case.
  auto site = site_2x8();
  site.accounts[1].limits.max_jobs_accrue_per_user = 1;
  const auto r = testing::checked_replay(site, blocked_trace());
  const auto& jobs = r.state->jobs;
  CHECK(rel(jobs[1].accrue) == 1);
  CHECK(rel(jobs[2].accrue) == 201);
  CHECK(rel(jobs[3].start) == 201);
  CHECK(rel(jobs[2].start) == 301);
}
