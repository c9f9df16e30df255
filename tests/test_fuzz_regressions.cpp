// Inputs that once crashed a reader or importer under the fuzzers (tests/fuzz/, docs/reliability.md),
// kept as regression tests: every file in tests/fuzz/regressions/<target>/ goes through the same call
// as fuzz target <target>, and the only acceptable failure is an InputError naming the file.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>

#include "experiments/check/check.hpp"
#include "experiments/sweep/sweep_spec.hpp"
#include "scheduler_gen.hpp"
#include "surrogate/dataset.hpp"
#include "surrogate/model.hpp"
#include "surrogate/split.hpp"
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
       [](const std::string& c, const std::string& f) {
         experiments::design_points(experiments::parse_sweep_spec(c, f));
       }},
      {"surrogate_dataset",
       [](const std::string& c, const std::string& f) {
         const auto d = surrogate::decode_dataset(c, f);
         for (const auto mode : {surrogate::SplitMode::kTail, surrogate::SplitMode::kInterleaved})
           surrogate::make_split(d, 7, mode);
       }},
      {"surrogate_checkpoint",
       [](const std::string& c, const std::string& f) { surrogate::Surrogate::decode(c, f); }},
      // The bytes drive the generator of fuzz_scheduler; a site Slurm refuses or a trace the replay
      // refuses as a whole is fine (neither is about the file), a crash or a hang is not.
      {"scheduler",
       [](const std::string& c, const std::string&) {
         auto d = testing::bytes_draw(reinterpret_cast<const std::uint8_t*>(c.data()), c.size());
         const Site site = testing::random_site(d);
         const Trace trace = testing::random_trace(d, site);
         if (const auto r = testing::replay_generated(site, trace))
           CHECK(testing::schedule_violation(*r, trace) == "");
       }},
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

TEST_CASE("fuzz finding: a preemptor that never starts and preempts again stops the replay with a reason") {
  // Found by an hour of the scheduler target (2026-11-26): QOS high (priority 54) preempts low and
  // normal; job 5 (high, --exclusive on 2 nodes) preempts the running job at each pass, but jobs of
  // higher priority in a higher-tier partition take the freed node first, and so on: 1.5 million
  // requeues over three simulated years before the fuzzer's timeout. Now it stops at the
  // kMaxRequeues-th requeue of one job, naming it and its preemptor.
  const auto file = (fs::path(SLURMTWIN_SOURCE_DIR) / "tests" / "fuzz" / "regressions" / "scheduler" /
                     "timeout-preemption-cycle")
                        .string();
  const auto bytes = read_input_file(file);
  auto d = testing::bytes_draw(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  const Site site = testing::random_site(d);
  const Trace trace = testing::random_trace(d, site);
  experiments::ReplayOptions o;
  o.check_invariants = true;
  try {
    experiments::run_replay(site, trace, o);
    FAIL("the preemption cycle ended");
  } catch (const sim::PreemptionCycle& e) {
    const std::string what = e.what();
    CHECK(what.find(fmt::format("was requeued by preemption {} times", sim::kMaxRequeues)) !=
          std::string::npos);
    CHECK(what.find("by job 5)") != std::string::npos);
  }
}

TEST_CASE("fuzz regression: a sweep spec with a non-scalar key names its line instead of a YAML error") {
  // Found by fuzz_sweep_spec: '? - {...}' makes a map key that is a sequence; yaml-cpp's as<string>
  // threw YAML::TypedBadConversion through parse_sweep_spec.
  try {
    experiments::parse_sweep_spec(
        "parameters:\n  PriorityWeightAge: [0, 1]\nobjectives:\n? - {metric: wait_mean}\n", "spec.yaml");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.line() == 4);
    CHECK(e.field() == "sweep spec");
  }
  try {
    experiments::parse_sweep_spec("parameters:\n  ? [a, b]\n  : [1]\nobjectives:\n  - {metric: wait_mean}\n",
                                  "spec.yaml");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.line() == 2);
    CHECK(std::string(e.what()).find("plain name") != std::string::npos);
  }
}

TEST_CASE("fuzz regression: a site YAML or check suite with a non-scalar key names its line") {
  // Found by fuzz_site_yaml in CI: '? - names: ...' makes a map key that is a sequence; the site
  // reader's key check called as<string> on it, and YAML::TypedBadConversion ended the process.
  try {
    parse_site_yaml("cluster_name: twin\n? - names: c1\n", "site.yaml");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.line() == 2);
    CHECK(e.field() == "site");
    CHECK(std::string(e.what()).find("plain name") != std::string::npos);
  }
  try {
    parse_site_yaml("cluster_name: twin\nnodes:\n  - names: c1\n    ? [cpus]\n    : 4\n", "site.yaml");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.line() == 4);
    CHECK(e.field() == "nodes");
  }
  // The check suite's own key reads (settings, metrics, baseline scenarios) go through the same check.
  try {
    experiments::parse_check_suite("scenarios:\n  - name: a\n    metrics:\n      ? [wait_mean]\n      : {}\n",
                                   "checks.yaml");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.line() == 4);
    CHECK(e.field() == "metrics");
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
    experiments::parse_sweep_spec(spec, "grid.yaml");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.line() == 4);
    CHECK(e.field() == "PriorityWeightJobSize");
    CHECK(std::string(e.what()).ends_with("the grid has more than 10000000 points (product of the levels)"));
  }
  // 1000 x 1000 = 10^6 points is within the cap.
  CHECK_NOTHROW(experiments::parse_sweep_spec(
      "parameters:\n  PriorityWeightAge: {range: [0, 1000], count: 1000}\n"
      "  PriorityWeightFairshare: {range: [0, 1000], count: 1000}\nobjectives:\n  - {metric: wait_mean}\n",
      "grid.yaml"));
}

namespace {

constexpr char kDatasetMagic[8] = {'S', 'T', 'W', 'S', 'U', 'R', 'D', 'S'};
constexpr char kCheckpointMagic[8] = {'S', 'T', 'W', 'S', 'U', 'R', 'C', 'K'};

/// The payload of a dataset up to its window count: no fingerprint or site name, one numeric feature,
/// `user_buckets` user buckets, no axes, no settings.
ByteWriter dataset_head(std::uint32_t user_buckets) {
  ByteWriter w;
  w.put(std::string());  // trace fingerprint
  w.put(std::string());  // site name
  w.put(std::uint8_t{0});
  w.put(std::uint32_t{1});  // numeric feature names
  w.put(std::string("x"));
  w.put(user_buckets);
  w.put(std::uint32_t{4});  // account buckets
  w.put(std::uint32_t{0});  // partitions
  w.put(std::uint32_t{0});  // QOS
  w.put(std::uint8_t{0});
  w.put(std::uint32_t{0});  // axes
  w.put(std::uint64_t{0});  // settings
  return w;
}

}  // namespace

TEST_CASE("fuzz finding: a checksummed surrogate dataset cannot ask for memory its bytes do not hold") {
  // Found reading the decoder for fuzz_surrogate_dataset: counts were bounded by the bytes left, not by
  // the bytes each entry takes, so a window count of N allocated N empty windows (~200 bytes each)
  // from N bytes; and any hash bucket count was accepted, which training turns into an embedding of
  // buckets x d_model floats (2^32 buckets: a terabyte).
  ByteWriter empty = dataset_head(8);
  empty.put(std::uint64_t{0});  // no windows
  const auto d = surrogate::decode_dataset(seal_container(kDatasetMagic, 1, empty.bytes()), "ok.stsd");
  CHECK(d.windows.empty());
  CHECK(d.schema.user_buckets == 8);

  ByteWriter windows = dataset_head(8);
  windows.put(std::uint64_t{1000});  // 1000 windows in 1000 bytes: each needs at least 76
  windows.bytes().append(1000, '\0');
  try {
    surrogate::decode_dataset(seal_container(kDatasetMagic, 1, windows.bytes()), "windows.stsd");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.field() == "windows");
    CHECK(std::string(e.what()).find("window count") != std::string::npos);
  }

  ByteWriter buckets = dataset_head(0xffffffffu);
  buckets.put(std::uint64_t{0});
  try {
    surrogate::decode_dataset(seal_container(kDatasetMagic, 1, buckets.bytes()), "buckets.stsd");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.field() == "schema");
    CHECK(std::string(e.what()).find("hash buckets out of range") != std::string::npos);
  }
}

TEST_CASE("fuzz finding: a surrogate checkpoint's dimensions must fit in its weights") {
  // Found reading the loader for fuzz_surrogate_checkpoint: the network was built from the stored
  // dimensions before the weights were read, so a few hundred corrupt bytes claiming d_model 4096,
  // 64 + 64 blocks of width 65536 and 2^24 user buckets built a network of ~10^11 parameters. Now
  // its weights alone must fit in the stored bytes. The same for a schema without numeric features
  // (a zero-width input layer, which libtorch rejects outside the archive check).
  surrogate::Surrogate::set_threads(1);
  surrogate::SurrogateDataset d;
  d.schema.numeric = {"x"};
  d.schema.user_buckets = 2;
  d.schema.account_buckets = 2;
  surrogate::ModelConfig c;
  c.d_model = 4;
  c.heads = 1;
  c.encoder_layers = 1;
  c.ffn = 4;
  c.competition_heads = 1;
  const surrogate::Surrogate model(d, {}, c, 1);
  const auto path = (fs::temp_directory_path() / "slurmtwin_test_fuzz_checkpoint.ckpt").string();
  model.save(path);
  const std::string good = read_input_file(path);
  fs::remove(path);
  CHECK(surrogate::Surrogate::decode(good, "ok.ckpt").parameter_count() == model.parameter_count());

  // The payload starts with d_model, heads, encoder layers, conditioned layers, ffn, competition heads.
  const std::string payload = good.substr(20, good.size() - 28);
  auto with_dims = [&](std::int64_t d_model, std::int64_t layers, std::int64_t ffn) {  // re-sealed
    std::string p = payload;
    const std::int64_t dims[] = {d_model, 1, layers, 0, ffn, 1};
    std::memcpy(p.data(), dims, sizeof dims);
    return seal_container(kCheckpointMagic, surrogate::kCheckpointVersion, p);
  };
  CHECK(surrogate::Surrogate::decode(with_dims(4, 1, 4), "same.ckpt").parameter_count() > 0);
  CHECK_THROWS_WITH_AS(surrogate::Surrogate::decode(with_dims(4096, 64, 65536), "huge.ckpt"),
                       doctest::Contains("cannot hold a model of these dimensions"), InputError);
  // Within the bytes but not the stored shapes (version 1's libtorch archive took the stored tensors
  // as they were, and the model failed only in predict()): the load names the first mismatch.
  CHECK_THROWS_WITH_AS(
      surrogate::Surrogate::decode(with_dims(8, 1, 4), "shape.ckpt"),
      "shape.ckpt: corrupt surrogate checkpoint: weights 'numeric.weight' have shape [4, 1], the "
      "model's dimensions need [8, 1]",
      InputError);
}

TEST_CASE(
    "fuzz finding: checkpoint weights are read by our own decoder, not libtorch's TorchScript importer") {
  // Found by fuzz_surrogate_checkpoint within seconds: version 1 stored the weights as a libtorch
  // archive, which is a TorchScript module whose code libtorch parses on load. A corrupt archive threw
  // std::runtime_error (a parse error, not the c10::Error the loader caught) after 92 inputs and
  // crashed with SIGSEGV inside libtorch (ScriptTypeParser::parseClassConstant) after 1,861. Version 2
  // stores name, shape and float32 values per tensor and checks each against the model. The two
  // inputs, re-sealed as version 2, are in tests/fuzz/regressions/surrogate_checkpoint/.
  const auto dir = fs::path(SLURMTWIN_SOURCE_DIR) / "tests" / "fuzz" / "regressions" / "surrogate_checkpoint";
  for (const char* name : {"torchscript_parse_error.ckpt", "torchscript_segv.ckpt"}) {
    const auto file = (dir / name).string();
    // Their weights section is a zip archive now read as (name, shape, values): a name length past the end.
    CHECK_THROWS_WITH_AS(surrogate::Surrogate::load(file),
                         (file + ": truncated surrogate checkpoint payload").c_str(), InputError);
  }
  surrogate::Surrogate::set_threads(1);
  surrogate::SurrogateDataset d;
  d.schema.numeric = {"x"};
  d.schema.user_buckets = 2;
  d.schema.account_buckets = 2;
  surrogate::ModelConfig c;
  c.d_model = 4;
  c.heads = 1;
  c.encoder_layers = 1;
  c.ffn = 4;
  const surrogate::Surrogate model(d, {}, c, 1);
  const auto path = (fs::temp_directory_path() / "slurmtwin_test_fuzz_checkpoint_v2.ckpt").string();
  model.save(path);
  const std::string good = read_input_file(path);
  fs::remove(path);
  std::string payload = good.substr(20, good.size() - 28);
  // A version 1 file (the same payload under the old version) is refused by its version.
  const auto refused = fmt::format(
      "v1.ckpt: version: surrogate checkpoint version 1 is not supported (this build reads 2 to {})",
      surrogate::kCheckpointVersion);
  CHECK_THROWS_WITH_AS(surrogate::Surrogate::decode(seal_container(kCheckpointMagic, 1, payload), "v1.ckpt"),
                       refused.c_str(), InputError);
  // A tensor under another name than the model's, at the same place.
  const auto at = payload.find("numeric.weight");
  REQUIRE(at != std::string::npos);
  payload[at + 8] = 'W';
  CHECK_THROWS_WITH_AS(
      surrogate::Surrogate::decode(seal_container(kCheckpointMagic, surrogate::kCheckpointVersion, payload),
                                   "name.ckpt"),
      "name.ckpt: corrupt surrogate checkpoint: weights 'numeric.Weight' where 'numeric.weight' was expected",
      InputError);
}
