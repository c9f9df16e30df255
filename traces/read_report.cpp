#include "traces/read_report.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace slurmtwin {

InputError::InputError(std::string file, std::uint64_t line, std::string field, const std::string& what)
    : std::runtime_error(line > 0 ? fmt::format("{}:{}: {}: {}", file, line, field, what)
                                  : fmt::format("{}: {}{}{}", file, field, field.empty() ? "" : ": ", what)),
      file_(std::move(file)),
      line_(line),
      field_(std::move(field)) {}

std::uint64_t ReadReport::folded() const {
  std::uint64_t n = 0;
  for (const auto& [kind, count] : folded_by_kind) n += count;
  return n;
}

std::uint64_t ReadReport::rejected() const {
  std::uint64_t n = 0;
  for (const auto& [reason, count] : rejected_by_reason) n += count;
  return n;
}

void ReadReport::merge(const ReadReport& other) {
  if (file.empty()) {
    file = other.file;
  } else if (!other.file.empty()) {
    file += "," + other.file;
  }
  records += other.records;
  accepted += other.accepted;
  for (const auto& [k, n] : other.folded_by_kind) folded_by_kind[k] += n;
  for (const auto& [k, n] : other.rejected_by_reason) rejected_by_reason[k] += n;
  rejects.insert(rejects.end(), other.rejects.begin(), other.rejects.end());
  if (!first_reject && other.first_reject) {
    first_reject = other.first_reject;
    first_reject_file = other.first_reject_file;
  }
  warnings.insert(warnings.end(), other.warnings.begin(), other.warnings.end());
  for (const auto& c : other.missing_columns)
    if (std::find(missing_columns.begin(), missing_columns.end(), c) == missing_columns.end())
      missing_columns.push_back(c);
}

void RejectSink::reject(std::uint64_t line, const std::string& field, const std::string& reason,
                        const std::string& detail, std::string_view text) {
  if (options_.strict) throw InputError(report_.file, line, field, detail.empty() ? reason : detail);
  ++report_.rejected_by_reason[reason];
  if (!report_.first_reject) {
    report_.first_reject = Reject{line, field, reason, detail, {}};
    report_.first_reject_file = report_.file;
  }
  if (options_.keep_rejects) report_.rejects.push_back({line, field, reason, detail, std::string(text)});
}

std::string format_report(const ReadReport& r) {
  std::string out = fmt::format("records {} = accepted {} + folded {} + rejected {}\n", r.records, r.accepted,
                                r.folded(), r.rejected());
  for (const auto& [kind, n] : r.folded_by_kind) out += fmt::format("  folded   {:>8}  {}\n", n, kind);
  for (const auto& [reason, n] : r.rejected_by_reason)
    out += fmt::format("  rejected {:>8}  {}\n", n, reason);
  if (!r.missing_columns.empty()) {
    out += "  missing columns a replay needs:";
    for (const auto& c : r.missing_columns) out += " " + c;
    out += '\n';
  }
  return out;
}

}  // namespace slurmtwin
