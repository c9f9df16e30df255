#include "traces/csv.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "traces/read_report.hpp"
#include "traces/text.hpp"

namespace slurmtwin::csv {

Reader::Reader(std::string_view content, std::string file, char separator)
    : content_(content), file_(std::move(file)), separator_(separator) {
  // A UTF-8 byte order mark is not part of the first field name.
  if (content_.starts_with("\xEF\xBB\xBF")) pos_ = 3;
}

bool Reader::next(Record& out) {
  out.fields.clear();
  // Skip blank lines (only whitespace): they are not records.
  while (pos_ < content_.size()) {
    const auto eol = content_.find('\n', pos_);
    const auto end = eol == std::string_view::npos ? content_.size() : eol;
    if (!text::trim(content_.substr(pos_, end - pos_)).empty()) break;
    pos_ = eol == std::string_view::npos ? content_.size() : eol + 1;
    ++line_;
  }
  if (pos_ >= content_.size()) return false;

  out.line = line_;
  const auto begin = pos_;
  std::string field;
  bool quoted = false;  // inside a quoted section
  while (true) {
    if (pos_ >= content_.size()) {
      if (quoted)
        throw InputError(file_, out.line, "quote", "quoted field never closed (truncated file or not CSV)");
      break;
    }
    const char c = content_[pos_++];
    if (quoted) {
      if (c == '"') {
        if (pos_ < content_.size() && content_[pos_] == '"') {
          field += '"';  // "" inside quotes is one quote
          ++pos_;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line_;
        field += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
    } else if (c == separator_) {
      out.fields.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      ++line_;
      break;
    } else {
      field += c;
    }
  }
  auto end = pos_;
  if (end > begin && content_[end - 1] == '\n') --end;
  if (end > begin && content_[end - 1] == '\r') --end;
  if (!field.empty() && field.back() == '\r') field.pop_back();  // CRLF line ends
  out.fields.push_back(std::move(field));
  out.text = content_.substr(begin, end - begin);
  return true;
}

Header::Header(std::vector<std::string> names) : names_(std::move(names)) {
  for (auto& n : names_) n = std::string(text::trim(n));
}

std::optional<std::size_t> Header::find(std::string_view name) const {
  const auto it = std::find(names_.begin(), names_.end(), name);
  if (it == names_.end()) return std::nullopt;
  return static_cast<std::size_t>(it - names_.begin());
}

std::size_t Header::require(std::string_view name, const std::string& file, std::uint64_t line) const {
  if (const auto i = find(name)) return *i;
  throw InputError(file, line, std::string(name), "missing column in the header");
}

void require_text(std::string_view content, const std::string& file, std::string_view format) {
  if (text::trim(content).empty())
    throw InputError(file, 0, "", fmt::format("empty input: no {} records", format));
  if (content.starts_with("\x1f\x8b") || content.starts_with("\xFD"
                                                             "7zXZ"))
    throw InputError(file, 0, "",
                     fmt::format("compressed data: decompress it before reading it as {}", format));
  if (content.find('\0') != std::string_view::npos)
    throw InputError(file, 0, "", fmt::format("binary data (NUL bytes): not a {} file", format));
}

void CallCounts::finish(const std::string& file, std::string_view format) const {
  const auto records = report_.records - records_;
  if (records == 0 || report_.accepted + report_.folded() > kept_) return;
  std::string top;
  std::uint64_t most = 0;
  for (const auto& [reason, n] : report_.rejected_by_reason) {
    if (n > most) {
      most = n;
      top = reason;
    }
  }
  throw InputError(file, 0, "",
                   fmt::format("none of its {} records is a valid {} job (most common problem: {})", records,
                               format, top.empty() ? "unknown" : top));
}

}  // namespace slurmtwin::csv
