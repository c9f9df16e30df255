#include "surrogate/dataset.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "traces/file_io.hpp"

namespace slurmtwin::surrogate {
namespace {

constexpr char kMagic[8] = {'S', 'T', 'W', 'S', 'U', 'R', 'D', 'S'};
constexpr const char* kWhat = "surrogate dataset";
// Smallest encodings, to bound counts by the bytes left before allocating: an axis is a name length,
// lo, hi and the log flag; a window its job count, t0 and eight array lengths.
constexpr std::size_t kMinAxisBytes = 4 + 8 + 8 + 1;
constexpr std::size_t kMinWindowBytes = 4 + 8 + 8 * 8;

void put_names(ByteWriter& w, const std::vector<std::string>& names) {
  w.put(static_cast<std::uint32_t>(names.size()));
  for (const auto& n : names) w.put(n);
}

std::vector<std::string> get_names(ByteReader& r) {
  const auto n = r.get<std::uint32_t>();
  if (n > r.remaining() / sizeof(std::uint32_t))  // each name takes at least its 4-byte length
    throw InputError(r.file(), 0, "", fmt::format("corrupt {}: name count {}", r.what(), n));
  std::vector<std::string> names(n);
  for (auto& s : names) s = r.get_string();
  return names;
}

void check(bool ok, ByteReader& r, const char* field, const std::string& why) {
  if (!ok) throw InputError(r.file(), 0, field, fmt::format("corrupt {}: {}", r.what(), why));
}

}  // namespace

float SettingAxis::encode(double value) const {
  if (hi <= lo) return 0.0f;
  if (log)
    return static_cast<float>((std::log1p(value) - std::log1p(lo)) / (std::log1p(hi) - std::log1p(lo)));
  return static_cast<float>((value - lo) / (hi - lo));
}

double SettingAxis::decode(float x) const {
  if (hi <= lo) return lo;
  if (log) return std::expm1(std::log1p(lo) + static_cast<double>(x) * (std::log1p(hi) - std::log1p(lo)));
  return lo + static_cast<double>(x) * (hi - lo);
}

std::vector<float> SurrogateDataset::encoded_setting(std::size_t s) const {
  std::vector<float> v(axes.size());
  for (std::size_t a = 0; a < axes.size(); ++a) v[a] = axes[a].encode(settings[s][a]);
  return v;
}

void put_schema(ByteWriter& w, const FeatureSchema& s) {
  put_names(w, s.numeric);
  w.put(s.user_buckets);
  w.put(s.account_buckets);
  put_names(w, s.partitions);
  put_names(w, s.qos);
  w.put(static_cast<std::uint8_t>(s.submit_time_only | (s.queue_state << 1) | (s.reference << 2)));
}

FeatureSchema get_schema(ByteReader& r) {
  FeatureSchema s;
  s.numeric = get_names(r);
  s.user_buckets = r.get<std::uint32_t>();
  s.account_buckets = r.get<std::uint32_t>();
  // Each bucket becomes an embedding row of the model: a corrupt count must not ask for terabytes.
  check(s.user_buckets > 0 && s.account_buckets > 0 && s.user_buckets <= (1u << 24) &&
            s.account_buckets <= (1u << 24),
        r, "schema", "hash buckets out of range (1 .. 2^24)");
  s.partitions = get_names(r);
  s.qos = get_names(r);
  const auto flags = r.get<std::uint8_t>();
  s.submit_time_only = flags & 1;
  s.queue_state = flags & 2;
  s.reference = flags & 4;
  return s;
}

void put_axes(ByteWriter& w, const std::vector<SettingAxis>& axes) {
  w.put(static_cast<std::uint32_t>(axes.size()));
  for (const auto& a : axes) {
    w.put(a.name);
    w.put(a.lo);
    w.put(a.hi);
    w.put(static_cast<std::uint8_t>(a.log));
  }
}

std::vector<SettingAxis> get_axes(ByteReader& r) {
  const auto n = r.get<std::uint32_t>();
  check(n <= r.remaining() / kMinAxisBytes, r, "axes", "axis count");
  std::vector<SettingAxis> axes(n);
  for (auto& a : axes) {
    a.name = r.get_string();
    a.lo = r.get<double>();
    a.hi = r.get<double>();
    a.log = r.get<std::uint8_t>() != 0;
  }
  return axes;
}

std::string encode_dataset(const SurrogateDataset& d) {
  ByteWriter w;
  w.put(d.trace_fingerprint);
  w.put(d.site_name);
  w.put(static_cast<std::uint8_t>(d.recorded | (d.window_replay << 1)));
  put_schema(w, d.schema);
  put_axes(w, d.axes);
  w.put(static_cast<std::uint64_t>(d.settings.size()));
  for (const auto& s : d.settings) w.put_vector(s);
  w.put(static_cast<std::uint64_t>(d.windows.size()));
  for (std::size_t k = 0; k < d.windows.size(); ++k) {
    const auto& win = d.windows[k];
    w.put(win.jobs);
    w.put(win.t0);
    w.put_vector(win.numeric);
    for (const auto* v : {&win.user, &win.account, &win.partition, &win.qos}) w.put_vector(*v);
    w.put_vector(win.target);
    w.put_vector(win.job_index);
    w.put_vector(d.waits[k]);
  }
  return seal_container(kMagic, kDatasetVersion, w.bytes());
}

SurrogateDataset decode_dataset(const std::string& bytes, const std::string& file) {
  ByteReader r(open_container(bytes, kMagic, kDatasetVersion, file, kWhat), file, kWhat);
  SurrogateDataset d;
  d.trace_fingerprint = r.get_string();
  d.site_name = r.get_string();
  const auto mode = r.get<std::uint8_t>();
  d.recorded = mode & 1;
  d.window_replay = mode & 2;
  d.schema = get_schema(r);
  d.axes = get_axes(r);
  const auto ns = r.get<std::uint64_t>();
  check(ns <= r.remaining() / sizeof(std::uint64_t), r, "settings", "setting count");
  d.settings.resize(ns);
  for (auto& s : d.settings) {
    s = r.get_vector<double>();
    check(s.size() == d.axes.size(), r, "settings", "a setting has the wrong number of values");
  }
  const auto nw = r.get<std::uint64_t>();
  check(nw <= r.remaining() / kMinWindowBytes, r, "windows", "window count");
  d.windows.resize(nw);
  d.waits.resize(nw);
  const std::size_t f = d.schema.numeric.size();
  for (std::size_t k = 0; k < nw; ++k) {
    auto& win = d.windows[k];
    win.jobs = r.get<std::uint32_t>();
    win.t0 = r.get<std::int64_t>();
    win.numeric = r.get_vector<float>();
    for (auto* v : {&win.user, &win.account, &win.partition, &win.qos}) *v = r.get_vector<std::int64_t>();
    win.target = r.get_vector<std::uint8_t>();
    win.job_index = r.get_vector<std::uint32_t>();
    d.waits[k] = r.get_vector<float>();
    const std::size_t n = win.jobs;
    check(win.numeric.size() == n * f && win.user.size() == n && win.account.size() == n &&
              win.partition.size() == n && win.qos.size() == n && win.target.size() == n &&
              win.job_index.size() == n,
          r, "window", fmt::format("window {} has inconsistent array sizes", k));
    check(d.waits[k].size() == n * ns, r, "waits", fmt::format("window {} has the wrong number of waits", k));
    for (std::size_t i = 0; i < n; ++i)
      check(win.user[i] >= 0 && win.user[i] < d.schema.user_buckets && win.account[i] >= 0 &&
                win.account[i] < d.schema.account_buckets && win.partition[i] >= 0 &&
                win.partition[i] <= static_cast<std::int64_t>(d.schema.partitions.size()) &&
                win.qos[i] >= 0 && win.qos[i] <= static_cast<std::int64_t>(d.schema.qos.size()),
            r, "window", fmt::format("window {} job {} has a category out of range", k, i));
  }
  check(r.done(), r, "", "unread bytes at the end");
  return d;
}

void write_dataset(const SurrogateDataset& d, const std::string& path) {
  write_file_atomic(path, encode_dataset(d));
}

SurrogateDataset read_dataset(const std::string& path) {
  return decode_dataset(read_input_file(path), path);
}

}  // namespace slurmtwin::surrogate
