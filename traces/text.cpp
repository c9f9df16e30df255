#include "traces/text.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace slurmtwin::text {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t from = 0;
  while (true) {
    const auto at = s.find(sep, from);
    if (at == std::string_view::npos) {
      out.push_back(s.substr(from));
      return out;
    }
    out.push_back(s.substr(from, at - from));
    from = at + 1;
  }
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    const auto b = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > b) out.push_back(s.substr(b, i - b));
  }
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string to_upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool starts_with_i(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

std::optional<std::int64_t> parse_int(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_double(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::int64_t> parse_memory_mb(std::string_view s, char default_unit) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  char unit = default_unit;
  if (std::isalpha(static_cast<unsigned char>(s.back()))) {
    unit = static_cast<char>(std::toupper(static_cast<unsigned char>(s.back())));
    s.remove_suffix(1);
  }
  const auto v = parse_double(s);
  if (!v || *v < 0) return std::nullopt;
  double mb = 0;
  switch (unit) {
    case 'K':
      mb = *v / 1024.0;
      break;
    case 'M':
      mb = *v;
      break;
    case 'G':
      mb = *v * 1024.0;
      break;
    case 'T':
      mb = *v * 1024.0 * 1024.0;
      break;
    case 'P':
      mb = *v * 1024.0 * 1024.0 * 1024.0;
      break;
    default:
      return std::nullopt;
  }
  if (mb > 9.0e15) return std::nullopt;
  return static_cast<std::int64_t>(std::ceil(mb - 1e-9));
}

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;  // &apos; is not HTML 4; this one is read by both
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace slurmtwin::text
