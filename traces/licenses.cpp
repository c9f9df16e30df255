#include "traces/licenses.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace slurmtwin {

std::vector<LicenseCount> parse_licenses(std::string_view spec) {
  std::vector<LicenseCount> out;
  if (std::any_of(spec.begin(), spec.end(), [](unsigned char c) { return std::isspace(c) != 0; }))
    throw std::invalid_argument(fmt::format("licences '{}': no blanks allowed", spec));
  std::size_t at = 0;
  while (at <= spec.size()) {
    const auto stop = spec.find_first_of(",;", at);
    const auto item = spec.substr(at, stop == std::string_view::npos ? std::string_view::npos : stop - at);
    at = stop == std::string_view::npos ? spec.size() + 1 : stop + 1;
    if (item.empty()) continue;
    const auto colon = item.find(':');
    const auto name = item.substr(0, colon);
    if (name.empty()) throw std::invalid_argument(fmt::format("licences '{}': an item has no name", spec));
    std::uint64_t count = 1;
    if (colon != std::string_view::npos) {
      const auto digits = item.substr(colon + 1);
      if (digits.empty() || digits.size() > 10 ||
          !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c) != 0; }))
        throw std::invalid_argument(
            fmt::format("licences '{}': the count of '{}' is not a whole number", spec, name));
      count = std::stoull(std::string(digits));
    }
    auto it = std::find_if(out.begin(), out.end(), [&](const LicenseCount& l) { return l.name == name; });
    if (it == out.end()) it = out.insert(out.end(), LicenseCount{std::string(name), 0});
    count += it->count;
    if (count > kMaxLicenseCount)
      throw std::invalid_argument(
          fmt::format("licences '{}': more than {} of '{}'", spec, kMaxLicenseCount, name));
    it->count = static_cast<std::uint32_t>(count);
  }
  return out;
}

std::string format_licenses(const std::vector<LicenseCount>& licenses) {
  std::string out;
  for (const auto& l : licenses) out += fmt::format("{}{}:{}", out.empty() ? "" : ",", l.name, l.count);
  return out;
}

}  // namespace slurmtwin
