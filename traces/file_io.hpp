#pragma once
// Reading whole input files, transparently decompressing gzip and xz; atomic output files.
#include <cstdint>
#include <string>

namespace slurmtwin {

/// The bytes of `path`, decompressed when it starts with the gzip or xz magic. Throws InputError
/// (naming the file) when it cannot be opened or a compressed stream is corrupt or truncated.
/// `max_bytes` guards memory: larger (decompressed) content fails early with a clear message.
std::string read_input_file(const std::string& path, std::uint64_t max_bytes = 8ull << 30);

/// Writes `content` to `path` through a temporary file + rename, so a reader never sees a partial file.
/// A path that is a device, FIFO or socket (`/dev/null`, `/dev/stdout`) is written in place; through a
/// symlink, the file it names is replaced.
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace slurmtwin
