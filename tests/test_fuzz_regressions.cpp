// Inputs that once crashed a reader or importer under the fuzzers (tests/fuzz/, docs/reliability.md),
// kept as regression tests: every file in tests/fuzz/regressions/<target>/ goes through the same call
// as fuzz target <target>, and the only acceptable failure is an InputError naming the file.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>

#include "experiments/sweep_spec.hpp"
#include "traces/default_site.hpp"
#include "traces/file_io.hpp"
#include "traces/native_format.hpp"
#include "traces/readers.hpp"
#include "traces/sacctmgr.hpp"
#include "traces/site_yaml.hpp"
#include "traces/slurm_conf.hpp"

using namespace slurmtwin;
namespace fs = std::filesystem;

namespace {

using Call = std::function<void(const std::string& content, const std::string& file)>;

template <typename Read>
Call trace_reader(Read read) {
  return [read](const std::string& content, const std::string& file) {
    for (const bool strict : {false, true}) {
      ReadReport report;
      ReadOptions options;
      options.strict = strict;
      RejectSink sink(report, options);
      Trace trace;
      read(content, file, trace, sink);
      CHECK(report.balanced());
    }
  };
}

/// Target name (as in tests/fuzz/CMakeLists.txt) -> the call its fuzz target makes.
const std::map<std::string, Call>& calls() {
  static const std::map<std::string, Call> kCalls = {
      {"sacct_parsable",
       trace_reader([](auto c, const auto& f, auto& t, auto& s) { read_sacct_parsable(c, f, t, s); })},
      {"sacct_json", trace_reader(read_sacct_json)},
      {"swf", trace_reader(read_swf)},
      {"events", trace_reader([](auto c, const auto& f, auto& t, auto& s) { read_events(c, f, t, s); })},
      {"graham_csv", trace_reader(read_graham_csv)},
      {"eagle_csv", trace_reader(read_eagle_csv)},
      {"native_trace", [](const std::string& c, const std::string& f) { decode_native_trace(c, f); }},
      {"slurm_conf",
       [](const std::string& c, const std::string& f) {
         std::vector<std::string> w;
         import_slurm_conf_text(c, f, w);
       }},
      {"gres_conf",
       [](const std::string& c, const std::string& f) {
         Site s = default_site();
         std::vector<std::string> w;
         apply_gres_conf(c, f, s, w);
       }},
      {"sacctmgr_script",
       [](const std::string& c, const std::string& f) {
         Site s;
         std::vector<std::string> w;
         import_sacctmgr_script_text(c, f, s, w);
       }},
      {"assoc_dump",
       [](const std::string& c, const std::string& f) {
         Site s = default_site();
         std::vector<std::string> w;
         import_assoc_dump_text(c, f, s, w);
       }},
      {"site_yaml", [](const std::string& c, const std::string& f) { parse_site_yaml(c, f); }},
      {"sweep_spec",
       [](const std::string& c, const std::string& f) { cli::design_points(cli::parse_sweep_spec(c, f)); }},
  };
  return kCalls;
}

}  // namespace

TEST_CASE("fuzz regressions: every saved crashing input now fails cleanly with an InputError or reads") {
  const fs::path root = fs::path(SLURMTWIN_SOURCE_DIR) / "tests" / "fuzz" / "regressions";
  REQUIRE(fs::is_directory(root));
  std::size_t files = 0;
  for (const auto& dir : fs::directory_iterator(root)) {
    const auto target = dir.path().filename().string();
    REQUIRE_MESSAGE(calls().count(target), "no call for regression folder " << target);
    for (const auto& entry : fs::directory_iterator(dir.path())) {
      const auto file = entry.path().string();
      INFO(file);
      ++files;
      try {
        calls().at(target)(read_input_file(file), file);
      } catch (const InputError& e) {
        CHECK(e.file() == file);
        CHECK(std::string(e.what()).starts_with(file));
      } catch (const std::exception& e) {
        FAIL("not an InputError: " << e.what());
      }
    }
  }
  CHECK(files > 0);
}

TEST_CASE("fuzz regression: a sweep spec with a non-scalar key names its line instead of a YAML error") {
  // Found by fuzz_sweep_spec: '? - {...}' makes a map key that is a sequence; yaml-cpp's as<string>
  // threw YAML::TypedBadConversion through parse_sweep_spec.
  try {
    cli::parse_sweep_spec("parameters:\n  PriorityWeightAge: [0, 1]\nobjectives:\n? - {metric: wait_mean}\n",
                          "spec.yaml");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.line() == 4);
    CHECK(e.field() == "sweep spec");
  }
  try {
    cli::parse_sweep_spec("parameters:\n  ? [a, b]\n  : [1]\nobjectives:\n  - {metric: wait_mean}\n",
                          "spec.yaml");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.line() == 2);
    CHECK(std::string(e.what()).find("plain name") != std::string::npos);
  }
}

TEST_CASE(
    "fuzz regression: a checksummed native trace with an absurd time or a dangling name fails cleanly") {
  // Found by fuzz_native_trace: a valid envelope around a payload whose job 8 ends at -9.2e18 s was
  // decoded as is (the checksum only proves the bytes are the ones written, not that they make sense).
  const auto file = (fs::path(SLURMTWIN_SOURCE_DIR) / "tests" / "fuzz" / "regressions" / "native_trace" /
                     "negative_end_time.stt")
                        .string();
  try {
    read_native_trace(file);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.field() == "end");
    CHECK(std::string(e.what()).find("is a negative absolute time") != std::string::npos);
  }
  Trace t;
  JobRecord j;
  j.job_id = 7;
  j.user = t.users.intern("alice");
  t.jobs.push_back(j);
  const auto good = encode_native_trace(t);
  CHECK(decode_native_trace(good, "ok.stt").jobs.size() == 1);
  // The same trace with the user index pointing past the one-entry dictionary: re-encode by hand.
  t.jobs[0].user = 5;
  CHECK_THROWS_WITH_AS(decode_native_trace(encode_native_trace(t), "bad.stt"),
                       "bad.stt: native trace job 7 names entry 5 of a 1-entry dictionary", InputError);
}

TEST_CASE("fuzz finding: a sweep grid's total size is capped like random/lhs points") {
  // Each range may have count up to 10^6, so three of them asked design_points for 10^18 points
  // and the process ran out of memory; now the parser refuses more than 10^7, naming the parameter
  // at which the product passes the cap.
  const std::string spec =
      "parameters:\n"
      "  PriorityWeightAge: {range: [0, 1000], count: 1000}\n"
      "  PriorityWeightFairshare: {range: [0, 1000], count: 1000}\n"
      "  PriorityWeightJobSize: {range: [0, 1000], count: 1000}\n"
      "objectives:\n  - {metric: wait_mean}\n";
  try {
    cli::parse_sweep_spec(spec, "grid.yaml");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.line() == 4);
    CHECK(e.field() == "PriorityWeightJobSize");
    CHECK(std::string(e.what()).ends_with("the grid has more than 10000000 points (product of the levels)"));
  }
  // 1000 x 1000 = 10^6 points is within the cap.
  CHECK_NOTHROW(cli::parse_sweep_spec(
      "parameters:\n  PriorityWeightAge: {range: [0, 1000], count: 1000}\n"
      "  PriorityWeightFairshare: {range: [0, 1000], count: 1000}\nobjectives:\n  - {metric: wait_mean}\n",
      "grid.yaml"));
}
