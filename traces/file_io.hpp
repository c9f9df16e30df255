#pragma once
// Reading whole input files, transparently decompressing gzip and xz; atomic output files and
// output directories.
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>

namespace slurmtwin {

/// The bytes of `path`, decompressed when it starts with the gzip or xz magic. Throws InputError
/// (naming the file) when it cannot be opened or a compressed stream is corrupt or truncated.
/// `max_bytes` guards memory: larger (decompressed) content fails early with a clear message.
std::string read_input_file(const std::string& path, std::uint64_t max_bytes = 8ull << 30);

/// Writes `content` to `path` through a temporary file + rename, so a reader never sees a partial file.
/// A path that is a device, FIFO or socket (`/dev/null`, `/dev/stdout`) is written in place; through a
/// symlink, the file it names is replaced. On any failure the temporary file is removed and the
/// error (std::runtime_error) names the file and the system's reason; `path` is left as it was.
void write_file_atomic(const std::string& path, const std::string& content);

/// Writes an executable script (mode 0755 less the umask) through a temporary file renamed over `path`
/// itself: a symlink at `path` is replaced, never written through. Errors as write_file_atomic.
void write_script_atomic(const std::string& path, const std::string& content);

/// One run's result files in an output directory, replaced together: they are written into a
/// temporary sibling directory and moved into place by commit(). Until then (an error, Ctrl-C) the
/// directory and an earlier run's results in it stay as they were; the temporary directory goes with
/// the object. A directory that does not exist yet is created by one rename; into an existing one each
/// file is renamed in turn, an earlier run's result that this run did not write is removed, and files
/// that are not results (`owned`) are left alone.
class StagedDirectory {
 public:
  StagedDirectory(std::filesystem::path dir, std::set<std::string> owned);
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;

  /// Writes result file `name` (one of `owned`) into the staging directory.
  void write(const std::string& name, const std::string& content);
  /// Moves the written files into the directory. Throws std::runtime_error naming the path and reason.
  void commit();

 private:
  std::filesystem::path dir_, stage_;
  std::set<std::string> owned_, written_;
  bool committed_ = false;
};

}  // namespace slurmtwin
