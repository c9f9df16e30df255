// slurmtwin report: a replay output directory or a sweep database -> one self-contained HTML file.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <iostream>

#include "experiments/cli/cli.hpp"
#include "experiments/report/report_html.hpp"
#include "traces/file_io.hpp"

namespace slurmtwin::cli {

int command_report(const Args& args) {
  return guarded([&]() -> int {
    po::options_description o("report options");
    o.add_options()("input", po::value<std::string>()->required(),
                    "replay output directory (jobs.csv, metrics.json) or sweep database (SQLite)")(
        "output,o", po::value<std::string>()->default_value("report.html"), "HTML file to write")(
        "title", po::value<std::string>()->default_value(""), "page title (default: by input kind)")(
        "gantt-from", po::value<std::string>()->default_value(""),
        "start of the Gantt view: YYYY-MM-DDTHH:MM:SS (UTC) or +SECONDS after the first submit (default: the "
        "day around the longest queue)")("gantt-hours", po::value<double>()->default_value(24),
                                         "length of the Gantt view (hours)")(
        "gantt-nodes", po::value<std::size_t>()->default_value(160),
        "at most this many node rows in the Gantt view")(
        "gantt-colour", po::value<std::string>()->default_value("partition"),
        "what the Gantt bars' colour tells: partition, qos or account (past 12, the 11 with the most jobs "
        "in the view)");
    po::positional_options_description pos;
    pos.add("input", 1);
    const auto vm = parse("slurmtwin report RUN_DIR|SWEEP_DB [-o report.html]", o, args, pos);
    ReportOptions ro;
    ro.title = vm["title"].as<std::string>();
    ro.gantt_from = vm["gantt-from"].as<std::string>();
    const double hours = vm["gantt-hours"].as<double>();
    if (!(hours > 0) || hours > 24 * 3660) throw po::error("--gantt-hours: expected hours in (0, 87840]");
    ro.gantt_length = static_cast<Seconds>(std::llround(hours * 3600));
    ro.gantt_max_nodes = vm["gantt-nodes"].as<std::size_t>();
    if (ro.gantt_max_nodes == 0) throw po::error("--gantt-nodes: expected at least 1");
    ro.gantt_colour = vm["gantt-colour"].as<std::string>();
    if (ro.gantt_colour != "partition" && ro.gantt_colour != "qos" && ro.gantt_colour != "account")
      throw po::error(fmt::format("--gantt-colour: '{}' is not partition, qos or account", ro.gantt_colour));

    const auto input = vm["input"].as<std::string>();
    if (!std::filesystem::exists(input))
      throw std::invalid_argument(fmt::format("{}: no such file or directory", input));
    const auto html =
        std::filesystem::is_directory(input) ? replay_report_html(input, ro) : sweep_report_html(input, ro);
    const auto out = vm["output"].as<std::string>();
    write_file_atomic(out, html);
    std::cout << fmt::format("report written: {} ({} KiB)\n", out, (html.size() + 1023) / 1024);
    return kExitOk;
  });
}

}  // namespace slurmtwin::cli
