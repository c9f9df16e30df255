#pragma once
// Reading the project's YAML files (sweep specs, check scenarios) with errors that name the file, the
// line and the key: every unexpected node throws InputError(file, line, key).
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>

#include "traces/job_record.hpp"
#include "traces/read_report.hpp"

namespace slurmtwin::experiments {

/// Reads YAML nodes of one file, throwing InputError(file, line, key) on anything unexpected.
class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  static std::uint64_t line_of(const YAML::Node& n) {
    const auto m = n.Mark();
    return m.is_null() || m.line < 0 ? 0 : static_cast<std::uint64_t>(m.line + 1);
  }
  [[noreturn]] void fail(const YAML::Node& n, std::string_view key, const std::string& what) const {
    throw InputError(file_, line_of(n), std::string(key), what);
  }
  void check_map(const YAML::Node& n, std::string_view key, const std::set<std::string>& allowed) const {
    if (!n.IsMap()) fail(n, key, "expected a map");
    for (const auto& kv : n) {
      const auto k = this->key(kv.first, key);
      if (!allowed.count(k)) fail(kv.first, k, fmt::format("unknown key in {}", key));
    }
  }
  /// A map key: a plain name (YAML also allows a list or a map as a key, "? - a").
  std::string key(const YAML::Node& n, std::string_view what) const {
    if (!n.IsScalar()) fail(n, what, "a key must be a plain name");
    return n.Scalar();
  }
  std::string str(const YAML::Node& n, std::string_view key) const {
    if (!n.IsScalar()) fail(n, key, "expected a string");
    return n.Scalar();
  }
  double number(const YAML::Node& n, std::string_view key) const {
    if (!n.IsScalar()) fail(n, key, "bad type: expected a number");
    const auto& s = n.Scalar();
    try {
      std::size_t used = 0;
      const double v = std::stod(s, &used);
      if (used == s.size() && std::isfinite(v)) return v;
    } catch (const std::logic_error&) {
    }
    fail(n, key, fmt::format("bad type: '{}' is not a number", s));
  }
  double non_negative(const YAML::Node& n, std::string_view key) const {
    const double v = number(n, key);
    if (v < 0) fail(n, key, fmt::format("{} is negative", v));
    return v;
  }
  bool boolean(const YAML::Node& n, std::string_view key) const {
    const auto s = str(n, key);
    if (s == "true" || s == "yes") return true;
    if (s == "false" || s == "no") return false;
    fail(n, key, fmt::format("bad type: '{}' is not true or false", s));
  }
  /// A duration: seconds, or a number with unit s, m, h or d ("2d", "36h").
  Seconds duration(const YAML::Node& n, std::string_view key) const {
    auto s = str(n, key);
    double unit = 1;
    if (!s.empty()) {
      const char u = s.back();
      const double units[] = {1, 60, 3600, 86400};
      const auto at = std::string_view("smhd").find(u);
      if (at != std::string_view::npos) {
        unit = units[at];
        s.pop_back();
      }
    }
    try {
      std::size_t used = 0;
      const double v = std::stod(s, &used);
      if (used == s.size() && std::isfinite(v) && v >= 0 && v * unit < 1e15)
        return static_cast<Seconds>(std::llround(v * unit));
    } catch (const std::logic_error&) {
    }
    fail(n, key,
         fmt::format("bad duration '{}': expected seconds or a number with s, m, h or d", n.Scalar()));
  }
  /// A path relative to the file's directory.
  std::uint64_t unsigned_int(const YAML::Node& n, std::string_view key) const {
    const double v = number(n, key);
    if (v < 0 || v != std::floor(v) || v > 1e18)
      fail(n, key, fmt::format("bad type: expected a non-negative integer, got '{}'", n.Scalar()));
    return static_cast<std::uint64_t>(v);
  }
  std::string path(const YAML::Node& n, std::string_view key) const {
    const auto p = std::filesystem::path(str(n, key));
    if (p.is_absolute() || p.empty()) return p.string();
    return (std::filesystem::path(file_).parent_path() / p).lexically_normal().string();
  }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

}  // namespace slurmtwin::experiments
