#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "test_support.hpp"
#include "traces/native_format.hpp"
#include "traces/read_report.hpp"
#include "traces/readers.hpp"
#include "traces/sacct_writer.hpp"
#include "traces/synthetic.hpp"
#include "traces/trace_io.hpp"

using namespace slurmtwin;

namespace {

SyntheticConfig small_config(std::uint64_t seed) {
  auto c = default_synthetic_config();
  c.seed = seed;
  c.days = 2;
  return c;
}

bool same_jobs(const Trace& a, const Trace& b) {
  if (a.jobs.size() != b.jobs.size()) return false;
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    const auto &x = a.jobs[i], &y = b.jobs[i];
    if (x.job_id != y.job_id || x.submit != y.submit || x.runtime != y.runtime ||
        x.time_limit != y.time_limit || x.tasks != y.tasks || x.nodes != y.nodes || x.gres != y.gres ||
        a.user_name(x) != b.user_name(y) || a.partition_name(x) != b.partition_name(y) ||
        a.qos_name(x) != b.qos_name(y) || x.mem_mb != y.mem_mb)
      return false;
  }
  return true;
}

}  // namespace

TEST_CASE("the synthetic generator is deterministic per seed and follows its config") {
  const auto a = generate_synthetic(small_config(7));
  const auto b = generate_synthetic(small_config(7));
  const auto c = generate_synthetic(small_config(8));
  CHECK(same_jobs(a, b));
  CHECK_FALSE(same_jobs(a, c));
  // 550 jobs/day x 2 days x weekly factor 1.2 (the origin is a Monday; Mon and Tue are 1.2) = 1320
  // expected arrivals; Poisson sd ~36, so +-10% is over 3.6 sd.
  CHECK(a.jobs.size() > 1188);
  CHECK(a.jobs.size() < 1452);
  std::size_t gpu_jobs = 0;
  for (const auto& j : a.jobs) {
    CHECK(j.submit >= a.origin);
    CHECK(j.submit < a.origin + 2 * 86400);
    CHECK(j.runtime >= 1);
    CHECK(j.runtime <= j.time_limit);
    CHECK(j.time_limit % 900 == 0);  // quarter-hour limits
    if (a.partition_name(j) == "gpu") {
      ++gpu_jobs;
      REQUIRE(j.gres.size() == 1);
      CHECK(j.gres[0].count >= 1);
      CHECK(j.gres[0].count <= 4);
    }
    if (a.partition_name(j) == "debug") {
      CHECK(j.time_limit <= 3600);
      CHECK(a.qos_name(j) == "debug");  // the debug partition's own QOS mix
    }
  }
  CHECK(gpu_jobs > 0);
  // Submits are non-decreasing and ids are 1..N.
  for (std::size_t i = 1; i < a.jobs.size(); ++i) {
    CHECK(a.jobs[i].submit >= a.jobs[i - 1].submit);
    CHECK(a.jobs[i].job_id == i + 1);
  }
}

TEST_CASE("the native trace format round-trips and rejects damaged files") {
  const auto t = generate_synthetic(small_config(3));
  const auto bytes = encode_native_trace(t);
  const auto back = decode_native_trace(bytes, "mem.stt");
  CHECK(same_jobs(t, back));
  CHECK(back.origin == t.origin);
  CHECK(encode_native_trace(back) == bytes);  // byte-identical re-encoding

  CHECK_THROWS_AS(decode_native_trace(bytes.substr(0, bytes.size() - 9), "cut.stt"), InputError);
  auto flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x5a;
  CHECK_THROWS_WITH_AS(decode_native_trace(flipped, "flip.stt"), doctest::Contains("checksum"), InputError);
  CHECK_THROWS_AS(decode_native_trace("not a trace at all", "junk.stt"), InputError);
  auto wrong_version = bytes;
  wrong_version[8] = 99;
  CHECK_THROWS_WITH_AS(decode_native_trace(wrong_version, "v.stt"), doctest::Contains("version"), InputError);
}

TEST_CASE("simulated results written as sacct -P read back through the sacct reader") {
  auto t = generate_synthetic(small_config(5));
  for (auto& j : t.jobs) {  // as a replay would fill them
    j.start = j.submit + 10;
    j.end = j.start + j.runtime;
    j.alloc_cpus = j.tasks * j.cpus_per_task;
  }
  const auto text = format_sacct_parsable(t);
  Trace back;
  ReadReport report;
  ReadOptions opts;
  opts.strict = true;
  RejectSink sink(report, opts);
  read_sacct_parsable(text, "written.sacct", back, sink);
  CHECK(report.balanced());
  REQUIRE(report.accepted == t.jobs.size());
  const auto gpus = [](const JobRecord& j) {
    std::int64_t n = 0;
    for (const auto& g : j.gres) n += g.count * (g.per_node ? std::max<std::uint32_t>(1, j.nodes) : 1);
    return n;
  };
  for (std::size_t i = 0; i < t.jobs.size(); ++i) {
    const auto &x = t.jobs[i], &y = back.jobs[i];
    CHECK(y.job_id == x.job_id);
    CHECK(y.submit == x.submit);
    CHECK(y.start == x.start);
    CHECK(y.end == x.end);
    CHECK(y.runtime == x.runtime);
    CHECK(y.time_limit == x.time_limit);
    CHECK(y.alloc_cpus == x.alloc_cpus);
    CHECK(back.user_name(y) == t.user_name(x));
    CHECK(back.partition_name(y) == t.partition_name(x));
    CHECK(gpus(y) == gpus(x));
  }
}

TEST_CASE("read_trace detects formats and accounts for every record") {
  const auto dir = testing::scratch_dir("trace_io");
  const auto t = generate_synthetic(small_config(9));
  write_native_trace(t, (dir / "t.stt").string());
  { std::ofstream((dir / "t.sacct").string()) << format_sacct_parsable(t); }
  for (const char* name : {"t.stt", "t.sacct"}) {
    ReadReport report;
    const auto back = read_trace({(dir / name).string()}, {}, report);
    CHECK(back.jobs.size() == t.jobs.size());
    CHECK(report.balanced());
  }
  { std::ofstream((dir / "empty.txt").string()); }
  ReadReport report;
  CHECK_THROWS_AS(read_trace({(dir / "empty.txt").string()}, {}, report), InputError);
  CHECK_THROWS_AS(read_trace({(dir / "missing.swf").string()}, {}, report), InputError);
  CHECK(detect_trace_format("x.events", "-dt 1 -e submit_batch_job | ...") == TraceFormat::kEvents);
  CHECK(detect_trace_format("x.log", "JobID|User\n1|u\n") == TraceFormat::kSacct);
  CHECK(detect_trace_format("x.gz", "; Version: 2.2\n") == TraceFormat::kSwf);
}
