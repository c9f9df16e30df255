// Advanced reservations and node outages (Slurm 22.05 job_test_resv, node DRAIN; docs/simulator.md,
// "Reservations and outages") on hand-made clusters. Every expected time is worked out next to its
// check. Common facts (offsets from kT0, the first submit = controller start; kT0 is a multiple of 60):
//  * main scheduler: a limited pass 3 s after a submit (batch_sched_delay), a full pass every 60 s, a
//    limited pass right after each job end and after each reservation boundary or node return;
//  * backfill: a cycle every 30 s (bf_interval) while something changed; bf_resolution 60 s;
//  * the time-limit check runs every 30 s from the controller's start.
#include <doctest/doctest.h>

#include "replay_support.hpp"
#include "scenario_support.hpp"
#include "traces/read_report.hpp"
#include "traces/site_events.hpp"
#include "traces/site_yaml.hpp"

using namespace slurmtwin;
using testing::JobSpec;
using testing::kT0;
using testing::make_trace;
using testing::small_site;

namespace {

Reservation reservation(std::string name, Seconds start, Seconds end, std::vector<std::string> nodes,
                        std::set<std::string> flags, std::vector<std::string> users = {"root"}) {
  Reservation r;
  r.name = std::move(name);
  r.start = kT0 + start;
  r.end = kT0 + end;
  r.nodes = std::move(nodes);
  r.flags = std::move(flags);
  r.users = std::move(users);
  return r;
}

const sim::SimJob& job(const experiments::ReplayResult& r, std::uint64_t id) {
  for (const auto& j : r.state->jobs)
    if (j.id == id) return j;
  FAIL("no job ", id);
  throw std::logic_error("unreachable");
}

Seconds start_of(const experiments::ReplayResult& r, std::uint64_t id) {
  const auto& j = job(r, id);
  return j.start == kUnsetTime ? -1 : j.start - kT0;
}

std::string node_of(const experiments::ReplayResult& r, std::uint64_t id) {
  const auto& j = job(r, id);
  return j.alloc.empty() ? std::string() : r.site.nodes[j.alloc.front().node].name;
}

}  // namespace

TEST_CASE("jobs keep off a maintenance reservation's nodes for any run that would overlap it") {
  // 2 nodes x 4 CPUs; MAINT on n1 over [600, 1200).
  auto site = small_site(2, 4);
  site.reservations.push_back(
      reservation("maint", 600, 1200, {"n1"}, {"MAINT", "IGNORE_JOBS", "SPEC_NODES"}));
  auto trace = make_trace({
      {0, 1, 4, 100, 1000},  // J1: t=3, [3, 1003) overlaps the reservation: not n1, so n2
      {0, 1, 4, 500, 1000},  // J2: t=3 n1 reserved, n2 busy: Resources; J1 ends at 103: n2 at 103
      {0, 1, 4, 50, 300},    // J3: [30, 330) ends before 600: backfill (t=30) puts it on n1
      {200, 2, 8, 50, 100},  // J4: two nodes for 100 s: from 603 (J2's end) every run overlaps the
                             // reservation on n1 (ReqNodeNotAvail); starts when it ends, at 1200
  });
  const auto r = testing::checked_replay(site, trace);
  CHECK(start_of(r, 1) == 3);
  CHECK(node_of(r, 1) == "n2");
  CHECK(start_of(r, 2) == 103);
  CHECK(node_of(r, 2) == "n2");
  CHECK(start_of(r, 3) == 30);
  CHECK(node_of(r, 3) == "n1");
  CHECK(job(r, 3).started_by == SchedulerPass::kBackfill);
  CHECK(start_of(r, 4) == 1200);
  CHECK(job(r, 4).has_seen(sim::PendingReason::kReqNodeNotAvail));
  // Without the reservation J1 takes n1 at 3 and J2 n2 at 3: the reservation made the difference.
  site.reservations.clear();
  const auto free = testing::checked_replay(site, trace);
  CHECK(node_of(free, 1) == "n1");
  CHECK(start_of(free, 2) == 3);
}

TEST_CASE("a job asking for a reservation runs only in it, is killed at its end, and is held after it") {
  // 2 nodes x 4 CPUs; alice's reservation on n1 over [100, 400).
  auto site = small_site(2, 4);
  site.reservations.push_back(reservation("ra", 100, 400, {"n1"}, {"SPEC_NODES"}, {"alice"}));
  auto trace = make_trace({
      {0, 1, 4, 500, 1000},             // J1 alice in ra: pending (Reservation) until 100, then n1;
                                        // still running at the end (400): killed by the limit check
                                        // at 420 (checks every 30 s), TIMEOUT
      {0, 1, 4, 100, 1000, -1, "bob"},  // J2 bob: [3, 1003) overlaps ra: n2 at 3
      {0, 1, 4, 100, 1000, -1, "bob"},  // J3 bob: n1 reserved, n2 busy until 103: n2 at 103
      {0, 1, 4, 50, 600},               // J4 alice in ra: n1 busy with J1 until 420, when ra has
                                        // ended: held, never starts
      {0, 1, 4, 50, 600, -1, "bob"},    // J5 bob in ra: not on its Users list: refused at submit
  });
  for (const std::size_t i : {0, 3, 4}) trace.jobs[i].reservation = trace.strings.intern("ra");
  const auto r = testing::checked_replay(site, trace);
  CHECK(start_of(r, 1) == 100);
  CHECK(node_of(r, 1) == "n1");
  CHECK(job(r, 1).end - kT0 == 420);
  CHECK(job(r, 1).end_state == JobState::kTimeout);
  CHECK(start_of(r, 2) == 3);
  CHECK(node_of(r, 2) == "n2");
  CHECK(start_of(r, 3) == 103);
  CHECK(start_of(r, 4) == -1);
  CHECK(job(r, 4).reason == sim::PendingReason::kReservation);
  CHECK(job(r, 5).state == sim::SimJobState::kRejected);
  CHECK(job(r, 5).reject_reason == "reservation access denied");
  CHECK(r.metrics.never_started == 1);
}

TEST_CASE("a drained node finishes its job, starts nothing, and takes jobs again when it returns") {
  // 2 nodes x 4 CPUs; n1 drained over [50, 300).
  auto site = small_site(2, 4);
  site.outages.push_back({"n1", kT0 + 50, kT0 + 300, "DRAIN", "maint"});
  const auto trace = make_trace({
      {0, 1, 4, 200, 1000},   // J1: n1 at 3, runs on through the drain to 203
      {0, 1, 4, 400, 1000},   // J2: n2 at 3, ends 403
      {10, 1, 4, 100, 1000},  // J3: nothing free at 13; at 203 n1 is drained (n2 busy): Resources;
                              // n1 returns at 300: starts there then
  });
  const auto r = testing::checked_replay(site, trace);
  CHECK(start_of(r, 1) == 3);
  CHECK(job(r, 1).end - kT0 == 203);
  CHECK(start_of(r, 2) == 3);
  CHECK(start_of(r, 3) == 300);
  CHECK(node_of(r, 3) == "n1");
}

TEST_CASE("a job that needs a node that is down waits with ReqNodeNotAvail without blocking the partition") {
  // 2 nodes x 4 CPUs; n2 down from the start to 500. J1 wants both nodes: it cannot run even on an
  // idle cluster without n2, so it does not block its partition and J2 (1 node) starts at 3 on n1.
  auto site = small_site(2, 4);
  site.outages.push_back({"n2", kT0 - 100, kT0 + 500, "DOWN", "Not responding"});
  const auto trace = make_trace({{0, 2, 8, 100, 1000}, {0, 1, 4, 100, 1000}});
  const auto r = testing::checked_replay(site, trace);
  CHECK(start_of(r, 2) == 3);
  CHECK(node_of(r, 2) == "n1");
  CHECK(start_of(r, 1) == 500);  // n2 returns at 500 (J2 ended at 103)
  CHECK(job(r, 1).has_seen(sim::PendingReason::kReqNodeNotAvail));
}

TEST_CASE("reservations and outages survive the site YAML, and bad ones are refused") {
  auto site = small_site(2, 4);
  site.reservations.push_back(reservation("maint", 600, 1200, {"n1", "n2"}, {"MAINT"}));
  site.reservations.push_back(reservation("ra", 100, 400, {"n1"}, {}, {"alice", "bob"}));
  site.reservations.back().accounts = {"acct"};
  site.reservations.back().id = 7;
  site.outages.push_back({"n2", kT0, kUnlimited, "DRAIN", "disk"});
  CHECK(parse_site_yaml(site_to_yaml(site), "site.yaml") == site);
  auto bad = site;
  bad.reservations.front().nodes.push_back("n9");
  CHECK_THROWS_WITH_AS(validate(bad), "reservation 'maint': unknown node 'n9'", std::invalid_argument);
  bad = site;
  bad.reservations.front().flags.insert("MAIN");
  CHECK_THROWS_WITH_AS(validate(bad), "reservation 'maint': unknown flag 'MAIN'", std::invalid_argument);
  bad = site;
  bad.reservations.back().users = {"alice", "-bob"};
  CHECK_THROWS_AS(validate(bad), std::invalid_argument);
}

TEST_CASE("scontrol show reservation is read strictly, times in the site's zone") {
  std::vector<std::string> warnings;
  const TimeZone utc("UTC"), berlin("Europe/Berlin");
  const std::string text =
      "ReservationName=maint StartTime=2026-11-25T21:00:00 EndTime=2026-11-25T21:02:00 Duration=00:02:00\n"
      "   Nodes=n[3-4] NodeCnt=2 CoreCnt=16 Features=(null) PartitionName=(null) "
      "Flags=MAINT,IGNORE_JOBS,SPEC_NODES\n"
      "   TRES=cpu=16\n"
      "   Users=root Groups=(null) Accounts=(null) Licenses=(null) State=INACTIVE BurstBuffer=(null) "
      "Watts=n/a\n"
      "   MaxStartDelay=(null)\n\n";
  const auto r = read_reservations(text, "resv.txt", utc, warnings);
  REQUIRE(r.size() == 1);
  CHECK(r[0].name == "maint");
  CHECK(r[0].nodes == std::vector<std::string>{"n3", "n4"});
  CHECK(r[0].users == std::vector<std::string>{"root"});
  CHECK(r[0].accounts.empty());
  CHECK(r[0].flags == std::set<std::string>{"IGNORE_JOBS", "MAINT", "SPEC_NODES"});
  CHECK(r[0].end - r[0].start == 120);
  CHECK(warnings.empty());
  // Berlin is UTC+1 in November: the same wall time is an hour earlier in UTC.
  CHECK(read_reservations(text, "resv.txt", berlin, warnings)[0].start == r[0].start - 3600);
  CHECK(read_reservations("No reservations in the system\n", "resv.txt", utc, warnings).empty());
  auto typo = text;
  typo.replace(typo.find("MAINT,"), 6, "MAINTT,");
  CHECK_THROWS_WITH_AS(read_reservations(typo, "resv.txt", utc, warnings),
                       "resv.txt:2: Flags: unknown reservation flag 'MAINTT'", InputError);
  auto daily = text;
  daily.replace(daily.find("MAINT,"), 6, "MAINT,DAILY,");
  read_reservations(daily, "resv.txt", utc, warnings);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] ==
        "resv.txt:2: reservation 'maint': flag DAILY is not modelled (repeats: only the occurrence listed "
        "is replayed)");
}

TEST_CASE("sacctmgr show event gives node outages and refuses other states") {
  const TimeZone utc("UTC");
  const std::string text =
      "Cluster|NodeName|TimeStart|TimeEnd|State|Reason|User\n"
      "oracle||2026-11-25T20:46:52|Unknown||Cluster Registered TRES|\n"
      "oracle|n2|2026-11-25T20:50:00|2026-11-25T20:52:00|DRAIN|maint|root(0)\n"
      "oracle|n3|2026-11-25T20:49:00|Unknown|DOWN*|Not responding|slurm(64030)\n"
      // Real 22.05.8's line for a node whose slurmd reported fewer GPUs than slurm.conf gives (scenario 41).
      "oracle|g1|2026-11-29T07:41:59|Unknown|INVAL|gres/gpu count reported lower than configured (0 < 2)|"
      "slurm(64030)\n";
  const auto o = read_node_events(text, "event.txt", utc);
  REQUIRE(o.size() == 3);
  CHECK(o[0].node == "n3");  // sorted by start
  CHECK(o[0].state == "DOWN");
  CHECK(o[0].end == kUnlimited);
  CHECK(o[1].node == "n2");
  CHECK(o[1].end - o[1].start == 120);
  CHECK(o[1].reason == "maint");
  CHECK(o[2].node == "g1");
  CHECK(o[2].state == "DRAIN");  // drained, its registration refused: it starts no job
  auto bad = text;
  bad.replace(bad.find("DRAIN|"), 6, "IDLE|");
  CHECK_THROWS_WITH_AS(
      read_node_events(bad, "event.txt", utc),
      "event.txt:3: State: 'IDLE' is not a node outage state (DOWN, DRAIN, DRNG, FAIL, FAILG or INVAL)",
      InputError);
}

TEST_CASE("a drain recorded when its node went idle holds the node from the twin's earlier job end") {
  // 1 node x 4 CPUs. J1 runs [3, 103) in the twin; J2 waits for the node. sacctmgr recorded the DRAIN
  // from 110 (real Slurm writes it when the draining node's last job has ended, there at 110): the
  // drain was ordered earlier. The node was busy at 110 - 60 (ControllerOptions::drain_lead), so the
  // twin takes it out at J1's end, 103, and J2 starts when the drain ends, at 300.
  auto site = small_site(1, 4);
  site.outages.push_back({"n1", kT0 + 110, kT0 + 300, "DRAIN", "maint"});
  const auto trace = make_trace({{0, 1, 4, 100, 1000}, {50, 1, 4, 100, 1000}});
  CHECK(start_of(testing::checked_replay(site, trace), 2) == 300);
  // Recorded from 170 instead: at 110 the node was idle already (J1 ended at 103), so the drain was
  // ordered after J2 started there at 103.
  site.outages.front().start = kT0 + 170;
  CHECK(start_of(testing::checked_replay(site, trace), 2) == 103);
  // A DOWN event is when the node went down: no lead.
  site.outages.front() = {"n1", kT0 + 110, kT0 + 300, "DOWN", "Not responding"};
  CHECK(start_of(testing::checked_replay(site, trace), 2) == 103);
}

TEST_CASE("a reservation or node event without a known start is refused") {
  const TimeZone utc("UTC");
  std::vector<std::string> warnings;
  CHECK_THROWS_WITH_AS(read_node_events("Cluster|NodeName|TimeStart|TimeEnd|State|Reason|User\n"
                                        "c|n1|Unknown|Unknown|DOWN|x|root(0)\n",
                                        "event.txt", utc),
                       "event.txt:2: TimeStart: Unknown: a start must be a time", InputError);
  CHECK_THROWS_WITH_AS(read_reservations("Cluster|Name|ID|TimeStart|TimeEnd|NodeName|Flags\n"
                                         "c|r|1|Unknown|2026-01-01T00:00:00|n1|MAINT\n",
                                         "resv.txt", utc, warnings),
                       "resv.txt:2: TimeStart: Unknown: a start must be a time", InputError);
  // An end still to come is open: the event lasts for ever.
  CHECK(read_node_events("Cluster|NodeName|TimeStart|TimeEnd|State|Reason|User\n"
                         "c|n1|2026-01-01T00:00:00|Unknown|DOWN|x|root(0)\n",
                         "event.txt", utc)
            .front()
            .end == kUnlimited);
}

TEST_CASE("a malformed node list in a reservation or node event is refused with file, line and field") {
  // Regression: the fuzzer's `Nodes=n[1-)` ended the process with an uncaught std::invalid_argument.
  const TimeZone utc("UTC");
  std::vector<std::string> warnings;
  CHECK_THROWS_WITH_AS(read_reservations("ReservationName=r StartTime=2026-11-25T21:00:00 "
                                         "EndTime=2026-11-25T21:02:00\n"
                                         "   Nodes=n[1-) Users=root Accounts=(null) Flags=MAINT\n",
                                         "resv.txt", utc, warnings),
                       "resv.txt:2: Nodes: unbalanced '[' in hostlist 'n[1-)'", InputError);
  CHECK_THROWS_WITH_AS(read_reservations("Cluster|Name|ID|TimeStart|TimeEnd|NodeName|Flags\n"
                                         "c|r|1|2026-01-01T00:00:00|2026-01-01T01:00:00|n[3-1]|MAINT\n",
                                         "resv.txt", utc, warnings),
                       doctest::Contains("resv.txt:2: NodeName: "), InputError);
  CHECK_THROWS_WITH_AS(read_node_events("Cluster|NodeName|TimeStart|TimeEnd|State|Reason|User\n"
                                        "c|n[1-99999999]|2026-01-01T00:00:00|Unknown|DOWN|x|root(0)\n",
                                        "event.txt", utc),
                       doctest::Contains("event.txt:2: NodeName: "), InputError);
}
