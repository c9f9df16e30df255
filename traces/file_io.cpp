#include "traces/file_io.hpp"

#include <fmt/format.h>
#include <lzma.h>
#include <zlib.h>

#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include <fcntl.h>
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

/// Writes `content` to a temporary file beside `target` (created afresh, never through a link; `mode`
/// less the umask) and renames it over `target` itself. On failure the temporary file is removed and
/// the error names `path` (what the caller was asked to write) and the system's reason.
void replace_through_temp(const std::string& path, const std::string& target, const std::string& content,
                          mode_t mode) {
  const auto tmp = target + ".tmp" + std::to_string(::getpid());
  const auto fail = [&](const char* what, int err) {
    ::unlink(tmp.c_str());  // no debris: the temporary file goes with the error
    return std::runtime_error(fmt::format("{}: {}: {}", path, what, std::strerror(err)));
  };
  ::unlink(tmp.c_str());  // a leftover of an earlier run of this pid, or a planted link
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) throw fail("cannot write", errno);
  for (std::size_t done = 0; done < content.size();) {
    const auto n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      throw fail("write failed", err);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) throw fail("write failed", errno);
  if (::rename(tmp.c_str(), target.c_str()) != 0) throw fail("cannot replace", errno);
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
    if (!out) throw std::runtime_error(fmt::format("{}: write failed: {}", path, std::strerror(errno)));
    return;
  }
  // Through a symlink the file it names is replaced, and the link stays.
  std::string target = path;
  if (fs::is_symlink(fs::symlink_status(path, ec)) && fs::exists(st)) target = fs::canonical(path).string();
  replace_through_temp(path, target, content, 0666);
}

void write_script_atomic(const std::string& path, const std::string& content) {
  replace_through_temp(path, path, content, 0755);
}

StagedDirectory::StagedDirectory(std::filesystem::path dir, std::set<std::string> owned)
    : dir_(std::move(dir)), owned_(std::move(owned)) {
  namespace fs = std::filesystem;
  if (dir_.filename().empty()) dir_ = dir_.parent_path();  // "out/" names "out"
  const auto parent = dir_.has_parent_path() ? dir_.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(parent, ec);
  // A sibling of the directory, so that the final renames stay on one file system.
  stage_ = parent / fmt::format(".{}.tmp{}", dir_.filename().string(), ::getpid());
  fs::remove_all(stage_, ec);
  if (!fs::create_directory(stage_, ec) || ec)
    throw std::runtime_error(fmt::format("{}: cannot create: {}", stage_.string(), ec.message()));
}

StagedDirectory::~StagedDirectory() {
  std::error_code ignored;
  std::filesystem::remove_all(stage_, ignored);
}

void StagedDirectory::write(const std::string& name, const std::string& content) {
  assert(owned_.count(name) && !committed_);
  write_file_atomic((stage_ / name).string(), content);
  written_.insert(name);
}

void StagedDirectory::commit() {
  namespace fs = std::filesystem;
  assert(!committed_);
  committed_ = true;
  std::error_code ec;
  const auto fail = [](const fs::path& p, const std::error_code& e) {
    return std::runtime_error(fmt::format("{}: cannot write: {}", p.string(), e.message()));
  };
  if (!fs::exists(fs::symlink_status(dir_, ec))) {
    fs::rename(stage_, dir_, ec);  // the whole set at once
    if (ec) throw fail(dir_, ec);
    return;
  }
  if (!fs::is_directory(dir_, ec))
    throw std::runtime_error(fmt::format("{}: not a directory", dir_.string()));
  for (const auto& name : owned_) {
    if (written_.count(name)) {
      fs::rename(stage_ / name, dir_ / name, ec);
      if (ec) throw fail(dir_ / name, ec);
    } else {
      fs::remove(dir_ / name, ec);  // an earlier run's result this run does not have
      if (ec) throw fail(dir_ / name, ec);
    }
  }
}

}  // namespace slurmtwin
