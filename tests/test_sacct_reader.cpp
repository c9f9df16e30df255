#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "test_support.hpp"
#include "traces/file_io.hpp"
#include "traces/read_report.hpp"
#include "traces/readers.hpp"
#include "traces/time_format.hpp"

using namespace slurmtwin;

namespace {

/// One reader run: its trace and report (lenient, rejects kept).
struct Run {
  Trace trace;
  ReadReport report;
  ReadOptions options;
};

void parse(Run& run, std::string_view content, std::string_view columns = {},
           const std::string& file = "t.log") {
  run.options.keep_rejects = true;
  RejectSink sink(run.report, run.options);
  read_sacct_parsable(content, file, run.trace, sink, columns);
}

void parse_json(Run& run, std::string_view content) {
  run.options.keep_rejects = true;
  RejectSink sink(run.report, run.options);
  read_sacct_json(content, "t.json", run.trace, sink);
}

const JobRecord* find(const Trace& t, std::uint64_t id, std::int32_t task = -1, std::int32_t het = -1) {
  for (const auto& j : t.jobs) {
    if (j.job_id == id && j.array_task == task && j.het_component == het) return &j;
  }
  return nullptr;
}

Seconds ts(const char* iso) {
  return parse_timestamp(iso).value();
}

std::uint64_t folded(const ReadReport& r, const std::string& kind) {
  const auto it = r.folded_by_kind.find(kind);
  return it == r.folded_by_kind.end() ? 0 : it->second;
}
std::uint64_t rejected(const ReadReport& r, const std::string& reason) {
  const auto it = r.rejected_by_reason.find(reason);
  return it == r.rejected_by_reason.end() ? 0 : it->second;
}

std::string fixture(const std::string& name) {
  const auto path = testing::data_file("sacct_fixtures/" + name);
  return path.empty() ? std::string() : read_input_file(path);
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// Real fixtures

TEST_CASE("sacct_simple.log: 4 jobs, JobNames with '|' recovered as the formatted reference has them") {
  const auto content = fixture("sacct_simple.log");
  if (content.empty()) return;
  const auto expected = fixture("sacct_simple_formatted_expected.log");
  Run run;
  parse(run, content);
  CHECK(run.report.records == 4);
  CHECK(run.report.accepted == 4);
  CHECK(run.report.rejected() == 0);
  CHECK(run.report.balanced());
  REQUIRE(run.trace.jobs.size() == 4);
  const char* names[] = {"job_00001", "job_0||0002", "job_0|0003", "job_|00004"};
  for (int i = 0; i < 4; ++i) {
    const auto& j = run.trace.jobs[static_cast<std::size_t>(i)];
    CHECK(j.job_id == static_cast<std::uint64_t>(i + 1));
    CHECK(run.trace.strings.name(j.name) == names[i]);
    CHECK(j.source_line == static_cast<std::uint64_t>(i + 2));
    // the reference output quotes names that contain '|'
    if (std::string_view(names[i]).find('|') != std::string_view::npos) {
      std::string quoted(1, '"');
      quoted.append(names[i]).push_back('"');
      CHECK(expected.find(quoted) != std::string::npos);
    }
  }
  const auto& j1 = run.trace.jobs[0];
  CHECK(run.trace.user_name(j1) == "user001");
  CHECK(run.trace.account_name(j1) == "account001");
  CHECK(run.trace.partition_name(j1) == "general-compute");
  CHECK(run.trace.qos_name(j1) == "general-compute");
  CHECK(j1.submit == ts("2021-12-10T14:23:28"));
  CHECK(j1.end == ts("2021-12-11T13:56:53"));
  CHECK(j1.runtime == 23 * 3600 + 33 * 60 + 25);
  CHECK(j1.time_limit == 3 * 86400);
  CHECK(j1.nodes == 1);
  CHECK(j1.req_cpus == 32);
  CHECK(j1.alloc_cpus == 32);
  CHECK(j1.mem_mb == 512000);  // "500G" on one node
  CHECK_FALSE(j1.mem_per_cpu);
  CHECK(j1.state == JobState::kCompleted);
  // "500G" is the job's total (mem TRES) spread over its 2 nodes
  CHECK(run.trace.jobs[2].nodes == 2);
  CHECK(run.trace.jobs[2].mem_mb == 256000);
  CHECK(run.trace.jobs[2].start == ts("2021-12-10T14:23:31"));
}

TEST_CASE("sacct_dump2101.log: 12 jobs, 2 steps folded, the truncated last line rejected") {
  const auto content = fixture("sacct_dump2101.log");
  if (content.empty()) return;
  Run run;
  parse(run, content);
  CHECK(run.report.records == 15);
  CHECK(run.report.accepted == 12);
  CHECK(folded(run.report, "job step") == 2);
  CHECK(run.report.folded() == 2);
  CHECK(rejected(run.report, "truncated record") == 1);
  CHECK(run.report.rejected() == 1);
  CHECK(run.report.balanced());
  REQUIRE(run.report.rejects.size() == 1);
  CHECK(run.report.rejects[0].line == 16);
  REQUIRE(run.trace.jobs.size() == 12);

  const auto* a = find(run.trace, 4744528, 255);
  REQUIRE(a != nullptr);
  CHECK(a->state == JobState::kCancelled);  // "CANCELLED by 89200431"
  CHECK(a->mem_mb == 2800);
  CHECK(a->mem_per_cpu);  // "2800Mc"
  CHECK(a->time_limit == 2 * 86400);
  CHECK(a->eligible == ts("2020-12-18T22:14:17"));
  CHECK(a->submit == ts("2020-12-18T22:12:16"));
  CHECK(run.trace.strings.name(a->constraints) == "CPU-E5645");
  CHECK(run.trace.qos_name(*a) == "general-compute");
  // two tasks of one array are two jobs
  CHECK(find(run.trace, 4810966, 372) != nullptr);
  CHECK(find(run.trace, 4810966, 400) != nullptr);

  const auto* b = find(run.trace, 4822203);
  REQUIRE(b != nullptr);
  CHECK(b->started_by == SchedulerPass::kBackfill);
  CHECK(b->priority == 162794);
  CHECK(b->runtime == 128930);
  CHECK(b->mem_mb == 550000);  // "550000Mn"
  CHECK_FALSE(b->mem_per_cpu);
  CHECK(b->alloc_cpus == 25);
  CHECK(b->time_limit == 2400 * 60);
  CHECK(b->state == JobState::kCompleted);  // the OUT_OF_MEMORY .extern step does not change the job
  CHECK(b->source_line == 8);

  const auto* c = find(run.trace, 4830973);
  REQUIRE(c != nullptr);
  CHECK(c->state == JobState::kTimeout);
  CHECK(run.trace.qos_name(*c) == "mrisupport");
  CHECK(run.trace.strings.name(find(run.trace, 4830974)->constraints) == "cpu-a|cpu-b");
  CHECK(run.trace.strings.name(find(run.trace, 4830975)->name) == "Job| Name003");
  CHECK(run.trace.strings.name(find(run.trace, 4830976)->name) == "Job| Name |003");
  CHECK(run.trace.strings.name(find(run.trace, 4830976)->constraints) == "cpu-a|cpu-b|gpu");
  CHECK(run.trace.strings.name(find(run.trace, 4830977)->name) == "Jo| bNa| me003");
  CHECK(find(run.trace, 4830977)->source_line == 15);
}

TEST_CASE("sacct_dump2110.log: one job, 2 steps, 3 duplicate records, one ambiguous line") {
  const auto content = fixture("sacct_dump2110.log");
  if (content.empty()) return;
  Run run;
  parse(run, content);
  CHECK(run.report.records == 7);
  CHECK(run.report.accepted == 1);
  CHECK(folded(run.report, "job step") == 2);
  // lines 5-7 repeat job 7957382 with the same Submit (after recovering '|' in Constraints, JobName
  // and SubmitLine)
  CHECK(folded(run.report, "duplicate record") == 3);
  // line 8: "||cpu-a|cpu-b|gpu|||||" for Comment|Constraints|Container|ConsumedEnergy|
  // ConsumedEnergyRaw has three equally good readings (Constraints "cpu-a|cpu-b|gpu|",
  // "cpu-a|cpu-b" + Container "gpu||", "cpu-a" + "cpu-b|gpu||")
  CHECK(rejected(run.report, "ambiguous '|' in free-text field") == 1);
  CHECK(run.report.balanced());
  REQUIRE(run.report.rejects.size() == 1);
  CHECK(run.report.rejects[0].line == 8);
  REQUIRE(run.trace.jobs.size() == 1);
  const auto& j = run.trace.jobs[0];
  CHECK(j.job_id == 7957382);
  CHECK(run.trace.strings.name(j.name) == "qlogin");
  CHECK(j.state == JobState::kCancelled);
  CHECK(j.started_by == SchedulerPass::kMain);
  CHECK(j.submit == 1633433172);
  CHECK(j.runtime == 56);
  CHECK(j.time_limit == 86400);
  CHECK(j.req_cpus == 1);
  CHECK(j.alloc_cpus == 2);
  CHECK(j.mem_mb == 4000);
  CHECK(j.priority == 1015655);
  CHECK(j.restarts == 0);
}

TEST_CASE("sacct_submitline_multiline.log: a SubmitLine over 5 physical lines is one step record") {
  const auto content = fixture("sacct_submitline_multiline.log");
  if (content.empty()) return;
  Run run;
  parse(run, content);
  // 18 physical data lines: lines 8-12 are one record (9067954.1), line 19 is blank
  CHECK(run.report.records == 13);
  CHECK(run.report.accepted == 2);
  CHECK(folded(run.report, "job step") == 7);
  CHECK(folded(run.report, "duplicate record") == 3);
  CHECK(rejected(run.report, "ambiguous '|' in free-text field") == 1);
  CHECK(run.report.rejected() == 1);
  CHECK(run.report.balanced());
  REQUIRE(run.report.rejects.size() == 1);
  CHECK(run.report.rejects[0].line == 18);
  const auto* j = find(run.trace, 9067954);
  REQUIRE(j != nullptr);
  CHECK(j->source_line == 4);
  CHECK(run.trace.user_name(*j) == "tonykew");
  CHECK(run.trace.strings.name(j->constraints) == "[q06*2&q07*2&q08*2&q09*2&u22*2&u23*2&u24*2&u25*2]");
  CHECK(j->nodes == 16);
  CHECK(j->req_cpus == 16);
  CHECK(j->alloc_cpus == 576);
  CHECK(j->mem_mb == 1024);  // ReqMem "16G" = the job's mem TRES over 16 nodes
  CHECK(j->time_limit == 5 * 3600);
  CHECK(j->runtime == 9600);
  CHECK(j->started_by == SchedulerPass::kBackfill);
  CHECK(j->state == JobState::kCompleted);

  ReadReport report;
  ReadOptions strict;
  strict.strict = true;
  RejectSink sink(report, strict);
  Trace trace;
  try {
    read_sacct_parsable(content, "multi.log", trace, sink);
    FAIL("strict mode must throw on the ambiguous line");
  } catch (const InputError& e) {
    CHECK(e.line() == 18);
    CHECK(std::string(e.what()).find("multi.log:18") != std::string::npos);
  }
}

// ------------------------------------------------------------------------------------------------
// Hand-made records

TEST_CASE("every Timelimit and TimelimitRaw form") {
  Run run;
  parse(run,
        "JobID|Timelimit|State\n"
        "1|5|COMPLETED\n"
        "2|05:30|COMPLETED\n"
        "3|01:00:00|COMPLETED\n"
        "4|2-03|COMPLETED\n"
        "5|2-03:04|COMPLETED\n"
        "6|3-00:00:00|COMPLETED\n"
        "7|UNLIMITED|COMPLETED\n"
        "8|Partition_Limit|COMPLETED\n"
        "9||COMPLETED\n"
        "10|soon|COMPLETED\n");
  CHECK(find(run.trace, 1)->time_limit == 5 * 60);
  CHECK(find(run.trace, 2)->time_limit == 5 * 60 + 30);
  CHECK(find(run.trace, 3)->time_limit == 3600);
  CHECK(find(run.trace, 4)->time_limit == 2 * 86400 + 3 * 3600);
  CHECK(find(run.trace, 5)->time_limit == 2 * 86400 + 3 * 3600 + 4 * 60);
  CHECK(find(run.trace, 6)->time_limit == 3 * 86400);
  CHECK(find(run.trace, 7)->time_limit == kUnlimited);
  CHECK(find(run.trace, 8)->time_limit == kUnsetTime);
  CHECK(find(run.trace, 9)->time_limit == kUnsetTime);
  CHECK(find(run.trace, 10) == nullptr);
  CHECK(rejected(run.report, "bad Timelimit") == 1);
  REQUIRE(run.report.rejects.size() == 1);
  CHECK(run.report.rejects[0].line == 11);
  CHECK(run.report.rejects[0].field == "Timelimit");
  CHECK(run.report.balanced());

  Run raw;
  parse(raw, "JobIDRaw|TimelimitRaw\n1|2880\n2|UNLIMITED\n3|Partition_Limit\n4|-3\n");
  CHECK(find(raw.trace, 1)->time_limit == 2880 * 60);
  CHECK(find(raw.trace, 2)->time_limit == kUnlimited);
  CHECK(find(raw.trace, 3)->time_limit == kUnsetTime);
  CHECK(rejected(raw.report, "bad TimelimitRaw") == 1);
}

TEST_CASE("ReqMem forms: per CPU, per node, new total form, whole node, ReqTRES fallback") {
  Run run;
  parse(run,
        "JobID|NNodes|ReqMem|ReqTRES\n"
        "1|1|4000Mc|cpu=4,mem=16000M,node=1\n"
        "2|2|4000Mn|cpu=4,mem=8000M,node=2\n"
        "3|2|8G|cpu=4,mem=8G,node=2\n"
        "4|1|0|cpu=4,node=1\n"
        "5|2||cpu=4,mem=3000M,node=2\n"
        "6|1||cpu=4,node=1\n"
        "7|1|lots|cpu=4\n");
  CHECK(find(run.trace, 1)->mem_mb == 4000);
  CHECK(find(run.trace, 1)->mem_per_cpu);
  CHECK(find(run.trace, 2)->mem_mb == 4000);
  CHECK_FALSE(find(run.trace, 2)->mem_per_cpu);
  CHECK(find(run.trace, 3)->mem_mb == 4096);
  CHECK(find(run.trace, 4)->mem_mb == 0);
  CHECK(find(run.trace, 5)->mem_mb == 1500);
  CHECK(find(run.trace, 6)->mem_mb == -1);
  CHECK(find(run.trace, 7) == nullptr);
  CHECK(rejected(run.report, "bad ReqMem") == 1);
  CHECK(run.report.balanced());
}

TEST_CASE("ReqTRES gives GPUs (per job), CPUs and nodes when the plain columns are absent") {
  Run run;
  parse(run,
        "JobID|ReqTRES|AllocTRES\n"
        "1|billing=8,cpu=8,gres/gpu=2,gres/gpu:v100=2,mem=8G,node=2|cpu=10,node=2\n"
        "2|cpu=2,gres/gpu=1,node=1|\n"
        "3|cpu=x|\n");
  const auto* a = find(run.trace, 1);
  REQUIRE(a != nullptr);
  REQUIRE(a->gres.size() == 1);
  CHECK(a->gres[0] == GresRequest{"gpu", "v100", 2, false});
  CHECK(a->req_cpus == 8);
  CHECK(a->alloc_cpus == 10);
  CHECK(a->nodes == 2);
  CHECK(a->mem_mb == 4096);
  const auto* b = find(run.trace, 2);
  REQUIRE(b->gres.size() == 1);
  CHECK(b->gres[0] == GresRequest{"gpu", "", 1, false});
  CHECK(rejected(run.report, "bad ReqTRES") == 1);
}

TEST_CASE("array, pending array, het and step ids, steps fold, orphans are rejected") {
  Run run;
  parse(run,
        "JobID|State|Submit\n"
        "123_4|COMPLETED|2024-01-01T00:00:00\n"
        "123_4.batch|COMPLETED|2024-01-01T00:00:00\n"
        "123_4.extern|COMPLETED|2024-01-01T00:00:00\n"
        "123_[5-10%2]|PENDING|2024-01-01T00:00:00\n"
        "200+0|COMPLETED|2024-01-01T00:00:00\n"
        "200+1|COMPLETED|2024-01-01T00:00:00\n"
        "200+1.0|COMPLETED|2024-01-01T00:00:00\n"
        "300.0|COMPLETED|2024-01-01T00:00:00\n"
        "12a|COMPLETED|2024-01-01T00:00:00\n");
  CHECK(run.report.records == 9);
  CHECK(run.report.accepted == 4);
  CHECK(folded(run.report, "job step") == 3);
  CHECK(rejected(run.report, "orphan job step") == 1);
  CHECK(rejected(run.report, "bad JobID") == 1);
  CHECK(run.report.balanced());
  CHECK(find(run.trace, 123, 4) != nullptr);
  const auto* pending = find(run.trace, 123, -1);
  REQUIRE(pending != nullptr);  // one record for the whole pending remnant
  CHECK(pending->state == JobState::kPending);
  CHECK(find(run.trace, 200, -1, 0) != nullptr);
  CHECK(find(run.trace, 200, -1, 1) != nullptr);
  bool orphan_line_9 = false;
  for (const auto& r : run.report.rejects) orphan_line_9 |= (r.reason == "orphan job step" && r.line == 9);
  CHECK(orphan_line_9);
}

TEST_CASE("a step listed before its job still folds, a step of a rejected job is an orphan") {
  Run run;
  parse(run, "JobID|State\n7.batch|COMPLETED\n7|COMPLETED\n8|NOPE\n8.batch|COMPLETED\n");
  CHECK(run.report.accepted == 1);
  CHECK(folded(run.report, "job step") == 1);
  CHECK(rejected(run.report, "bad State") == 1);
  CHECK(rejected(run.report, "orphan job step") == 1);
  CHECK(run.report.balanced());
}

TEST_CASE("repeated JobID: same Submit is a duplicate, another Submit a requeued run") {
  Run run;
  parse(run,
        "JobID|Submit|Start|End|State|Elapsed\n"
        "400|2024-01-01T00:00:00|2024-01-01T00:10:00|2024-01-01T00:20:00|REQUEUED|00:10:00\n"
        "400|2024-01-01T00:00:00|2024-01-01T00:10:00|2024-01-01T00:20:00|REQUEUED|00:10:00\n"
        "400|2024-01-01T00:20:05|2024-01-01T00:30:00|2024-01-01T01:30:00|COMPLETED|01:00:00\n");
  CHECK(run.report.records == 3);
  CHECK(run.report.accepted == 1);
  CHECK(folded(run.report, "duplicate record") == 1);
  CHECK(folded(run.report, "requeued run") == 1);
  CHECK(run.report.balanced());
  const auto* j = find(run.trace, 400);
  REQUIRE(j != nullptr);
  CHECK(j->restarts == 1);
  CHECK(j->submit == ts("2024-01-01T00:00:00"));
  CHECK(j->start == ts("2024-01-01T00:30:00"));
  CHECK(j->end == ts("2024-01-01T01:30:00"));
  CHECK(j->runtime == 3600);
  CHECK(j->state == JobState::kCompleted);
}

TEST_CASE("states, Flags, Priority, Restarts, NTasks") {
  Run run;
  parse(run,
        "JobID|State|Flags|Priority|Restarts|NTasks|ReqCPUS\n"
        "1|CANCELLED by 1234|SchedSubmit|10|0|4|8\n"
        "2|OUT_OF_MEMORY|SchedMain,StartReceived|20|2||1\n"
        "3|NODE_FAIL|SchedBackfill|||2|2\n"
        "4|PREEMPTED||5|0||1\n");
  CHECK(find(run.trace, 1)->state == JobState::kCancelled);
  CHECK(find(run.trace, 1)->started_by == SchedulerPass::kSubmit);
  CHECK(find(run.trace, 1)->tasks == 4);
  CHECK(find(run.trace, 1)->req_cpus == 8);
  CHECK(find(run.trace, 2)->state == JobState::kOutOfMemory);
  CHECK(find(run.trace, 2)->started_by == SchedulerPass::kMain);
  CHECK(find(run.trace, 2)->restarts == 2);
  CHECK(find(run.trace, 2)->priority == 20);
  CHECK(find(run.trace, 3)->state == JobState::kNodeFail);
  CHECK(find(run.trace, 3)->started_by == SchedulerPass::kBackfill);
  CHECK(find(run.trace, 3)->priority == -1);
  CHECK(find(run.trace, 4)->state == JobState::kPreempted);
  CHECK(find(run.trace, 4)->started_by == SchedulerPass::kUnknown);
}

TEST_CASE("'|' in free text: empty-edged groups lose, ties are ambiguous, no free text = too many fields") {
  Run run;
  parse(run,
        "JobID|JobName|Comment|State\n"
        "1|a|||COMPLETED\n"        // JobName "a|" + Comment "" beats JobName "a" + Comment "|"
        "2|a|b|c|COMPLETED\n"      // "a|b" + "c" or "a" + "b|c": ambiguous
        "3|x|y|z|COMPLETED|4\n");  // State must be one token of its shape
  CHECK(run.trace.strings.name(find(run.trace, 1)->name) == "a|");
  CHECK(find(run.trace, 2) == nullptr);
  CHECK(rejected(run.report, "ambiguous '|' in free-text field") == 1);
  CHECK(rejected(run.report, "too many fields") == 1);
  CHECK(run.report.balanced());

  Run none;
  parse(none, "JobID|State\n1|COMPLETED|x\n2|COMPLETED\n");
  CHECK(rejected(none.report, "too many fields") == 1);
  CHECK(none.report.accepted == 1);
}

TEST_CASE("multi-line records join with newline, a truncated fragment before a record is rejected") {
  Run run;
  parse(run,
        "JobID|JobName|State\n"
        "1|first\n"
        "second|COMPLETED\n"
        "2|frag\n"
        "3|ok|COMPLETED\n"
        "4|tail");
  CHECK(run.report.records == 4);
  CHECK(run.report.accepted == 2);
  CHECK(rejected(run.report, "truncated record") == 2);
  CHECK(run.report.balanced());
  CHECK(run.trace.strings.name(find(run.trace, 1)->name) == "first\nsecond");
  CHECK(find(run.trace, 1)->source_line == 2);
  CHECK(find(run.trace, 3)->source_line == 5);
  REQUIRE(run.report.rejects.size() == 2);
  CHECK(run.report.rejects[0].line == 4);
  CHECK(run.report.rejects[1].line == 6);
}

TEST_CASE("no header: columns from --format (widths stripped), sacct -p trailing '|', CRLF") {
  Run run;
  parse(run, "5|alice|COMPLETED|01:00:00\n6|bob|FAILED|00:30:00\n", "JobID,User%20,State,Timelimit");
  CHECK(run.report.accepted == 2);
  CHECK(run.trace.user_name(*find(run.trace, 6)) == "bob");
  CHECK(find(run.trace, 6)->state == JobState::kFailed);
  CHECK(find(run.trace, 5)->source_line == 1);

  Run p;
  parse(p, "JobID|State|\r\n1|COMPLETED|\r\n2|TIMEOUT|\r\n");
  CHECK(p.report.accepted == 2);
  CHECK(find(p.trace, 2)->state == JobState::kTimeout);
}

TEST_CASE("strict mode throws InputError naming file, line and field") {
  ReadReport report;
  ReadOptions strict;
  strict.strict = true;
  RejectSink sink(report, strict);
  Trace trace;
  try {
    read_sacct_parsable("JobID|Timelimit\n1|01:00:00\n2|forever\n", "jobs.log", trace, sink);
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == "jobs.log");
    CHECK(e.line() == 3);
    CHECK(e.field() == "Timelimit");
    const std::string what = e.what();
    CHECK(what.find("jobs.log:3") != std::string::npos);
    CHECK(what.find("Timelimit") != std::string::npos);
    CHECK(what.find("forever") != std::string::npos);
  }
}

TEST_CASE("input that is not sacct output throws InputError") {
  Run run;
  CHECK_THROWS_AS(parse(run, ""), InputError);
  CHECK_THROWS_AS(parse(run, " \n\n"), InputError);
  CHECK_THROWS_AS(parse(run, std::string("\x1f\x8b\x08\0\0\0binary", 12)), InputError);
  CHECK_THROWS_WITH_AS(parse(run, "foo|bar|baz\n1|2|3\n"), doctest::Contains("no known sacct column"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse(run, "User|State\nalice|COMPLETED\n"), doctest::Contains("no JobID"),
                       InputError);
  CHECK_THROWS_AS(parse(run, "{\"jobs\": []}"), InputError);
  CHECK(run.trace.jobs.empty());
}

// ------------------------------------------------------------------------------------------------
// sacct --json

namespace {

// Slurm 21.08 / 22.05 shape: plain numbers, limit in minutes, state.current a string.
constexpr const char* kJson2108 = R"({
  "meta": {"plugin": {"type": "openapi/dbv0.0.37"}},
  "errors": [],
  "jobs": [
    {
      "account": "acct1", "allocation_nodes": 1,
      "array": {"job_id": 0, "limits": {"max": {"running": {"tasks": 0}}}, "task": null, "task_id": null},
      "constraints": "", "flags": ["CLEAR_SCHEDULING", "STARTED_ON_BACKFILL"],
      "het": {"job_id": 0, "job_offset": null},
      "job_id": 1001, "name": "train", "partition": "gpu", "priority": 4242, "qos": "normal",
      "required": {"CPUs": 4, "memory": 16000},
      "restart_cnt": 0,
      "state": {"current": "COMPLETED", "reason": "None"},
      "steps": [{"step": {"id": "1001.batch", "name": "batch"}}],
      "time": {"elapsed": 3600, "eligible": 1633433172, "end": 1633440372, "limit": 120,
               "start": 1633436772, "submission": 1633433172, "suspended": 0},
      "tres": {"allocated": [{"type": "cpu", "name": null, "id": 1, "count": 4},
                             {"type": "node", "name": null, "id": 4, "count": 1}],
               "requested": [{"type": "cpu", "name": null, "id": 1, "count": 4},
                             {"type": "mem", "name": null, "id": 2, "count": 16000},
                             {"type": "node", "name": null, "id": 4, "count": 1},
                             {"type": "gres", "name": "gpu", "id": 1001, "count": 2}]},
      "user": "alice"
    },
    {
      "account": "acct1",
      "array": {"job_id": 1002, "task_id": 3, "task": null, "limits": {"max": {"running": {"tasks": 4}}}},
      "het": {"job_id": 0, "job_offset": null},
      "job_id": 1005, "name": "sweep", "partition": "cpu", "priority": 10, "qos": "normal",
      "required": {"CPUs": 2, "memory": 9223372036854777808},
      "state": {"current": "FAILED", "reason": "NonZeroExitCode"},
      "time": {"elapsed": 60, "eligible": 1633433172, "end": 1633436832, "limit": 4294967295,
               "start": 1633436772, "submission": 1633433172},
      "user": "bob"
    }
  ]
})";

// Slurm 23.02+ shape: numbers as {"set","infinite","number"}, state.current a list.
constexpr const char* kJson2311 = R"({
  "jobs": [
    {
      "account": "acct2",
      "array": {"job_id": 0, "task_id": {"set": false, "infinite": false, "number": 0}, "task": ""},
      "het": {"job_id": 2000, "job_offset": {"set": true, "infinite": false, "number": 1}},
      "job_id": 2001, "name": "het part", "partition": "cpu",
      "priority": {"set": true, "infinite": false, "number": 777}, "qos": "high",
      "required": {"CPUs": 8, "memory_per_cpu": {"set": true, "infinite": false, "number": 2000},
                   "memory_per_node": {"set": false, "infinite": false, "number": 0}},
      "restart_cnt": 2, "flags": ["STARTED_ON_SCHEDULE"],
      "state": {"current": ["COMPLETED"], "reason": "None"},
      "time": {"elapsed": 100, "eligible": 1700000000, "end": 1700000200,
               "limit": {"set": true, "infinite": true, "number": 0},
               "start": 1700000100, "submission": 1700000000},
      "tres": {"requested": [{"type": "node", "count": 2}, {"type": "gres", "name": "gpu:a100", "count": 4}]},
      "user": "carol"
    },
    {
      "account": "acct2",
      "array": {"job_id": 3000, "task_id": {"set": false, "infinite": false, "number": 0}, "task": "5-10%2"},
      "het": {"job_id": 0, "job_offset": {"set": false, "infinite": false, "number": 0}},
      "job_id": 3000, "name": "pend", "partition": "cpu", "qos": "high",
      "required": {"CPUs": 1, "memory_per_node": {"set": true, "infinite": false, "number": 1000}},
      "state": {"current": ["PENDING"], "reason": "Priority"},
      "time": {"elapsed": 0, "eligible": 1700000000, "end": 0,
               "limit": {"set": true, "infinite": false, "number": 30}, "start": 0, "submission": 1700000000},
      "user": "carol"
    },
    {
      "account": "acct2", "job_id": 2001, "name": "het part", "partition": "cpu",
      "het": {"job_id": 2000, "job_offset": {"set": true, "infinite": false, "number": 1}},
      "state": {"current": ["COMPLETED"]},
      "time": {"submission": 1700000000, "start": 1700000100, "end": 1700000200, "elapsed": 100},
      "user": "carol"
    },
    {"job_id": 4000, "state": {"current": ["SLEEPY"]}, "user": "dave"},
    {"job_id": 5000, "time": {"submission": "yesterday"}, "user": "erin"}
  ]
})";

}  // namespace

TEST_CASE("sacct --json, Slurm 21.08/22.05 shape") {
  Run run;
  parse_json(run, kJson2108);
  CHECK(run.report.records == 2);
  CHECK(run.report.accepted == 2);
  CHECK(run.report.balanced());
  const auto* a = find(run.trace, 1001);
  REQUIRE(a != nullptr);
  CHECK(run.trace.user_name(*a) == "alice");
  CHECK(run.trace.account_name(*a) == "acct1");
  CHECK(run.trace.partition_name(*a) == "gpu");
  CHECK(run.trace.qos_name(*a) == "normal");
  CHECK(run.trace.strings.name(a->name) == "train");
  CHECK(a->constraints == kNoName);
  CHECK(a->submit == 1633433172);
  CHECK(a->start == 1633436772);
  CHECK(a->end == 1633440372);
  CHECK(a->runtime == 3600);
  CHECK(a->time_limit == 120 * 60);
  CHECK(a->req_cpus == 4);
  CHECK(a->alloc_cpus == 4);
  CHECK(a->nodes == 1);
  CHECK(a->mem_mb == 16000);
  CHECK_FALSE(a->mem_per_cpu);
  REQUIRE(a->gres.size() == 1);
  CHECK(a->gres[0] == GresRequest{"gpu", "", 2, false});
  CHECK(a->state == JobState::kCompleted);
  CHECK(a->started_by == SchedulerPass::kBackfill);
  CHECK(a->priority == 4242);
  CHECK(a->source_line > 1);

  const auto* b = find(run.trace, 1002, 3);  // array task: master id + task id
  REQUIRE(b != nullptr);
  CHECK(b->mem_mb == 2000);  // MEM_PER_CPU bit set
  CHECK(b->mem_per_cpu);
  CHECK(b->time_limit == kUnlimited);  // INFINITE as a plain number
  CHECK(b->state == JobState::kFailed);
  CHECK(b->array_max_running == 4);  // --array=...%4
  CHECK(a->array_max_running == 0);
}

TEST_CASE("sacct --json, Slurm 23.x shape: number objects, state lists, het, pending array, bad jobs") {
  Run run;
  parse_json(run, kJson2311);
  CHECK(run.report.records == 5);
  CHECK(run.report.accepted == 2);
  CHECK(folded(run.report, "duplicate record") == 1);
  CHECK(rejected(run.report, "bad state") == 1);
  CHECK(rejected(run.report, "bad time.submission") == 1);
  CHECK(run.report.balanced());
  const auto* h = find(run.trace, 2000, -1, 1);
  REQUIRE(h != nullptr);
  CHECK(h->priority == 777);
  CHECK(h->time_limit == kUnlimited);
  CHECK(h->mem_mb == 2000);
  CHECK(h->mem_per_cpu);
  CHECK(h->req_cpus == 8);
  CHECK(h->nodes == 2);
  CHECK(h->restarts == 2);
  CHECK(h->started_by == SchedulerPass::kMain);
  REQUIRE(h->gres.size() == 1);
  CHECK(h->gres[0] == GresRequest{"gpu", "a100", 4, false});
  CHECK(h->state == JobState::kCompleted);
  const auto* p = find(run.trace, 3000, -1);
  REQUIRE(p != nullptr);
  CHECK(p->state == JobState::kPending);
  CHECK(p->start == kUnsetTime);
  CHECK(p->runtime == kUnsetTime);
  CHECK(p->time_limit == 30 * 60);
  CHECK(p->mem_mb == 1000);
  CHECK_FALSE(p->mem_per_cpu);

  ReadReport report;
  ReadOptions strict;
  strict.strict = true;
  RejectSink sink(report, strict);
  Trace trace;
  CHECK_THROWS_WITH_AS(read_sacct_json(kJson2311, "s.json", trace, sink), doctest::Contains("SLEEPY"),
                       InputError);
}

TEST_CASE("sacct --json: input that is not sacct JSON throws InputError") {
  Run run;
  CHECK_THROWS_AS(parse_json(run, ""), InputError);
  CHECK_THROWS_AS(parse_json(run, "{\"jobs\": [1, 2"), InputError);
  CHECK_THROWS_AS(parse_json(run, "{\"nodes\": []}"), InputError);
  CHECK_THROWS_AS(parse_json(run, "JobID|State\n1|COMPLETED\n"), InputError);
  CHECK_THROWS_AS(parse_json(run, std::string("\0\1\2", 3)), InputError);
  Run empty;
  parse_json(empty, "{\"jobs\": []}");
  CHECK(empty.report.records == 0);
  CHECK(empty.trace.jobs.empty());
}

TEST_CASE("SubmitLine gives the sbatch options sacct has no column for, and ReservationId the reservation") {
  Run run;
  parse(run,
        "JobID|User|Account|Partition|Submit|Start|End|Timelimit|State|ReqCPUS|Reservation|ReservationId|"
        "SubmitLine\n"
        "1|a|x|p|2026-01-01T00:00:00|2026-01-01T00:00:01|2026-01-01T00:01:00|10|COMPLETED|8|||"
        "sbatch --exclusive --ntasks-per-node=4 -c2 job.sh\n"
        "2|a|x|p|2026-01-01T00:00:00|2026-01-01T00:00:01|2026-01-01T00:01:00|10|COMPLETED|8|maint|3|"
        "sbatch --exclusive=user --ntasks-per-node 2 --cpus-per-task=4 job.sh\n"
        "3|a|x|p|2026-01-01T00:00:00|2026-01-01T00:00:01|2026-01-01T00:01:00|10|COMPLETED|8||7|"
        "sbatch -c x job.sh\n");
  const auto* j1 = find(run.trace, 1);
  REQUIRE(j1 != nullptr);
  CHECK(j1->exclusive);
  CHECK(j1->tasks_per_node == 4);
  CHECK(j1->cpus_per_task == 2);
  CHECK(j1->reservation_id == 0);
  const auto* j2 = find(run.trace, 2);
  REQUIRE(j2 != nullptr);
  CHECK_FALSE(j2->exclusive);  // --exclusive=user shares nodes with the user's own jobs: not modelled
  CHECK(j2->tasks_per_node == 2);
  CHECK(j2->cpus_per_task == 4);
  CHECK(run.trace.strings.name(j2->reservation) == "maint");
  CHECK(j2->reservation_id == 3);
  CHECK(find(run.trace, 3) == nullptr);
  CHECK(run.report.rejected_by_reason.at("bad SubmitLine") == 1);
  REQUIRE(run.report.rejects.size() == 1);
  CHECK(run.report.rejects[0].detail == "bad SubmitLine 'sbatch -c x job.sh': -c needs a count");
}

TEST_CASE("SubmitLine's --array / -a gives an array's task cap (%N)") {
  Run run;
  parse(run,
        "JobID|User|Account|Partition|Submit|Start|End|Timelimit|State|ReqCPUS|SubmitLine\n"
        "7_0|a|x|p|2026-01-01T00:00:00|2026-01-01T00:00:01|2026-01-01T00:01:00|10|COMPLETED|1|"
        "sbatch --array=0-9%2 job.sh\n"
        "8_1|a|x|p|2026-01-01T00:00:00|2026-01-01T00:00:01|2026-01-01T00:01:00|10|COMPLETED|1|"
        "sbatch -a 1-3%4 job.sh\n"
        "9_1|a|x|p|2026-01-01T00:00:00|2026-01-01T00:00:01|2026-01-01T00:01:00|10|COMPLETED|1|"
        "sbatch --array 1-3 job.sh -all\n"
        "10_1|a|x|p|2026-01-01T00:00:00|2026-01-01T00:00:01|2026-01-01T00:01:00|10|COMPLETED|1|"
        "sbatch --array=0-9%x job.sh\n");
  REQUIRE(find(run.trace, 7, 0) != nullptr);
  CHECK(find(run.trace, 7, 0)->array_max_running == 2);
  CHECK(find(run.trace, 8, 1)->array_max_running == 4);
  CHECK(find(run.trace, 9, 1)->array_max_running == 0);  // no cap; "-all" is the script's argument
  // An --array sbatch would refuse is a bad field, not a silent "no cap".
  CHECK(find(run.trace, 10, 1) == nullptr);
  REQUIRE(run.report.rejects.size() == 1);
  CHECK(run.report.rejects[0].detail == "bad SubmitLine 'sbatch --array=0-9%x job.sh': bad --array '0-9%x'");

  // A dump taken while an array still pends: its remnant's JobID gives the cap to the tasks that ran
  // (an --array in the script's #SBATCH lines is in no SubmitLine).
  Run live;
  parse(live,
        "JobID|User|Account|Partition|Submit|Start|End|Timelimit|State|ReqCPUS\n"
        "11_0|a|x|p|2026-01-01T00:00:00|2026-01-01T00:00:01|2026-01-01T00:01:00|10|COMPLETED|1\n"
        "11_[1-3%2]|a|x|p|2026-01-01T00:00:00|Unknown|Unknown|10|PENDING|1\n"
        "12_0|a|x|p|2026-01-01T00:00:00|2026-01-01T00:00:01|2026-01-01T00:01:00|10|COMPLETED|1\n");
  REQUIRE(find(live.trace, 11, 0) != nullptr);
  CHECK(find(live.trace, 11, 0)->array_max_running == 2);
  CHECK(find(live.trace, 11, -1)->array_max_running == 2);  // the remnant itself
  CHECK(find(live.trace, 12, 0)->array_max_running == 0);
}
