// Job dependencies (sbatch --dependency): the expression parser, and golden replays on a hand-made
// cluster whose expected times are worked out by hand next to each check (sim/dependencies.hpp for
// the rules). Timing facts used throughout (test_scheduler_scenarios.cpp): jobs submitted at t=0
// start at t=3 (the first pass after batch_sched_delay = 3 s); a job that ends triggers a pass in the
// same second, which tests the jobs waiting for it first; time limits are enforced every 30 s.
#include <doctest/doctest.h>

#include <stdexcept>

#include "replay_support.hpp"
#include "scenario_support.hpp"
#include "traces/dependency.hpp"

using namespace slurmtwin;

namespace {

using testing::JobSpec;
using testing::kT0;
using testing::make_trace;
using testing::small_site;

/// Jobs 1..N, 1 CPU each (the sites below have CPUs to spare: resources never bind), with these dependencies.
Trace with_dependencies(const std::vector<JobSpec>& specs, const std::vector<std::string>& deps) {
  auto t = make_trace(specs);
  for (std::size_t i = 0; i < deps.size(); ++i)
    if (!deps[i].empty()) t.jobs[i].dependency = t.strings.intern(deps[i]);
  return t;
}

Seconds at(Seconds t) {
  return t == kUnsetTime ? kUnsetTime : t - kT0;
}

}  // namespace

TEST_CASE("dependency expressions parse as sbatch reads them, and bad ones say what is wrong") {
  using T = DependencyType;
  auto spec = parse_dependency("afterok:12:13_4,after:7+2,singleton");
  CHECK_FALSE(spec.any);
  REQUIRE(spec.terms.size() == 4);
  CHECK(spec.terms[0] == DependencyTerm{T::kAfterOk, 12, -1, 0});
  CHECK(spec.terms[1] == DependencyTerm{T::kAfterOk, 13, 4, 0});
  CHECK(spec.terms[2] == DependencyTerm{T::kAfter, 7, -1, 120});  // +2 minutes
  CHECK(spec.terms[3].type == T::kSingleton);
  spec = parse_dependency("afternotok:5?afterany:6");
  CHECK(spec.any);
  CHECK(spec.terms == std::vector<DependencyTerm>{{T::kAfterNotOk, 5, -1, 0}, {T::kAfterAny, 6, -1, 0}});
  CHECK(parse_dependency("42").terms == std::vector<DependencyTerm>{{T::kAfterAny, 42, -1, 0}});  // legacy
  CHECK(parse_dependency("afterburstbuffer:9").terms[0].type == T::kAfterAny);
  CHECK(parse_dependency("aftercorr:9").terms[0].type == T::kAfterCorr);

  const auto error = [](const char* text) {
    try {
      parse_dependency(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // sbatch's man page allows one kind of separator; slurmctld 22.05 takes a mixed list as all '?'.
  spec = parse_dependency("afterok:1,afterany:2?after:3");
  CHECK(spec.any);
  CHECK(spec.terms.size() == 3);
  CHECK(error("afterok:1+5").find("only allowed with after") != std::string::npos);
  CHECK(error("after:1+soon").find("whole minutes") != std::string::npos);
  CHECK(error("afterok:").find("at least one job id") != std::string::npos);
  CHECK(error("afterok:1::2").find("empty job id") != std::string::npos);
  CHECK(error("afterwards:1").find("unknown dependency type 'afterwards'") != std::string::npos);
  CHECK(error("singleton:3").find("takes no job ids") != std::string::npos);
  CHECK(error("afterok:0").find("not a job id") != std::string::npos);
  CHECK(error("afterok:1_x").find("not an array task id") != std::string::npos);
  CHECK(error("afterok:1,,afterok:2").find("empty dependency") != std::string::npos);
  CHECK(error(" ").find("empty dependency") != std::string::npos);
}

TEST_CASE("afterok chains release each job when the one before completes, eligible from then") {
  // J1 runs 3..103. J2 (afterok:1) is released by the pass J1's end triggers: eligible and started at
  // 103, ends 203; J3 (afterok:2) likewise at 203. J4 (no dependency) starts at 3 beside J1.
  const auto r = testing::checked_replay(
      small_site(1, 4), with_dependencies({{0}, {0}, {0}, {0}}, {"", "afterok:1", "afterok:2", ""}));
  const auto& j = r.state->jobs;
  CHECK(at(j[0].start) == 3);
  CHECK(at(j[1].eligible) == 103);
  CHECK(at(j[1].start) == 103);
  CHECK(at(j[2].eligible) == 203);
  CHECK(at(j[2].start) == 203);
  CHECK(at(j[3].start) == 3);
  // A dependent job's wait counts from its submit (sacct Start - Submit), as for every job.
  CHECK(r.metrics.started == 4);
}

TEST_CASE("a timed-out job satisfies afternotok and afterany, never afterok, and ? or , combine terms") {
  // J1: limit 60 s, work 100 s: TIMEOUT at the limit check of t=90 (starts at 3, limit at 63). J2 runs
  // 3..103 and completes.
  //   J3 afterok:1              never: pending to the end, reason DependencyNeverSatisfied
  //   J4 afternotok:1           released at 90
  //   J5 afterany:1             released at 90
  //   J6 afterok:1?afterok:2    one term suffices: released when J2 completes, 103
  //   J7 afterok:2,afterok:1    both must: J1 failed, never
  //   J8 afternotok:2           J2 completed: never
  const auto r = testing::checked_replay(
      small_site(1, 8), with_dependencies({{0, 1, 1, 100, 60}, {0}, {0}, {0}, {0}, {0}, {0}, {0}},
                                          {"", "", "afterok:1", "afternotok:1", "afterany:1",
                                           "afterok:1?afterok:2", "afterok:2,afterok:1", "afternotok:2"}));
  const auto& j = r.state->jobs;
  CHECK(j[0].end_state == JobState::kTimeout);
  CHECK(at(j[0].end) == 90);
  CHECK(at(j[3].start) == 90);
  CHECK(at(j[4].start) == 90);
  CHECK(at(j[5].start) == 103);
  for (const std::size_t never : {2, 6, 7}) {
    CAPTURE(never);
    CHECK(j[never].start == kUnsetTime);
    CHECK(j[never].eligible == kUnsetTime);
    CHECK(j[never].reason == sim::PendingReason::kDependencyNeverSatisfied);
  }
  CHECK(r.metrics.never_started == 3);
}

TEST_CASE("a job whose record says it failed fails afterok in the replay too") {
  // Failure is the job's own (its exit code), not the schedule's: J1 recorded FAILED completes its
  // 100 s in the replay but does not satisfy afterok; afternotok is released at its end, 103.
  auto t = with_dependencies({{0}, {0}, {0}}, {"", "afterok:1", "afternotok:1"});
  t.jobs[0].state = JobState::kFailed;
  const auto r = testing::checked_replay(small_site(1, 4), t);
  CHECK(r.state->jobs[1].reason == sim::PendingReason::kDependencyNeverSatisfied);
  CHECK(at(r.state->jobs[2].start) == 103);
}

TEST_CASE("after:ID+MIN waits MIN minutes from the job's start") {
  // J1 starts at 3; J2 after:1+1 may start from 3 + 60 = 63: a retest then requests a pass, which runs
  // at 63 (the last pass was the full pass at 60, so batch_sched_delay = 3 s has passed).
  const auto r =
      testing::checked_replay(small_site(1, 4), with_dependencies({{0, 1, 1, 1000}, {0}}, {"", "after:1+1"}));
  CHECK(at(r.state->jobs[1].eligible) == 63);
  CHECK(at(r.state->jobs[1].start) == 63);
}

TEST_CASE("singleton jobs of one user and name run one at a time, in submit order") {
  // J1, J2, J3: alice's jobs named "s", J2 and J3 singleton; J4 bob's "s" singleton. J1 runs 3..103;
  // J2 starts when it ends (103) and runs to 203; J3 then (203). Bob's job is not alice's: starts at 3.
  auto t = with_dependencies({{0}, {0}, {0}, {0, 1, 1, 100, 3600, -1, "bob"}},
                             {"", "singleton", "singleton", "singleton"});
  for (auto& job : t.jobs) job.name = t.strings.intern("s");
  const auto r = testing::checked_replay(small_site(1, 4), t);
  const auto& j = r.state->jobs;
  CHECK(at(j[0].start) == 3);
  CHECK(at(j[1].start) == 103);
  CHECK(at(j[2].start) == 203);
  CHECK(at(j[3].start) == 3);
}

TEST_CASE(
    "a term naming a job that is gone is lifted, and Slurm refuses only unreadable or self dependencies") {
  // slurmctld 22.05 lifts a term whose job does not exist when it tests it ("job is gone, dependency
  // lifted"): J2 names job 99, never in the trace, and J3 names J6, submitted after it: both run at 3
  // as if independent. In a '?' list one lifted term clears the list: J4 (afterok:1?afterok:99) starts
  // at 3 although J1 is still running. Refused at submit: J5's unreadable expression (the events
  // reader rejects such a line; a native or hand-made trace reaches the replay) and J6 naming itself.
  const auto r = testing::checked_replay(
      small_site(1, 8), with_dependencies({{0}, {0}, {0}, {0}, {0}, {10}},
                                          {"", "afterok:99", "afterany:6", "afterok:1?afterok:99",
                                           "afterok:1+1", "afterok:6"}));
  const auto& j = r.state->jobs;
  CHECK(at(j[1].start) == 3);
  CHECK(at(j[2].start) == 3);
  CHECK(at(j[3].start) == 3);
  const auto& by = r.metrics.rejected_by_reason;
  CHECK(r.metrics.rejected == 2);
  CHECK(by.at("bad dependency 'afterok:1+1': a +MINUTES delay is only allowed with after") == 1);
  CHECK(by.at("dependency on the job itself") == 1);
}
