#include "traces/time_format.hpp"

#include <fmt/format.h>

#include <array>

#include "traces/text.hpp"

namespace slurmtwin {
namespace {

// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void civil_from_days(std::int64_t z, std::int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
}

std::optional<std::int64_t> digits(std::string_view s) {
  if (s.empty() || s.size() > 12) return std::nullopt;
  for (char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  return text::parse_int(s);
}

}  // namespace

std::optional<Seconds> parse_slurm_duration(std::string_view t) {
  t = text::trim(t);
  if (text::iequals(t, "UNLIMITED") || text::iequals(t, "INFINITE")) return kUnlimited;
  if (text::iequals(t, "Partition_Limit")) return kUnsetTime;
  if (t.empty()) return std::nullopt;
  std::int64_t days = 0;
  bool has_days = false;
  if (auto dash = t.find('-'); dash != std::string_view::npos) {
    auto d = digits(t.substr(0, dash));
    if (!d) return std::nullopt;
    days = *d;
    has_days = true;
    t = t.substr(dash + 1);
  }
  // Drop fractional seconds ("MM:SS.mmm") - sacct prints them for CPU times.
  if (auto dot = t.find('.'); dot != std::string_view::npos) {
    if (!digits(t.substr(dot + 1))) return std::nullopt;
    t = t.substr(0, dot);
  }
  const auto parts = text::split(t, ':');
  if (parts.size() > 3) return std::nullopt;
  std::array<std::int64_t, 3> v{};
  for (std::size_t i = 0; i < parts.size(); ++i) {
    auto x = digits(parts[i]);
    if (!x) return std::nullopt;
    v[i] = *x;
  }
  std::int64_t h = 0, m = 0, s = 0;
  if (has_days) {  // D-HH, D-HH:MM, D-HH:MM:SS
    h = v[0];
    m = parts.size() > 1 ? v[1] : 0;
    s = parts.size() > 2 ? v[2] : 0;
  } else if (parts.size() == 1) {  // MM
    m = v[0];
  } else if (parts.size() == 2) {  // MM:SS
    m = v[0];
    s = v[1];
  } else {  // HH:MM:SS
    h = v[0];
    m = v[1];
    s = v[2];
  }
  return ((days * 24 + h) * 60 + m) * 60 + s;
}

std::string format_slurm_duration(Seconds s) {
  if (s == kUnlimited) return "UNLIMITED";
  if (s == kUnsetTime) return "Partition_Limit";
  if (s < 0) s = 0;
  const auto days = s / 86400;
  s %= 86400;
  if (days > 0) return fmt::format("{}-{:02}:{:02}:{:02}", days, s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

std::optional<Seconds> parse_timestamp(std::string_view t) {
  t = text::trim(t);
  if (t.empty() || text::iequals(t, "Unknown") || text::iequals(t, "None")) return kUnsetTime;
  // YYYY-MM-DD[T ]HH:MM:SS
  if (t.size() != 19 || t[4] != '-' || t[7] != '-' || (t[10] != 'T' && t[10] != ' ') || t[13] != ':' ||
      t[16] != ':')
    return std::nullopt;
  auto y = digits(t.substr(0, 4)), mo = digits(t.substr(5, 2)), d = digits(t.substr(8, 2));
  auto h = digits(t.substr(11, 2)), mi = digits(t.substr(14, 2)), s = digits(t.substr(17, 2));
  if (!y || !mo || !d || !h || !mi || !s) return std::nullopt;
  if (*mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 || *s > 60) return std::nullopt;
  return days_from_civil(*y, static_cast<unsigned>(*mo), static_cast<unsigned>(*d)) * 86400 + *h * 3600 +
         *mi * 60 + *s;
}

std::string format_timestamp(Seconds t) {
  if (t == kUnsetTime) return "Unknown";
  std::int64_t days = t >= 0 ? t / 86400 : (t - 86399) / 86400;
  std::int64_t rem = t - days * 86400;
  std::int64_t y;
  unsigned m, d;
  civil_from_days(days, y, m, d);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", y, m, d, rem / 3600, rem / 60 % 60, rem % 60);
}

}  // namespace slurmtwin
