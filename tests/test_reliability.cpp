// Reliability guarantees as tests (docs/reliability.md): determinism of replays and sweeps (twice, and
// -j1 vs -j2, byte-identical), crash safety of sweeps (SIGKILL at several points, then resume) and of
// replays (SIGINT stops cleanly with exit code 130 and leaves no result files).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "experiments/sweep/sweep_store.hpp"
#include "test_support.hpp"
#include "traces/file_io.hpp"
#include "traces/rng.hpp"

using namespace slurmtwin;
namespace fs = std::filesystem;
using testing::slurp;

namespace {

/// Runs the slurmtwin binary with `args`; stdout+stderr go to `log`. Returns the exit code (-1 if killed).
int run_binary(const std::string& args, const fs::path& log) {
  const int status =
      std::system(fmt::format("{} {} > {} 2>&1", SLURMTWIN_BINARY, args, log.string()).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// Starts the slurmtwin binary with `argv` (stdout+stderr to `log`) and returns its pid.
pid_t spawn(const std::vector<std::string>& argv, const fs::path& log) {
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // One open file for both streams, so that neither overwrites the other's lines.
    if (freopen(log.c_str(), "w", stdout) == nullptr || dup2(fileno(stdout), fileno(stderr)) < 0) _exit(3);
    std::vector<char*> args{const_cast<char*>(SLURMTWIN_BINARY)};
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(SLURMTWIN_BINARY, args.data());
    _exit(127);
  }
  return pid;
}

/// `sweep show --csv` without its run_seconds column (wall time, not a result), found by its header.
std::string show_without_run_seconds(const std::string& db, const fs::path& log) {
  REQUIRE(run_binary("sweep show --csv --db " + db, log) == 0);
  std::istringstream in(slurp(log));
  std::string out, line;
  std::size_t column = std::string::npos;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;  // no field of this table is quoted or holds a comma
    for (std::size_t from = 0, to; from <= line.size(); from = to + 1) {
      to = std::min(line.find(',', from), line.size());
      fields.push_back(line.substr(from, to - from));
    }
    if (column == std::string::npos) {
      column =
          static_cast<std::size_t>(std::find(fields.begin(), fields.end(), "run_seconds") - fields.begin());
      REQUIRE(column < fields.size());
    }
    REQUIRE(column < fields.size());
    fields.erase(fields.begin() + static_cast<std::ptrdiff_t>(column));
    out += fmt::format("{}\n", fmt::join(fields, ","));
  }
  return out;
}

constexpr const char* kSweepSpec =
    "trace:\n  synthetic: {seed: 5, days: 2}\nparameters:\n  PriorityWeightAge: {range: [0, 10000]}\n"
    "  PriorityWeightFairshare: {range: [0, 10000]}\ndesign: {type: lhs, points: 16, seed: 2}\n"
    "objectives:\n  - {metric: wait_mean}\n  - {metric: utilisation, goal: max}\n";

}  // namespace

TEST_CASE("determinism: a real-trace replay with backfill twice gives byte-identical outputs") {
  const auto conf = testing::data_file("ub_medium/slurm.conf");
  const auto script = testing::data_file("ub_medium/sacctmgr.script");
  const auto events = testing::data_file("ub_medium/workload_5k.events");
  if (conf.empty() || script.empty() || events.empty()) return;
  const auto dir = testing::scratch_dir("determinism_replay");
  for (const char* run : {"a", "b"})
    REQUIRE(run_binary(fmt::format("replay --check-invariants --slurm-conf {} --sacctmgr {} --trace {} "
                                   "--users-from {} --out {}",
                                   conf, script, events, script, (dir / run).string()),
                       dir / (std::string(run) + ".log")) == 0);
  for (const char* f : {"jobs.csv", "jobs.sacct", "metrics.json"}) {
    const auto a = slurp(dir / "a" / f);
    CHECK(a.size() > 1000);
    CHECK(a == slurp(dir / "b" / f));
  }
}

TEST_CASE("determinism: the same sweep twice with -j1 and with -j2 stores byte-identical rows") {
  const auto dir = testing::scratch_dir("determinism_sweep");
  const auto spec = (dir / "spec.yaml").string();
  std::ofstream(spec) << kSweepSpec;
  std::map<std::string, std::string> shown;
  for (const char* jobs : {"1", "2"}) {
    const auto db = (dir / fmt::format("j{}.db", jobs)).string();
    REQUIRE(run_binary(fmt::format("sweep run {} --db {} -j {} --check-invariants", spec, db, jobs),
                       dir / "run.log") == 0);
    shown[jobs] = show_without_run_seconds(db, dir / "show.log");
  }
  // Header + 16 points + the site's current settings, and identical rows (keys, parameters, objectives,
  // Pareto flags).
  CHECK(std::count(shown["1"].begin(), shown["1"].end(), '\n') == 18);
  CHECK(shown["1"] == shown["2"]);
  auto r1 = experiments::SweepStore((dir / "j1.db").string()).rows();
  auto r2 = experiments::SweepStore((dir / "j2.db").string()).rows();
  REQUIRE(r1.size() == r2.size());
  for (std::size_t i = 0; i < r1.size(); ++i) {
    CHECK(r1[i].key == r2[i].key);
    CHECK(r1[i].metrics_json == r2[i].metrics_json);
    CHECK(r1[i].params_json == r2[i].params_json);
    CHECK(r1[i].version == r2[i].version);
    CHECK(r1[i].trace_fingerprint == r2[i].trace_fingerprint);
  }
}

TEST_CASE(
    "crash safety: a sweep killed with SIGKILL at three random points resumes with no lost or duplicated "
    "row") {
  const auto dir = testing::scratch_dir("crash_sweep");
  const auto spec = (dir / "spec.yaml").string();
  // 4-day workload (~2,600 jobs) per point: a replay takes long enough (> 0.2 s even on a fast idle
  // machine) that three kills land mid-sweep.
  std::string text = kSweepSpec;
  text.replace(text.find("points: 16"), 10, "points: 24");
  text.replace(text.find("days: 2"), 7, "days: 4");
  std::ofstream(spec) << text;
  // Reference: the same sweep, never interrupted.
  const auto ref_db = (dir / "ref.db").string();
  REQUIRE(run_binary(fmt::format("sweep run {} --db {} -j 2", spec, ref_db), dir / "ref.log") == 0);
  const auto reference = experiments::SweepStore(ref_db).rows();
  REQUIRE(reference.size() == 25);  // 24 and the site's current settings

  const auto db = (dir / "s.db").string();
  const auto stored_rows = [&db]() -> std::size_t {
    if (!fs::exists(db)) return 0;
    try {
      return experiments::SweepStore(db).keys().size();
    } catch (const std::exception&) {
      return 0;  // the tables are being created
    }
  };
  Rng rng(20261121);  // fixed seed: the kill points are random but the same on every run of the test
  std::size_t stored = 0;
  for (int round = 1; round <= 3; ++round) {
    // Kill while rows are being written: once this run has stored a new row, after a random delay
    // shorter than one replay.
    const pid_t pid = spawn({"sweep", "run", spec, "--db", db, "-j", "2"}, dir / "run.log");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (stored_rows() <= stored && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const auto delay = std::chrono::milliseconds(rng.below(200));
    std::this_thread::sleep_for(delay);
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));  // killed mid-sweep, not finished
    if (!WIFSIGNALED(status))  // it ended by itself: say how (seen once under ASan on a loaded machine)
      MESSAGE(
          fmt::format("round {}: exit status {}; its output:\n{}", round, status, slurp(dir / "run.log")));
    const auto now = stored_rows();
    CHECK(now > stored);  // progress, and nothing stored before is lost
    MESSAGE(
        fmt::format("kill {} at +{} ms after a new row: {} of 25 points stored", round, delay.count(), now));
    stored = now;
  }
  CHECK(stored < reference.size());  // killed before the end
  // The killed runs' claims on the points they were replaying are taken over at once (their process
  // is gone), not after the claims expire (300 s).
  const auto resume_start = std::chrono::steady_clock::now();
  REQUIRE(run_binary(fmt::format("sweep run {} --db {} -j 2", spec, db), dir / "resume.log") == 0);
  // Waiting for them would take about the 300 s lease (they were claimed moments before the kill);
  // the 20-odd replays left take seconds, a few times that under ASan.
  CHECK(std::chrono::steady_clock::now() - resume_start < std::chrono::seconds(280));
  CHECK(slurp(dir / "resume.log").find(fmt::format("{} evaluated now", reference.size() - stored)) !=
        std::string::npos);
  const auto rows = experiments::SweepStore(db).rows();
  REQUIRE(rows.size() == reference.size());
  std::set<std::string> keys;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    keys.insert(rows[i].key);
    CHECK(rows[i].key == reference[i].key);
    CHECK(rows[i].metrics_json == reference[i].metrics_json);  // no row half-written or from a stale run
  }
  CHECK(keys.size() == rows.size());
}

TEST_CASE(
    "two sweeps on one database share its points: each replayed once, both complete, rows as one run's") {
  const auto dir = testing::scratch_dir("shared_sweep");
  const auto spec = (dir / "spec.yaml").string();
  std::string text = kSweepSpec;
  text.replace(text.find("days: 2"), 7, "days: 4");  // a replay takes long enough for both to overlap
  std::ofstream(spec) << text;
  const auto ref_db = (dir / "ref.db").string();
  REQUIRE(run_binary(fmt::format("sweep run {} --db {} -j 1", spec, ref_db), dir / "ref.log") == 0);
  const auto reference = experiments::SweepStore(ref_db).rows();
  REQUIRE(reference.size() == 17);  // 16 and the site's current settings

  const auto db = (dir / "shared.db").string();
  const pid_t a = spawn({"sweep", "run", spec, "--db", db, "-j", "1"}, dir / "a.log");
  const pid_t b = spawn({"sweep", "run", spec, "--db", db, "-j", "1"}, dir / "b.log");
  std::size_t replayed = 0;
  for (const auto& [pid, log] : {std::pair{a, dir / "a.log"}, std::pair{b, dir / "b.log"}}) {
    int status = 0;
    waitpid(pid, &status, 0);
    const auto out = slurp(log);
    CHECK_MESSAGE((WIFEXITED(status) && WEXITSTATUS(status) == 0), out);
    // "sweep: 17 points: N evaluated now, M from earlier runs; ..."
    const auto at = out.find("17 points: ");
    REQUIRE_MESSAGE(at != std::string::npos, out);
    const auto n = std::stoul(out.substr(at + 11));
    CHECK(n > 0);  // both took part
    replayed += n;
  }
  CHECK(replayed == reference.size());  // no point replayed twice
  const auto rows = experiments::SweepStore(db).rows();
  REQUIRE(rows.size() == reference.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CHECK(rows[i].key == reference[i].key);
    CHECK(rows[i].metrics_json == reference[i].metrics_json);
  }
}

TEST_CASE(
    "crash safety: SIGINT stops a long replay with exit code 130, a clear message and no result files") {
  const auto dir = testing::scratch_dir("sigint_replay");
  // A 300-day synthetic trace (~150k jobs): its replay runs for many seconds, its loading well under one.
  const auto trace = (dir / "long.stt").string();
  REQUIRE(run_binary(fmt::format("trace generate --days 300 -o {}", trace), dir / "gen.log") == 0);
  const auto out = dir / "out";
  fs::create_directories(out);
  std::ofstream(out / "metrics.json") << "{\"stale\": true}\n";  // an earlier run's result
  const pid_t pid = spawn({"replay", "--trace", trace, "--out", out.string()}, dir / "replay.log");
  // Interrupt once the replay itself runs (it says so on stderr), plus a little simulated progress.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (slurp(dir / "replay.log").find("replaying") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  const auto log = slurp(dir / "replay.log");
  INFO(log);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  CHECK(log.find("SIGINT: replay stopped at simulated time") != std::string::npos);
  // The earlier run's result is left as it was (issue 24: the stopped run used to delete it), and
  // nothing of the stopped run is left, in the directory or beside it.
  CHECK(slurp(out / "metrics.json") == "{\"stale\": true}\n");
  for (const auto& e : fs::directory_iterator(out))
    CHECK_MESSAGE(e.path().filename() == "metrics.json", "left behind: " << e.path());
  for (const auto& e : fs::directory_iterator(dir))
    CHECK_MESSAGE(e.path().filename().string().find(".tmp") == std::string::npos,
                  "left behind: " << e.path());
}

TEST_CASE("an output directory's results are replaced together, or not at all") {
  const auto dir = testing::scratch_dir("staged_dir");
  const std::set<std::string> owned = {"jobs.csv", "metrics.json", "snapshot.txt"};
  const auto out = dir / "out";
  const auto stage_left = [&] {
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().filename().string().find(".tmp") != std::string::npos) return true;
    return false;
  };
  // A directory that is not there yet appears with all its files at once.
  {
    StagedDirectory staged(out, owned);
    staged.write("jobs.csv", "a\n");
    staged.write("snapshot.txt", "s\n");
    CHECK_FALSE(fs::exists(out));  // nothing before commit
    staged.commit();
  }
  CHECK(slurp(out / "jobs.csv") == "a\n");
  CHECK(slurp(out / "snapshot.txt") == "s\n");
  CHECK_FALSE(stage_left());
  std::ofstream(out / "notes.txt") << "mine\n";  // not a result: never touched
  // A run that fails before commit (an error, Ctrl-C) leaves the earlier results as they were.
  {
    StagedDirectory staged(out, owned);
    staged.write("jobs.csv", "b\n");
  }
  CHECK(slurp(out / "jobs.csv") == "a\n");
  CHECK(slurp(out / "snapshot.txt") == "s\n");
  CHECK_FALSE(stage_left());
  // A run that commits replaces them; an earlier result it did not write is removed, not left to look
  // like its own.
  {
    StagedDirectory staged(out, owned);
    staged.write("jobs.csv", "c\n");
    staged.write("metrics.json", "{}\n");
    staged.commit();
  }
  CHECK(slurp(out / "jobs.csv") == "c\n");
  CHECK(slurp(out / "metrics.json") == "{}\n");
  CHECK_FALSE(fs::exists(out / "snapshot.txt"));
  CHECK(slurp(out / "notes.txt") == "mine\n");
  CHECK_FALSE(stage_left());
  // A file where the directory should be is refused, and left alone.
  std::ofstream(dir / "plain") << "x";
  StagedDirectory staged(dir / "plain", owned);
  staged.write("jobs.csv", "d\n");
  CHECK_THROWS_WITH_AS(staged.commit(), doctest::Contains("not a directory"), std::runtime_error);
  CHECK(slurp(dir / "plain") == "x");
}

namespace {

/// Runs `body` in a child process whose files may not grow past `max_file_bytes` (RLIMIT_FSIZE,
/// SIGXFSZ ignored: a write past it fails, as on a full disk) and returns what it returned.
std::string with_file_size_limit(rlim_t max_file_bytes, const std::function<std::string()>& body) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{max_file_bytes, max_file_bytes};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    std::string said;
    try {
      said = body();
    } catch (const std::exception& e) {
      said = e.what();
    }
    [[maybe_unused]] const auto n = ::write(fds[1], said.data(), said.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string said;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) said.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return said;
}

}  // namespace

TEST_CASE("a sweep store on a full disk says so, and keeps what it had") {
  // Issue 27, D6: SQLite ends the transaction itself on a full disk; the ROLLBACK that followed threw
  // "cannot rollback - no transaction is active", which replaced the reason.
  const auto dir = testing::scratch_dir("full_disk_store");
  const auto db = (dir / "s.db").string();
  const std::vector<experiments::SweepObjective> objectives = {{"wait_mean", experiments::Goal::kMin}};
  const auto row = [](std::string key, std::size_t blob_bytes) {
    experiments::SweepRow r;
    r.key = std::move(key);
    r.params_json = "{}";
    r.metrics_json = "{}";
    r.objectives = {1.0};
    Rng rng(7);  // incompressible bytes, so that the page cache cannot hide them
    for (std::size_t i = 0; i < blob_bytes; ++i) r.job_waits.push_back(static_cast<char>(rng.below(256)));
    return r;
  };
  {
    experiments::SweepStore store(db);
    store.add_objectives(objectives);
    REQUIRE(store.insert(row("0000000000000001", 100), objectives));
  }
  const auto said = with_file_size_limit(256 << 10, [&] {
    experiments::SweepStore store(db);
    store.insert(row("0000000000000002", 4 << 20), objectives);
    return std::string("stored");
  });
  INFO(said);
  CHECK(said.find("cannot rollback") == std::string::npos);
  CHECK((said.find("database or disk is full") != std::string::npos ||
         said.find("disk I/O error") != std::string::npos));
  const auto rows = experiments::SweepStore(db, experiments::StoreAccess::kRead).rows();
  REQUIRE(rows.size() == 1);
  CHECK(rows.front().key == "0000000000000001");
}

TEST_CASE("a failed write names the file and the system's reason, and leaves no temporary file") {
  // Issue 27, D5: a write error left file.tmpPID behind, and the message had no reason.
  const auto dir = testing::scratch_dir("failed_write");
  const auto path = (dir / "big.csv").string();
  std::ofstream(path) << "old\n";
  const auto message = with_file_size_limit(4096, [&] {
    write_file_atomic(path, std::string(1 << 20, 'x'));
    return std::string("no error");
  });
  CHECK(message == path + ": write failed: File too large");
  CHECK(slurp(path) == "old\n");  // left as it was
  for (const auto& e : fs::directory_iterator(dir))
    CHECK_MESSAGE(e.path().filename() == "big.csv", "left behind: " << e.path());
  // A device that cannot take the bytes: the reason too.
  CHECK_THROWS_WITH_AS(write_file_atomic("/dev/full", "x"),
                       "/dev/full: write failed: No space left on device", std::runtime_error);
}

namespace {

/// Waits (at most 120 s) until `log` contains `text`.
void wait_for(const fs::path& log, const std::string& text) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (slurp(log).find(text) == std::string::npos && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

/// Sends SIGINT to `pid`, waits for it and returns its exit code (-1 when it did not exit normally).
int interrupt_and_wait(pid_t pid) {
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// Files in `dir` besides `keep` (a stopped writer must leave neither its output nor a temp file).
std::vector<std::string> files_besides(const fs::path& dir, const std::set<std::string>& keep) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (!keep.count(e.path().filename().string())) out.push_back(e.path().filename().string());
  return out;
}

}  // namespace

TEST_CASE("crash safety: SIGINT stops surrogate dataset generation with exit code 130 and no dataset") {
  const auto dir = testing::scratch_dir("sigint_dataset");
  // 400 settings of whole-week replays on one thread: minutes of work, stopped within the first ones.
  const auto data = dir / "week.stsd";
  const pid_t pid = spawn({"surrogate", "dataset", "-o", data.string(), "--settings", "400", "--window-jobs",
                           "64", "--context-jobs", "16", "--max-windows", "4", "-j", "1"},
                          dir / "dataset.log");
  wait_for(dir / "dataset.log", "building a dataset from");  // said once the handler is in place
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = interrupt_and_wait(pid);
  // A replay stops at its next step of simulated time, not after the remaining hundreds of replays.
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30));
  const auto log = slurp(dir / "dataset.log");
  INFO(log);
  CHECK(rc == 130);
  CHECK(log.find("SIGINT: dataset generation stopped with ") != std::string::npos);
  CHECK(log.find("of 401 replays finished; no dataset written") != std::string::npos);
  CHECK(files_besides(dir, {"dataset.log"}).empty());
}

TEST_CASE("crash safety: SIGINT stops surrogate training with exit code 130 and no checkpoint") {
  const auto dir = testing::scratch_dir("sigint_train");
  const auto data = dir / "small.stsd";
  REQUIRE(run_binary(fmt::format("surrogate dataset -o {} --settings 4 --window-jobs 64 --context-jobs 16 "
                                 "--max-windows 8 -j 2",
                                 data.string()),
                     dir / "dataset.log") == 0);
  const auto model = dir / "model.stsm";
  // A step per validation line; 10^6 steps would take hours: stopped once the first line is out.
  const pid_t pid =
      spawn({"surrogate", "train", "--data", data.string(), "-o", model.string(), "--steps", "1000000",
             "--eval-every", "1", "--patience", "1000000", "--threads", "1", "--device", "cpu"},
            dir / "train.log");
  wait_for(dir / "train.log", "step ");
  const int rc = interrupt_and_wait(pid);
  const auto log = slurp(dir / "train.log");
  INFO(log);
  CHECK(rc == 130);
  CHECK(log.find("SIGINT: training stopped after step ") != std::string::npos);
  CHECK(log.find("of 1000000; no checkpoint written") != std::string::npos);
  CHECK_FALSE(fs::exists(model));
  CHECK(files_besides(dir, {"dataset.log", "train.log", "small.stsd"}).empty());
}

TEST_CASE("output to /dev/null, a pipe or a symlink writes through it and leaves it in place") {
  // `-o /dev/null` renamed a temporary file over /dev/null: run as root, it became a regular file (and
  // broke every later redirection on the machine). A FIFO stands for the device here.
  const auto dir = testing::scratch_dir("write_in_place");
  const auto fifo = (dir / "pipe").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // A reader first (non-blocking), so that opening the pipe to write does not wait; without the fix
  // the pipe is renamed over and nothing arrives.
  const int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(fd >= 0);
  write_file_atomic(fifo, "report\n");
  char buf[64];
  const auto n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  CHECK(std::string(buf, static_cast<std::size_t>(std::max<ssize_t>(n, 0))) == "report\n");
  CHECK(std::filesystem::is_fifo(fifo));
  // A symlink to a file: the file gets the content, the link stays a link.
  const auto file = dir / "real.md";
  const auto link = dir / "link.md";
  std::ofstream(file) << "old";
  std::filesystem::create_symlink(file, link);
  write_file_atomic(link.string(), "new");
  CHECK(std::filesystem::is_symlink(link));
  CHECK(testing::slurp(file) == "new");
  // A directory is refused, not replaced.
  CHECK_THROWS_AS(write_file_atomic(dir.string(), "x"), std::runtime_error);
  CHECK(std::filesystem::is_directory(dir));
}
