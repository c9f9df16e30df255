#include "traces/trace_io.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "traces/file_io.hpp"
#include "traces/memory_guard.hpp"
#include "traces/native_format.hpp"
#include "traces/readers.hpp"
#include "traces/text.hpp"
#include "traces/time_zone.hpp"

namespace slurmtwin {
namespace {

struct FormatName {
  TraceFormat format;
  const char* name;
};
constexpr FormatName kFormats[] = {
    {TraceFormat::kAuto, "auto"},     {TraceFormat::kNative, "native"},
    {TraceFormat::kSacct, "sacct"},   {TraceFormat::kSacctJson, "sacct-json"},
    {TraceFormat::kSwf, "swf"},       {TraceFormat::kEvents, "events"},
    {TraceFormat::kGraham, "graham"}, {TraceFormat::kEagle, "eagle"},
};

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         text::iequals(std::string_view(s).substr(s.size() - suffix.size()), suffix);
}

std::string strip_compression(const std::string& path) {
  for (auto ext : {".gz", ".xz"})
    if (ends_with(path, ext)) return path.substr(0, path.size() - 3);
  return path;
}

}  // namespace

TraceFormat parse_trace_format(const std::string& name) {
  for (const auto& f : kFormats)
    if (text::iequals(name, f.name)) return f.format;
  throw std::invalid_argument(fmt::format(
      "unknown trace format '{}' (auto, native, sacct, sacct-json, swf, events, graham, eagle)", name));
}

const char* to_string(TraceFormat format) {
  for (const auto& f : kFormats)
    if (f.format == format) return f.name;
  return "?";
}

TraceFormat detect_trace_format(const std::string& path, const std::string& content) {
  if (is_native_trace(content)) return TraceFormat::kNative;
  const auto name = strip_compression(path);
  if (ends_with(name, ".swf")) return TraceFormat::kSwf;
  if (ends_with(name, ".events")) return TraceFormat::kEvents;
  if (ends_with(name, ".json")) return TraceFormat::kSacctJson;
  const auto first_line = std::string_view(content).substr(0, content.find('\n'));
  const auto head = text::trim(first_line);
  if (!head.empty() && head.front() == '{') return TraceFormat::kSacctJson;
  if (head.starts_with("-dt ")) return TraceFormat::kEvents;
  if (head.starts_with(";")) return TraceFormat::kSwf;
  if (head.find("job_unique_id") != std::string_view::npos) return TraceFormat::kGraham;
  if (head.starts_with("job_id,user,account")) return TraceFormat::kEagle;
  if (head.find('|') != std::string_view::npos) return TraceFormat::kSacct;
  // SWF files without a header: lines of 18 whitespace-separated numbers.
  if (text::split_ws(head).size() == 18) return TraceFormat::kSwf;
  throw InputError(path, 1, "", "cannot tell the trace format from the content; pass --format");
}

Trace read_trace(const std::vector<std::string>& paths, const TraceReadOptions& options, ReadReport& report) {
  std::optional<TimeZone> zone_;  // made on first use: reading the zone database takes a moment
  const auto zone = [&]() -> const TimeZone& {
    if (!zone_) zone_.emplace(options.timezone);
    return *zone_;
  };
  Trace trace;
  trace.origin = options.origin;
  for (const auto& path : paths) {
    const auto content = read_input_file(path);
    if (content.empty()) throw InputError(path, 0, "", "empty file");
    // The content is already in memory (and out of MemAvailable): only the records are still to come.
    const auto lines = static_cast<std::uint64_t>(std::count(content.begin(), content.end(), '\n'));
    require_memory(trace_read_bytes(/*content_bytes=*/0, lines),
                   fmt::format("reading {} ({} bytes, {} lines)", path, content.size(), lines));
    const auto format =
        options.format == TraceFormat::kAuto ? detect_trace_format(path, content) : options.format;
    if (format == TraceFormat::kNative) {
      if (paths.size() != 1)
        throw InputError(path, 0, "", "a native trace cannot be combined with other files");
      trace = decode_native_trace(content, path);
      report.file = path;
      report.records += trace.jobs.size();
      report.accepted += trace.jobs.size();
      return trace;
    }
    ReadReport one;
    one.file = path;
    RejectSink sink(one, options.read);
    switch (format) {
      case TraceFormat::kSacct: {
        const auto first = trace.jobs.size();
        read_sacct_parsable(content, path, trace, sink, options.sacct_columns);
        wall_times_to_utc(trace, first, zone());
        break;
      }
      case TraceFormat::kSacctJson:
        read_sacct_json(content, path, trace, sink);
        break;
      case TraceFormat::kSwf:
        read_swf(content, path, trace, sink);
        break;
      case TraceFormat::kEvents:
        read_events(content, path, trace, sink, options.user_default_accounts);
        break;
      case TraceFormat::kGraham:
        read_graham_csv(content, path, trace, sink);
        break;
      case TraceFormat::kEagle:
        read_eagle_csv(content, path, trace, sink);
        break;
      default:
        throw std::logic_error("unhandled trace format");
    }
    report.merge(one);
  }
  // The readers each name their file; one name for the whole set reads better in summaries.
  trace.source = paths.size() <= 3
                     ? report.file
                     : fmt::format("{} .. {} ({} files)", paths.front(), paths.back(), paths.size());
  return trace;
}

}  // namespace slurmtwin
