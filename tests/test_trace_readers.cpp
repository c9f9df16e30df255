// SWF, Slurm-simulator events, Graham CSV and Eagle CSV readers: real files (counts and the first record,
// checked by hand against the file) and hand-written edge cases.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "test_support.hpp"
#include "traces/csv.hpp"
#include "traces/file_io.hpp"
#include "traces/readers.hpp"
#include "traces/swf_header.hpp"
#include "traces/text.hpp"

using namespace slurmtwin;
using slurmtwin::testing::data_file;

namespace {

/// One reader call on a string, in lenient or strict mode.
template <typename Fn>
ReadReport read_string(Fn fn, const std::string& content, Trace& trace, bool strict = false,
                       const std::string& file = "test.in") {
  ReadReport report;
  report.file = file;
  ReadOptions options;
  options.strict = strict;
  options.keep_rejects = true;
  RejectSink sink(report, options);
  fn(content, file, trace, sink);
  return report;
}

ReadReport read_path(void (*fn)(std::string_view, const std::string&, Trace&, RejectSink&),
                     const std::string& path, Trace& trace) {
  return read_string(fn, read_input_file(path), trace, false, path);
}

using testing::input_error;

const auto kSwf = [](std::string_view c, const std::string& f, Trace& t, RejectSink& s) {
  read_swf(c, f, t, s);
};
const auto kGraham = [](std::string_view c, const std::string& f, Trace& t, RejectSink& s) {
  read_graham_csv(c, f, t, s);
};
const auto kEagle = [](std::string_view c, const std::string& f, Trace& t, RejectSink& s) {
  read_eagle_csv(c, f, t, s);
};

/// user -> default account from "add user Name=... DefaultAccount=..." lines of a sacctmgr script.
std::map<std::string, std::string> default_accounts(const std::string& script) {
  std::map<std::string, std::string> out;
  for (const auto line : text::split(script, '\n')) {
    const auto words = text::split_ws(line);
    if (words.size() < 3 || !text::iequals(words[0], "add") || !text::iequals(words[1], "user")) continue;
    std::string user, account;
    for (const auto w : words) {
      if (text::starts_with_i(w, "name=")) user = std::string(w.substr(5));
      if (text::starts_with_i(w, "defaultaccount=")) account = std::string(w.substr(15));
    }
    if (!user.empty() && !account.empty()) out[user] = account;
  }
  return out;
}

const std::map<std::string, std::string> kAccounts = {{"alice", "physics"}, {"bob", "chem"}};

ReadReport read_events_string(const std::string& content, Trace& trace, bool strict = false) {
  return read_string([](std::string_view c, const std::string& f, Trace& t,
                        RejectSink& s) { read_events(c, f, t, s, kAccounts); },
                     content, trace, strict, "w.events");
}

}  // namespace

// ---------------------------------------------------------------------------------------------- SWF

// The file is named "first3171" and the data README says 3,171 jobs, but it holds 23 header lines,
// 3,170 job lines (job numbers 1..7183 with gaps) and a last line with a single space: 3,170 jobs.
TEST_CASE("SWF: HPC2N 'first3171' (3,170 job lines), header directives and the first record") {
  const auto path = data_file("swf/hpc2n-first3171.swf");
  if (path.empty()) return;
  const auto content = read_input_file(path);
  const auto h = parse_swf_header(content, path);
  CHECK(h.unix_start_time == 1027839845);
  CHECK(h.time_zone == 3600);
  CHECK(h.time_zone_string == "Europe/Stockholm");
  CHECK(h.max_nodes == 240);
  CHECK(h.max_procs == 240);
  CHECK(h.max_jobs == 527371);
  CHECK(h.version == "2.2");
  CHECK(h.computer == "Linux cluster (Seth)");
  REQUIRE(h.partitions.size() == 2);
  CHECK(h.partitions[1] == "2 ALL");
  REQUIRE(h.queues.size() == 1);
  CHECK(h.queues[0] == "1 [fque:1]");

  Trace t;
  const auto r = read_path(read_swf, path, t);
  CHECK(r.balanced());
  CHECK(r.records == 3170);
  CHECK(r.accepted == 3170);
  CHECK(r.rejected() == 0);
  REQUIRE(t.jobs.size() == 3170);
  CHECK(t.jobs.back().job_id == 7183);
  CHECK(t.origin == 1027839845);
  // "1 0 308434 31405 30 31405 -1 30 37980 -1 1 1 1 -1 -1 1 -1 -1"
  const auto& j = t.jobs[0];
  CHECK(j.job_id == 1);
  CHECK(j.submit == 1027839845);
  CHECK(j.start == 1027839845 + 308434);
  CHECK(j.runtime == 31405);
  CHECK(j.end == 1027839845 + 308434 + 31405);
  CHECK(j.req_cpus == 30);
  CHECK(j.tasks == 30);
  CHECK(j.alloc_cpus == 30);
  CHECK(j.nodes == 0);
  CHECK(j.time_limit == 37980);
  CHECK(j.mem_mb == -1);
  CHECK(j.state == JobState::kCompleted);
  CHECK(t.user_name(j) == "u1");
  CHECK(t.account_name(j) == "g1");
  CHECK(t.partition_name(j) == "p1");
  CHECK(j.qos == kNoName);
  CHECK(j.source_line == 24);
  // job 16: "16 347726 5 -1 8 240379 -1 8 345600 -1 -1 5 1 ..." (run time and status missing)
  const auto& k = t.jobs[10];
  CHECK(k.job_id == 16);
  CHECK(k.runtime == kUnsetTime);
  CHECK(k.end == kUnsetTime);
  CHECK(k.start == 1027839845 + 347726 + 5);
  CHECK(k.state == JobState::kUnknown);
  CHECK(t.user_name(k) == "u5");
}

TEST_CASE("SWF: NASA iPSC (gzip), Lublin and the semicolon-separated jobs500 variant") {
  SUBCASE("NASA iPSC/860 cleaned log: 18,239 jobs, no waits recorded") {
    const auto path = data_file("swf/NASA-iPSC-1993-3.1-cln.swf.gz");
    if (path.empty()) return;
    Trace t;
    const auto r = read_path(read_swf, path, t);
    CHECK(r.balanced());
    CHECK(r.accepted == 18239);
    CHECK(r.rejected() == 0);
    CHECK(t.origin == 749458803);
    // "1 0 -1 1451 128 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1"
    const auto& j = t.jobs.at(0);
    CHECK(j.submit == 749458803);
    CHECK(j.start == kUnsetTime);  // wait -1
    CHECK(j.end == kUnsetTime);
    CHECK(j.runtime == 1451);
    CHECK(j.req_cpus == 128);  // requested -1: falls back to allocated
    CHECK(j.time_limit == kUnsetTime);
    CHECK(j.state == JobState::kUnknown);
    CHECK(j.partition == kNoName);
    CHECK(t.user_name(j) == "u1");
    // "57 25574 -1 10 1 -1 -1 -1 -1 -1 -1 4 1 2 ..." has an executable number
    CHECK(t.jobs.at(5).job_id == 57);
    CHECK(t.strings.name(t.jobs.at(5).name) == "app2");
  }
  SUBCASE("Lublin-Feitelson synthetic: 10,000 jobs, no UnixStartTime, queue as partition") {
    const auto path = data_file("swf/lublin_256.swf");
    if (path.empty()) return;
    Trace t;
    t.origin = 1000;  // no UnixStartTime: submit counts from the trace's origin
    const auto r = read_path(read_swf, path, t);
    CHECK(r.balanced());
    CHECK(r.accepted == 10000);
    const auto h = parse_swf_header(read_input_file(path));
    CHECK_FALSE(h.unix_start_time.has_value());
    CHECK(h.max_nodes == 256);
    CHECK(h.max_runtime == 162754);
    // "1 5094 -1 12072 16 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1"
    const auto& j = t.jobs.at(0);
    CHECK(j.submit == 1000 + 5094);
    CHECK(j.runtime == 12072);
    CHECK(j.req_cpus == 16);
    CHECK(j.state == JobState::kCompleted);
    CHECK(j.user == kNoName);
    CHECK(t.partition_name(j) == "q0");
  }
  SUBCASE("jobs500: ';' separated, names for user, group, queue and partition") {
    const auto path = data_file("swf/jobs500.swf");
    if (path.empty()) return;
    Trace t;
    const auto r = read_path(read_swf, path, t);
    CHECK(r.balanced());
    CHECK(r.accepted == 500);
    // "1001;0;-1;15;12;-1;-1;-1;420;-1;-1;user5;account2;-1;normal;normal;;-1;"
    const auto& j = t.jobs.at(0);
    CHECK(j.job_id == 1001);
    CHECK(j.submit == 0);
    CHECK(j.runtime == 15);
    CHECK(j.req_cpus == 12);
    CHECK(j.time_limit == 420);
    CHECK(t.user_name(j) == "user5");
    CHECK(t.account_name(j) == "account2");
    CHECK(t.partition_name(j) == "normal");
    CHECK(t.qos_name(j) == "normal");
    CHECK(t.jobs.at(6).runtime == kUnsetTime);  // 1007: run time -1
    CHECK(t.jobs.at(7).runtime == 0);           // 1008: run time 0 is a real value
  }
}

TEST_CASE("SWF: -1 fields, statuses, partial executions and rejections by reason") {
  const std::string swf =
      "; UnixStartTime: 1000000\n"
      "; MaxProcs: 64\n"
      "; Note: first line\n"
      ";       second line\n"
      "1 10 5 100 4 -1 -1 8 600 2048 1 7 3 12 2 1 -1 -1\n"     // full record
      "2 20 -1 -1 -1 -1 -1 4 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"  // only submit and procs
      "3 30 0 50 2 -1 -1 -1 -1 -1 5 7 3 -1 -1 -1 -1 -1\n"      // cancelled, procs from allocated
      "3 30 0 20 2 -1 -1 -1 -1 -1 2 7 3 -1 -1 -1 -1 -1\n"      // partial execution of job 3: folded
      "4 40 0 20 2 -1 -1 -1 -1 -1 4 7 3 -1 -1 -1 -1 -1\n"      // partial line without summary: a job
      "5 -7 0 20 2 -1 -1 -1 -1 -1 1 7 3 -1 -1 -1 -1 -1\n"      // negative submit
      "6 50 0 -1 -1 -1 -1 -1 -1 -1 1 7 3 -1 -1 -1 -1 -1\n"     // no run time, no processors
      "7 60 0 20 2 -1 -1 -1 -1 -1 1 7 3\n"                     // 13 fields
      "8 70 0 2x0 2 -1 -1 -1 -1 -1 1 7 3 -1 -1 -1 -1 -1\n"     // junk run time
      "9 80 0 20 2 -1 -1 -1 -1 -1 9 7 3 -1 -1 -1 -1 -1\n"      // status 9
      "10 90 0 20 -1 -1 -1 -1 -1 -1 1 7 3 -1 -1 -1 -1 -1\n"    // run time but no processors
      "11 95 -3 20 2 -1 -1 -1 -1 -1 1 7 3 -1 -1 -1 -1 -1\n";   // negative wait other than -1
  Trace t;
  const auto r = read_string(kSwf, swf, t);
  CHECK(r.balanced());
  CHECK(r.records == 12);
  CHECK(r.accepted == 4);
  CHECK(r.folded_by_kind.at("partial execution") == 1);
  CHECK(r.rejected_by_reason.at("negative submit time") == 1);
  CHECK(r.rejected_by_reason.at("no run time and no processor count") == 1);
  CHECK(r.rejected_by_reason.at("wrong field count") == 1);
  CHECK(r.rejected_by_reason.at("bad run time") == 1);
  CHECK(r.rejected_by_reason.at("bad status") == 1);
  CHECK(r.rejected_by_reason.at("no processor count") == 1);
  CHECK(r.rejected_by_reason.at("bad wait time") == 1);
  REQUIRE(t.jobs.size() == 4);
  const auto& a = t.jobs[0];
  CHECK(a.submit == 1000010);
  CHECK(a.start == 1000015);
  CHECK(a.end == 1000115);
  CHECK(a.req_cpus == 8);  // requested wins over allocated
  CHECK(a.alloc_cpus == 4);
  CHECK(a.time_limit == 600);
  CHECK(a.mem_mb == 2);  // 2048 KB per processor
  CHECK(a.mem_per_cpu);
  CHECK(t.user_name(a) == "u7");
  CHECK(t.account_name(a) == "g3");
  CHECK(t.partition_name(a) == "p1");  // partition beats queue
  CHECK(t.strings.name(a.name) == "app12");
  const auto& b = t.jobs[1];
  CHECK(b.start == kUnsetTime);
  CHECK(b.runtime == kUnsetTime);
  CHECK(b.time_limit == kUnsetTime);
  CHECK(b.mem_mb == -1);
  CHECK(b.user == kNoName);
  CHECK(b.account == kNoName);
  CHECK(b.state == JobState::kUnknown);
  CHECK(t.jobs[2].state == JobState::kCancelled);
  CHECK(t.jobs[2].req_cpus == 2);
  CHECK(t.jobs[3].state == JobState::kFailed);
  CHECK(t.jobs[3].job_id == 4);
  const auto h = parse_swf_header(swf);
  CHECK(h.max_procs == 64);
  REQUIRE(h.notes.size() == 1);
  CHECK(h.notes[0] == "first line second line");
}

TEST_CASE("SWF: strict mode names file, line and field, unusable input is an InputError") {
  const std::string swf =
      "; UnixStartTime: 0\n1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n"
      "2 0 0 abc 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n";
  Trace t;
  const auto msg = input_error([&] { read_string(kSwf, swf, t, true, "x.swf"); });
  CHECK(msg.find("x.swf:3") != std::string::npos);
  CHECK(msg.find("run time") != std::string::npos);
  Trace lenient;
  const auto r = read_string(kSwf, swf, lenient);
  CHECK(r.balanced());
  CHECK(r.accepted == 1);
  REQUIRE(r.rejects.size() == 1);
  CHECK(r.rejects[0].line == 3);
  CHECK(r.rejects[0].field == "run time");

  Trace u;
  CHECK(input_error([&] { read_string(kSwf, "", u); }).find("empty input") != std::string::npos);
  CHECK(input_error([&] { read_string(kSwf, "  \n\n", u); }).find("empty input") != std::string::npos);
  CHECK(input_error([&] { read_string(kSwf, std::string("1 2\0\x7f 3", 7), u); }).find("binary") !=
        std::string::npos);
  CHECK(input_error([&] { read_string(kSwf, "\x1f\x8b\x08\x00garbage", u); }).find("compressed") !=
        std::string::npos);
  // a CSV file handed to the SWF reader: every record is wrong, so it is not SWF at all
  CHECK(input_error([&] { read_string(kSwf, "a,b,c\n1,2,3\n", u); }).find("none of its 2 records") !=
        std::string::npos);
  CHECK(input_error([&] { read_string(kSwf, "; UnixStartTime: soon\n", u); }).find("UnixStartTime") !=
        std::string::npos);
  // a truncated last line is one rejected record, the rest is kept
  Trace v;
  const auto cut = read_string(kSwf, "1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n2 5 0 10 1 -1", v);
  CHECK(cut.balanced());
  CHECK(cut.accepted == 1);
  CHECK(cut.rejected_by_reason.at("wrong field count") == 1);
  CHECK(u.jobs.empty());
  // Numbers beyond +-1e12 (a fuzz finding: "353e32" as a submit time overflowed the time sums) are
  // rejected by field; so is such a header value.
  Trace w;
  const auto huge = read_string(kSwf,
                                "1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n"
                                "2 353e32 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n"
                                "3 0 1e13 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n",
                                w);
  CHECK(huge.balanced());
  CHECK(huge.accepted == 1);
  CHECK(huge.rejected_by_reason.at("bad submit time") == 1);
  CHECK(huge.rejected_by_reason.at("bad wait time") == 1);
  CHECK(input_error([&] {
          read_string(kSwf, "; UnixStartTime: 9223372036854775807\n", u);
        }).find("UnixStartTime") != std::string::npos);
}

TEST_CASE("SWF: a truncated gzip file fails in read_input_file with an InputError") {
  const auto path = data_file("swf/NASA-iPSC-1993-3.1-cln.swf.gz");
  if (path.empty()) return;
  const auto dir = slurmtwin::testing::scratch_dir("swf_trunc");
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const auto all = bytes.str();
  const auto cut = dir / "cut.swf.gz";
  std::ofstream(cut, std::ios::binary) << all.substr(0, all.size() / 2);
  CHECK(input_error([&] { read_input_file(cut.string()); }).find("cut.swf.gz") != std::string::npos);
  std::filesystem::remove_all(dir);
}

// ------------------------------------------------------------------------------------------- events

TEST_CASE("events: real UB medium-cluster workloads") {
  const auto script = data_file("ub_medium/sacctmgr.script");
  if (script.empty()) return;
  const auto accounts = default_accounts(read_input_file(script));
  CHECK(accounts.at("user001") == "account001");
  const auto read = [&](const std::string& name, Trace& t) {
    ReadReport report;
    report.file = name;
    ReadOptions options;
    RejectSink sink(report, options);
    read_events(read_input_file(data_file("ub_medium/" + name)), name, t, sink, accounts);
    return report;
  };
  SUBCASE("workload_week: 19,579 jobs, first line by hand") {
    Trace t;
    t.origin = 1600000000;
    const auto r = read("workload_week.events", t);
    CHECK(r.balanced());
    CHECK(r.records == 19579);
    CHECK(r.accepted == 19579);
    REQUIRE(t.jobs.size() == 19579);
    // -dt 10.50 ... -sim-walltime 84805.00 --uid=user001 -J jobid_00001 -N 1 -n 32 -t 3-00:00:00
    // -q general-compute -p general-compute --mem=500G pseudo.job
    const auto& j = t.jobs[0];
    CHECK(j.job_id == 1);
    CHECK(j.submit == 1600000010);
    CHECK(j.runtime == 84805);
    CHECK(t.user_name(j) == "user001");
    CHECK(t.account_name(j) == "account001");
    CHECK(t.strings.name(j.name) == "jobid_00001");
    CHECK(j.nodes == 1);
    CHECK(j.tasks == 32);
    CHECK(j.req_cpus == 32);
    CHECK(j.time_limit == 3 * 86400);
    CHECK(t.qos_name(j) == "general-compute");
    CHECK(t.partition_name(j) == "general-compute");
    CHECK(j.mem_mb == 500 * 1024);
    CHECK_FALSE(j.mem_per_cpu);
    CHECK(j.state == JobState::kUnknown);
    CHECK(j.start == kUnsetTime);
    CHECK(t.jobs.back().job_id == 19579);
    CHECK(r.warnings.size() == 1);  // two --exclusive=user jobs
  }
  SUBCASE("workload_5k: 5,000 jobs") {
    Trace t;
    const auto r = read("workload_5k.events", t);
    CHECK(r.balanced());
    CHECK(r.accepted == 5000);
    CHECK(r.rejected() == 0);
  }
  SUBCASE("workload_short: 20 jobs, with --gres twice and --exclusive forms") {
    Trace t;
    const auto r = read("workload_short.events", t);
    CHECK(r.balanced());
    CHECK(r.accepted == 20);
    // line 14: -N 2 -n 80 ... --gres=gpu:2 --gres=gpu:2 --mem=180G
    const auto& g = t.jobs.at(13);
    CHECK(g.nodes == 2);
    CHECK(g.req_cpus == 80);
    REQUIRE(g.gres.size() == 1);
    CHECK(g.gres[0] == GresRequest{"gpu", "", 2, true});
    CHECK(t.jobs.at(15).exclusive);  // --exclusive=user
    CHECK(t.qos_name(t.jobs.at(15)) == "priority");
    CHECK(t.jobs.at(17).exclusive);  // --exclusive
    CHECK_FALSE(t.jobs.at(0).exclusive);
  }
  SUBCASE("test.events: 23 jobs in 26 lines, --ntasks-per-node and -cancel-in") {
    Trace t;
    const auto r = read("test.events", t);
    CHECK(r.balanced());
    CHECK(r.records == 23);
    CHECK(r.accepted == 23);
    // line 1: -N 1 and no -n: one task
    CHECK(t.jobs[0].tasks == 1);
    CHECK(t.jobs[0].req_cpus == 1);
    CHECK(t.jobs[0].time_limit == 300);
    CHECK(t.qos_name(t.jobs[0]) == "general-compute");
    CHECK(t.jobs[0].partition == kNoName);
    // line 10: -N 2 --ntasks-per-node=40 -> 80 tasks
    CHECK(t.jobs[8].source_line == 10);
    CHECK(t.jobs[8].tasks == 80);
    CHECK(t.jobs[8].tasks_per_node == 40);
    CHECK(t.jobs[8].req_cpus == 80);
    CHECK(t.jobs[8].submit == 2);
    // line 21: -dt 2.5 floors to 2
    CHECK(t.jobs[18].source_line == 21);
    CHECK(t.jobs[18].submit == 2);
    CHECK(t.user_name(t.jobs[18]) == "user002");
    // lines 16 and 25: -dt 3 with -cancel-in 10 and 10.5: scancel at 13 s
    for (const auto line : {16u, 25u}) {
      const auto j =
          std::find_if(t.jobs.begin(), t.jobs.end(), [&](const auto& x) { return x.source_line == line; });
      REQUIRE(j != t.jobs.end());
      CHECK(j->cancel == 13);
    }
    CHECK(std::count_if(t.jobs.begin(), t.jobs.end(), [](const auto& x) { return x.cancel != kUnsetTime; }) ==
          2);
    CHECK(r.warnings.empty());
  }
}

TEST_CASE("events: every option form") {
  const std::string ev =
      "# a comment line\n"
      "\n"
      "-dt 0 -e submit_batch_job | -sim-walltime 60 --uid=alice -N 2 -n 8 -c 4 -t 10 pseudo.job\n"
      "-dt 1.9 -e submit_batch_job | -sim-walltime 0 --uid alice --nodes=3 --ntasks 6 --cpus-per-task=2 "
      "--time=1:00:00 --partition=debug,general --qos normal --account=special --job-name 'my job' "
      "--constraint=CPU-Gold-6130 --dependency afterok:1 --exclusive --mem-per-cpu=2G -cancel-in 8.5 "
      "script.sh\n"
      "  -dt    2   -e   submit_batch_job   |   -sim-walltime   -1   --uid=bob   -N1   -n4   -t2-00:00:00 "
      "-p gpu -q   high -J x -C \"a&b\" -d afterany:2 --gres=gpu:v100:2,mps:100 --mem 1T job\n"
      "-dt 3 -e submit_batch_job | -sim-walltime 5.6 --uid=bob -N 2 --ntasks-per-node 16 -A other "
      "--gres=gpu pseudo.job\n"
      "-dt 4 -e submit_batch_job | -sim-walltime 5 --uid=bob --nodes 2-4 --gres gpu:2 -t UNLIMITED "
      "pseudo.job\n";
  Trace t;
  t.origin = 100;
  const auto r = read_events_string(ev, t);
  CHECK(r.balanced());
  CHECK(r.records == 5);
  REQUIRE(r.accepted == 5);
  const auto& a = t.jobs[0];
  CHECK(a.job_id == 1);
  CHECK(a.source_line == 3);
  CHECK(a.submit == 100);
  CHECK(a.runtime == 60);
  CHECK(a.nodes == 2);
  CHECK(a.tasks == 8);
  CHECK(a.cpus_per_task == 4);
  CHECK(a.req_cpus == 32);
  CHECK(a.time_limit == 600);
  CHECK(t.account_name(a) == "physics");  // default account of alice
  CHECK(a.mem_mb == -1);
  CHECK(a.qos == kNoName);
  CHECK(a.cancel == kUnsetTime);

  const auto& b = t.jobs[1];
  CHECK(b.job_id == 2);
  CHECK(b.submit == 101);  // floor(1.9)
  CHECK(b.runtime == 0);
  CHECK(b.nodes == 3);
  CHECK(b.tasks == 6);
  CHECK(b.req_cpus == 12);
  CHECK(b.time_limit == 3600);
  CHECK(t.partition_name(b) == "debug,general");
  CHECK(t.qos_name(b) == "normal");
  CHECK(t.account_name(b) == "special");  // -A beats the default
  CHECK(t.strings.name(b.name) == "my job");
  CHECK(t.strings.name(b.constraints) == "CPU-Gold-6130");
  CHECK(t.strings.name(b.dependency) == "afterok:1");
  CHECK(b.exclusive);
  CHECK(b.mem_mb == 2048);
  CHECK(b.mem_per_cpu);
  CHECK(b.cancel == 110);  // scancel at dt + 8.5 = 10.4 s after the origin

  const auto& c = t.jobs[2];
  CHECK(c.runtime == kUnlimited);  // -sim-walltime -1: runs until its time limit
  CHECK(c.nodes == 1);
  CHECK(c.tasks == 4);
  CHECK(c.time_limit == 2 * 86400);
  CHECK(t.user_name(c) == "bob");
  CHECK(t.account_name(c) == "chem");
  CHECK(t.qos_name(c) == "high");
  CHECK(t.strings.name(c.constraints) == "a&b");
  CHECK(t.strings.name(c.dependency) == "afterany:2");
  CHECK(c.mem_mb == 1024 * 1024);
  REQUIRE(c.gres.size() == 2);
  CHECK(c.gres[0] == GresRequest{"gpu", "v100", 2, true});
  CHECK(c.gres[1] == GresRequest{"mps", "", 100, true});

  const auto& d = t.jobs[3];
  CHECK(d.runtime == 6);  // 5.6 rounds to nearest
  CHECK(d.tasks == 32);   // -N 2 x --ntasks-per-node 16
  CHECK(d.tasks_per_node == 16);
  CHECK(d.req_cpus == 32);
  CHECK(t.account_name(d) == "other");
  REQUIRE(d.gres.size() == 1);
  CHECK(d.gres[0] == GresRequest{"gpu", "", 1, true});
  CHECK(d.time_limit == kUnsetTime);

  const auto& e = t.jobs[4];
  CHECK(e.nodes == 2);  // "2-4": the minimum
  CHECK(e.tasks == 2);  // no -n: one task per node
  CHECK(e.time_limit == kUnlimited);
  CHECK(e.gres.at(0).count == 2);
  CHECK(r.warnings.empty());
}

TEST_CASE("events: --nice, --begin now+N and --reservation, as sbatch reads them") {
  const std::string ev =
      "-dt 10 -e submit_batch_job | -sim-walltime 60 --uid=alice --nice --begin=now+90 job\n"
      "-dt 10.5 -e submit_batch_job | -sim-walltime 60 --uid=alice --nice=-5 -b now+2hours "
      "--reservation maint job\n"
      "-dt 11 -e submit_batch_job | -sim-walltime 60 --uid=alice --nice=7 --begin NOW+1Minute job\n"
      "-dt 12 -e submit_batch_job | -sim-walltime 60 --uid=alice --begin=now job\n";
  Trace t;
  t.origin = 1000;
  const auto r = read_events_string(ev, t);
  REQUIRE(r.accepted == 4);
  CHECK(t.jobs[0].nice == 100);  // --nice alone
  CHECK(t.jobs[0].eligible == 1010 + 90);
  CHECK(t.jobs[1].nice == -5);
  CHECK(t.jobs[1].eligible == 1010 + 2 * 3600);
  CHECK(t.strings.name(t.jobs[1].reservation) == "maint");
  CHECK(t.jobs[2].nice == 7);
  CHECK(t.jobs[2].eligible == 1011 + 60);
  CHECK(t.jobs[3].eligible == 1012);
  // A date or clock time names the day the toolkit ran, not a time of the trace: refused by reason.
  for (const char* bad : {"--begin=16:00", "--begin=2026-11-29T10:00:00", "--begin=now+5fortnights",
                          "--begin=now-5", "--nice=lots"}) {
    CAPTURE(bad);
    Trace u;
    const auto rb =
        read_events_string(fmt::format("-dt 0 -e submit_batch_job | -sim-walltime 6 --uid=alice {} job\n"
                                       "-dt 0 -e submit_batch_job | -sim-walltime 6 --uid=alice job\n",
                                       bad),
                           u);
    CHECK(rb.accepted == 1);
    CHECK(rb.rejected() == 1);
  }
}

TEST_CASE("events: --array makes one job per task, each a record, with the line's id and task cap") {
  const std::string ev =
      "-dt 0 -e submit_batch_job | -sim-walltime 60 --uid=alice --array=0-3%2 -J arr job\n"
      "-dt 1 -e submit_batch_job | -sim-walltime 60 --uid=alice -a 1,5 job\n"
      "-dt 2 -e submit_batch_job | -sim-walltime 60 --uid=alice job\n"
      "-dt 3 -e submit_batch_job | -sim-walltime 60 --uid=alice --array=3-1 job\n"
      "-dt 4 -e submit_batch_job | -sim-walltime 60 --uid=alice --array=0-100001 job\n";
  Trace t;
  const auto r = read_events_string(ev, t);
  CHECK(r.records == 4 + 2 + 1 + 1 + 1);  // a task is a record, as sacct lists it
  CHECK(r.accepted == 7);
  CHECK(r.rejected_by_reason.at("bad --array") == 2);  // a range backwards; 100,002 tasks
  CHECK(r.balanced());
  REQUIRE(t.jobs.size() == 7);
  for (int k = 0; k < 4; ++k) {
    CHECK(t.jobs[k].job_id == 1);
    CHECK(t.jobs[k].array_task == k);
    CHECK(t.jobs[k].array_max_running == 2);
  }
  CHECK(t.jobs[4].job_id == 2);
  CHECK(t.jobs[4].array_task == 1);
  CHECK(t.jobs[5].array_task == 5);
  CHECK(t.jobs[5].array_max_running == 0);
  CHECK(t.jobs[6].job_id == 3);  // the next line's id follows the array's
  CHECK(t.jobs[6].array_task == -1);
}

TEST_CASE("events: the --array lines of one file name at most 200,000 tasks") {
  // One line of a few bytes could otherwise make 100,001 jobs (the fuzzer's 16 KiB inputs: ~230 lines
  // of 100,001 tasks, 6 GB).
  std::string ev;
  for (int i = 0; i < 2; ++i)
    ev += fmt::format("-dt {} -e submit_batch_job | -sim-walltime 1 --uid=alice -a 0-99999 j\n", i);
  ev += "-dt 10 -e submit_batch_job | -sim-walltime 1 --uid=alice -a 0-1 j\n";
  ev += "-dt 11 -e submit_batch_job | -sim-walltime 1 --uid=alice j\n";
  Trace t;
  const auto r = read_events_string(ev, t);
  CHECK(r.accepted == 200'001);
  CHECK(r.rejected_by_reason.at("too many array tasks") == 1);
  CHECK(r.balanced());
  CHECK(t.jobs.back().array_task == -1);
}

TEST_CASE("events: -jid gives the job id (the UB toolkit's micro-cluster traces), once per id") {
  // jobs500.events of slurm_sim_tools' micro cluster: "-dt 0 -e submit_batch_job | -jid  1001
  // -sim-walltime 15 --uid=user5 ..." -- every line has -jid; before it was read, all 500 were refused.
  const std::string ev =
      "-dt 0 -e submit_batch_job | -jid  1001 -sim-walltime 15 --uid=alice -n 12 pseudo.job\n"
      "-dt 1 -e submit_batch_job | -jid 1002 -sim-walltime 15 --uid=alice -n 1 pseudo.job\n"
      "-dt 2 -e submit_batch_job | -sim-walltime 15 --uid=alice -n 1 pseudo.job\n"
      "-dt 3 -e submit_batch_job | -jid 1002 -sim-walltime 15 --uid=bob -n 1 pseudo.job\n"
      "-dt 4 -e submit_batch_job | -jid 0 -sim-walltime 15 --uid=bob -n 1 pseudo.job\n";
  Trace t;
  const auto r = read_events_string(ev, t);
  CHECK(r.balanced());
  CHECK(r.records == 5);
  REQUIRE(r.accepted == 3);
  CHECK(t.jobs[0].job_id == 1001);
  CHECK(t.jobs[1].job_id == 1002);
  CHECK(t.jobs[2].job_id == 1003);  // no -jid: one past the largest so far
  CHECK(r.rejected_by_reason.at("duplicate -jid") == 1);
  CHECK(r.rejected_by_reason.at("bad -jid") == 1);
}

TEST_CASE("events: bad lines are rejected by reason, strict mode names line and field") {
  const std::string good = "-dt 0 -e submit_batch_job | -sim-walltime 60 --uid=alice -N 1 pseudo.job\n";
  const std::string ev =
      good +
      "-dt 0 -e submit_batch_job | -sim-walltime 60 --uid=alice --foo=3 pseudo.job\n"   // unknown long
      "-dt 0 -e submit_batch_job | -sim-walltime 60 --uid=alice -x 3 pseudo.job\n"      // unknown short
      "-dt 0 -e submit_batch_job | -sim-walltime 60 --uid=carol pseudo.job\n"           // no account
      "-dt 0 -e submit_batch_job | -sim-walltime 60 --uid=alice -t soon pseudo.job\n"   // bad time
      "-dt 0 -e submit_batch_job | -sim-walltime 60 --uid=alice -N 0 pseudo.job\n"      // bad nodes
      "-dt 0 -e submit_batch_job | -sim-walltime 60 --uid=alice -n -4 pseudo.job\n"     // bad ntasks
      "-dt 0 -e submit_batch_job | -sim-walltime 60 --uid=alice --mem=4Q pseudo.job\n"  // bad mem
      "-dt 0 -e submit_batch_job | -sim-walltime 60 --uid=alice --mem=1G --mem-per-cpu=1G x\n"  // conflict
      "-dt 0 -e submit_batch_job | -sim-walltime 60 --uid=alice --gres=gpu:0 pseudo.job\n"      // bad gres
      "-dt 0 -e submit_batch_job | -sim-walltime -2 --uid=alice pseudo.job\n"                  // bad walltime
      "-dt 0 -e submit_batch_job | --uid=alice pseudo.job\n"                                   // no walltime
      "-dt 0 -e submit_batch_job | -sim-walltime 60 pseudo.job\n"                              // no uid
      "-dt -1 -e submit_batch_job | -sim-walltime 60 --uid=alice pseudo.job\n"                 // bad dt
      "-dt 0 -e cancel_job | -sim-walltime 60 --uid=alice pseudo.job\n"                        // event
      "-dt 0 -e submit_batch_job -sim-walltime 60 --uid=alice pseudo.job\n"                    // no '|'
      "-dt 0 -e submit_batch_job | -sim-walltime 60 --uid=alice a.job b.job\n"                 // 2 scripts
      "-dt 0 -e submit_batch_job | -sim-walltime 60 --uid=alice -J 'open pseudo.job\n"         // quote
      "-dt 0 -e submit_batch_job | -sim-walltime 60 --uid=alice -d afterwards:1 pseudo.job\n"  // bad
                                                                                               // dependency
      "-dt 0 -e submit_batch_job | -sim-walltime 60 --uid=alice -t\n";                         // no value
  Trace t;
  const auto r = read_events_string(ev, t);
  CHECK(r.balanced());
  CHECK(r.records == 20);
  CHECK(r.accepted == 1);
  const auto& by = r.rejected_by_reason;
  CHECK(by.at("unknown option --foo") == 1);
  CHECK(by.at("unknown option -x") == 1);
  CHECK(by.at("unknown default account for user") == 1);
  CHECK(by.at("bad --time") == 1);
  CHECK(by.at("bad --nodes") == 1);
  CHECK(by.at("bad --ntasks") == 1);
  CHECK(by.at("bad --mem") == 1);
  CHECK(by.at("conflicting --mem and --mem-per-cpu") == 1);
  CHECK(by.at("bad --gres") == 1);
  CHECK(by.at("bad -sim-walltime") == 1);
  CHECK(by.at("missing -sim-walltime") == 1);
  CHECK(by.at("missing --uid") == 1);
  CHECK(by.at("bad -dt") == 1);
  CHECK(by.at("unsupported event cancel_job") == 1);
  CHECK(by.at("missing '|'") == 1);
  CHECK(by.at("unexpected argument") == 1);
  CHECK(by.at("unclosed quote") == 1);
  CHECK(by.at("missing option value") == 1);
  CHECK(by.at("bad --dependency") == 1);
  CHECK(r.rejected() == 19);
  CHECK(t.jobs.size() == 1);
  CHECK(t.users.size() == 1);  // rejected lines intern no names

  Trace s;
  const auto msg = input_error([&] {
    read_events_string(good +
                           "\n-dt 0 -e submit_batch_job | -sim-walltime 60 "
                           "--uid=alice -t 99:99:99:99 pseudo.job\n",
                       s, true);
  });
  CHECK(msg.find("w.events:3") != std::string::npos);
  CHECK(msg.find("--time") != std::string::npos);
  CHECK(msg.find("99:99:99:99") != std::string::npos);
  const auto dep = input_error([&] {
    read_events_string(good + "-dt 0 -e submit_batch_job | -sim-walltime 60 --uid=alice -d afterok:1+5 x\n",
                       s, true);
  });
  CHECK(dep.find("w.events:2") != std::string::npos);
  CHECK(dep.find("--dependency") != std::string::npos);
  CHECK(dep.find("only allowed with after") != std::string::npos);

  Trace u;
  CHECK(input_error([&] { read_events_string("\n# only comments\n\n", u); }).empty());  // valid, no jobs
  CHECK(input_error([&] { read_events_string("", u); }).find("empty input") != std::string::npos);
  CHECK(input_error([&] { read_events_string(std::string("-dt 0\0\0\xff", 9), u); }).find("binary") !=
        std::string::npos);
  CHECK(input_error([&] {
          read_events_string("-dt 0 -e submit_batch_job | -sim-walltime 1 --uid=zed x\n", u);
        }).find("unknown default account for user") != std::string::npos);
  // a line cut in the middle is one rejected record
  Trace v;
  const auto cut = read_events_string(good + "-dt 5 -e submit_batch_job | -sim-wall", v);
  CHECK(cut.balanced());
  CHECK(cut.accepted == 1);
  CHECK(cut.rejected_by_reason.at("unknown option -sim-wall") == 1);
}

// ---------------------------------------------------------------------------------------------- CSV

TEST_CASE("CSV reader: RFC 4180 quoting, multi-line records, CRLF and blank lines") {
  const std::string in = "a,b,c\r\n\"x,1\",\"say \"\"hi\"\"\",\r\n\n1,\"two\nlines\",3\n\"\",,last";
  csv::Reader r(in, "t.csv");
  csv::Record rec;
  REQUIRE(r.next(rec));
  CHECK(rec.fields == std::vector<std::string>{"a", "b", "c"});
  CHECK(rec.line == 1);
  REQUIRE(r.next(rec));
  CHECK(rec.fields == std::vector<std::string>{"x,1", "say \"hi\"", ""});
  CHECK(rec.line == 2);
  REQUIRE(r.next(rec));
  CHECK(rec.fields == std::vector<std::string>{"1", "two\nlines", "3"});
  CHECK(rec.line == 4);
  CHECK(rec.text == "1,\"two\nlines\",3");
  REQUIRE(r.next(rec));
  CHECK(rec.fields == std::vector<std::string>{"", "", "last"});
  CHECK(rec.line == 6);
  CHECK_FALSE(r.next(rec));

  csv::Reader bad("a,b\n1,\"never closed\n2,3\n", "u.csv");
  REQUIRE(bad.next(rec));
  CHECK(input_error([&] { bad.next(rec); }).find("u.csv:2") != std::string::npos);
}

namespace {
const std::string kGrahamHeader =
    ",job_unique_id,submit_time,partition_id_x,account_id,req_cpus,req_mem_total,req_tres,alloc_nodes,state,"
    "priority_x,eligible_time,start_time,end_time,time_limit_sec,run_time_sec\n";
}

TEST_CASE("Graham CSV: quoted req_tres, memory per node, rejections by column") {
  const std::string csv =
      kGrahamHeader +
      "0,100,2021-05-01 00:00:10,55,18437,8,8000,\"billing=1,cpu=8,gres/gpu:v100=2,mem=8000M,node=1\",1,"
      "COMPLETED,42,2021-05-01 00:00:20,2021-05-01 00:01:00,2021-05-01 00:02:00,3600,60\n"
      "1,101,2021-05-01 00:00:10,55,18437,64,10000,\"cpu=64,mem=10000M,node=3\",3,TIMEOUT,7,"
      "2021-05-01 00:00:10,2021-05-01 00:01:00,2021-05-01 01:01:00,3600,3600\n"
      "2,102,yesterday,55,18437,8,8000,\"cpu=8\",1,COMPLETED,42,,,,3600,60\n"
      "3,103,2021-05-01 00:00:10,55,18437,8,8000,\"cpu=8\",1,DONE,42,,,,3600,60\n"
      "4,104,2021-05-01 00:00:10,55,18437,0,8000,\"cpu=8\",1,COMPLETED,42,,,,3600,60\n"
      "5,105,2021-05-01 00:00:10,55,18437,8,8000,\"cpu=eight\",1,COMPLETED,42,,,,3600,60\n"
      "6,106,2021-05-01 00:00:10,55,18437,8,8000,cpu=8,1,COMPLETED,42,,,,3600,60\n"  // an unquoted single
                                                                                     // TRES
      // More memory than any int64 holds (a fuzz finding: the conversion was undefined behaviour).
      "7,107,2021-05-01 00:00:10,55,18437,8,1e300,\"cpu=8\",1,COMPLETED,42,,,,3600,60\n";
  Trace t;
  const auto r = read_string(kGraham, csv, t);
  CHECK(r.balanced());
  CHECK(r.records == 8);
  CHECK(r.accepted == 3);
  CHECK(r.rejected_by_reason.at("bad req_mem_total") == 1);
  CHECK(r.rejected_by_reason.at("bad submit_time") == 1);
  CHECK(r.rejected_by_reason.at("bad state") == 1);
  CHECK(r.rejected_by_reason.at("bad req_cpus") == 1);
  CHECK(r.rejected_by_reason.at("bad req_tres") == 1);
  REQUIRE(t.jobs.size() == 3);
  const auto& a = t.jobs[0];
  CHECK(a.job_id == 100);
  CHECK(a.submit == 1619827210);  // date -u -d '2021-05-01 00:00:10' +%s
  CHECK(a.eligible == 1619827220);
  CHECK(a.start == 1619827260);
  CHECK(a.end == 1619827320);
  CHECK(a.time_limit == 3600);
  CHECK(a.runtime == 60);
  CHECK(a.priority == 42);
  CHECK(a.mem_mb == 8000);
  REQUIRE(a.gres.size() == 1);
  CHECK(a.gres[0] == GresRequest{"gpu", "v100", 2, false});
  CHECK(t.partition_name(a) == "part55");
  CHECK(t.account_name(a) == "acct18437");
  CHECK(t.user_name(a) == "acct18437");
  const auto& b = t.jobs[1];
  CHECK(b.nodes == 3);
  CHECK(b.mem_mb == 3334);  // ceil(10000 / 3) per node
  CHECK(b.state == JobState::kTimeout);
  CHECK(b.gres.empty());
  CHECK(t.jobs[2].start == kUnsetTime);  // empty optional times

  Trace s;
  const auto msg = input_error([&] { read_string(kGraham, csv, s, true, "g.csv"); });
  CHECK(msg.find("g.csv:4") != std::string::npos);
  CHECK(msg.find("submit_time") != std::string::npos);

  Trace u;
  CHECK(input_error([&] { read_string(kGraham, "a,b\n1,2\n", u); }).find("job_unique_id") !=
        std::string::npos);
  CHECK(input_error([&] { read_string(kGraham, "", u); }).find("empty input") != std::string::npos);
  // a file cut inside a quoted field
  CHECK(input_error([&] {
          read_string(kGraham, kGrahamHeader + "0,100,2021-05-01 00:00:10,55,1,8,8,\"cpu=8,", u);
        }).find("never closed") != std::string::npos);
  // a header alone is a valid file with no jobs
  const auto empty = read_string(kGraham, kGrahamHeader, u);
  CHECK(empty.records == 0);
  CHECK(empty.balanced());
}

TEST_CASE("Graham CSV: the 31 May 2021 files") {
  const auto first = data_file("graham/jobs_graham_2021-05-01.csv.xz");
  if (first.empty()) return;
  // per-file job counts (python csv module count of data rows)
  const std::map<int, std::uint64_t> expected = {
      {1, 1622},  {2, 2440},  {3, 3126},  {4, 868},   {5, 759},   {6, 2690},  {7, 4480},  {8, 1072},
      {9, 2484},  {10, 3148}, {11, 1432}, {12, 2567}, {13, 3560}, {14, 3880}, {15, 2781}, {16, 3932},
      {17, 929},  {18, 1784}, {19, 1482}, {20, 3156}, {21, 3095}, {22, 1803}, {23, 781},  {24, 2304},
      {25, 2682}, {26, 2158}, {27, 2807}, {28, 2466}, {29, 2198}, {30, 2129}, {31, 1845}};
  Trace t;
  ReadReport total;
  for (const auto& [day, count] : expected) {
    const auto path = data_file(fmt::format("graham/jobs_graham_2021-05-{:02}.csv.xz", day));
    REQUIRE_FALSE(path.empty());
    const auto r = read_path(read_graham_csv, path, t);
    CHECK_MESSAGE(r.accepted == count, path);
    CHECK(r.balanced());
    total.merge(r);
  }
  CHECK(total.accepted == 72460);
  CHECK(total.rejected() == 0);
  CHECK(t.jobs.size() == 72460);
  // first row of 05-01: 57992564, submit 2021-05-01 04:22:19, partition 55, account 18437, 20 CPUs,
  // 193024 MB, "billing=4,cpu=20,gres/gpu=4,mem=193024M,node=1", 1 node, CANCELLED, priority 1424171
  const auto& j = t.jobs[0];
  CHECK(j.job_id == 57992564);
  CHECK(j.submit == 1619842939);
  CHECK(j.eligible == 1619842939);
  CHECK(j.start == 1620690855);
  CHECK(j.end == 1620700382);
  CHECK(t.partition_name(j) == "part55");
  CHECK(t.account_name(j) == "acct18437");
  CHECK(j.req_cpus == 20);
  CHECK(j.nodes == 1);
  CHECK(j.mem_mb == 193024);
  REQUIRE(j.gres.size() == 1);
  CHECK(j.gres[0] == GresRequest{"gpu", "", 4, false});
  CHECK(j.state == JobState::kCancelled);
  CHECK(j.priority == 1424171);
  CHECK(j.time_limit == 259200);
  CHECK(j.runtime == 9527);
  CHECK(j.source_line == 2);
}

TEST_CASE("Eagle CSV: sample of 1,000 jobs and edge cases") {
  SUBCASE("real sample") {
    const auto path = data_file("eagle/sample_eagle_data.csv");
    if (path.empty()) return;
    Trace t;
    const auto r = read_path(read_eagle_csv, path, t);
    CHECK(r.balanced());
    CHECK(r.accepted == 1000);
    CHECK(r.rejected() == 0);
    // 532209,user0014,account0003,partition001,normal,172800.0,10,10,0,0.0,2019-01-01 08:55:55,
    // 2019-01-01 08:55:56,2019-01-02 12:39:41,99825.0,COMPLETED,name00005115,...
    const auto& j = t.jobs.at(0);
    CHECK(j.job_id == 532209);
    CHECK(t.user_name(j) == "user0014");
    CHECK(t.account_name(j) == "account0003");
    CHECK(t.partition_name(j) == "partition001");
    CHECK(t.qos_name(j) == "normal");
    CHECK(j.time_limit == 172800);
    CHECK(j.nodes == 10);
    CHECK(j.req_cpus == 10);
    CHECK(j.gres.empty());
    CHECK(j.mem_mb == -1);  // 0.0 = not requested
    CHECK(j.submit == 1546332955);
    CHECK(j.start == 1546332956);
    CHECK(j.end == 1546432781);
    CHECK(j.runtime == 99825);
    CHECK(j.state == JobState::kCompleted);
    CHECK(t.strings.name(j.name) == "name00005115");
  }
  SUBCASE("quoted fields, GPUs, memory per node, bad rows") {
    const std::string csv =
        "job_id,user,account,partition,qos,wallclock_req,nodes_req,processors_req,gpus_req,mem_req,"
        "submit_time,start_time,end_time,run_time,state,name\n"
        "1,u1,a1,p1,normal,3600.0,3,54,2,552000.0,2019-01-02 15:55:40,2019-01-02 15:55:41,2019-01-02 "
        "16:00:00,259.0,TIMEOUT,\"name, with comma\"\n"
        "2,u1,a1,p1,normal,3600.0,1,1,0,0.0,2019-01-02 15:55:40,,,,COMPLETED,x\n"
        "3,,a1,p1,normal,3600.0,1,1,0,0.0,2019-01-02 15:55:40,,,,COMPLETED,x\n"
        "4,u1,a1,p1,normal,3600.0,1.5,1,0,0.0,2019-01-02 15:55:40,,,,COMPLETED,x\n"
        "5,u1,a1,p1,normal,3600.0,1,1,0,0.0,2019-01-02 15:55:40,,,,COMPLETED\n";
    Trace t;
    const auto r = read_string(kEagle, csv, t);
    CHECK(r.balanced());
    CHECK(r.accepted == 2);
    CHECK(r.rejected_by_reason.at("bad user") == 1);
    CHECK(r.rejected_by_reason.at("bad nodes_req") == 1);
    CHECK(r.rejected_by_reason.at("wrong field count") == 1);
    // A memory request beyond 10^12 MB is damage (a fuzz finding: it overflowed the MB per node).
    Trace m;
    const auto huge =
        read_string(kEagle,
                    csv.substr(0, csv.find('\n') + 1) +
                        "8,u1,a1,p1,normal,3600.0,1,1,0,0.0,2019-01-02 15:55:40,,,,COMPLETED,x\n"
                        "9,u1,a1,p1,normal,3600.0,10,10,0,7e34,2019-01-02 15:55:40,,,,COMPLETED,x\n",
                    m);
    CHECK(huge.rejected_by_reason.at("bad mem_req") == 1);
    CHECK(huge.accepted == 1);
    const auto& a = t.jobs.at(0);
    CHECK(t.strings.name(a.name) == "name, with comma");
    CHECK(a.mem_mb == 184000);
    REQUIRE(a.gres.size() == 1);
    CHECK(a.gres[0] == GresRequest{"gpu", "", 2, false});
    CHECK(a.state == JobState::kTimeout);
    CHECK(a.runtime == 259);
    CHECK(t.jobs.at(1).runtime == kUnsetTime);
    CHECK(t.jobs.at(1).start == kUnsetTime);
    Trace s;
    const auto msg = input_error([&] { read_string(kEagle, csv, s, true, "e.csv"); });
    CHECK(msg.find("e.csv:4") != std::string::npos);
    CHECK(msg.find("user") != std::string::npos);
    CHECK(input_error([&] { read_string(kEagle, "job_id,user\n1,u\n", s); }).find("account") !=
          std::string::npos);
    CHECK(input_error([&] { read_string(kEagle, std::string("\0\0\0", 3), s); }).find("binary") !=
          std::string::npos);
  }
}

TEST_CASE("every reader survives truncation and byte damage: balanced report or InputError") {
  const std::string swf =
      "; UnixStartTime: 100\n1 0 5 10 2 -1 -1 2 60 1024 1 3 4 -1 1 1 -1 -1\n"
      "2;7;-1;15;12;-1;-1;-1;420;-1;-1;user5;account2;-1;normal;normal;;-1;\n";
  const std::string events =
      "-dt 1.5 -e submit_batch_job | -sim-walltime 60 --uid=alice -N 2 -n 8 --gres=gpu:v100:2 -t 1-00:00 "
      "--mem=4G -J 'a b' pseudo.job\n# c\n-dt 2 -e submit_batch_job | -sim-walltime -1 --uid bob -c 2 x\n";
  const std::string graham =
      kGrahamHeader +
      "0,100,2021-05-01 00:00:10,55,18437,8,8000,\"billing=1,cpu=8,gres/gpu=2,mem=8000M,node=1\",1,"
      "COMPLETED,42,2021-05-01 00:00:20,2021-05-01 00:01:00,2021-05-01 00:02:00,3600,60\n";
  const std::string eagle =
      "job_id,user,account,partition,qos,wallclock_req,nodes_req,processors_req,gpus_req,mem_req,"
      "submit_time,start_time,end_time,run_time,state,name\n"
      "1,u1,a1,p1,normal,3600.0,3,54,2,552000.0,2019-01-02 15:55:40,2019-01-02 15:55:41,2019-01-02 "
      "16:00:00,259.0,TIMEOUT,\"n,1\"\n";
  const auto events_fn = [](std::string_view c, const std::string& f, Trace& t, RejectSink& s) {
    read_events(c, f, t, s, kAccounts);
  };
  std::uint64_t runs = 0, errors = 0;
  const auto check_all = [&](auto fn, const std::string& good) {
    for (std::size_t n = 0; n <= good.size(); ++n) {
      for (const char damage : {'\0', '"', ',', ';', '-', ' ', '\n', '|', '9', 'x', '\xff'}) {
        std::string in = good.substr(0, n);
        if (n > 0 && damage != ' ') in[n / 2] = damage;
        if (damage == ' ') in = good.substr(n);  // also cut from the front
        Trace t;
        ++runs;
        try {
          const auto r = read_string(fn, in, t);
          CHECK(r.balanced());
          CHECK(r.accepted == t.jobs.size());
        } catch (const InputError&) {
          ++errors;
        }
      }
    }
  };
  check_all(kSwf, swf);
  check_all(events_fn, events);
  check_all(kGraham, graham);
  check_all(kEagle, eagle);
  CHECK(runs > 0);
  CHECK(errors > 0);     // empty, NUL and cut-quote inputs throw
  CHECK(errors < runs);  // most damage is a rejected record, not a failed file
}
