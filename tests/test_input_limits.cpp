// Resource guards: absurd values in traces and sites are rejected with a reason (strict: InputError
// naming file, line and field), and inputs that would need more memory than available fail early.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "experiments/replay/replay.hpp"
#include "test_support.hpp"
#include "traces/default_site.hpp"
#include "traces/input_limits.hpp"
#include "traces/memory_guard.hpp"
#include "traces/readers.hpp"
#include "traces/site_yaml.hpp"
#include "traces/slurm_conf.hpp"
#include "traces/synthetic.hpp"

using namespace slurmtwin;

namespace {

struct Read {
  ReadReport report;
  Trace trace;
};

template <typename Fn>
Read read_lenient(Fn fn, const std::string& content) {
  Read r;
  r.report.file = "t.in";
  ReadOptions options;
  options.keep_rejects = true;
  RejectSink sink(r.report, options);
  fn(content, "t.in", r.trace, sink);
  return r;
}

template <typename Fn>
InputError read_strict_error(Fn fn, const std::string& content) {
  ReadReport report;
  ReadOptions options;
  options.strict = true;
  RejectSink sink(report, options);
  Trace trace;
  try {
    fn(content, "t.in", trace, sink);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("no InputError");
  return InputError("", 0, "", "");
}

JobRecord plausible_job() {
  JobRecord j;
  j.submit = j.eligible = 1'700'000'000;
  j.runtime = 3600;
  j.time_limit = 7200;
  j.nodes = 2;
  j.tasks = j.req_cpus = 64;
  j.mem_mb = 4000;
  j.gres.push_back({"gpu", "", 4, true});
  return j;
}

// One SWF record: job submit wait runtime procs cpu mem reqprocs reqtime reqmem status user group exe
// queue partition preceding think.
std::string swf_line(const std::string& runtime, const std::string& procs, const std::string& reqtime) {
  return fmt::format("1 0 10 {} {} -1 -1 {} {} -1 1 1 1 -1 1 1 -1 -1\n", runtime, procs, procs, reqtime);
}

}  // namespace

TEST_CASE("record limits: plausible jobs pass and each absurd value names its field") {
  CHECK_FALSE(record_limit_problem(plausible_job()));
  JobRecord unset;  // every field unset or default
  CHECK_FALSE(record_limit_problem(unset));
  auto unlimited = plausible_job();
  unlimited.time_limit = kUnlimited;
  CHECK_FALSE(record_limit_problem(unlimited));
  auto at_limit = plausible_job();
  at_limit.time_limit = kMaxJobDuration;  // exactly 100 years is still accepted
  at_limit.nodes = kMaxJobNodes;
  CHECK_FALSE(record_limit_problem(at_limit));

  const auto field_of = [](auto change) {
    auto j = plausible_job();
    change(j);
    const auto p = record_limit_problem(j);
    return p ? p->field : std::string("-");
  };
  CHECK(field_of([](JobRecord& j) { j.submit = -5; }) == "submit");
  CHECK(field_of([](JobRecord& j) { j.end = kMaxEpochTime + 1; }) == "end");
  CHECK(field_of([](JobRecord& j) { j.runtime = -1; }) == "runtime");
  CHECK(field_of([](JobRecord& j) { j.time_limit = kMaxJobDuration + 1; }) == "time_limit");
  CHECK(field_of([](JobRecord& j) { j.nodes = 1'000'000'000; }) == "nodes");
  CHECK(field_of([](JobRecord& j) { j.req_cpus = 1'000'000'000; }) == "req_cpus");
  CHECK(field_of([](JobRecord& j) { j.mem_mb = -7; }) == "mem_mb");
  CHECK(field_of([](JobRecord& j) { j.mem_mb = kMaxJobMemMb + 1; }) == "mem_mb");
  CHECK(field_of([](JobRecord& j) { j.gres[0].count = -2; }) == "gres");
  auto j = plausible_job();
  j.time_limit = 200LL * 365 * 86400;
  CHECK(record_limit_problem(j)->detail == "time_limit 6307200000 s is beyond 100 years");
}

TEST_CASE(
    "SWF: 10^9 processors and a 200-year limit are rejected by reason and strict mode names line and field") {
  const std::string content = swf_line("100", "4", "3600") + swf_line("100", "1000000000", "3600") +
                              swf_line("100", "4", "6307200000");
  const auto r = read_lenient(read_swf, content);
  CHECK(r.report.records == 3);
  CHECK(r.report.accepted == 1);
  CHECK(r.report.rejected_by_reason.at("absurd req_cpus") == 1);
  CHECK(r.report.rejected_by_reason.at("absurd time_limit") == 1);
  CHECK(r.report.balanced());
  const auto e = read_strict_error(read_swf, content);
  CHECK(e.line() == 2);
  CHECK(e.field() == "req_cpus");
  CHECK(std::string(e.what()).find("t.in:2") != std::string::npos);
}

TEST_CASE("events: a job asking for 10^9 nodes is rejected with a reason") {
  const std::string content =
      "-dt 10 -e submit_batch_job | -sim-walltime 60 --uid=u1 -A a1 -N 1 -n 1 -t 10:00 -p p pseudo.job\n"
      "-dt 20 -e submit_batch_job | -sim-walltime 60 --uid=u1 -A a1 -N 1000000000 -n 1 -t 10:00 -p p "
      "pseudo.job\n";
  const auto r =
      read_lenient([](auto c, const auto& f, auto& t, auto& s) { read_events(c, f, t, s); }, content);
  CHECK(r.report.accepted == 1);
  CHECK(r.report.rejected() == 1);
  CHECK(r.report.balanced());
  REQUIRE(r.report.rejects.size() == 1);
  CHECK(r.report.rejects[0].line == 2);
  CHECK(r.report.rejects[0].field == "nodes");
  CHECK(r.report.rejects[0].reason == "absurd nodes");
  CHECK(r.report.rejects[0].detail == "nodes 1000000000 is over the limit of 1000000");
}

TEST_CASE("sacct -P: a 50000-day time limit is rejected by reason") {
  const std::string content =
      "JobID|User|Account|Partition|Submit|Start|End|Elapsed|Timelimit|NNodes|NCPUS|State\n"
      "1|u|a|p|2024-01-01T00:00:00|2024-01-01T00:01:00|2024-01-01T00:02:00|00:01:00|01:00:00|1|4|COMPLETED\n"
      "2|u|a|p|2024-01-01T00:00:00|2024-01-01T00:01:00|2024-01-01T00:02:00|00:01:00|50000-00:00:00|1|4|"
      "COMPLETED\n";
  const auto r =
      read_lenient([](auto c, const auto& f, auto& t, auto& s) { read_sacct_parsable(c, f, t, s); }, content);
  CHECK(r.report.accepted == 1);
  CHECK(r.report.rejected_by_reason.at("absurd time_limit") == 1);
  CHECK(r.report.balanced());
}

TEST_CASE("sites: 10^9 or 2 million nodes fail at once with a clear error, not an allocation") {
  std::vector<std::string> warnings;
  try {
    import_slurm_conf_text("NodeName=n[1-1000000000] CPUs=4\n", "slurm.conf", warnings);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.line() == 1);
    CHECK(std::string(e.what()).find("more than") != std::string::npos);
  }
  try {
    import_slurm_conf_text("NodeName=a[1-600000] CPUs=4\nNodeName=b[1-600000] CPUs=4\n", "slurm.conf",
                           warnings);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.line() == 2);
    CHECK(std::string(e.what()).find("more than 1000000 nodes in the site") != std::string::npos);
  }
  Site small = default_site();
  auto yaml = site_to_yaml(small);
  const auto at = yaml.find("names: ");
  REQUIRE(at != std::string::npos);
  yaml.replace(at, yaml.find('\n', at) - at, "names: \"x[1-2000000]\"");
  try {
    parse_site_yaml(yaml, "site.yaml");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.field() == "names");
    CHECK(std::string(e.what()).find("more than 1000000") != std::string::npos);
  }
}

TEST_CASE("memory guard: estimates from counts and a replay that cannot fit fails before allocating") {
  CHECK(replay_bytes(1'000'000, 1000) == 1'000'000ull * 768 + 1000ull * 4096);
  CHECK_NOTHROW(require_memory(100, "x", 1000));
  CHECK_NOTHROW(require_memory(100, "x", std::nullopt));  // unknown: no check
  try {
    require_memory(3ull << 30, "a replay of 4000000 jobs on 1000 nodes", 1ull << 30);
    FAIL("no error");
  } catch (const ResourceError& e) {
    CHECK(std::string(e.what()) ==
          "a replay of 4000000 jobs on 1000 nodes needs about 3072 MiB but only 1024 MiB are available "
          "(MemAvailable in /proc/meminfo)");
  }
  const auto avail = available_memory_bytes();
  REQUIRE(avail);  // Linux: /proc/meminfo
  CHECK(*avail > 0);

  // End to end: with 1 MiB allowed, the built-in week (3,862 jobs) fails early with exit code 1.
  const auto dir = testing::scratch_dir("memory_guard");
  const auto out = (dir / "out.txt").string();
  const int status = std::system(fmt::format("SLURMTWIN_MEMORY_LIMIT_MB=1 {} replay --out {} > {} 2>&1",
                                             SLURMTWIN_BINARY, (dir / "run").string(), out)
                                     .c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str().find("needs about") != std::string::npos);
  CHECK(ss.str().find("available (SLURMTWIN_MEMORY_LIMIT_MB)") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "run" / "metrics.json"));
}

TEST_CASE("time series over a span of centuries stay bounded: the buckets widen, the totals stay") {
  // Issue 27, D1: two SWF jobs 158 years apart gave a metrics.json of 8 MB (1.4 million hourly
  // buckets), and --snapshot-at +99999999999 one of 166 MB.
  sim::TimeSeriesRecorder r;
  // 4 CPUs busy for the first 10 h, then 2 pending jobs over 158 years.
  const Seconds t0 = 1'000'000, busy = 10 * 3600, span = Seconds{158} * 365 * 86400;
  r.add(t0, t0, t0 + busy, 4, 0);
  r.add(t0, t0 + busy, t0 + span, 0, 2);
  CHECK(r.buckets.size() <= sim::kMaxSeriesBuckets);
  // 158 years are 1,384,080 h. Widths double from an hour until the span fits in 16,384 buckets:
  // 2^6 h would need 21,627, 2^7 h = 460,800 s needs 10,814.
  CHECK(r.width == 3600 * 128);
  CHECK(r.buckets.size() == static_cast<std::size_t>((span + r.width - 1) / r.width));
  double cpu = 0, queue = 0;
  for (const auto& b : r.buckets) {
    cpu += b.cpu_seconds;
    queue += b.queue_seconds;
  }
  CHECK(cpu == 4.0 * static_cast<double>(busy));
  CHECK(queue == 2.0 * static_cast<double>(span - busy));
  CHECK(r.buckets.front().cpu_seconds == 4.0 * static_cast<double>(busy));  // all in the first bucket

  // End to end: the same two jobs, 158 years apart, as an SWF trace.
  const auto dir = testing::scratch_dir("far_apart");
  const auto swf = (dir / "far.swf").string();
  std::ofstream(swf) << "; two jobs 158 years apart\n"
                        "1 0 0 100 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1\n"
                        "2 4985000000 0 100 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1\n";
  const auto out = dir / "out";
  REQUIRE(testing::run_cli(fmt::format("replay --trace {} --out {}", swf, out.string())).code == 0);
  const auto json = testing::slurp(out / "metrics.json");
  CHECK(json.size() < 1'000'000);
  CHECK(json.find("\"series_bucket_s\": 460800,") != std::string::npos);
}

TEST_CASE("the default site's size is checked where it is given, and small ones are consistent") {
  // Issue 27, D3: --default-cpu-nodes bypassed the site size limit (2.375M nodes accepted, 10M failed
  // after 3.75 GB) and 0..3 built an inconsistent site (a debug partition naming nodes it lacked).
  for (const std::uint32_t n : {0u, kMaxDefaultCpuNodes + 1}) {
    const auto r = testing::run_cli(fmt::format("replay --default-cpu-nodes {} --out /nonexistent/x", n));
    CHECK(r.code == 2);
    CHECK(r.out.find(fmt::format("--default-cpu-nodes: expected 1..{}, not {}", kMaxDefaultCpuNodes, n)) !=
          std::string::npos);
    CHECK_THROWS_AS(scaled_default_site(n), std::out_of_range);
  }
  for (const std::uint32_t n : {1u, 2u, 3u, 4u, 64u}) {
    CAPTURE(n);
    const auto site = scaled_default_site(n);
    std::set<std::string> names;
    for (const auto& node : site.nodes) names.insert(node.name);
    for (const auto& p : site.partitions)
      for (const auto& node : p.nodes) CHECK(names.count(node));
    CHECK(site.partitions[2].name == "debug");
    CHECK(site.partitions[2].nodes.size() == std::min<std::size_t>(n, std::max<std::size_t>(4, n / 16)));
  }
}

TEST_CASE("a design too large for memory fails before it is expanded, and --emit-sbatch does not expand it") {
  // Issue 27, D3: a 10^7-point design ended in bad_alloc at 7 GB, even with --emit-sbatch, which only
  // needed its size for a message.
  const auto dir = testing::scratch_dir("huge_design");
  const auto spec = (dir / "huge.yaml").string();
  std::ofstream(spec) << "trace:\n  synthetic: {seed: 1, days: 1}\nparameters:\n"
                         "  PriorityWeightAge: [0, 100000]\n  PriorityWeightFairshare: [0, 100000]\n"
                         "design: {type: lhs, points: 10000000}\nobjectives:\n  - {metric: wait_mean}\n";
  // 10^7 points of two settings: about 10^7 x 3 x 256 B = 7.2 GiB, against a 1 GiB limit.
  const auto limited =
      std::system(fmt::format("SLURMTWIN_MEMORY_LIMIT_MB=1024 {} sweep run {} --db {} > {} 2>&1",
                              SLURMTWIN_BINARY, spec, (dir / "huge.db").string(), (dir / "out.txt").string())
                      .c_str());
  CHECK(WIFEXITED(limited));
  CHECK(WEXITSTATUS(limited) == 1);
  CHECK(testing::slurp(dir / "out.txt").find("the design's 10000000 points needs about") !=
        std::string::npos);
  const auto emitted =
      testing::run_cli(fmt::format("sweep run {} --emit-sbatch {}", spec, (dir / "jobs").string()));
  CHECK(emitted.code == 0);
  CHECK(emitted.out.find("(a design of 10000000 points)") != std::string::npos);
}
