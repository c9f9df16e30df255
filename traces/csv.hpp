#pragma once
// RFC 4180 CSV records (quoted fields with separators, doubled quotes and line breaks inside quotes)
// and the input checks the text-format readers share.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "traces/read_report.hpp"

namespace slurmtwin::csv {

/// One CSV record: its fields with quotes removed, the 1-based line it starts on and its raw text.
struct Record {
  std::vector<std::string> fields;
  std::uint64_t line = 0;
  std::string_view text;  // the raw record (all its physical lines, without the final line break)
};

/// Streams the records of `content`. Blank lines are not records. A quote that is never closed
/// throws InputError (the file is truncated or not CSV).
class Reader {
 public:
  Reader(std::string_view content, std::string file, char separator = ',');
  /// Reads the next record into `out`; false at the end of the input.
  bool next(Record& out);

 private:
  std::string_view content_;
  std::string file_;
  char separator_;
  std::size_t pos_ = 0;
  std::uint64_t line_ = 1;  // line of content_[pos_]
};

/// Column positions from a header record.
class Header {
 public:
  Header() = default;
  explicit Header(std::vector<std::string> names);
  /// Index of the column `name` (exact match), or nullopt.
  std::optional<std::size_t> find(std::string_view name) const;
  /// Index of the column `name`; throws InputError(file, line, name, "missing column") if absent.
  std::size_t require(std::string_view name, const std::string& file, std::uint64_t line) const;
  std::size_t size() const { return names_.size(); }

 private:
  std::vector<std::string> names_;
};

/// Throws InputError when `content` is empty (only whitespace) or binary (holds NUL bytes, or is still
/// gzip/xz compressed): `format` names what was expected, e.g. "SWF".
void require_text(std::string_view content, const std::string& file, std::string_view format);

/// Remembers a report's counts when one reader call starts; finish() throws InputError when that call
/// saw records but none became (or folded into) a job: the input is not of the format at all.
class CallCounts {
 public:
  explicit CallCounts(const ReadReport& report)
      : report_(report), records_(report.records), kept_(report.accepted + report.folded()) {}
  void finish(const std::string& file, std::string_view format) const;

 private:
  const ReadReport& report_;
  std::uint64_t records_;
  std::uint64_t kept_;
};

}  // namespace slurmtwin::csv
