#include "traces/time_zone.hpp"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "traces/text.hpp"

namespace slurmtwin {
namespace {

// The C library reads the zone from $TZ: switching it is process-wide, so every use is serialised
// and the previous value restored.
std::mutex tz_mutex;

class ZoneScope {
 public:
  explicit ZoneScope(const std::string& zone) : lock_(tz_mutex) {
    if (const char* old = std::getenv("TZ")) old_ = old;
    if (!zone.empty()) ::setenv("TZ", zone.c_str(), 1);
    ::tzset();
  }
  ~ZoneScope() {
    if (old_)
      ::setenv("TZ", old_->c_str(), 1);
    else
      ::unsetenv("TZ");
    ::tzset();
  }
  ZoneScope(const ZoneScope&) = delete;
  ZoneScope& operator=(const ZoneScope&) = delete;

 private:
  std::lock_guard<std::mutex> lock_;
  std::optional<std::string> old_;
};

std::int64_t local_offset(Seconds utc) {
  const auto t = static_cast<std::time_t>(utc);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  return tm.tm_gmtoff;
}

constexpr Seconds kFrom = 0;         // 1970-01-01
constexpr Seconds kTo = 4102444800;  // 2100-01-01
constexpr Seconds kStep = 6 * 3600;  // zones change offset at most every few weeks

}  // namespace

bool TimeZone::names_utc(const std::string& name) {
  return text::iequals(name, "UTC") || name == "Etc/UTC";
}

void TimeZone::check_name(const std::string& name) {
  if (names_utc(name) || name == "local") return;
  const char* dir = std::getenv("TZDIR");
  const auto path = std::filesystem::path(dir ? dir : "/usr/share/zoneinfo") / name;
  std::error_code ec;
  if (name.empty() || name.find("..") != std::string::npos || !std::filesystem::is_regular_file(path, ec))
    throw std::invalid_argument("unknown time zone '" + name +
                                "' (a zone database name such as "
                                "Europe/Berlin, UTC, or local; is tzdata installed?)");
}

TimeZone::TimeZone(const std::string& name) : name_(name) {
  check_name(name);
  if (names_utc(name)) return;
  ZoneScope scope(name == "local" ? std::string() : ":" + name);  // "" = the zone the process has
  base_offset_ = local_offset(kFrom);
  std::int64_t current = base_offset_;
  for (Seconds t = kFrom + kStep; t <= kTo; t += kStep) {
    const auto o = local_offset(t);
    if (o == current) continue;
    Seconds lo = t - kStep, hi = t;  // offset(lo) == current, offset(hi) == o: find the first second of o
    while (hi - lo > 1) {
      const Seconds mid = lo + (hi - lo) / 2;
      (local_offset(mid) == current ? lo : hi) = mid;
    }
    transitions_.push_back({hi, o});
    current = o;
  }
}

std::int64_t TimeZone::offset_at(Seconds utc) const {
  const auto it = std::upper_bound(transitions_.begin(), transitions_.end(), utc,
                                   [](Seconds t, const Transition& tr) { return t < tr.at; });
  return it == transitions_.begin() ? base_offset_ : std::prev(it)->offset;
}

std::vector<Seconds> TimeZone::to_utc(Seconds wall) const {
  // Every offset in effect within a day of it is a candidate; a candidate is right when the offset
  // at the instant it gives is itself.
  std::vector<std::int64_t> offsets{offset_at(wall - 86400)};
  const auto from = std::lower_bound(transitions_.begin(), transitions_.end(), wall - 86400,
                                     [](const Transition& tr, Seconds t) { return tr.at < t; });
  for (auto it = from; it != transitions_.end() && it->at <= wall + 86400; ++it)
    offsets.push_back(it->offset);
  std::vector<Seconds> out;
  for (const auto o : offsets) {
    const Seconds utc = wall - o;
    if (offset_at(utc) == o && std::find(out.begin(), out.end(), utc) == out.end()) out.push_back(utc);
  }
  std::sort(out.begin(), out.end());
  if (out.empty()) out.push_back(wall - offsets.front());  // skipped hour: as before the change
  return out;
}

void wall_times_to_utc(Trace& trace, std::size_t first, const TimeZone& zone) {
  if (zone.is_utc()) return;
  for (std::size_t i = first; i < trace.jobs.size(); ++i) {
    auto& j = trace.jobs[i];
    Seconds previous = kUnsetTime;
    for (Seconds* t : {&j.submit, &j.eligible, &j.start, &j.end}) {
      if (*t == kUnsetTime || *t == kUnlimited) continue;
      const auto readings = zone.to_utc(*t);
      *t = readings.front();
      if (previous != kUnsetTime && *t < previous && readings.back() >= previous) *t = readings.back();
      previous = *t;
    }
    if (j.cancel != kUnsetTime) {
      j.cancel = j.end;
      j.runtime = j.end - j.submit;
    }
  }
}

}  // namespace slurmtwin
