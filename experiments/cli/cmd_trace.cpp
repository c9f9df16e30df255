// slurmtwin trace info|generate|convert
#include <fmt/format.h>

#include <iostream>
#include <limits>
#include <utility>

#include "experiments/cli/cli.hpp"
#include "experiments/cli/trace_options.hpp"
#include "traces/file_io.hpp"
#include "traces/native_format.hpp"
#include "traces/sacct_writer.hpp"
#include "traces/synthetic.hpp"
#include "traces/time_format.hpp"
#include "traces/trace_summary.hpp"
#include "traces/trace_window.hpp"

namespace slurmtwin::cli {
namespace {

// Parses `FILE... [options]` (`options` plus the trace-reading ones) and loads the files.
po::variables_map parse_and_load(const std::string& usage, po::options_description o, const Args& args,
                                 Trace& trace, ReadReport& report) {
  o.add_options()("files", po::value<std::vector<std::string>>()->multitoken()->required(), "trace files");
  add_trace_read_options(o);
  po::positional_options_description pos;
  pos.add("files", -1);
  auto vm = parse(usage, o, args, pos);
  trace = load_traces(vm["files"].as<std::vector<std::string>>(), vm, report, /*for_replay=*/false);
  return vm;
}

int trace_info(const Args& args) {
  Trace trace;
  ReadReport report;
  parse_and_load("slurmtwin trace info FILE... [options]", po::options_description("trace info options"),
                 args, trace, report);
  std::cout << format_trace_summary(summarize_trace(trace), report);
  return kExitOk;
}

int trace_generate(const Args& args) {
  po::options_description o("trace generate options");
  o.add_options()("config", po::value<std::string>()->default_value(""),
                  "synthetic workload YAML (default: the built-in workload)")(
      "seed", po::value<std::uint64_t>(), "override the config's seed")(
      "days", po::value<double>(), "override the config's duration (days)")(
      "jobs-per-day", po::value<double>(), "override the config's mean arrival rate")(
      "output,o", po::value<std::string>()->required(), "output file (.stt, the native format)");
  const auto vm = parse("slurmtwin trace generate -o FILE [options]", o, args);
  auto config = vm["config"].as<std::string>().empty()
                    ? default_synthetic_config()
                    : load_synthetic_config(vm["config"].as<std::string>());
  if (vm.count("seed")) config.seed = vm["seed"].as<std::uint64_t>();
  if (vm.count("days")) config.days = vm["days"].as<double>();
  if (vm.count("jobs-per-day")) config.jobs_per_day = vm["jobs-per-day"].as<double>();
  const auto& out = vm["output"].as<std::string>();
  // sacct records a job's run time only once it has run (Start, End): a generated job written as sacct
  // would be read back without one and refused at replay (issue 22). Fail before generating.
  if (!out.ends_with(".stt"))
    throw po::error(
        fmt::format("{}: trace generate writes the native format (.stt), which keeps each job's run "
                    "time; sacct -P has none before a job has run (replay it and use its jobs.sacct)",
                    out));
  const auto trace = generate_synthetic(config);
  write_native_trace(trace, out);
  std::cerr << fmt::format("wrote {} jobs to {}\n", trace.jobs.size(), out);
  return kExitOk;
}

int trace_convert(const Args& args) {
  po::options_description o("trace convert options");
  o.add_options()("output,o", po::value<std::string>()->required(),
                  "output file (.stt native, else sacct -P)")(
      "from", po::value<std::string>(),
      "keep only jobs submitted at or after this time: YYYY-MM-DDTHH:MM:SS (UTC) or +D-HH:MM:SS after "
      "the first submit")("to", po::value<std::string>(),
                          "keep only jobs submitted before this time (same forms as --from)");
  Trace trace;
  ReadReport report;
  const auto vm = parse_and_load("slurmtwin trace convert FILE... -o OUT [options]", o, args, trace, report);
  const auto& out = vm["output"].as<std::string>();
  WindowBound from, to;
  for (const auto& [key, bound] : {std::pair{"from", &from}, std::pair{"to", &to}}) {
    if (!vm.count(key)) continue;
    const auto& text = vm[key].as<std::string>();
    const auto b = parse_window_bound(text);
    if (!b) throw po::error(fmt::format("--{}: '{}': expected {}", key, text, kWindowBoundForms));
    *bound = *b;
  }
  std::string window_note;
  if (from.set || to.set) {
    if (const auto problem = window_problem(from, to); !problem.empty())
      throw po::error(fmt::format("--from/--to: {}", problem));
    const auto read = trace.jobs.size();
    const auto ends = keep_submitted_in(trace, from, to);
    const auto end_text = [](Seconds t, Seconds open) {
      return t == open ? std::string("open") : format_timestamp(t);
    };
    const auto range = fmt::format("[{}, {})", end_text(ends.from, std::numeric_limits<Seconds>::min()),
                                   end_text(ends.to, std::numeric_limits<Seconds>::max()));
    if (trace.jobs.empty())
      throw po::error(fmt::format("--from/--to: none of the {} jobs read is submitted in {}", read, range));
    window_note = fmt::format("window {}: kept {} of {} jobs read\n", range, trace.jobs.size(), read);
  }
  if (out.ends_with(".stt"))
    write_native_trace(trace, out);
  else
    write_file_atomic(out, format_sacct_parsable(trace));
  std::cerr << "input accounting: " << format_report(report) << window_note;
  return kExitOk;
}

}  // namespace

int command_trace(const Args& args) {
  return run_subcommand(
      "trace",
      "usage: slurmtwin trace info|generate|convert [options]   (slurmtwin trace SUB --help)\n"
      "  info      job count, span, names, request distributions, recorded waits, skipped records by reason\n"
      "  generate  write a synthetic workload (diurnal/weekly arrivals, heavy-tailed runtimes)\n"
      "  convert   read any supported format and write the native (.stt) or sacct -P format\n",
      args, {{"info", trace_info}, {"generate", trace_generate}, {"convert", trace_convert}});
}

}  // namespace slurmtwin::cli
