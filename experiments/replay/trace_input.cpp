#include "experiments/replay/trace_input.hpp"

#include <fmt/format.h>

#include <cassert>

#include "traces/file_io.hpp"
#include "traces/read_report.hpp"
#include "traces/text.hpp"
#include "traces/time_format.hpp"

namespace slurmtwin::experiments {

std::map<std::string, std::string> read_user_default_accounts(const std::string& sacctmgr_script) {
  std::map<std::string, std::string> accounts;
  const auto content = read_input_file(sacctmgr_script);
  for (auto line : text::split(content, '\n')) {
    const auto words = text::split_ws(line);
    if (words.size() < 3 || !text::iequals(words[0], "add") || !text::iequals(words[1], "user")) continue;
    std::string name, account;
    for (auto w : words) {
      if (text::starts_with_i(w, "name=")) name = std::string(w.substr(5));
      if (text::starts_with_i(w, "defaultaccount=")) account = std::string(w.substr(15));
    }
    if (!name.empty() && !account.empty()) accounts[name] = account;
  }
  return accounts;
}

TraceReadOptions default_trace_read_options(const std::string& format, const std::string& users_from) {
  TraceReadOptions o;
  o.format = parse_trace_format(format);
  const auto origin = parse_timestamp(kDefaultEventsOrigin);
  assert(origin && *origin != kUnsetTime);
  o.origin = *origin;
  o.timezone = kDefaultSacctTimeZone;
  if (!users_from.empty()) o.user_default_accounts = read_user_default_accounts(users_from);
  return o;
}

void require_usable_trace(const ReadReport& report, double max_rejected_pct) {
  const auto rejected = report.rejected();
  const auto records = report.accepted + rejected;  // job records: folded steps are parts of jobs
  if (records == 0) throw InputError(report.file, 0, "", "no job records: nothing to replay");
  const double pct = 100.0 * static_cast<double>(rejected) / static_cast<double>(records);
  if (report.accepted > 0 && pct <= max_rejected_pct) return;
  std::string reasons;
  for (const auto& [reason, n] : report.rejected_by_reason)
    reasons += fmt::format("{}{} {}", reasons.empty() ? "" : ", ", n, reason);
  const auto& first = *report.first_reject;  // rejected > 0 here
  throw InputError(
      report.first_reject_file.empty() ? report.file : report.first_reject_file, first.line, first.field,
      fmt::format(
          "{} ({} of the {} job records were rejected when read, {:.1f}% against at most {}%: {}; this is "
          "the first; --rejects FILE lists them all)",
          first.detail.empty() ? first.reason : first.detail, rejected, records, pct, max_rejected_pct,
          reasons));
}

}  // namespace slurmtwin::experiments
