#pragma once
// Accounting of every input record: accepted, folded into another record, or rejected by reason.
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace slurmtwin {

/// Bad input: names file, line and field. Thrown in strict mode and for files that cannot be read.
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::uint64_t line, std::string field, const std::string& what);
  const std::string& file() const { return file_; }
  std::uint64_t line() const { return line_; }
  const std::string& field() const { return field_; }

 private:
  std::string file_;
  std::uint64_t line_;
  std::string field_;
};

/// How readers treat bad records.
struct ReadOptions {
  bool strict = false;        // first bad record throws InputError
  bool keep_rejects = false;  // keep each rejected record's text and reason in ReadReport::rejects
};

/// One rejected record, kept when ReadOptions::keep_rejects is set.
struct Reject {
  std::uint64_t line = 0;
  std::string field;
  std::string reason;  // the counting key, e.g. "bad Timelimit"
  std::string detail;  // what exactly was wrong
  std::string text;    // the raw record
};

/// Invariant (checked by balanced()): records == accepted + folded + rejected().
struct ReadReport {
  std::string file;
  std::uint64_t records = 0;   // input records seen (a multi-line record counts once)
  std::uint64_t accepted = 0;  // became jobs
  std::map<std::string, std::uint64_t> folded_by_kind;  // e.g. "job step" -> n: merged into a job
  std::map<std::string, std::uint64_t> rejected_by_reason;
  std::vector<Reject> rejects;
  /// The first rejected record and its file (without its text), kept whatever keep_rejects says: the
  /// line and field an error names when a command refuses a trace for its rejected records.
  std::optional<Reject> first_reject;
  std::string first_reject_file;
  std::vector<std::string> warnings;
  // Columns a replay needs that the input lacks (sacct dumps made without them): every job would
  // come out wrong or refused. Commands that replay refuse such input (trace_options.cpp).
  std::vector<std::string> missing_columns;

  std::uint64_t folded() const;
  std::uint64_t rejected() const;
  bool balanced() const { return records == accepted + folded() + rejected(); }
  /// Adds another file's report (for multi-file traces).
  void merge(const ReadReport& other);
};

/// Helper for readers: counts a rejected record, or throws in strict mode.
class RejectSink {
 public:
  RejectSink(ReadReport& report, const ReadOptions& options) : report_(report), options_(options) {}
  /// Records a rejection (or throws InputError when strict). `reason` is the counting key.
  void reject(std::uint64_t line, const std::string& field, const std::string& reason,
              const std::string& detail, std::string_view text = {});
  ReadReport& report() { return report_; }
  const ReadOptions& options() const { return options_; }

 private:
  ReadReport& report_;
  const ReadOptions& options_;
};

/// Human-readable summary: "records N = accepted A + folded F + rejected R", then reasons.
std::string format_report(const ReadReport& report);

}  // namespace slurmtwin
