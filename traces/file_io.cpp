#include "traces/file_io.hpp"

#include <fmt/format.h>
#include <lzma.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include <unistd.h>

#include "traces/read_report.hpp"

namespace slurmtwin {
namespace {

std::string read_raw(const std::string& path, std::uint64_t max_bytes) {
  std::error_code ec;
  const auto type = std::filesystem::status(path, ec).type();
  if (type == std::filesystem::file_type::directory)
    throw InputError(path, 0, "", "is a directory, not a file");
  // Opening a FIFO (a named pipe) blocks until someone writes to it: an `Include` of one hung the
  // import for ever (issue 27, D8). Devices and sockets are not input files either.
  if (!ec && type != std::filesystem::file_type::regular && type != std::filesystem::file_type::not_found)
    throw InputError(path, 0, "", "is not a regular file (a pipe, device or socket)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "", fmt::format("cannot open: {}", std::strerror(errno)));
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(in.tellg());
  if (size > max_bytes)
    throw InputError(path, 0, "", fmt::format("file is {} bytes, over the {} byte limit", size, max_bytes));
  in.seekg(0);
  std::string out(size, '\0');
  in.read(out.data(), static_cast<std::streamsize>(size));
  if (!in) throw InputError(path, 0, "", "read failed");
  return out;
}

std::string gunzip(const std::string& path, const std::string& in, std::uint64_t max_bytes) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) throw InputError(path, 0, "", "zlib init failed");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&zs, inflateEnd);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END)
      throw InputError(path, 0, "", fmt::format("corrupt gzip data ({})", zs.msg ? zs.msg : "inflate error"));
    out.append(buf, sizeof buf - zs.avail_out);
    if (out.size() > max_bytes) throw InputError(path, 0, "", "decompressed content over the size limit");
    if (rc == Z_STREAM_END && zs.avail_in > 0) {  // concatenated gzip members
      inflateReset(&zs);
      rc = Z_OK;
    } else if (rc != Z_STREAM_END && zs.avail_in == 0 && zs.avail_out != 0) {
      throw InputError(path, 0, "", "truncated gzip file");
    }
  }
  return out;
}

std::string unxz(const std::string& path, const std::string& in, std::uint64_t max_bytes) {
  lzma_stream ls = LZMA_STREAM_INIT;
  if (lzma_stream_decoder(&ls, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
    throw InputError(path, 0, "", "xz decoder init failed");
  std::unique_ptr<lzma_stream, void (*)(lzma_stream*)> guard(&ls, lzma_end);
  ls.next_in = reinterpret_cast<const std::uint8_t*>(in.data());
  ls.avail_in = in.size();
  std::string out;
  std::uint8_t buf[1 << 16];
  while (true) {
    ls.next_out = buf;
    ls.avail_out = sizeof buf;
    const auto rc = lzma_code(&ls, ls.avail_in == 0 ? LZMA_FINISH : LZMA_RUN);
    out.append(reinterpret_cast<char*>(buf), sizeof buf - ls.avail_out);
    if (out.size() > max_bytes) throw InputError(path, 0, "", "decompressed content over the size limit");
    if (rc == LZMA_STREAM_END) break;
    if (rc == LZMA_BUF_ERROR) throw InputError(path, 0, "", "truncated xz file");
    if (rc != LZMA_OK)
      throw InputError(path, 0, "", fmt::format("corrupt xz data (lzma error {})", static_cast<int>(rc)));
  }
  return out;
}

}  // namespace

std::string read_input_file(const std::string& path, std::uint64_t max_bytes) {
  auto raw = read_raw(path, max_bytes);
  if (raw.size() >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f &&
      static_cast<unsigned char>(raw[1]) == 0x8b)
    return gunzip(path, raw, max_bytes);
  static constexpr unsigned char kXzMagic[6] = {0xFD, '7', 'z', 'X', 'Z', 0x00};
  if (raw.size() >= 6 && std::memcmp(raw.data(), kXzMagic, 6) == 0) return unxz(path, raw, max_bytes);
  return raw;
}

void write_file_atomic(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto st = fs::status(path, ec);  // follows symlinks
  if (!ec && fs::exists(st) && !fs::is_regular_file(st)) {
    // A device, FIFO or socket (`-o /dev/null`, `-o /dev/stdout`) is written in place: renaming over
    // it would put a regular file in its stead (run as root, /dev/null itself). A directory fails here.
    std::ofstream out(path, std::ios::binary);
    if (!out) throw std::runtime_error(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) throw std::runtime_error(fmt::format("{}: write failed", path));
    return;
  }
  // Through a symlink the file it names is replaced, and the link stays.
  std::string target = path;
  if (fs::is_symlink(fs::symlink_status(path, ec)) && fs::exists(st)) target = fs::canonical(path).string();
  const auto tmp = target + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(fmt::format("{}: cannot write: {}", tmp, std::strerror(errno)));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) throw std::runtime_error(fmt::format("{}: write failed", tmp));
  }
  fs::rename(tmp, target);
}

}  // namespace slurmtwin
