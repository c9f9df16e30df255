// sacct prints local time: --timezone reads it back to UTC, daylight-saving changes included.
// Expected instants from the zone rules (EU: clocks change at 01:00 UTC on the last Sunday of March
// and October), computed by hand.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "tests/test_support.hpp"
#include "traces/read_report.hpp"
#include "traces/readers.hpp"
#include "traces/text.hpp"
#include "traces/time_format.hpp"
#include "traces/time_zone.hpp"
#include "traces/trace_io.hpp"

using namespace slurmtwin;

namespace {
Seconds at(const char* iso) {
  return *parse_timestamp(iso);
}
}  // namespace

TEST_CASE("a time zone turns sacct's local wall time into UTC across daylight-saving changes") {
  const TimeZone berlin("Europe/Berlin");
  CHECK_FALSE(berlin.is_utc());
  CHECK(berlin.offset_at(at("2026-01-15T12:00:00")) == 3600);
  CHECK(berlin.offset_at(at("2026-07-15T12:00:00")) == 7200);
  CHECK(berlin.offset_at(at("2026-03-29T00:59:59")) == 3600);  // the change is at 01:00 UTC
  CHECK(berlin.offset_at(at("2026-03-29T01:00:00")) == 7200);
  // An ordinary time: one reading.
  CHECK(berlin.to_utc(at("2026-11-25T21:47:11")) == std::vector<Seconds>{at("2026-11-25T20:47:11")});
  // 02:30 on 25 October 2026 happened twice (03:00 CEST became 02:00 CET): two readings.
  CHECK(berlin.to_utc(at("2026-10-25T02:30:00")) ==
        std::vector<Seconds>{at("2026-10-25T00:30:00"), at("2026-10-25T01:30:00")});
  // 02:30 on 29 March 2026 never happened (02:00 CET became 03:00 CEST): read as CET.
  CHECK(berlin.to_utc(at("2026-03-29T02:30:00")) == std::vector<Seconds>{at("2026-03-29T01:30:00")});
  CHECK(TimeZone("UTC").is_utc());
  CHECK_THROWS_WITH_AS(
      TimeZone("Europe/Berln"),
      "unknown time zone 'Europe/Berln' (a zone database name such as Europe/Berlin, UTC, or "
      "local; is tzdata installed?)",
      std::invalid_argument);

  // A job submitted at the first 02:50 and started at the second 02:10 waited 20 minutes; it is not a
  // start before its submit.
  Trace t;
  JobRecord j;
  j.submit = at("2026-10-25T02:50:00");
  j.eligible = j.submit;
  j.start = at("2026-10-25T02:10:00");
  j.end = at("2026-10-25T02:40:00");
  t.jobs.push_back(j);
  wall_times_to_utc(t, 0, berlin);
  CHECK(t.jobs[0].submit == at("2026-10-25T00:50:00"));
  CHECK(t.jobs[0].start == at("2026-10-25T01:10:00"));
  CHECK(t.jobs[0].end == at("2026-10-25T01:40:00"));
}

TEST_CASE("real sacct output printed in Europe/Berlin reads as the same jobs as the UTC one") {
  // tests/oracle/recorded/17_site_files: the same sacct command run with TZ=UTC and TZ=Europe/Berlin.
  const auto admin =
      std::filesystem::path(SLURMTWIN_SOURCE_DIR) / "tests/oracle/recorded/17_site_files/run1/admin";
  TraceReadOptions utc, berlin, wrong;
  berlin.timezone = "Europe/Berlin";
  ReadReport r1, r2, r3;
  const auto a = read_trace({(admin / "sacct.txt").string()}, utc, r1);
  const auto b = read_trace({(admin / "sacct-local.txt").string()}, berlin, r2);
  const auto c = read_trace({(admin / "sacct-local.txt").string()}, wrong, r3);
  REQUIRE(a.jobs.size() == 24);
  REQUIRE(b.jobs.size() == a.jobs.size());
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    CAPTURE(i);
    CHECK(b.jobs[i].submit == a.jobs[i].submit);
    CHECK(b.jobs[i].eligible == a.jobs[i].eligible);
    CHECK(b.jobs[i].start == a.jobs[i].start);
    CHECK(b.jobs[i].end == a.jobs[i].end);
    CHECK(b.jobs[i].cancel == a.jobs[i].cancel);
    CHECK(b.jobs[i].runtime == a.jobs[i].runtime);
  }
  CHECK(c.jobs[0].submit - a.jobs[0].submit == 3600);  // read as UTC it would be an hour late
  // The job cancelled while pending (j009): cancelled at its recorded end, 30 s after its submit.
  const auto cancelled = std::count_if(a.jobs.begin(), a.jobs.end(), [](const JobRecord& j) {
    return j.cancel != kUnsetTime && j.start == kUnsetTime && j.cancel - j.submit == 30;
  });
  CHECK(cancelled == 1);
}

TEST_CASE("--timezone: an unknown zone is a usage error, a known one shifts the replay's jobs.sacct") {
  const auto admin =
      std::filesystem::path(SLURMTWIN_SOURCE_DIR) / "tests/oracle/recorded/17_site_files/run1/admin";
  const auto dir = testing::scratch_dir("cli_timezone");
  const auto bad =
      testing::run_cli("trace info --timezone Europe/Berln " + (admin / "sacct-local.txt").string());
  CHECK(bad.code == 2);
  CHECK(bad.out.find("--timezone: unknown time zone 'Europe/Berln'") != std::string::npos);

  // A replay of Berlin-time sacct writes its jobs.sacct in Berlin time too: job 1's Submit there is
  // the recorded one, as sacct printed it.
  const std::string site = testing::admin_site_options(admin);
  const auto out = (dir / "run").string();
  const auto r = testing::run_cli(fmt::format(
      "replay {} --trace {}/sacct-local.txt --timezone Europe/Berlin --out {}", site, admin.string(), out));
  REQUIRE(r.code == 0);
  const auto field = [](const std::string& table, const std::string& job, const std::string& column) {
    const auto lines = text::split(table, '\n');
    const auto header = text::split(lines.at(0), '|');
    const auto col =
        static_cast<std::size_t>(std::find(header.begin(), header.end(), column) - header.begin());
    for (const auto line : lines) {
      const auto f = text::split(line, '|');
      if (!f.empty() && f[0] == job && col < f.size()) return std::string(f[col]);
    }
    return std::string("absent");
  };
  const auto recorded = testing::slurp(admin / "sacct-local.txt");
  const auto simulated = testing::slurp(std::filesystem::path(out) / "jobs.sacct");
  CHECK(field(simulated, "1", "Submit") == field(recorded, "1", "Submit"));
  CHECK(field(recorded, "1", "Submit") != "absent");
}
