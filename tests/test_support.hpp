#pragma once
// Shared helpers for tests: where the real data is, and a clear skip when it is absent.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

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

/// A fresh scratch directory under the build tree's temp area.
inline std::filesystem::path scratch_dir(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() / ("slurmtwin_test_" + name);
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

}  // namespace slurmtwin::testing
