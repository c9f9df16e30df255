// slurmtwin compare: both engines on the same settings (a sweep spec), and a report of how far the
// surrogate is from the exact simulator and how much faster it is (experiments/compare.hpp).
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "experiments/cli/cli.hpp"
#include "experiments/learn/compare.hpp"
#include "experiments/learn/surrogate_sweep.hpp"
#include "experiments/learn_cli/surrogate_options.hpp"
#include "experiments/replay/progress.hpp"
#include "experiments/report/report_html.hpp"
#include "experiments/sweep/sweep.hpp"
#include "traces/file_io.hpp"

namespace slurmtwin::cli {

int command_compare(const Args& args) {
  return guarded([&]() -> int {
    po::options_description o("compare options");
    o.add_options()("spec", po::value<std::string>()->required(),
                    "sweep specification (YAML; docs/sweeps.md)")(
        "db", po::value<std::string>(),
        "SQLite database for both engines' results (reruns resume); default: SPEC with .compare.db")(
        "jobs,j", jobs_value(), "worker threads (exact replays; libtorch threads for the surrogate)")(
        "out,o", po::value<std::string>()->default_value(""),
        "write the Markdown report here (default: stdout)")(
        "html", po::value<std::string>()->default_value(""),
        "also write the sweep's HTML report (with the surrogate-vs-exact plots) here")(
        "report-only", po::bool_switch(),
        "run nothing: report on the points of --db that both engines have already evaluated (e.g. a hybrid "
        "sweep's verified points)");
    add_surrogate_options(o, true);
    po::positional_options_description pos;
    pos.add("spec", 1);
    const auto vm =
        parse("slurmtwin compare SPEC.yaml --model CKPT [--db FILE] [-o REPORT.md] [--html REPORT.html]", o,
              args, pos);
    const auto spec_path = vm["spec"].as<std::string>();
    auto spec = load_sweep_spec(spec_path);
    spec.job_waits = true;  // per-job errors need both engines' per-job waits
    const auto db = vm.count("db")
                        ? vm["db"].as<std::string>()
                        : std::filesystem::path(spec_path).replace_extension(".compare.db").string();
    SweepRunOptions ro;
    ro.jobs = jobs_option(vm);
    ro.progress = &std::cerr;
    ro.progress_style = progress_style_for(/*fd=*/2);
    SurrogateScorer scorer(surrogate_options(vm), {});
    ro.scorer = &scorer;
    SweepRunSummary exact, predicted;
    if (!vm["report-only"].as<bool>()) {
      ro.engine = SweepEngine::kExact;
      exact = run_sweep_spec(spec, db, ro);
      ro.engine = SweepEngine::kSurrogate;
      predicted = run_sweep_spec(spec, db, ro);
    } else if (!std::filesystem::exists(db)) {
      throw std::runtime_error(db + ": no such database");
    }
    const SweepStore store(db, StoreAccess::kRead);
    const auto c = compare_engines(store.rows(true), store.objectives(), store.constraints());
    const auto text = comparison_markdown(c, fmt::format("Surrogate vs exact simulator: {}", spec_path),
                                          exact.evaluated ? exact.exact_seconds : 0,
                                          predicted.predicted ? predicted.surrogate_seconds : 0);
    if (const auto& out = vm["out"].as<std::string>(); out.empty())
      std::cout << text;
    else
      write_file_atomic(out, text);
    if (const auto& html = vm["html"].as<std::string>(); !html.empty()) {
      ReportOptions opt;
      opt.title = fmt::format("SlurmTwin: surrogate vs exact, {}", spec_path);
      write_file_atomic(html, sweep_report_html(db, opt));
    }
    return kExitOk;
  });
}

}  // namespace slurmtwin::cli
