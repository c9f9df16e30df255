// slurmtwin report: the HTML is well-formed, self-contained, has the expected plots, and draws what
// the inputs say (replay output directories and sweep databases).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include "experiments/replay/replay.hpp"
#include "experiments/report/report_html.hpp"
#include "experiments/report/svg_plot.hpp"
#include "experiments/sweep/feasibility.hpp"
#include "experiments/sweep/sweep_store.hpp"
#include "test_support.hpp"
#include "traces/default_site.hpp"
#include "traces/read_report.hpp"
#include "traces/synthetic.hpp"

using namespace slurmtwin;
using namespace slurmtwin::experiments;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// "" when `doc` is well-formed XML (elements nest and close, attributes quoted, comments, CDATA and
/// the DOCTYPE skipped), else what is wrong and where.
std::string xml_problem(const std::string& doc) {
  std::vector<std::string> open;
  std::size_t i = 0;
  while ((i = doc.find('<', i)) != std::string::npos) {
    const auto skip = [&](const char* start, const char* end) {
      if (doc.compare(i, std::string_view(start).size(), start) != 0) return false;
      const auto e = doc.find(end, i);
      i = e == std::string::npos ? doc.size() : e + std::string_view(end).size();
      return true;
    };
    if (skip("<!--", "-->") || skip("<![CDATA[", "]]>") || skip("<!DOCTYPE", ">")) continue;
    const bool closing = doc[i + 1] == '/';
    std::size_t j = i + (closing ? 2 : 1);
    const auto name_start = j;
    while (j < doc.size() &&
           (std::isalnum(static_cast<unsigned char>(doc[j])) || doc[j] == '-' || doc[j] == ':'))
      ++j;
    const auto name = doc.substr(name_start, j - name_start);
    if (name.empty()) return fmt::format("bad tag at offset {}", i);
    char quote = 0;  // find the tag's end outside quoted attribute values
    for (; j < doc.size(); ++j) {
      if (quote) {
        if (doc[j] == quote) quote = 0;
        if (doc[j] == '<') return fmt::format("'<' inside an attribute of <{}> at offset {}", name, j);
      } else if (doc[j] == '"' || doc[j] == '\'') {
        quote = doc[j];
      } else if (doc[j] == '>') {
        break;
      }
    }
    if (j == doc.size()) return fmt::format("unterminated <{}>", name);
    if (closing) {
      if (open.empty() || open.back() != name)
        return fmt::format("</{}> at offset {} closes <{}>", name, i, open.empty() ? "" : open.back());
      open.pop_back();
    } else if (doc[j - 1] != '/') {
      open.push_back(name);
    }
    i = j + 1;
  }
  return open.empty() ? "" : fmt::format("<{}> never closed", open.back());
}

/// Everything a self-contained report must not hold: fetches of any kind.
void check_self_contained(const std::string& html) {
  CHECK(count(html, "://") ==
        count(html, "xmlns=\"http://www.w3.org/2000/svg\""));  // no URL but the SVG namespace
  CHECK(html.find("src=") == std::string::npos);
  CHECK(html.find("href") == std::string::npos);
  CHECK(html.find("url(") == std::string::npos);
  CHECK(html.find("@import") == std::string::npos);
}

const std::vector<SweepObjective> kFourPointObjectives = {{"wait_mean", Goal::kMin},
                                                          {"utilisation", Goal::kMax}};

/// A sweep database of four hand-made points, (wait_mean, utilisation): D (90, 0.6) dominates
/// A (100, 0.5); A and D dominate C (120, 0.45); B (80, 0.4) has the lowest wait. Front: B and D.
/// A constraint on utilisation takes its value from the objective.
void write_four_points(const std::string& db, const std::vector<SweepConstraint>& constraints = {}) {
  SweepStore store(db);
  store.add_objectives(kFourPointObjectives);
  store.set_constraints(constraints);
  const std::vector<std::tuple<std::string, double, double, double>> points = {
      {"a", 0, 100, 0.5}, {"b", 10, 80, 0.4}, {"c", 20, 120, 0.45}, {"d", 30, 90, 0.6}};
  for (const auto& [key, age, wait, util] : points) {
    SweepRow row;
    row.key = key;
    row.params_json = fmt::format("{{\"PriorityWeightAge\": {}}}", age);
    row.metrics_json = "{}";
    row.objectives = {wait, util};
    if (!constraints.empty()) row.constraint_values = {util};
    store.insert(row, kFourPointObjectives, constraints);
  }
}

const std::string kJobsHeader =
    "job_id,user,account,partition,qos,submit,eligible,start,end,wait_s,state,nodes,alloc_cpus,priority_at_"
    "start,"
    "started_by,restarts,pending_reasons,reject_reason\n";

/// A hand-made replay output: 3 started jobs on n1, n2, n3, n10 and one that never started.
std::filesystem::path tiny_run_dir() {
  const auto dir = testing::scratch_dir("report_tiny");
  std::ofstream(dir / "jobs.csv")
      << kJobsHeader
      << "1,u1,acct1,a,normal,1000,1000,1000,4600,0,COMPLETED,\"n[1-2]\",8,10,main,0,,\"\"\n"
         "2,u2,acct2,a,high,1000,1000,1600,2000,600,COMPLETED,\"n3\",4,10,main,0,,\"\"\n"
         "3,u1,acct1,b,normal,2000,2000,9000,9500,7000,TIMEOUT,\"n10\",4,10,backfill,0,,\"\"\n"
         "4,u2,acct2,b,normal,2000,2000,,,,PENDING,\"\",0,0,none,0,Resources,\"\"\n";
  std::ofstream(dir / "metrics.json")
      << "{\n  \"jobs\": {\"input\": 4, \"rejected\": 0, \"started\": 3, \"never_started\": 1},\n"
         "  \"overall\": {\"jobs\": 3, \"wait_mean_s\": 2533.33, \"wait_median_s\": 600, \"wait_p90_s\": "
         "5720, "
         "\"wait_p99_s\": 6872, \"wait_max_s\": 7000, \"bounded_slowdown_mean\": 5.5},\n"
         "  \"by_partition\": {\n    \"a\": {\"jobs\": 2, \"wait_mean_s\": 300, \"wait_median_s\": 300, "
         "\"wait_p90_s\": "
         "540, \"wait_p99_s\": 594, \"wait_max_s\": 600, \"bounded_slowdown_mean\": 1.5}},\n"
         "  \"by_qos\": {},\n"
         "  \"first_submit\": 1000, \"last_end\": 9500, \"makespan_s\": 8500,\n"
         "  \"utilisation\": 0.25,\n"
         "  \"queue_length\": {\"mean\": 0.5, \"max\": 2, \"cdf\": [[0, 0.5], [2, 1]]},\n"
         "  \"series_bucket_s\": 3600,\n"
         "  \"utilisation_series\": [0.5, 0.125, 0.1],\n"
         "  \"queue_length_series\": [1, 0.5, 2],\n"
         "  \"fairness\": {\"acct1\": {\"usage_share\": 0.75, \"target_share\": 0.5}, \"acct2\": "
         "{\"usage_share\": 0.25, "
         "\"target_share\": 0.5}}\n}\n";
  return dir;
}

}  // namespace

TEST_CASE("replay report of a real replay: well-formed, self-contained, every plot present") {
  // A replay as `slurmtwin replay` writes it: the report reads what replay.cpp and metrics.cpp write.
  auto config = default_synthetic_config();
  config.days = 1;
  const auto trace = generate_synthetic(config);
  const auto result = run_replay(scaled_default_site(16), trace, ReplayOptions{});
  const auto dir = testing::scratch_dir("report_replay");
  std::ofstream(dir / "jobs.csv") << jobs_csv(result, trace);
  std::ofstream(dir / "metrics.json") << sim::metrics_to_json(result.metrics);
  const auto html = replay_report_html(dir.string(), ReportOptions{});

  CHECK(html.starts_with("<!DOCTYPE html>"));
  CHECK(xml_problem(html) == "");
  check_self_contained(html);
  for (const char* id : {"wait-cdf-partition", "wait-cdf-qos", "utilisation", "queue-length",
                         "pending-reasons", "fairness", "gantt"})
    CHECK_MESSAGE(count(html, fmt::format("data-plot=\"{}\"", id)) == 1, id);
  CHECK(html.find("<body data-plots=\"7\">") != std::string::npos);
  // Jobs waited for Priority and Resources in this day (a legend entry each).
  CHECK(html.find("class=\"legend\">Priority</text>") != std::string::npos);
  CHECK(html.find("class=\"legend\">Resources</text>") != std::string::npos);
  // CPUs, memory and GPUs (the scaled default site has GPU nodes) in one utilisation chart, with the
  // three shares in the summary table.
  CHECK(html.find("Utilisation: CPUs, memory and GPUs held by jobs") != std::string::npos);
  CHECK(html.find(fmt::format("<td>{:.1f}% / {:.1f}% / {:.1f}%</td>", 100 * result.metrics.utilisation,
                              100 * result.metrics.memory_utilisation,
                              100 * result.metrics.gpu_utilisation)) != std::string::npos);
  // One CDF curve per partition that started a job, named with its job count.
  for (const auto& [part, w] : result.metrics.by_partition)
    if (w.jobs > 0) CHECK(html.find(fmt::format("{} ({} jobs)", part, w.jobs)) != std::string::npos);
  // Same input, same bytes.
  CHECK(replay_report_html(dir.string(), ReportOptions{}) == html);
}

TEST_CASE("replay report draws the hand-made jobs: Gantt bars per job and node, CDFs per partition and QOS") {
  const auto dir = tiny_run_dir();
  ReportOptions o;
  o.gantt_from = "+0";
  o.gantt_length = 3 * 3600;
  const auto html = replay_report_html(dir.string(), o);
  CHECK(xml_problem(html) == "");
  // A metrics.json from before memory and GPU utilisation: CPUs only, "-" for the others.
  CHECK(html.find("<td>25.0% / - / -</td>") != std::string::npos);
  check_self_contained(html);
  // Window [1000, 11800): jobs 1 (two nodes), 2 and 3; job 4 never started.
  CHECK(count(html, "<title>job ") == 4);
  for (const char* bar : {"job 1 on n1 ", "job 1 on n2 ", "job 2 on n3 ", "job 3 on n10 "})
    CHECK_MESSAGE(html.find(bar) != std::string::npos, bar);
  CHECK(html.find("job 4 on") == std::string::npos);
  // Node rows in natural order: n1, n2, n3, n10.
  const auto n3 = html.find(">n3</text>"), n10 = html.find(">n10</text>");
  REQUIRE(n3 != std::string::npos);
  REQUIRE(n10 != std::string::npos);
  CHECK(n3 < n10);
  CHECK(html.find("a (2 jobs)") != std::string::npos);
  CHECK(html.find("b (1 jobs)") != std::string::npos);
  CHECK(html.find("normal (2 jobs)") != std::string::npos);
  CHECK(html.find("high (1 jobs)") != std::string::npos);
  // Fairness bars carry their values.
  CHECK(html.find("acct1: usage share 0.75") != std::string::npos);
  CHECK(html.find("acct2: target share 0.5") != std::string::npos);

  // A later window holds only job 3: [6000, 9600).
  o.gantt_from = "+5000";
  o.gantt_length = 3600;
  const auto later = replay_report_html(dir.string(), o);
  CHECK(count(later, "<title>job ") == 1);
  CHECK(later.find("job 3 on n10 ") != std::string::npos);
}

TEST_CASE(
    "replay report: the Gantt bars coloured by partition, QOS or account, past 12 groups the rest sharing "
    "one") {
  const auto dir = tiny_run_dir();
  ReportOptions o;
  o.gantt_from = "+0";
  o.gantt_length = 3 * 3600;
  const auto legend = [](const std::string& html, const std::string& name) {
    return html.find(fmt::format("class=\"legend\">{}</text>", name)) != std::string::npos;
  };
  auto html = replay_report_html(dir.string(), o);  // partitions a and b
  CHECK(html.find("coloured by partition (<code>--gantt-colour</code>)") != std::string::npos);
  CHECK((legend(html, "a") && legend(html, "b")));
  o.gantt_colour = "qos";
  html = replay_report_html(dir.string(), o);
  CHECK(html.find("coloured by QOS") != std::string::npos);
  CHECK((legend(html, "normal") && legend(html, "high") && !legend(html, "a")));
  o.gantt_colour = "account";
  CHECK((legend(replay_report_html(dir.string(), o), "acct1") &&
         legend(replay_report_html(dir.string(), o), "acct2")));
  // 14 accounts in the view, account k with k jobs: the 11 with the most keep a colour, 3 share one.
  std::string rows = kJobsHeader;
  int id = 0;
  for (int k = 1; k <= 14; ++k)
    for (int n = 0; n < k; ++n)
      rows += fmt::format(
          "{},u1,acc{:02},a,normal,1000,1000,1000,2000,0,COMPLETED,\"n{}\",1,10,main,0,,\"\"\n", ++id, k, id);
  std::ofstream(dir / "jobs.csv") << rows;
  html = replay_report_html(dir.string(), o);
  CHECK(legend(html, "acc14"));
  CHECK(legend(html, "acc04"));
  CHECK_FALSE(legend(html, "acc03"));
  CHECK(legend(html, "3 other accounts"));
  CHECK(html.find("job 1 on n1 (a, QOS normal, account acc01, COMPLETED)") != std::string::npos);
}

TEST_CASE("replay report: the fairness chart keeps the accounts that use or are owed the most") {
  // Issue 24: with more than 40 accounts of equal targets the chart kept the first 40 by name and hid
  // "zz", which used half the machine.
  const auto dir = tiny_run_dir();
  auto json = testing::slurp(dir / "metrics.json");
  std::string fair = "\"fairness\": {";
  for (int a = 1; a <= 44; ++a)
    fair += fmt::format("\"a{:02}\": {{\"usage_share\": {}, \"target_share\": {}}}, ", a, 0.5 / 44, 1.0 / 45);
  fair += fmt::format("\"zz\": {{\"usage_share\": 0.5, \"target_share\": {}}}}}\n}}\n", 1.0 / 45);
  json = json.substr(0, json.find("\"fairness\"")) + fair;
  std::ofstream(dir / "metrics.json") << json;
  const auto html = replay_report_html(dir.string(), {});
  CHECK(xml_problem(html) == "");
  CHECK(html.find("zz: usage share 0.5") != std::string::npos);
  CHECK(html.find("The 40 accounts of 45 with the largest usage or target are shown.") != std::string::npos);
  // The other 44 tie on both: the first 39 by name join zz.
  CHECK(html.find("a39: usage share") != std::string::npos);
  CHECK(html.find("a40: usage share") == std::string::npos);
}

TEST_CASE("replay report: missing or malformed inputs name the file and line") {
  const auto dir = tiny_run_dir();
  std::filesystem::remove(dir / "metrics.json");
  CHECK_THROWS_WITH_AS(replay_report_html(dir.string(), {}), doctest::Contains("metrics.json"), InputError);
  const auto bad = tiny_run_dir();
  std::ofstream(bad / "jobs.csv")
      << kJobsHeader << "1,u1,acct1,a,normal,soon,1000,1000,4600,0,COMPLETED,\"n1\",8,10,main,0,,\"\"\n";
  CHECK_THROWS_WITH_AS(replay_report_html(bad.string(), {}), doctest::Contains("jobs.csv:2: submit:"),
                       InputError);
  std::ofstream(bad / "jobs.csv") << "job_id,user\n1,u1\n";
  CHECK_THROWS_WITH_AS(replay_report_html(bad.string(), {}), doctest::Contains("jobs.csv:1: partition"),
                       InputError);
}

TEST_CASE("sweep report: Pareto front, sensitivity, and the surrogate scatter only with both engines") {
  const auto dir = testing::scratch_dir("report_sweep");
  const auto db = (dir / "sweep.db").string();
  const auto objectives = kFourPointObjectives;
  write_four_points(db);
  const auto html = sweep_report_html(db, {});
  CHECK(xml_problem(html) == "");
  check_self_contained(html);
  CHECK(html.find(
            "4 points by the exact simulator, 2 objectives, 1 parameters; 2 points on the Pareto front") !=
        std::string::npos);
  CHECK(count(html, "data-plot=\"pareto-1\"") == 1);
  CHECK(count(html, "data-plot=\"sensitivity-") == 2);
  CHECK(count(html, "<tr><td>") == 2);  // the front's table: B then D (by wait)
  // Goals as arrows, waits with their unit (80-120 s: seconds), never "(min)" read as minutes.
  CHECK(html.find("<th>wait_mean (s) ↓</th><th>utilisation ↑</th>") != std::string::npos);
  CHECK(html.find("(min)") == std::string::npos);
  CHECK(html.find("<tr><td>10</td><td>80</td><td>0.4</td></tr>") < html.find("<tr><td>30</td><td>90</td>"));
  CHECK(html.find("id=\"no-surrogate\"") != std::string::npos);
  CHECK(html.find("data-plot=\"surrogate-") == std::string::npos);

  {
    // The surrogate's prediction of point A (as `sweep run --engine hybrid` stores it).
    SweepStore store(db);
    SweepRow row;
    row.key = "a";
    row.engine = "surrogate";
    row.params_json = "{\"PriorityWeightAge\": 0}";
    row.metrics_json = "{}";
    row.objectives = {104, 0.52};
    row.predicted = {104, 0.52};
    row.predicted_lo = {90, 0.5};
    row.predicted_hi = {110, 0.6};
    row.predicted_seconds = 0.1;
    CHECK(store.insert(row, objectives));
  }
  const auto with = sweep_report_html(db, {});
  CHECK(xml_problem(with) == "");
  CHECK(with.find("id=\"no-surrogate\"") == std::string::npos);
  CHECK(count(with, "data-plot=\"surrogate-") == 2);
  CHECK(with.find("wait_mean: surrogate vs exact (1 points, MAE 4 (s))") != std::string::npos);
  // The prediction does not replace the exact value: still 4 exact points.
  CHECK(with.find("4 points by the exact simulator") != std::string::npos);
}

TEST_CASE("sweep report and sweep show: the front from the points that meet the constraints, or none") {
  // Issue 24: with fairness >= 0.5 `sweep show` said 0 of 12 points feasible while the report drew 8
  // points "on the Pareto front" and never mentioned the constraint.
  const auto dir = testing::scratch_dir("report_sweep_constraints");
  const auto db = (dir / "sweep.db").string();
  // Without constraints the front is B (80, 0.4) and D (90, 0.6).
  const auto store_with = [&](double bound) {
    std::filesystem::remove(db);
    write_four_points(db, {{"utilisation", ConstraintOp::kGreaterEqual, bound,
                            fmt::format("utilisation >= {}", bound), 0}});
  };
  // utilisation >= 0.45: B fails; of A, C, D, D dominates the others: the front is D alone.
  store_with(0.45);
  auto html = sweep_report_html(db, {});
  CHECK(xml_problem(html) == "");
  CHECK(html.find("1 points on the Pareto front (of the points that meet every constraint)") !=
        std::string::npos);
  CHECK(html.find("3 of 4 points meet every constraint.") != std::string::npos);
  CHECK(html.find("<tr><td>utilisation &gt;= 0.45</td><td>3 of 4</td><td>0.4 .. 0.6</td></tr>") !=
        std::string::npos);
  CHECK(html.find("fails a constraint") != std::string::npos);
  CHECK(html.find("<tr><td>30</td><td>90</td><td>0.6</td></tr>") != std::string::npos);
  CHECK(html.find("<tr><td>10</td><td>80</td>") == std::string::npos);  // B is not on the front
  CHECK(html.find("id=\"infeasible\"") == std::string::npos);
  // utilisation >= 0.7: no point meets it; no front, and D (0.6) is the closest.
  store_with(0.7);
  html = sweep_report_html(db, {});
  CHECK(xml_problem(html) == "");
  CHECK(html.find("0 points on the Pareto front") != std::string::npos);
  CHECK(html.find("0 of 4 points meet every constraint.") != std::string::npos);
  CHECK(html.find("No point meets every constraint</strong>: no Pareto front is drawn. The closest point is "
                  "<code>d</code>") != std::string::npos);
  CHECK(html.find("utilisation = 0.6.") != std::string::npos);
  // sweep show says the same.
  FILE* pipe = popen(fmt::format("'{}' sweep show --db '{}' 2>&1", SLURMTWIN_BINARY, db).c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buf[4096];
  while (const auto n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  CHECK(pclose(pipe) == 0);
  INFO(out);
  CHECK(out.find("constraints: utilisation >= 0.7; 0 of 4 points feasible\n"
                 "  utilisation >= 0.7: met by 0 of 4; utilisation observed 0.4 .. 0.6\n"
                 "no point meets every constraint (no best point, no front); closest: key d  "
                 "PriorityWeightAge=30  (utilisation 0.6)\n") != std::string::npos);
  CHECK(out.find("Pareto front: 0 of 0 points") != std::string::npos);
}

TEST_CASE("assess_constraints: feasibility, observed ranges and the closest point, by hand") {
  const std::vector<SweepConstraint> constraints = {
      {"fairness", ConstraintOp::kGreaterEqual, 0.5, "fairness >= 0.5", 0},
      {"wait_mean", ConstraintOp::kLessEqual, 100, "wait_mean <= 100", 0}};
  const auto rows = [](const std::vector<std::pair<double, double>>& values) {
    std::vector<SweepRow> out;
    for (const auto& [fair, wait] : values) {
      out.emplace_back();
      out.back().constraint_values = {fair, wait};
    }
    return out;
  };
  // Point 1 meets both; point 2 has no wait value (from before the constraint): it fails.
  auto f = assess_constraints(rows({{0.4, 50}, {0.6, 90}, {0.7, std::nan("")}}), constraints);
  CHECK(f.feasible == std::vector<bool>{false, true, false});
  CHECK(f.count == 1);
  CHECK(f.constraints[0].met == 2);
  CHECK(f.constraints[0].lo == 0.4);
  CHECK(f.constraints[0].hi == 0.7);
  CHECK(f.constraints[1].met == 2);
  CHECK(f.constraints[1].hi == 90);
  CHECK_FALSE(f.closest);
  // None feasible. Shortfalls over each constraint's scale (max of |bound| and the observed range):
  // point 0: 0.1/0.5 + 0 = 0.2; point 1: 0 + 50/100 = 0.5; point 2: 0.05/0.5 + 20/100 = 0.3.
  f = assess_constraints(rows({{0.4, 50}, {0.6, 150}, {0.45, 120}}), constraints);
  CHECK(f.count == 0);
  REQUIRE(f.closest);
  CHECK(*f.closest == 0);
  // Left out: point 0 does not count, point 2 (0.3) is then the closest.
  f = assess_constraints(rows({{0.4, 50}, {0.6, 150}, {0.45, 120}}), constraints, {false, true, true});
  CHECK(f.constraints[0].lo == 0.45);
  CHECK(*f.closest == 2);
}

TEST_CASE("svg ticks are round numbers covering the range") {
  CHECK(svg::nice_ticks(0, 1, 5) == std::vector<double>{0, 0.2, 0.4, 0.6, 0.8, 1.0});
  CHECK(svg::nice_ticks(0, 100, 4) == std::vector<double>{0, 25, 50, 75, 100});
  CHECK(svg::nice_ticks(3, 17, 3) == std::vector<double>{5, 10, 15});
  CHECK(svg::escape("a<b & \"c\"") == "a&lt;b &amp; &quot;c&quot;");
}

TEST_CASE("svg error bars: centred on their point, as long as the error, inside the axes") {
  // Two points on linear axes; the second's y error (3) is three times the first's (1) and reaches past
  // every data value, so the axis must stretch to hold it.
  svg::Series s{"s", {1, 2}, {10, 20}, "#000", false, false, 3, {}, {0.5, 0}, {1, 3}};
  svg::PlotOptions o;
  o.id = "bars";
  o.legend = false;
  const auto out = svg::plot({s}, o);
  // Markers (cx, cy) and bars: a vertical one "M<x> <y0>V<y1>..." per y error, one horizontal
  // "M<x0> <y>H<x1>..." for point 1's x error; point 2 has no x error (0).
  std::vector<std::pair<double, double>> markers;
  for (auto p = out.find("<circle cx=\""); p != std::string::npos; p = out.find("<circle cx=\"", p + 1)) {
    double cx = 0, cy = 0;
    REQUIRE(std::sscanf(out.c_str() + p, "<circle cx=\"%lf\" cy=\"%lf\"", &cx, &cy) == 2);
    markers.emplace_back(cx, cy);
  }
  REQUIRE(markers.size() == 2);
  std::vector<std::array<double, 3>> vertical, horizontal;  // (fixed coordinate, from, to)
  for (auto p = out.find("<path d=\"M"); p != std::string::npos; p = out.find("<path d=\"M", p + 1)) {
    if (out.find("error-bar", p) > out.find('>', p)) continue;
    double a = 0, b = 0, c = 0;
    char kind = 0;
    REQUIRE(std::sscanf(out.c_str() + p, "<path d=\"M%lf %lf%c%lf", &a, &b, &kind, &c) == 4);
    (kind == 'V' ? vertical : horizontal).push_back({kind == 'V' ? a : b, kind == 'V' ? b : a, c});
  }
  REQUIRE(vertical.size() == 2);
  REQUIRE(horizontal.size() == 1);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(vertical[i][0] == doctest::Approx(markers[i].first).epsilon(1e-3));
    CHECK((vertical[i][1] + vertical[i][2]) / 2 == doctest::Approx(markers[i].second).epsilon(1e-3));
  }
  const double len1 = std::abs(vertical[0][2] - vertical[0][1]),
               len2 = std::abs(vertical[1][2] - vertical[1][1]);
  CHECK(len2 == doctest::Approx(3 * len1).epsilon(1e-2));
  // 10 y units (the two points) are |cy2 - cy1| px, so the first bar (2 units long) is a fifth of that.
  CHECK(len1 == doctest::Approx(std::abs(markers[1].second - markers[0].second) / 5).epsilon(1e-2));
  CHECK(horizontal[0][0] == doctest::Approx(markers[0].second).epsilon(1e-3));
  CHECK((horizontal[0][1] + horizontal[0][2]) / 2 == doctest::Approx(markers[0].first).epsilon(1e-3));
  // The top of the second bar (y = 23) lies inside the plot: at or below the frame's top edge.
  double frame_y = 0;
  const auto frame = out.find("class=\"frame\"");
  REQUIRE(frame != std::string::npos);
  const auto rect = out.rfind("<rect", frame);
  REQUIRE(std::sscanf(out.c_str() + out.find("y=\"", rect), "y=\"%lf\"", &frame_y) == 1);
  CHECK(std::min(vertical[1][1], vertical[1][2]) >= frame_y - 1e-6);
  // No error, no bar: the same series without errors draws none.
  s.x_err.clear();
  s.y_err.clear();
  CHECK(svg::plot({s}, o).find("error-bar") == std::string::npos);
}
