#pragma once
// Little binary containers for SlurmTwin's own files (native traces, surrogate datasets and
// checkpoints): an 8-byte magic, a format version, the payload length, the payload and an FNV-1a
// checksum of the payload, so that a truncated, corrupted or foreign file fails with a clear error
// instead of being half-read. Values are written in the host's byte order (x86-64 and arm64 are
// both little-endian; the formats are not meant to cross to big-endian machines).
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "traces/read_report.hpp"

namespace slurmtwin {

std::uint64_t fnv1a_bytes(const char* data, std::size_t n);

/// Appends values to a byte string.
class ByteWriter {
 public:
  template <class T>
  void put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto at = out_.size();
    out_.resize(at + sizeof(T));
    std::memcpy(out_.data() + at, &v, sizeof(T));
  }
  void put(const std::string& s) {
    put(static_cast<std::uint32_t>(s.size()));
    out_ += s;
  }
  template <class T>
  void put_vector(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    put(static_cast<std::uint64_t>(v.size()));
    out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

/// Reads values back from [from, to) of a byte string; running past the end throws InputError
/// naming the file and `what` (e.g. "native trace").
class ByteReader {
 public:
  ByteReader(std::string_view bytes, std::string file, std::string what)
      : bytes_(bytes), file_(std::move(file)), what_(std::move(what)) {}
  template <class T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  std::string get_string() {
    const auto n = get<std::uint32_t>();
    need(n);
    std::string s(bytes_.substr(at_, n));
    at_ += n;
    return s;
  }
  template <class T>
  std::vector<T> get_vector() {
    const auto n = get<std::uint64_t>();
    if (n > (bytes_.size() - at_) / sizeof(T)) truncated();
    std::vector<T> v(n);
    if (n > 0) std::memcpy(v.data(), bytes_.data() + at_, n * sizeof(T));  // data() may be null when empty
    at_ += n * sizeof(T);
    return v;
  }
  bool done() const { return at_ == bytes_.size(); }
  std::size_t remaining() const { return bytes_.size() - at_; }
  const std::string& file() const { return file_; }
  const std::string& what() const { return what_; }

 private:
  void need(std::size_t n) const {
    if (bytes_.size() - at_ < n) truncated();
  }
  [[noreturn]] void truncated() const;
  std::string_view bytes_;
  std::size_t at_ = 0;
  std::string file_, what_;
};

/// magic (8 bytes) + version + payload size + payload + checksum.
std::string seal_container(const char (&magic)[8], std::uint32_t version, const std::string& payload);
/// True when `bytes` starts with `magic`.
bool has_magic(std::string_view bytes, const char (&magic)[8]);
/// The payload of a sealed container; throws InputError (file, what) for a foreign magic, another
/// version, truncation, trailing bytes or a checksum mismatch.
std::string_view open_container(std::string_view bytes, const char (&magic)[8], std::uint32_t version,
                                const std::string& file, const std::string& what);
/// The same for a format that still reads its older versions oldest..newest; `found` receives the
/// file's version.
std::string_view open_container(std::string_view bytes, const char (&magic)[8], std::uint32_t oldest,
                                std::uint32_t newest, std::uint32_t& found, const std::string& file,
                                const std::string& what);

}  // namespace slurmtwin
