#include "traces/slurm_version.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>

#include "traces/text.hpp"

namespace slurmtwin {

int parse_slurm_version(std::string_view text) {
  const auto parts = text::split(text::trim(text), '.');
  // value_or(-1) rather than optionals compared after the fact: GCC 12 -O2 reports the latter as
  // maybe-uninitialized under -Werror.
  const std::int64_t major = parts.size() >= 2 ? text::parse_int(parts[0]).value_or(-1) : -1;
  const std::int64_t minor = parts.size() >= 2 ? text::parse_int(parts[1]).value_or(-1) : -1;
  if (major < 1 || major > 99 || minor < 0 || minor > 99)
    throw std::invalid_argument(
        fmt::format("'{}' is not a Slurm version (major.minor[.micro], e.g. 22.05)", text));
  return static_cast<int>(major * 100 + minor);
}

std::string slurm_version_text(int version) {
  return fmt::format("{}.{:02}", version / 100, version % 100);
}

}  // namespace slurmtwin
