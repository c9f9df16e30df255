#pragma once
// Shared checks for the libFuzzer targets (docs/reliability.md). A target feeds one input to one reader
// or importer; the only acceptable failure is an InputError that names the file (and, for records,
// the line and field). Anything else -- another exception type, a sanitizer report, a broken
// accounting invariant -- aborts, which libFuzzer reports as a crash and saves the input.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "traces/input_limits.hpp"
#include "traces/read_report.hpp"
#include "traces/trace.hpp"

namespace slurmtwin::fuzz {

/// Name given to every fuzz input in messages.
inline constexpr const char* kFuzzFile = "fuzz-input";

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "FUZZ INVARIANT BROKEN: %s\n", what.c_str());
  std::abort();
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// An InputError must say which file it is about and what is wrong.
inline void check_error(const InputError& e) {
  if (e.file() != kFuzzFile) fail("InputError names file '" + e.file() + "', not the input: " + e.what());
  if (std::string_view(e.what()).empty()) fail("InputError without a message");
}

/// Runs `read(content, trace, sink)` leniently and strictly. Lenient: every record is accounted for
/// (records = accepted + folded + rejected) and every accepted job is within record_limits. Strict:
/// either an InputError or no rejection at all.
template <class Read>
void fuzz_trace_reader(std::string_view content, Read read) {
  for (const bool strict : {false, true}) {
    ReadOptions options;
    options.strict = strict;
    options.keep_rejects = !strict;
    ReadReport report;
    report.file = kFuzzFile;
    RejectSink sink(report, options);
    Trace trace;
    try {
      read(content, trace, sink);
    } catch (const InputError& e) {
      check_error(e);
      continue;
    }
    if (!report.balanced()) fail("records != accepted + folded + rejected:\n" + format_report(report));
    if (report.accepted != trace.jobs.size()) fail("accepted count differs from the jobs in the trace");
    if (strict && report.rejected() != 0) fail("strict mode rejected a record without throwing");
    for (const auto& job : trace.jobs)
      if (const auto problem = record_limit_problem(job))
        fail("accepted job " + std::to_string(job.job_id) + " has " + problem->field + ": " +
             problem->detail);
  }
}

}  // namespace slurmtwin::fuzz
