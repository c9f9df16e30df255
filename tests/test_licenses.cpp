// Licences (slurm.conf Licenses=, sbatch -L): as slurmctld 22.05 reads them (licenses.c
// _build_license_list), refuses bad requests at submit (_job_create: license_validate), and schedules
// with them (license_job_test in schedule() and in the backfill loop, without bf_licenses: a job short
// of licences waits with reason Licenses, blocks no partition and gets no reservation). Against real
// Slurm 22.05: docs/fidelity.md, scenario 42.
//
// Facts used (tests/scenario_support.hpp): every priority is 1, so the queue is FIFO by submit time,
// then job id; every_second_site runs a main pass and a backfill cycle every second, the first main
// pass at 1; a job that ends by itself at t is followed by a pass that starts the next job at t.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>

#include "experiments/sweep/sweep_spec.hpp"
#include "replay_support.hpp"
#include "scenario_support.hpp"
#include "test_support.hpp"
#include "traces/file_io.hpp"
#include "traces/licenses.hpp"
#include "traces/native_format.hpp"
#include "traces/readers.hpp"
#include "traces/sacct_writer.hpp"
#include "traces/site_events.hpp"
#include "traces/site_yaml.hpp"
#include "traces/slurm_conf.hpp"
#include "traces/time_zone.hpp"

using namespace slurmtwin;

namespace {

using testing::kT0;
using testing::make_trace;

/// `trace` with job i (0-based) asking licences `spec` ("" for none).
Trace with_licenses(Trace trace, const std::vector<std::string>& specs) {
  for (std::size_t i = 0; i < specs.size(); ++i)
    if (!specs[i].empty()) trace.jobs[i].licenses = trace.strings.intern(specs[i]);
  return trace;
}

Site licensed_site(std::uint32_t nodes, std::uint32_t cpus, const char* licenses) {
  auto site = testing::every_second_site(nodes, cpus);
  site.licenses = parse_licenses(licenses);
  return site;
}

}  // namespace

TEST_CASE("licence lists as slurmctld reads them: comma or semicolon between items, count 1 by default") {
  using L = LicenseCount;
  CHECK(parse_licenses("matlab:3,ansys:2;comsol") ==
        std::vector<L>{{"matlab", 3}, {"ansys", 2}, {"comsol", 1}});
  CHECK(parse_licenses("a:1,,b;a:2") == std::vector<L>{{"a", 3}, {"b", 1}});  // a name twice: counts added
  CHECK(parse_licenses("fluent@server:0") == std::vector<L>{{"fluent@server", 0}});
  CHECK(parse_licenses("").empty());
  for (const char* bad : {"a: 1", " a", "a:x", "a:-1", "a:+1", "a:", ":3", "a:1.5", "a:99999999999"})
    CHECK_THROWS_AS_MESSAGE(parse_licenses(bad), std::invalid_argument, bad);
  CHECK(format_licenses(parse_licenses("b;a:4")) == "b:1,a:4");
}

TEST_CASE("a job short of licences waits (Licenses) and blocks no one behind it") {
  // 2 nodes x 4 CPUs, Licenses=lic:2. J1 takes both licences until 100; J2 (one licence) waits for them
  // although a node is free, and starts when J1 ends; J3, behind J2 in the queue, starts at once.
  const auto trace = with_licenses(make_trace({{0, 1, 4, 100, 600}, {0, 1, 1, 50, 600}, {0, 1, 1, 50, 600}}),
                                   {"lic:2", "lic:1", ""});
  const auto r = testing::checked_replay(licensed_site(2, 4, "lic:2"), trace);
  const auto start = [&](std::size_t i) { return r.state->jobs[i].start - kT0; };
  CHECK(start(0) == 1);
  CHECK(start(1) == 101);
  CHECK(start(2) == 1);
  CHECK(r.state->jobs[1].has_seen(sim::PendingReason::kLicenses));
  CHECK_FALSE(r.state->jobs[1].has_seen(sim::PendingReason::kResources));
  CHECK(r.state->licenses_used == std::vector<std::uint32_t>{0});
}

TEST_CASE("backfill makes no reservation for a job short of licences") {
  // 2 nodes x 4 CPUs, Licenses=lic:1. J1 (one node, the licence, 100 s) starts at 1. J2 wants both
  // nodes and the licence: it waits on Licenses, so the main pass goes on and starts J3 (one node,
  // 500 s) at 1. Were J2 short of nodes only, it would block the partition and backfill would reserve
  // both nodes for it at 101, keeping J3 (limit 600) out until J2 had run (J2 at 101, J3 at 111).
  // With the licence free at 101, J2 still needs n2: it starts when J3 ends, at 501.
  const auto trace = with_licenses(make_trace({{0, 1, 4, 100, 100}, {0, 2, 8, 10, 600}, {0, 1, 4, 500, 600}}),
                                   {"lic", "lic", ""});
  const auto r = testing::checked_replay(licensed_site(2, 4, "lic:1"), trace);
  const auto start = [&](std::size_t i) { return r.state->jobs[i].start - kT0; };
  CHECK(start(0) == 1);
  CHECK(start(2) == 1);
  CHECK(start(1) == 501);
  CHECK(r.state->jobs[1].has_seen(sim::PendingReason::kLicenses));
}

TEST_CASE("licences a site lacks are refused at submit, more than it has unless allow_zero_lic") {
  const auto trace = with_licenses(
      make_trace({{0, 1, 1, 10, 600}, {0, 1, 1, 10, 600}, {0, 1, 1, 10, 600}, {0, 1, 1, 10, 600}}),
      {"nosuch", "lic:3", "lic:2,lic", "lic:0"});
  auto site = licensed_site(1, 4, "lic:2");
  {
    const auto r = testing::checked_replay(site, trace);
    const auto& jobs = r.state->jobs;
    CHECK(jobs[0].reject_reason == "unknown licence (not in the site's Licenses=)");
    CHECK(jobs[1].reject_reason == "more licences than the site has (Licenses=)");
    CHECK(jobs[2].reject_reason == "more licences than the site has (Licenses=)");  // 2 + 1 of lic
    CHECK(jobs[3].state == sim::SimJobState::kDone);                                // lic:0 asks nothing
    CHECK(jobs[3].licenses.empty());
  }
  site.scheduler.params.allow_zero_lic = true;  // such a job is queued, and waits for good
  const auto r = testing::checked_replay(site, trace);
  CHECK(r.state->jobs[0].state == sim::SimJobState::kRejected);
  CHECK(r.state->jobs[1].state == sim::SimJobState::kPending);
  CHECK(r.state->jobs[1].has_seen(sim::PendingReason::kLicenses));
  CHECK(r.metrics.never_started == 2);
}

TEST_CASE("Licenses= from slurm.conf, real scontrol show config and the site YAML") {
  const char* const conf =
      "NodeName=n1 CPUs=4 RealMemory=1000\nPartitionName=p Nodes=n1 Default=YES\n"
      "Licenses=matlab:3,ansys:2;comsol\n";
  std::vector<std::string> w;
  const auto site = import_slurm_conf_text(conf, "lic.conf", w);
  CHECK(site.licenses == parse_licenses("matlab:3,ansys:2,comsol:1"));
  CHECK(w.empty());  // modelled: no "not modelled" warning
  CHECK(parse_site_yaml(site_to_yaml(site), "s.yaml").licenses == site.licenses);
  CHECK(testing::input_error([] {
          std::vector<std::string> w2;
          import_slurm_conf_text("NodeName=n1 CPUs=4\nLicenses=matlab:x\n", "bad.conf", w2);
        }) == "bad.conf:2: Licenses: licences 'matlab:x': the count of 'matlab' is not a whole number");
  // Real Slurm 22.05 of scenario 42 printed "Licenses = matlab:3,ansys:2,comsol".
  SlurmConfigFiles f;
  f.scontrol_config = (std::filesystem::path(SLURMTWIN_SOURCE_DIR) /
                       "tests/oracle/recorded/42_licenses/run1/admin/scontrol-show-config.txt")
                          .string();
  std::vector<std::string> w3;
  CHECK(import_slurm_config(f, w3).licenses == site.licenses);
}

TEST_CASE("a job's licences from events lines, sacct (submit line, Licenses, ReqTRES) and back") {
  Trace t;
  ReadReport report;
  ReadOptions options;
  RejectSink sink(report, options);
  read_events(
      "-dt 0 -e submit_batch_job | -sim-walltime 10 --uid=alice -t 1 -n 1 -L matlab:2,ansys pseudo.job\n"
      "-dt 1 -e submit_batch_job | -sim-walltime 10 --uid=alice -t 1 -n 1 --licenses=comsol pseudo.job\n"
      "-dt 2 -e submit_batch_job | -sim-walltime 10 --uid=alice -t 1 -n 1 --licenses=a:x pseudo.job\n",
      "l.events", t, sink, {{"alice", "acct"}});
  REQUIRE(t.jobs.size() == 2);
  CHECK(t.strings.name(t.jobs[0].licenses) == "matlab:2,ansys");
  CHECK(t.strings.name(t.jobs[1].licenses) == "comsol");
  CHECK(report.rejected_by_reason.at("bad --licenses") == 1);

  // jobs.sacct carries them in its submit line (22.05's sacct has no Licenses column)
  const auto text = format_sacct_parsable(t);
  CHECK(text.find("|sbatch --licenses=matlab:2,ansys\n") != std::string::npos);
  Trace back;
  read_sacct_parsable(text, "jobs.sacct", back, sink);
  REQUIRE(back.jobs.size() == 2);
  CHECK(back.strings.name(back.jobs[0].licenses) == "matlab:2,ansys");
  CHECK(decode_native_trace(encode_native_trace(t, false), "x").strings.name(t.jobs[1].licenses) == "comsol");

  // sacct 23.02's Licenses column; ReqTRES of a site tracking licences as TRES; -L in a submit line
  Trace s;
  read_sacct_parsable(
      "JobID|User|Account|Partition|Submit|Start|End|State|ReqTRES|Licenses|SubmitLine\n"
      "1|alice|acct|p|2026-01-01T00:00:00|2026-01-01T00:00:01|2026-01-01T00:00:11|COMPLETED|cpu=1|x:2|\n"
      "2|alice|acct|p|2026-01-01T00:00:00|2026-01-01T00:00:01|2026-01-01T00:00:11|COMPLETED|"
      "cpu=1,license/MatLab=2,license/ansys=1||\n"
      "3|alice|acct|p|2026-01-01T00:00:00|2026-01-01T00:00:01|2026-01-01T00:00:11|COMPLETED|cpu=1||"
      "sbatch -L y:3 job.sh\n"
      "4|alice|acct|p|2026-01-01T00:00:00|2026-01-01T00:00:01|2026-01-01T00:00:11|COMPLETED|cpu=1|x:-1|\n",
      "s.sacct", s, sink);
  REQUIRE(s.jobs.size() == 3);
  CHECK(s.strings.name(s.jobs[0].licenses) == "x:2");
  CHECK(s.strings.name(s.jobs[1].licenses) == "MatLab:2,ansys:1");
  CHECK(s.strings.name(s.jobs[2].licenses) == "y:3");
}

TEST_CASE("licences held by an advanced reservation are not modelled, and a warning says so") {
  const TimeZone utc("UTC");
  std::vector<std::string> w;
  read_reservations(
      "ReservationName=lic StartTime=2026-11-25T23:46:25 EndTime=2026-11-25T23:48:25 Duration=00:02:00\n"
      "   Nodes=n1 NodeCnt=1 CoreCnt=8 Features=(null) PartitionName=(null) Flags=SPEC_NODES\n"
      "   Users=root Groups=(null) Accounts=(null) Licenses=matlab:2 State=ACTIVE BurstBuffer=(null)\n",
      "r.txt", utc, w);
  REQUIRE(w.size() == 1);
  CHECK(
      w[0] ==
      "r.txt:3: reservation 'lic': Licenses=matlab:2 is not modelled: its licences stay free for every job");
  w.clear();
  read_reservations(
      "Name|TimeStart|TimeEnd|NodeName|TRES\nlic|2026-11-25T23:46:25|2026-11-25T23:48:25|n1|"
      "cpu=8,license/matlab=2\n",
      "r.sacctmgr", utc, w);
  REQUIRE(w.size() == 1);
  CHECK(w[0].find("reservation 'lic': its licences (cpu=8,license/matlab=2) are not modelled") !=
        std::string::npos);
}

TEST_CASE("a replay warns when the site has licences and no job of the trace asks for one") {
  // Real Slurm 22.05's own files of scenario 42: its sacct dump has no SubmitLine column, so the -L of
  // its jobs is nowhere in it, and the replay says so rather than run them as if they needed none.
  const auto admin =
      std::filesystem::path(SLURMTWIN_SOURCE_DIR) / "tests/oracle/recorded/42_licenses/run1/admin";
  const auto out = testing::scratch_dir("licence_warning");
  const auto site = testing::admin_site_options(admin) + " --timezone UTC";
  const auto r = testing::run_cli(
      fmt::format("replay {} --trace {}/sacct.txt --out {}", site, admin.string(), (out / "a").string()));
  CHECK(r.code == 0);
  CHECK(r.out.find("warning: the site has licences (matlab:3,ansys:2,comsol:1) but no job of the trace asks "
                   "for one") != std::string::npos);
  // A trace that asks for some: no such warning.
  const auto trace = out / "l.sacct";
  write_file_atomic(trace.string(),
                    "JobID|User|Account|Partition|QOS|Submit|Start|End|Timelimit|State|ReqTRES|SubmitLine\n"
                    "1|u1|a1|batch|normal|2026-11-29T11:15:34|2026-11-29T11:15:34|2026-11-29T11:16:24|"
                    "00:02:00|COMPLETED|cpu=1|sbatch -L matlab:2 job.sh\n");
  const auto with = testing::run_cli(
      fmt::format("replay {} --trace {} --out {}", site, trace.string(), (out / "b").string()));
  CHECK(with.code == 0);
  CHECK(with.out.find("no job of the trace asks") == std::string::npos);
}

TEST_CASE("a sweep may vary how many of a licence the site has: Licenses/<name>") {
  // "What if we bought another licence?" The trace of the first scheduling test: J1 takes both of
  // lic's 2 licences, J2 (one) waits for them until 101, J3 (none) starts at 1.
  const auto trace = with_licenses(make_trace({{0, 1, 4, 100, 600}, {0, 1, 1, 50, 600}, {0, 1, 1, 50, 600}}),
                                   {"lic:2", "lic:1", ""});
  const auto site = licensed_site(2, 4, "lic:2");
  bool integer = false;
  CHECK(experiments::setting_is_known("Licenses/lic", integer));
  CHECK(integer);
  CHECK(experiments::current_setting(site, "Licenses/lic") == 2);
  const auto with = [&](double count) {
    auto s = site;
    experiments::apply_setting(s, "Licenses/lic", count);
    CHECK(experiments::current_setting(s, "Licenses/lic") == count);
    return testing::checked_replay(s, trace);
  };
  const auto three = with(3);  // room for J1 and J2 at once
  CHECK(three.state->jobs[1].start - kT0 == 1);
  const auto one = with(1);  // J1 asks more than the site has: refused at submit, as slurmctld does
  CHECK(one.state->jobs[0].reject_reason == "more licences than the site has (Licenses=)");
  CHECK(one.state->jobs[1].start - kT0 == 1);
  auto s = site;
  CHECK_THROWS_WITH_AS(experiments::apply_setting(s, "Licenses/nosuch", 1),
                       "Licenses/nosuch: the site has no licence 'nosuch' (Licenses=)",
                       std::invalid_argument);
  CHECK_THROWS_AS(experiments::apply_setting(s, "Licenses/lic", -1), std::invalid_argument);
}
