// The slurmtwin binary end to end: help, exit codes, messages, outputs, determinism.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "experiments/sweep/sweep_spec.hpp"
#include "surrogate/dataset.hpp"
#include "test_support.hpp"
#include "traces/native_format.hpp"
#include "traces/site_settings.hpp"
#include "traces/time_format.hpp"

using slurmtwin::testing::run_cli;
using slurmtwin::testing::slurp;

TEST_CASE("help lists every command and each command's options with defaults") {
  const auto top = run_cli("--help");
  CHECK(top.code == 0);
  for (const char* c : {"replay", "trace", "config", "bench", "version"})
    CHECK(top.out.find(c) != std::string::npos);
  const auto replay = run_cli("replay --help");
  CHECK(replay.code == 0);
  CHECK(replay.out.find("--check-invariants") != std::string::npos);
  CHECK(replay.out.find("(=out/replay)") != std::string::npos);
  CHECK(run_cli("trace generate --help").out.find("--seed") != std::string::npos);
  CHECK(run_cli("nosuchcommand").code == 2);
  CHECK(run_cli("replay --nosuchoption").code == 2);
}

// libgomp's idle threads spin, and on a small or busy machine they take the cores the work needs
// (surrogate/openmp_waits.hpp): slurmtwin-torch makes them sleep unless the user chose a policy.
TEST_CASE("slurmtwin-torch's OpenMP threads sleep between parallel regions unless the user sets a policy") {
  const auto dir = slurmtwin::testing::scratch_dir("openmp_waits");
  const auto out = (dir / "out.txt").string();
  const auto summary = [&](const std::string& env) {  // this test's own process runs PASSIVE: unset it
    const int status =
        std::system(fmt::format("env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT {} {} version --torch > {} 2>&1",
                                env, SLURMTWIN_BINARY, out)
                        .c_str());
    CHECK(WIFEXITED(status));
    return slurmtwin::testing::slurp(out);
  };
  CHECK(summary("").find("OpenMP waits: PASSIVE") != std::string::npos);
  CHECK(summary("OMP_WAIT_POLICY=active").find("OpenMP waits: active") != std::string::npos);
  CHECK(summary("GOMP_SPINCOUNT=1000").find("OpenMP waits: GOMP_SPINCOUNT=1000") != std::string::npos);
}

TEST_CASE("slurmtwin links no libtorch: the surrogate's commands run slurmtwin-torch beside it") {
  const auto version = run_cli("version");
  CHECK(version.code == 0);
  CHECK(version.out.find("libtorch: not linked; the surrogate's commands run slurmtwin-torch") !=
        std::string::npos);
  const auto torch = run_cli("version --torch");  // run by slurmtwin-torch, which has libtorch
  CHECK(torch.code == 0);
  CHECK(torch.out.find("libtorch ") != std::string::npos);
  CHECK(torch.out.find("CUDA available: ") != std::string::npos);
  // Its commands answer through slurmtwin, usage errors included (exit 2 from slurmtwin-torch).
  CHECK(run_cli("surrogate --help").out.find("slurmtwin surrogate train") != std::string::npos);
  const auto bad = run_cli("surrogate train --nosuchoption");
  CHECK(bad.code == 2);
  CHECK(bad.out.find("nosuchoption") != std::string::npos);
  // A slurmtwin without slurmtwin-torch beside it says where it looked, exit 1; its own commands run.
  const auto dir = slurmtwin::testing::scratch_dir("cli_alone");
  const auto alone = dir / "slurmtwin";
  std::filesystem::copy_file(SLURMTWIN_BINARY, alone, std::filesystem::copy_options::overwrite_existing);
  const auto out = (dir / "out.txt").string();
  const auto run = [&](const std::string& args) {
    const int status = std::system(fmt::format("'{}' {} > '{}' 2>&1", alone.string(), args, out).c_str());
    return std::pair{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out)};
  };
  const auto [code, text] = run("surrogate info");
  CHECK(code == 1);
  CHECK(text.find(fmt::format("lives in {}: not there", (dir / "slurmtwin-torch").string())) !=
        std::string::npos);
  CHECK(run("version").first == 0);
  CHECK(run("sweep run nosuch.yaml --engine hybrid").first == 2);  // the spec is read before forwarding
}

TEST_CASE("trace info counts the ub_medium week and the HPC2N SWF file") {
  const auto events = slurmtwin::testing::data_file("ub_medium/workload_week.events");
  const auto script = slurmtwin::testing::data_file("ub_medium/sacctmgr.script");
  const auto swf = slurmtwin::testing::data_file("swf/hpc2n-first3171.swf");
  if (events.empty() || script.empty() || swf.empty()) return;
  const auto week = run_cli(fmt::format("trace info {} --users-from {}", events, script));
  CHECK(week.code == 0);
  CHECK(week.out.find("jobs:         19579\n") != std::string::npos);
  CHECK(week.out.find("records 19579 = accepted 19579 + folded 0 + rejected 0") != std::string::npos);
  // The file name says 3171, but it holds 3,170 job lines and one blank line (checked with wc/awk).
  const auto hpc2n = run_cli("trace info " + swf);
  CHECK(hpc2n.out.find("jobs:         3170\n") != std::string::npos);
}

TEST_CASE("trace convert --from/--to splits a trace by submit time, every job in exactly one part") {
  const auto dir = slurmtwin::testing::scratch_dir("convert_window");
  const auto full_path = (dir / "full.stt").string();
  REQUIRE(run_cli(fmt::format("trace generate --seed 3 --days 4 -o {}", full_path)).code == 0);
  using slurmtwin::format_timestamp, slurmtwin::read_native_trace, slurmtwin::Seconds;
  const auto full = read_native_trace(full_path);
  Seconds first = full.jobs.front().submit;
  for (const auto& j : full.jobs) first = std::min(first, j.submit);
  const Seconds cut = first + 2 * 86400 + 6 * 3600;
  std::size_t before = 0;
  for (const auto& j : full.jobs) before += j.submit < cut ? 1 : 0;
  REQUIRE(before > 0);
  REQUIRE(before < full.jobs.size());

  const auto head = (dir / "head.stt").string(), tail = (dir / "tail.stt").string();
  const auto r1 = run_cli(fmt::format("trace convert {} --to +2-06:00:00 -o {}", full_path, head));
  CHECK(r1.code == 0);
  CHECK(r1.out.find(fmt::format("kept {} of {} jobs read", before, full.jobs.size())) != std::string::npos);
  // The absolute form of the same instant.
  const auto r2 =
      run_cli(fmt::format("trace convert {} --from {} -o {}", full_path, format_timestamp(cut), tail));
  CHECK(r2.code == 0);
  const auto h = read_native_trace(head), t = read_native_trace(tail);
  CHECK(h.jobs.size() == before);
  CHECK(t.jobs.size() == full.jobs.size() - before);
  for (const auto& j : h.jobs) CHECK(j.submit < cut);
  for (const auto& j : t.jobs) CHECK(j.submit >= cut);
  // Job ids carry over: the two parts together are the full trace's ids.
  std::vector<std::uint64_t> ids, parts;
  for (const auto& j : full.jobs) ids.push_back(j.job_id);
  for (const auto* p : {&h, &t})
    for (const auto& j : p->jobs) parts.push_back(j.job_id);
  std::sort(ids.begin(), ids.end());
  std::sort(parts.begin(), parts.end());
  CHECK(ids == parts);

  // Bad bounds and an empty window stop with exit 2 and say why.
  const auto bad = run_cli(fmt::format("trace convert {} --from yesterday -o {}", full_path, tail));
  CHECK(bad.code == 2);
  CHECK(bad.out.find("--from: 'yesterday': expected") != std::string::npos);
  const auto reversed =
      run_cli(fmt::format("trace convert {} --from +2-00:00:00 --to +1-00:00:00 -o {}", full_path, tail));
  CHECK(reversed.code == 2);
  CHECK(reversed.out.find("empty window") != std::string::npos);
  const auto none = run_cli(fmt::format("trace convert {} --from +30-00:00:00 -o {}", full_path, tail));
  CHECK(none.code == 2);
  CHECK(none.out.find(fmt::format("none of the {} jobs read", full.jobs.size())) != std::string::npos);
  CHECK(run_cli(fmt::format("trace convert {} --from +UNLIMITED -o {}", full_path, tail)).code == 2);
}

TEST_CASE("--bf-tests-per-second takes 0 or a positive rate, nothing else") {
  // Issue 27, D8: nan, inf and -1 were accepted (the cost model then made cycles of any length).
  for (const char* bad : {"nan", "inf", "-1"}) {
    const auto r = run_cli(fmt::format("replay --bf-tests-per-second {} --out {}", bad,
                                       (slurmtwin::testing::scratch_dir("bf_rate") / "out").string()));
    CHECK(r.code == 2);
    CHECK(r.out.find("--bf-tests-per-second must be 0 (off) or a positive number") != std::string::npos);
  }
}

TEST_CASE("bad input: strict mode names file, line and field with exit code 2, lenient mode counts") {
  const auto dir = slurmtwin::testing::scratch_dir("cli_bad");
  const auto bad = (dir / "bad.events").string();
  std::ofstream(bad)
      << "-dt 0 -e submit_batch_job | -sim-walltime 60 --uid=u1 -A a -N 1 -n 1 -t 5:00 pseudo.job\n"
         "-dt 1 -e submit_batch_job | -sim-walltime 60 --uid=u1 -A a -N 1 -n 1 -t banana pseudo.job\n";
  const auto strict = run_cli(fmt::format("trace info {} --strict", bad));
  CHECK(strict.code == 2);
  CHECK(strict.out.find(bad + ":2:") != std::string::npos);
  const auto lenient =
      run_cli(fmt::format("trace info {} --rejects {}", bad, (dir / "rejects.txt").string()));
  CHECK(lenient.code == 0);
  CHECK(lenient.out.find("records 2 = accepted 1 + folded 0 + rejected 1") != std::string::npos);
  CHECK(slurp(dir / "rejects.txt").find("banana") != std::string::npos);
  CHECK(run_cli(fmt::format("trace info {}", (dir / "missing.swf").string())).code == 2);
}

TEST_CASE("config import turns ub_medium's slurm.conf + sacctmgr script into a site YAML that checks") {
  const auto conf = slurmtwin::testing::data_file("ub_medium/slurm.conf");
  const auto script = slurmtwin::testing::data_file("ub_medium/sacctmgr.script");
  if (conf.empty() || script.empty()) return;
  const auto dir = slurmtwin::testing::scratch_dir("cli_import");
  const auto yaml = (dir / "site.yaml").string();
  const auto imp =
      run_cli(fmt::format("config import --slurm-conf {} --sacctmgr {} -o {}", conf, script, yaml));
  CHECK(imp.code == 0);
  CHECK(imp.out.find("217 nodes") != std::string::npos);
  const auto check = run_cli("config check --site " + yaml);
  CHECK(check.code == 0);
  CHECK(check.out.find("cluster ubhpc: 217 nodes, 7968 CPUs, 2 partitions, 5 QOS") != std::string::npos);
}

TEST_CASE("config settings lists each setting once, with what a sweep accepts and a site's own values") {
  const auto all = run_cli("config settings");
  REQUIRE(all.code == 0);
  const auto swept = run_cli("config settings --sweepable");
  REQUIRE(swept.code == 0);
  // Every row of the table names a setting of the one table, once; a row marked for sweeps is a
  // parameter the sweep spec accepts (within its range), and every other row is one it refuses.
  std::istringstream rows(all.out);
  std::string row;
  std::size_t settings = 0, sweepable = 0;
  std::getline(rows, row);  // header
  std::getline(rows, row);  // rule
  while (std::getline(rows, row)) {
    const auto name = row.substr(2, row.find(" |", 2) - 2);
    const auto* st = slurmtwin::find_site_setting(name);
    REQUIRE_MESSAGE(st, name);
    ++settings;
    const bool yes = row.ends_with("| yes |");
    CHECK(yes == st->sweepable);
    CHECK(yes == (swept.out.find("| " + name + " |") != std::string::npos));
    const auto spec = fmt::format(
        "parameters:\n  {}: [{}]\nobjectives: [{{metric: wait_mean, goal: min}}]\n", name,
        st->kind == slurmtwin::SettingKind::kFlag ? 1 : std::max<std::int64_t>(st->min / st->scale, 1));
    if (yes) {
      ++sweepable;
      CHECK_NOTHROW(slurmtwin::experiments::parse_sweep_spec(spec, "s.yaml"));
    } else {
      CHECK_THROWS(slurmtwin::experiments::parse_sweep_spec(spec, "s.yaml"));
    }
  }
  CHECK(settings == slurmtwin::site_settings().size());
  CHECK(sweepable >= 15);
  // Units as slurm.conf writes them: bf_window in minutes (stored in seconds), times in seconds.
  CHECK(all.out.find("| bf_window | `params: bf_window_s` | min | 1 … 43200 | 1440 |") != std::string::npos);
  CHECK(all.out.find("| PriorityMaxAge | `priority_max_age_s` | s | 0 … UNLIMITED | 604800 |") !=
        std::string::npos);
  CHECK(run_cli("config settings --bogus").code == 2);

  // A site's values: ub_medium's slurm.conf sets bf_window=4320 (min), bf_interval=120,
  // bf_max_job_test=2500, default_queue_depth=2500 and bf_continue.
  const auto conf = slurmtwin::testing::data_file("ub_medium/slurm.conf");
  const auto script = slurmtwin::testing::data_file("ub_medium/sacctmgr.script");
  if (conf.empty() || script.empty()) return;
  const auto site = run_cli(fmt::format("config settings --slurm-conf {} --sacctmgr {}", conf, script));
  REQUIRE(site.code == 0);
  CHECK(site.out.find("| this site |") != std::string::npos);
  for (const char* expected :
       {"| bf_window | `params: bf_window_s` | min | 1 … 43200 | 1440 | 4320 |",
        "| bf_interval | `params: bf_interval_s` | s | -1 … 10800 | 30 | 120 |",
        "| bf_max_job_test | `params: bf_max_job_test` | integer | 1 … 1000000 | 500 | 2500 |",
        "| default_queue_depth | `params: default_queue_depth` | integer | 0 … 4294967295 | 100 | 2500 |",
        "| bf_continue | `params: bf_continue` | on/off |  | off | on |"})
    CHECK_MESSAGE(site.out.find(expected) != std::string::npos, expected);
}

TEST_CASE("bench runs a scale case in its own process, and refuses a case it does not know") {
  const auto dir = slurmtwin::testing::scratch_dir("cli_bench").string();
  const auto r = run_cli(fmt::format("bench --cases scale-x1 --report '' --scratch {}", dir));
  REQUIRE(r.code == 0);
  // One row: | scale-x1 | jobs | work s | jobs/s | process wall s | peak RSS MiB |. The jobs are 28 days
  // of the default workload at 199 a day, give or take the synthetic arrivals' randomness.
  const auto row = r.out.find("| scale-x1 | ");
  REQUIRE(row != std::string::npos);
  const long jobs = std::stol(r.out.substr(row + 13));
  CHECK(jobs > 28 * 199 * 8 / 10);
  CHECK(jobs < 28 * 199 * 12 / 10);
  const auto bad = run_cli(fmt::format("bench --cases scale-x1,scale-x3 --report '' --scratch {}", dir));
  CHECK(bad.code == 2);
  CHECK(bad.out.find("unknown bench case 'scale-x3'") != std::string::npos);
  CHECK(bad.out.find("| scale-x1") == std::string::npos);  // refused before any case ran
}

TEST_CASE("the default replay runs with invariants on and is byte-identical when repeated") {
  const auto dir = slurmtwin::testing::scratch_dir("cli_replay");
  const auto a = run_cli(fmt::format("replay --check-invariants --out {}", (dir / "a").string()));
  REQUIRE(a.code == 0);
  CHECK(a.out.find("0 never started, 0 rejected") != std::string::npos);
  const auto b = run_cli(fmt::format("replay --out {}", (dir / "b").string()));
  REQUIRE(b.code == 0);
  for (const char* f : {"jobs.csv", "jobs.sacct", "metrics.json"}) {
    const auto x = slurp(dir / "a" / f);
    CHECK(!x.empty());
    CHECK(x == slurp(dir / "b" / f));
  }
  // One CSV row per input job plus the header.
  const auto csv = slurp(dir / "a" / "jobs.csv");
  const auto rows = std::count(csv.begin(), csv.end(), '\n');
  const auto m = slurp(dir / "a" / "metrics.json");
  CHECK(m.find(fmt::format("\"input\": {}", rows - 1)) != std::string::npos);
}

TEST_CASE("surrogate eval scores the reference replay and another timer phase as point predictions") {
  const auto dir = slurmtwin::testing::scratch_dir("cli_surrogate_floor");
  const auto path = [&](const char* name) { return (dir / name).string(); };
  const std::string cut = "--window-jobs 64 --context-jobs 32 --max-windows 8 --settings 3 -j 2 --reference";
  REQUIRE(run_cli(fmt::format("surrogate dataset {} -o {}", cut, path("d.stsd"))).code == 0);
  // Offset 0 is the default; another offset starts slurmctld earlier, which moves every timer's phase.
  REQUIRE(run_cli(fmt::format("surrogate dataset {} --start-offset 0 -o {}", cut, path("d0.stsd"))).code ==
          0);
  CHECK(slurp(path("d.stsd")) == slurp(path("d0.stsd")));
  REQUIRE(run_cli(fmt::format("surrogate dataset {} --start-offset 45 -o {}", cut, path("d45.stsd"))).code ==
          0);
  CHECK(slurp(path("d.stsd")) != slurp(path("d45.stsd")));
  CHECK(run_cli(fmt::format("surrogate dataset {} --start-offset -5 -o {}", cut, path("bad.stsd"))).code ==
        2);
  REQUIRE(
      run_cli(fmt::format("surrogate train --data {} -o {} --steps 4 --eval-every 4 --d-model 16 --heads 2 "
                          "--ffn 32 --threads 1",
                          path("d.stsd"), path("m.ckpt")))
          .code == 0);

  // Two phases: each wait is the mean of the replays started 0 and 15 s early (the default site's
  // bf_interval is 30 s); the features stay those of the first.
  REQUIRE(run_cli(fmt::format("surrogate dataset {} --start-offset 15 -o {}", cut, path("d15.stsd"))).code ==
          0);
  REQUIRE(run_cli(fmt::format("surrogate dataset {} --phases 2 -o {}", cut, path("p2.stsd"))).code == 0);
  const auto a = slurmtwin::surrogate::read_dataset(path("d.stsd"));
  const auto b = slurmtwin::surrogate::read_dataset(path("d15.stsd"));
  const auto p2 = slurmtwin::surrogate::read_dataset(path("p2.stsd"));
  REQUIRE(p2.waits.size() == a.waits.size());
  std::size_t moved = 0, compared = 0;
  for (std::size_t w = 0; w < a.waits.size(); ++w) {
    CHECK(p2.windows[w].numeric == a.windows[w].numeric);
    for (std::size_t k = 0; k < a.waits[w].size(); ++k) {
      const float x = a.waits[w][k], y = b.waits[w][k], mean = p2.waits[w][k];
      if (std::isnan(x) || std::isnan(y)) {
        CHECK(std::isnan(mean));
        continue;
      }
      ++compared;
      moved += x != y;
      CHECK(mean == doctest::Approx((x + y) / 2).epsilon(1e-6));
    }
  }
  CHECK(compared > 1000);
  CHECK(moved > 0);  // the phase moved some waits: the mean is not either replay

  // Against itself the floor is exact agreement; neither point prediction has an interval to cover.
  const auto self = run_cli(fmt::format("surrogate eval --model {} --data {} --no-baseline --noise-floor {}",
                                        path("m.ckpt"), path("d.stsd"), path("d.stsd")));
  REQUIRE(self.code == 0);
  CHECK(self.out.find("noise floor  jobs") != std::string::npos);
  CHECK(self.out.find("MAE 0.000 h  RMSE 0.000 h  R² 1.000 (log 1.000)  MSE log10 0.0000 (FVU 0.000)  80% "
                      "coverage - (no interval)") != std::string::npos);
  CHECK(self.out.find("reference    jobs") != std::string::npos);
  CHECK(self.out.find("- (no interval)") != self.out.rfind("- (no interval)"));  // reference and floor
  CHECK(run_cli(fmt::format("surrogate eval --model {} --data {} --no-baseline --noise-floor {}",
                            path("m.ckpt"), path("d.stsd"), path("d45.stsd")))
            .code == 0);

  // A model trained with --split tail is evaluated on the same trace with its own split by default;
  // another split would score windows it trained on: refused. --part all scores every window and
  // setting of the dataset.
  REQUIRE(
      run_cli(fmt::format("surrogate train --data {} -o {} --steps 4 --eval-every 4 --d-model 16 --heads 2 "
                          "--ffn 32 --threads 1 --split tail",
                          path("d.stsd"), path("tail.ckpt")))
          .code == 0);
  const auto own = run_cli(
      fmt::format("surrogate eval --model {} --data {} --no-baseline", path("tail.ckpt"), path("d.stsd")));
  REQUIRE(own.code == 0);
  CHECK(own.out.find("in the dataset; split tail, seed 7)") != std::string::npos);
  const auto other_split =
      run_cli(fmt::format("surrogate eval --model {} --data {} --no-baseline --split interleaved",
                          path("tail.ckpt"), path("d.stsd")));
  CHECK(other_split.code == 2);
  CHECK(other_split.out.find("was trained on this trace with --split tail --split-seed 7") !=
        std::string::npos);
  CHECK(run_cli(fmt::format("surrogate eval --model {} --data {} --no-baseline --split tail --split-seed 7",
                            path("tail.ckpt"), path("d.stsd")))
            .code == 0);
  // --part all scores every window and setting: on the model's own trace that is its training data,
  // refused; another trace's dataset (the synthetic workload of another seed) is scored whole.
  const auto own_all = run_cli(fmt::format("surrogate eval --model {} --data {} --no-baseline --part all",
                                           path("m.ckpt"), path("d.stsd")));
  CHECK(own_all.code == 2);
  CHECK(own_all.out.find("--part all would score the windows and settings it trained on") !=
        std::string::npos);
  REQUIRE(run_cli(fmt::format("surrogate dataset {} --seed 43 -o {}", cut, path("other.stsd"))).code == 0);
  const auto all = run_cli(fmt::format("surrogate eval --model {} --data {} --no-baseline --part all",
                                       path("m.ckpt"), path("other.stsd")));
  REQUIRE(all.code == 0);
  const auto data = slurmtwin::surrogate::read_dataset(path("other.stsd"));
  CHECK(all.out.find(fmt::format("all part: {0} windows × {1} settings ({0} × {1} in the dataset",
                                 data.windows.size(), data.setting_count())) != std::string::npos);

  // The decision over another trace's 9 settings: the least mean wait summed over the windows (by hand
  // from the dataset's waits), the transformer's choice with no exact replay, and the hybrid's with 5
  // and 8 exact replays of them over 6 design orders; the transformer's top 8 hold its top 5.
  REQUIRE(
      run_cli(fmt::format("surrogate dataset {} --seed 43 --settings 8 -o {}",
                          cut.substr(0, cut.find("--settings")) + "-j 2 --reference", path("other9.stsd")))
          .code == 0);
  const auto decision =
      run_cli(fmt::format("surrogate eval --model {} --data {} --no-baseline --part all --decision-orders 6 "
                          "--json {}",
                          path("m.ckpt"), path("other9.stsd"), path("d.json")));
  REQUIRE(decision.code == 0);
  const auto nine = slurmtwin::surrogate::read_dataset(path("other9.stsd"));
  REQUIRE(nine.setting_count() == 9);
  // The least over the settings of the mean wait of the started targets (of QOS `qos`, or all: 0),
  // summed over the windows.
  const auto best_of = [&](std::int64_t qos) {
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t s = 0; s < 9; ++s) {
      double pooled = 0;
      for (std::size_t w = 0; w < nine.windows.size(); ++w) {
        double sum = 0, n = 0;
        for (std::size_t i = 0; i < nine.windows[w].jobs; ++i)
          if (const float x = nine.waits[w][s * nine.windows[w].jobs + i];
              nine.windows[w].target[i] && (qos == 0 || nine.windows[w].qos[i] == qos) && !std::isnan(x)) {
            sum += x;
            n += 1;
          }
        pooled += n > 0 ? sum / n : 0;
      }
      best = std::min(best, pooled);
    }
    return best;
  };
  const double best = best_of(0);
  CHECK(decision.out.find(fmt::format("decision: the least mean wait among 9 settings (best {:.0f} s)",
                                      best)) != std::string::npos);
  const auto dj = YAML::LoadFile(path("d.json"));
  CHECK(dj["decision"]["best_exact_s"].as<double>() == doctest::Approx(best).epsilon(1e-3));
  REQUIRE(dj["decision"]["rows"].size() == 2);
  CHECK(dj["decision"]["rows"][0]["exact_replays"].as<int>() == 5);
  CHECK(dj["decision"]["rows"][1]["exact_replays"].as<int>() == 8);
  CHECK(dj["decision"]["rows"][1]["model_top_pct"].as<double>() <=
        dj["decision"]["rows"][0]["model_top_pct"].as<double>());
  CHECK(dj["decision"]["rows"][0]["model_top_pct"].as<double>() <=
        dj["transformer"]["regret_pooled_pct"].as<double>());
  for (const auto& row : dj["decision"]["rows"]) {
    CHECK(row["surface_within1"].as<double>() >= 0);
    CHECK(row["surface_within1"].as<double>() <= 1);
  }
  // Per group, the same decision by one group's own statistic: the first group is the first QOS
  // category with started targets, by its mean wait (by hand as above, over that QOS's jobs only).
  std::int64_t first_qos = std::numeric_limits<std::int64_t>::max();
  for (std::size_t w = 0; w < nine.windows.size(); ++w)
    for (std::size_t i = 0; i < nine.windows[w].jobs; ++i)
      if (nine.windows[w].target[i] && nine.windows[w].qos[i] > 0 && !std::isnan(nine.waits[w][i]))
        first_qos = std::min(first_qos, nine.windows[w].qos[i]);
  REQUIRE(first_qos != std::numeric_limits<std::int64_t>::max());
  const double group_best = best_of(first_qos);
  const auto first_name = "qos " + nine.schema.qos.at(static_cast<std::size_t>(first_qos - 1)) + " mean";
  REQUIRE(dj["groups"].size() == dj["decision"]["groups"].size());
  CHECK(dj["groups"][0]["name"].as<std::string>() == first_name);
  CHECK(dj["decision"]["groups"][0]["name"].as<std::string>() == first_name);
  CHECK(dj["decision"]["groups"][0]["best_exact_s"].as<double>() ==
        doctest::Approx(group_best).epsilon(1e-3));
  // Replays needed: a budget of the study (5 or 8 of the 9 settings; 0 for the transformer's first
  // choice), or null when none gets within 1%.
  for (const auto& g : dj["decision"]["groups"])
    for (const char* key : {"surface_half", "surface_90", "transformer_top"})
      if (!g[key].IsNull()) {
        const auto n = g[key].as<int>();
        CHECK((n == 5 || n == 8 || (n == 0 && std::string(key) == "transformer_top")));
      }
  // Accounts are hash buckets unless eval is given the dataset's trace (the built-in workload of seed
  // 43, written out), which names them; another trace is refused.
  const auto last = dj["groups"][dj["groups"].size() - 1]["name"].as<std::string>();
  CHECK(last.rfind("account #", 0) == 0);
  REQUIRE(run_cli(fmt::format("trace generate --seed 43 -o {}", path("s43.stt"))).code == 0);
  REQUIRE(run_cli(fmt::format("trace generate --seed 44 -o {}", path("s44.stt"))).code == 0);
  const auto named =
      run_cli(fmt::format("surrogate eval --model {} --data {} --no-baseline --part all --trace {}",
                          path("m.ckpt"), path("other9.stsd"), path("s43.stt")));
  REQUIRE(named.code == 0);
  const auto s43 = slurmtwin::read_native_trace(path("s43.stt"));
  std::size_t named_accounts = 0;
  for (const auto& account : s43.accounts.names())
    named_accounts += named.out.find("account " + account + " mean") != std::string::npos ? 1 : 0;
  CHECK(named_accounts > 0);
  CHECK(named.out.find("account #") == std::string::npos);
  const auto wrong =
      run_cli(fmt::format("surrogate eval --model {} --data {} --no-baseline --part all --trace {}",
                          path("m.ckpt"), path("other9.stsd"), path("s44.stt")));
  CHECK(wrong.code == 2);
  CHECK(wrong.out.find("--trace: the trace is not the one the dataset was built from") != std::string::npos);

  // --split all trains on every window and setting, runs every step whatever the patience and keeps the
  // last weights; on its own trace nothing is left to score it.
  const auto whole = run_cli(
      fmt::format("surrogate train --data {} -o {} --steps 6 --eval-every 2 --patience 1 --d-model 16 "
                  "--heads 2 --ffn 32 --threads 1 --split all",
                  path("d.stsd"), path("all.ckpt")));
  REQUIRE(whole.code == 0);
  const auto d = slurmtwin::surrogate::read_dataset(path("d.stsd"));
  CHECK(whole.out.find(fmt::format("{} train windows × {} settings, validation 0 × 0", d.windows.size(),
                                   d.setting_count())) != std::string::npos);
  CHECK(whole.out.find("for 6 steps in") != std::string::npos);
  CHECK(whole.out.find("nothing held out: the last weights kept, training loss") != std::string::npos);
  CHECK(whole.out.find("at step 6;") != std::string::npos);
  const auto own_whole = run_cli(
      fmt::format("surrogate eval --model {} --data {} --no-baseline", path("all.ckpt"), path("d.stsd")));
  CHECK(own_whole.code == 2);
  CHECK(own_whole.out.find("(--split all): nothing here is held out") != std::string::npos);
  CHECK(run_cli(fmt::format("surrogate eval --model {} --data {} --no-baseline --part all", path("all.ckpt"),
                            path("other.stsd")))
            .code == 0);

  // Bootstrap intervals over the test part's windows. It has one window, so every resample is that
  // window and each interval is the point figure; against itself the floor's error is 0 in every one.
  const auto boot = run_cli(fmt::format(
      "surrogate eval --model {} --data {} --no-baseline --noise-floor {} --bootstrap 20 --json {}",
      path("m.ckpt"), path("d.stsd"), path("d.stsd"), path("e.json")));
  REQUIRE(boot.code == 0);
  CHECK(boot.out.find("90% intervals (20 resamples of the 1 windows): r2_hours [") != std::string::npos);
  const auto json = YAML::LoadFile(path("e.json"));
  for (const char* figure : {"r2_hours", "mse_log10", "coverage80"}) {
    CAPTURE(figure);
    const auto t = json["transformer"];
    CHECK(t["ci90"][figure][0].as<double>() == t[figure].as<double>());
    CHECK(t["ci90"][figure][1].as<double>() == t[figure].as<double>());
  }
  CHECK(json["transformer"]["ci90"]["resamples"].as<int>() == 20);
  CHECK(json["noise_floor"]["ci90"]["mse_log10"][0].as<double>() == 0);
  CHECK(json["noise_floor"]["ci90"]["mse_log10"][1].as<double>() == 0);
  CHECK_FALSE(json["noise_floor"]["ci90"]["coverage80"]);  // a point prediction covers nothing
  // Paired with the floor (exact waits): the transformer's figure less 0, or less R² 1, in every resample.
  const auto paired = json["transformer_minus_noise_floor"];
  CHECK(paired["mse_log10"][0].as<double>() == json["transformer"]["mse_log10"].as<double>());
  CHECK(paired["r2_hours"][1].as<double>() ==
        doctest::Approx(json["transformer"]["r2_hours"].as<double>() - 1).epsilon(1e-3));
  CHECK(boot.out.find("transformer − noise floor, paired 90% intervals: r2_hours [") != std::string::npos);
  // A second checkpoint scored beside the model: itself, so every paired difference is exactly 0.
  REQUIRE(
      run_cli(fmt::format(
                  "surrogate eval --model {} --data {} --no-baseline --against {} --bootstrap 20 --json {}",
                  path("m.ckpt"), path("d.stsd"), path("m.ckpt"), path("e2.json")))
          .code == 0);
  const auto self_pair = YAML::LoadFile(path("e2.json"))["transformer_minus_against"];
  for (const char* figure : {"r2_hours", "mse_log10", "coverage80"}) {
    CAPTURE(figure);
    CHECK(self_pair[figure][0].as<double>() == 0);
    CHECK(self_pair[figure][1].as<double>() == 0);
  }

  // Held-out windows under the training settings; a part that is not one is refused.
  const auto mixed = run_cli(fmt::format(
      "surrogate eval --model {} --data {} --no-baseline --part test:train", path("m.ckpt"), path("d.stsd")));
  CHECK(mixed.code == 0);
  CHECK(mixed.out.find("test:train part: 1 windows × 2 settings") != std::string::npos);
  CHECK(run_cli(fmt::format("surrogate eval --model {} --data {} --part test:all", path("m.ckpt"),
                            path("d.stsd")))
            .code == 2);

  // Another design (4 settings) is not the same settings: refused, naming both files.
  REQUIRE(
      run_cli(fmt::format("surrogate dataset --window-jobs 64 --context-jobs 32 --max-windows 8 --settings 4 "
                          "-j 2 --reference -o {}",
                          path("d4.stsd")))
          .code == 0);
  const auto other = run_cli(fmt::format("surrogate eval --model {} --data {} --no-baseline --noise-floor {}",
                                         path("m.ckpt"), path("d.stsd"), path("d4.stsd")));
  CHECK(other.code == 2);
  CHECK(other.out.find(path("d4.stsd") +
                       ": the noise floor needs the same trace, windows and settings as the "
                       "dataset") != std::string::npos);
}

TEST_CASE(
    "surrogate dataset, train and eval end to end (the dataset is the same bytes with 1 or 2 workers)") {
  const auto dir = slurmtwin::testing::scratch_dir("cli_surrogate");
  const auto data1 = (dir / "d1.stsd").string(), data2 = (dir / "d2.stsd").string();
  const auto model = (dir / "m.ckpt").string();
  const std::string cut = "--window-jobs 64 --context-jobs 32 --max-windows 8 --settings 3";
  const auto made = run_cli(fmt::format("surrogate dataset {} -j 1 -o {}", cut, data1));
  REQUIRE(made.code == 0);
  CHECK(made.out.find("8 windows (512 target jobs), 4 settings") != std::string::npos);
  REQUIRE(run_cli(fmt::format("surrogate dataset {} -j 2 -o {}", cut, data2)).code == 0);
  CHECK(slurp(data1) == slurp(data2));

  const auto trained =
      run_cli(fmt::format("surrogate train --data {} -o {} --steps 20 --eval-every 10 --d-model 16 --heads 2 "
                          "--ffn 32 --threads 1",
                          data1, model));
  REQUIRE(trained.code == 0);
  CHECK(trained.out.find("for 20 steps") != std::string::npos);
  const auto evaluated = run_cli(fmt::format("surrogate eval --model {} --data {}", model, data1));
  CHECK(evaluated.code == 0);
  CHECK(evaluated.out.find("transformer") != std::string::npos);
  CHECK(evaluated.out.find("ridge") != std::string::npos);
  // Few-shot fine-tuning: the first training window under the first training setting only.
  const auto tuned =
      run_cli(fmt::format("surrogate train --data {} --init {} -o {} --train-windows 1 --train-settings 1 "
                          "--steps 4 --eval-every 4 "
                          "--threads 1",
                          data1, model, (dir / "tuned.ckpt").string()));
  CHECK(tuned.code == 0);
  CHECK(tuned.out.find("1 train windows × 1 settings") != std::string::npos);

  std::string bytes = slurp(model);
  bytes[bytes.size() / 2] ^= 0x10;
  std::ofstream(model, std::ios::binary) << bytes;
  const auto bad = run_cli(fmt::format("surrogate eval --model {} --data {}", model, data1));
  CHECK(bad.code == 2);
  CHECK(bad.out.find("checksum") != std::string::npos);
}

TEST_CASE("a replay that refuses (nearly) every job exits 2 naming the reasons and the names") {
  // Issue 23: a replay that rejected 100% of its jobs exited 0; "unknown partition" named none.
  const auto dir = slurmtwin::testing::scratch_dir("cli_rejected");
  const auto events = (dir / "t.events").string();
  std::ofstream(events)
      << "-dt 0 -e submit_batch_job | -sim-walltime 60 --uid=u1 -A physics -p nosuch -N 1 -n 1 "
         "-t 5:00 pseudo.job\n"
         "-dt 1 -e submit_batch_job | -sim-walltime 60 --uid=u2 -A physics -p nosuch -N 1 -n 1 "
         "-t 5:00 pseudo.job\n"
         "-dt 2 -e submit_batch_job | -sim-walltime 60 --uid=u3 -A physics -p cpu -N 1 -n 1 "
         "-t 5:00 pseudo.job\n";
  const auto out = (dir / "out").string();
  // 2 of 3 refused: over the default 10%.
  const auto r = run_cli(fmt::format("replay --trace {} --out {}", events, out));
  CHECK(r.code == 2);
  CHECK(r.out.find("2 of 3 job records (66.7%) were refused at submit (more than --max-rejected 10%)") !=
        std::string::npos);
  CHECK(r.out.find("2  unknown partition (e.g. partition 'nosuch')") != std::string::npos);
  CHECK(std::filesystem::exists(std::filesystem::path(out) / "jobs.csv"));  // written for diagnosis
  // A higher threshold lets it through.
  CHECK(run_cli(fmt::format("replay --trace {} --out {} --max-rejected 70", events, out)).code == 0);
}

TEST_CASE("records rejected when read count against --max-rejected, and a trace with none left is refused") {
  // Ten jobs, two with a time limit no reader takes (lines 4 and 8): 20% rejected when read. The run
  // stops before replaying, naming the first (file, line, field) and the count by reason.
  const auto dir = slurmtwin::testing::scratch_dir("cli_read_rejected");
  const auto events = (dir / "r.events").string();
  std::string text;
  for (int i = 0; i < 10; ++i)
    text += fmt::format(
        "-dt {} -e submit_batch_job | -sim-walltime 60 --uid=u{} -A physics -p {} -N 1 -n 1 -t {} "
        "pseudo.job\n",
        i, i, i == 5 ? "nosuch" : "cpu", i == 3 || i == 7 ? "zz" : "5:00");
  std::ofstream(events) << text;
  const auto out = (dir / "out").string();
  const auto r = run_cli(fmt::format("replay --trace {} --out {}", events, out));
  CHECK(r.code == 2);
  CHECK(r.out.find(events +
                   ":4: --time: 'zz' is not a time limit (2 of the 10 job records were rejected when "
                   "read, 20.0% against at most 10%: 2 bad --time;") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(std::filesystem::path(out) / "jobs.csv"));
  // At 25% the read passes, but with the one job refused at submit (partition 'nosuch') 3 of 10 are
  // refused in all: over 25%, exit 2 after the replay, both counted.
  const auto both = run_cli(fmt::format("replay --trace {} --out {} --max-rejected 25", events, out));
  CHECK(both.code == 2);
  CHECK(both.out.find("3 of 10 job records (30.0%) were refused: 1 at submit, 2 when read") !=
        std::string::npos);
  CHECK(run_cli(fmt::format("replay --trace {} --out {} --max-rejected 30", events, out)).code == 0);
  // Every record rejected: refused whatever the threshold, before anything runs (the UB toolkit's
  // pandas-formatted copy of a real sacct dump, Elapsed "0 days 23:33:25": 4 of 4 rejected).
  if (const auto fixture =
          slurmtwin::testing::data_file("sacct_fixtures/sacct_simple_formatted_expected.log");
      !fixture.empty()) {
    const auto all = run_cli(fmt::format("replay --trace {} --out {} --max-rejected 100", fixture, out));
    CHECK(all.code == 2);
    CHECK(all.out.find(fixture + ":2: Elapsed: bad Elapsed '0 days 23:33:25' (4 of the 4 job records were "
                                 "rejected when read, 100.0% against at most 100%: 1 bad Elapsed, 3 too many "
                                 "fields;") != std::string::npos);
  }
  // Every job refused at submit: the replay runs (its outputs are for diagnosis) and no job held
  // anything: no memory share is printed (it read -100%).
  const auto refused = (dir / "refused.events").string();
  std::ofstream(refused)
      << "-dt 0 -e submit_batch_job | -sim-walltime 60 --uid=u1 -A physics -p nosuch -N 1 -n 1 "
         "-t 5:00 pseudo.job\n";
  const auto zero = run_cli(fmt::format("replay --trace {} --out {}", refused, out));
  CHECK(zero.code == 2);
  CHECK(zero.out.find("utilisation: CPUs 0.0%  makespan") != std::string::npos);
  CHECK(zero.out.find("-100") == std::string::npos);
  // A sweep reads its trace the same way: the spec's trace with 20% rejected is refused.
  const auto spec = (dir / "s.yaml").string();
  std::ofstream(spec) << fmt::format(
      "trace: {{path: {}, format: events}}\nparameters:\n  PriorityWeightAge: [0, 1000]\n"
      "design: {{type: grid}}\nobjectives:\n  - {{metric: wait_mean, goal: min}}\n",
      events);
  const auto sweep = run_cli(fmt::format("sweep run {} --db {}", spec, (dir / "s.db").string()));
  CHECK(sweep.code == 2);
  CHECK(sweep.out.find(events + ":4: --time:") != std::string::npos);
}

TEST_CASE("config import stops at a slurm.conf typo with exit 2, and --lenient warns and goes on") {
  const auto dir = slurmtwin::testing::scratch_dir("cli_typo");
  const auto conf = (dir / "slurm.conf").string();
  std::ofstream(conf) << "ClusterName=c\nNodeName=n1 CPUs=4 RealMemory=1000\n"
                         "PartitionName=p Nodes=n1 Default=YES\nPriorityWeightFairshar=100\n";
  const auto strict =
      run_cli(fmt::format("config import --slurm-conf {} -o {}", conf, (dir / "s.yaml").string()));
  CHECK(strict.code == 2);
  CHECK(strict.out.find(conf +
                        ":4: PriorityWeightFairshar: unknown key 'PriorityWeightFairshar' (did you mean "
                        "PriorityWeightFairshare?)") != std::string::npos);
  const auto lenient =
      run_cli(fmt::format("config import --slurm-conf {} -o {} --lenient", conf, (dir / "s.yaml").string()));
  CHECK(lenient.code == 0);
  CHECK(lenient.out.find("ignored (--lenient)") != std::string::npos);
}

TEST_CASE("a sacct dump without the columns a replay needs stops the replay naming them") {
  // Issue 23: a dump without Submit was accepted, even with --strict, and every job then refused.
  const auto dir = slurmtwin::testing::scratch_dir("cli_columns");
  const auto dump = (dir / "jobs.sacct").string();
  std::ofstream(dump) << "JobID|User|Account|Partition|Start|End|Timelimit|NCPUS|State\n"
                         "1|u1|physics|cpu|2026-01-05T00:00:10|2026-01-05T00:10:10|01:00:00|4|COMPLETED\n";
  const auto r = run_cli(fmt::format("replay --trace {} --out {} --strict", dump, (dir / "out").string()));
  CHECK(r.code == 2);
  CHECK(r.out.find(dump +
                   ":1: header: sacct columns a replay needs are missing: Submit; dump with sacct -a -P "
                   "-D -o JobID,") != std::string::npos);
  // trace info still describes it, and says what is missing.
  const auto info = run_cli("trace info " + dump);
  CHECK(info.code == 0);
  CHECK(info.out.find("missing columns a replay needs: Submit") != std::string::npos);
}

TEST_CASE("config import counts the settings it read by kind: modelled, not modelled but warned, no effect") {
  // Issue 23, item 2: PriorityWeightAge is modelled; SchedulerTimeSlice changes scheduling (gang time
  // slicing) and is not modelled: warned with its effect; SlurmctldLogFile and AuthType change nothing
  // the scheduler decides: counted, listed with --verbose, quiet otherwise.
  const auto dir = slurmtwin::testing::scratch_dir("cli_kinds");
  const auto conf = (dir / "slurm.conf").string();
  std::ofstream(conf)
      << "ClusterName=c\nNodeName=n1 CPUs=4 RealMemory=1000\n"
         "PartitionName=p Nodes=n1 Default=YES\nPriorityWeightAge=100\n"
         "SchedulerTimeSlice=30\nSlurmctldLogFile=/var/log/slurmctld.log\nAuthType=auth/munge\n";
  const auto yaml = (dir / "s.yaml").string();
  const auto quiet = run_cli(fmt::format("config import --slurm-conf {} -o {}", conf, yaml));
  CHECK(quiet.code == 0);
  CHECK(quiet.out.find(conf + ":5: SchedulerTimeSlice is not modelled: gang time slicing is not modelled") !=
        std::string::npos);
  CHECK(quiet.out.find("read: 2 modelled, 1 that change scheduling but are not modelled (warned above: "
                       "SchedulerTimeSlice), 2 with no effect on scheduling (--verbose lists them)") !=
        std::string::npos);
  CHECK(quiet.out.find("SlurmctldLogFile") == std::string::npos);
  const auto verbose = run_cli(fmt::format("config import --slurm-conf {} -o {} --verbose", conf, yaml));
  CHECK(verbose.out.find("2 with no effect on scheduling (AuthType, SlurmctldLogFile)") != std::string::npos);
}
