#include "traces/binary_io.hpp"

#include <fmt/format.h>

namespace slurmtwin {
namespace {
constexpr std::size_t kHeaderSize = 8 + sizeof(std::uint32_t) + sizeof(std::uint64_t);
}

std::uint64_t fnv1a_bytes(const char* data, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 0x100000001b3ull;
  }
  return h;
}

void ByteReader::truncated() const {
  throw InputError(file_, 0, "", fmt::format("truncated {} payload", what_));
}

std::string seal_container(const char (&magic)[8], std::uint32_t version, const std::string& payload) {
  ByteWriter out;
  out.bytes().append(magic, 8);
  out.put(version);
  out.put(static_cast<std::uint64_t>(payload.size()));
  out.bytes() += payload;
  out.put(fnv1a_bytes(payload.data(), payload.size()));
  return std::move(out.bytes());
}

bool has_magic(std::string_view bytes, const char (&magic)[8]) {
  return bytes.size() >= 8 && std::memcmp(bytes.data(), magic, 8) == 0;
}

std::string_view open_container(std::string_view bytes, const char (&magic)[8], std::uint32_t version,
                                const std::string& file, const std::string& what) {
  std::uint32_t found = 0;
  return open_container(bytes, magic, version, version, found, file, what);
}

std::string_view open_container(std::string_view bytes, const char (&magic)[8], std::uint32_t oldest,
                                std::uint32_t newest, std::uint32_t& found, const std::string& file,
                                const std::string& what) {
  if (!has_magic(bytes, magic))
    throw InputError(file, 0, "", fmt::format("not a SlurmTwin {} (bad magic)", what));
  if (bytes.size() < kHeaderSize) throw InputError(file, 0, "", fmt::format("truncated {} header", what));
  ByteReader header(bytes.substr(8, kHeaderSize - 8), file, what);
  found = header.get<std::uint32_t>();
  if (found < oldest || found > newest)
    throw InputError(
        file, 0, "version",
        oldest == newest
            ? fmt::format("{} version {} is not supported (this build reads {})", what, found, newest)
            : fmt::format("{} version {} is not supported (this build reads {} to {})", what, found, oldest,
                          newest));
  const auto size = header.get<std::uint64_t>();
  if (bytes.size() < kHeaderSize + sizeof(std::uint64_t) ||
      bytes.size() - kHeaderSize - sizeof(std::uint64_t) != size)
    throw InputError(file, 0, "", fmt::format("{} is truncated or has trailing bytes", what));
  std::uint64_t sum;
  std::memcpy(&sum, bytes.data() + kHeaderSize + size, sizeof sum);
  if (sum != fnv1a_bytes(bytes.data() + kHeaderSize, size))
    throw InputError(file, 0, "", fmt::format("{} checksum mismatch (corrupt file)", what));
  return bytes.substr(kHeaderSize, size);
}

}  // namespace slurmtwin
