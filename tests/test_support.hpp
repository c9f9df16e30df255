#pragma once
// Shared helpers for tests: where the real data is (with a clear skip when it is absent), scratch
// directories, reading files, and running the slurmtwin binary.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "traces/read_report.hpp"

namespace slurmtwin::testing {

/// ../shared/data (or $SLURMTWIN_DATA_DIR).
inline std::filesystem::path data_dir() {
  if (const char* env = std::getenv("SLURMTWIN_DATA_DIR")) return env;
  return SLURMTWIN_DATA_DIR;
}

/// Path of a shared data file, or "" after printing why the test is skipped.
inline std::string data_file(const std::string& relative) {
  const auto p = data_dir() / relative;
  if (!std::filesystem::exists(p)) {
    MESSAGE("SKIPPED: real data file absent: " << p.string());
    return {};
  }
  return p.string();
}

/// A fresh scratch directory under the system's temp area, removed when the test process exits
/// (kept when $SLURMTWIN_KEEP_TEST_DIRS is set, to look at after a failure).
inline std::filesystem::path scratch_dir(const std::string& name) {
  // Function-local, so it is built before (and destroyed after) any static that holds a scratch dir.
  struct Cleanup {
    pid_t owner = ::getpid();  // a forked child that exits normally must not remove its parent's dirs
    std::vector<std::filesystem::path> dirs;
    ~Cleanup() {
      if (::getpid() != owner || std::getenv("SLURMTWIN_KEEP_TEST_DIRS") != nullptr) return;
      std::error_code ignored;
      for (const auto& d : dirs) std::filesystem::remove_all(d, ignored);
    }
  };
  static Cleanup cleanup;
  // The pid keeps concurrent test runs (ctest -j, several checkouts on one machine) apart.
  auto p = std::filesystem::temp_directory_path() / fmt::format("slurmtwin_test_{}_{}", name, ::getpid());
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  cleanup.dirs.push_back(p);
  return p;
}

/// The bytes of a file ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct CliRun {
  int code = -1;    // exit code, -1 when killed by a signal
  std::string out;  // stdout and stderr together
};

/// Runs the slurmtwin binary with `args` (a shell command line fragment).
inline CliRun run_cli(const std::string& args) {
  // ctest runs test cases in parallel processes: one capture file per process.
  static const auto dir = scratch_dir("cli_capture");
  const auto capture = (dir / "out.txt").string();
  const int status = std::system(fmt::format("{} {} > {} 2>&1", SLURMTWIN_BINARY, args, capture).c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(capture)};
}

/// The replay options naming the site files a real site's admin gives, as a recorded run's admin/
/// holds them (tests/oracle/recorded/SCENARIO/runK/admin): scontrol show config, nodes and partition,
/// sacctmgr show qos and sacctmgr dump.
inline std::string admin_site_options(const std::filesystem::path& admin) {
  return fmt::format(
      "--scontrol-config {0}/scontrol-show-config.txt --scontrol-nodes {0}/scontrol-show-nodes.txt "
      "--scontrol-partitions {0}/scontrol-show-partition.txt --qos-dump {0}/sacctmgr-show-qos.txt "
      "--sacctmgr-dump {0}/sacctmgr-dump.cfg",
      admin.string());
}

/// The message of the InputError that `f` throws ("" when it throws none).
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace slurmtwin::testing
