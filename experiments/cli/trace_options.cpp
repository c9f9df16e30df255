#include "experiments/cli/trace_options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <iostream>

#include "experiments/replay/trace_input.hpp"
#include "traces/file_io.hpp"
#include "traces/read_report.hpp"
#include "traces/text.hpp"
#include "traces/time_format.hpp"
#include "traces/time_zone.hpp"

namespace slurmtwin::cli {

void add_trace_read_options(po::options_description& o) {
  o.add_options()("format", po::value<std::string>()->default_value("auto"),
                  "trace format: auto, native, sacct, sacct-json, swf, events, graham, eagle")(
      "strict", po::bool_switch(), "stop at the first bad record (file:line: field: what)")(
      "rejects", po::value<std::string>()->default_value(""),
      "write rejected records with their reasons to this file")("sacct-columns",
                                                                po::value<std::string>()->default_value(""),
                                                                "column list of headerless sacct -P output")(
      "origin", po::value<std::string>()->default_value(kDefaultEventsOrigin),
      "absolute time of offset 0 for the events format (UTC)")(
      "users-from", po::value<std::string>()->default_value(""),
      "sacctmgr script giving users' default accounts (events format)")(
      "timezone", po::value<std::string>()->default_value(kDefaultSacctTimeZone),
      "zone sacct -P printed its local times in (DST included): local (this machine's, as sacct), UTC, "
      "or a name such as Europe/Berlin");
}

TraceReadOptions trace_read_options(const po::variables_map& vm) {
  TraceReadOptions o;
  o.format = parse_trace_format(vm["format"].as<std::string>());
  o.read.strict = vm["strict"].as<bool>();
  o.read.keep_rejects = !vm["rejects"].as<std::string>().empty();
  o.sacct_columns = vm["sacct-columns"].as<std::string>();
  const auto origin = parse_timestamp(vm["origin"].as<std::string>());
  if (!origin || *origin == kUnsetTime) throw po::error("--origin expects YYYY-MM-DDTHH:MM:SS");
  o.origin = *origin;
  o.timezone = vm["timezone"].as<std::string>();
  try {
    TimeZone::check_name(o.timezone);  // an unknown zone is a usage error now, not after the trace is read
  } catch (const std::invalid_argument& e) {
    throw po::error(std::string("--timezone: ") + e.what());
  }
  if (const auto& f = vm["users-from"].as<std::string>(); !f.empty())
    o.user_default_accounts = read_user_default_accounts(f);
  return o;
}

namespace {
// The sacct columns docs/getting-started.md asks for (each one sacct 22.05 accepts: it refuses Restarts;
// requeued runs come from -D). SubmitLine (21.08 on) carries what no other column does: --exclusive,
// --ntasks-per-node, -c, an array's %N and -L, when given on the command line.
constexpr const char* kRecommendedSacctColumns =
    "JobID,JobIDRaw,JobName,User,Account,Partition,QOS,Submit,Eligible,Start,End,Elapsed,Timelimit,State,"
    "NNodes,ReqNodes,NCPUS,ReqCPUS,ReqMem,ReqTRES,NodeList,Priority,Flags,Constraints,Reservation,"
    "ReservationId,SubmitLine";
}  // namespace

Trace load_traces(const std::vector<std::string>& paths, const po::variables_map& vm, ReadReport& report,
                  bool for_replay) {
  const auto options = trace_read_options(vm);
  auto trace = read_trace(paths, options, report);
  if (for_replay && !report.missing_columns.empty())
    throw InputError(
        report.file, 1, "header",
        fmt::format("sacct columns a replay needs are missing: {}; dump with sacct -a -P -D -o {}",
                    fmt::join(report.missing_columns, ", "), kRecommendedSacctColumns));
  if (const auto& f = vm["rejects"].as<std::string>(); !f.empty()) {
    std::string out = "file|line|reason|field|detail|record\n";
    for (const auto& r : report.rejects) {
      std::string flat = r.text;
      for (auto& c : flat)
        if (c == '\n') c = ' ';
      out += fmt::format("{}|{}|{}|{}|{}|{}\n", report.file, r.line, r.reason, r.field, r.detail, flat);
    }
    write_file_atomic(f, out);
  }
  // A run fails closed on a trace whose records were (nearly) all rejected: after --rejects is written.
  if (for_replay)
    require_usable_trace(
        report, vm.count("max-rejected") > 0 ? vm["max-rejected"].as<double>() : kDefaultMaxRejectedPct);
  return trace;
}

}  // namespace slurmtwin::cli
