// A run's trace fails closed (experiments/replay/trace_input.hpp): every count below by hand.
#include <doctest/doctest.h>

#include <string>

#include "experiments/replay/trace_input.hpp"
#include "traces/read_report.hpp"

using namespace slurmtwin;
using experiments::require_usable_trace;

namespace {

/// A report of `accepted` jobs after `rejected` records of reason "bad --time" from lines 7, 8, ...
/// (plus 3 folded steps, which are parts of jobs, not job records), read without keep_rejects.
ReadReport report_of(std::uint64_t accepted, std::uint64_t rejected, const std::string& file = "t.events") {
  ReadReport report;
  report.file = file;
  ReadOptions lenient;
  RejectSink sink(report, lenient);
  for (std::uint64_t k = 0; k < rejected; ++k)
    sink.reject(7 + k, "--time", "bad --time", "'zz' is not a time limit");
  report.accepted = accepted;
  report.folded_by_kind["job step"] = 3;
  report.records = accepted + rejected + 3;
  return report;
}

std::string refusal(const ReadReport& report, double pct) {
  try {
    require_usable_trace(report, pct);
  } catch (const InputError& e) {
    return e.what();
  }
  return {};
}

}  // namespace

TEST_CASE("a trace is refused when more than the allowed share of its job records was rejected") {
  // The first reject is kept with its line and field though the records' texts are not.
  const auto two = report_of(18, 2);
  REQUIRE(two.first_reject);
  CHECK(two.first_reject->line == 7);
  CHECK(two.rejects.empty());
  // 2 of 20 job records (the 3 folded steps are not job records): 10%, at the limit, passes.
  CHECK(refusal(two, 10).empty());
  CHECK(
      refusal(report_of(17, 3), 10) ==
      "t.events:7: --time: 'zz' is not a time limit (3 of the 20 job records were rejected when read, 15.0% "
      "against at most 10%: 3 bad --time; this is the first; --rejects FILE lists them all)");
  CHECK(refusal(report_of(17, 3), 15).empty());
  // None left: refused whatever the limit; no job record at all, too.
  CHECK(refusal(report_of(0, 1), 100).find("t.events:7: --time:") == 0);
  CHECK(refusal(report_of(0, 0), 100) == "t.events: no job records: nothing to replay");
  CHECK(refusal(report_of(5, 0), 0).empty());
}

TEST_CASE("merged reports name the first rejected record's own file") {
  auto all = report_of(10, 0, "a.events");
  all.merge(report_of(4, 1, "b.events"));
  all.merge(report_of(4, 1, "c.events"));
  CHECK(all.file == "a.events,b.events,c.events");
  REQUIRE(all.first_reject);
  CHECK(all.first_reject_file == "b.events");
  CHECK(refusal(all, 5).find("b.events:7: --time: 'zz' is not a time limit (2 of the 20 job records") == 0);
}
