#include "experiments/report/report_html.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <set>

#include "experiments/report/svg_plot.hpp"
#include "experiments/sweep/feasibility.hpp"
#include "experiments/sweep/sweep_spec.hpp"
#include "experiments/sweep/sweep_store.hpp"
#include "traces/csv.hpp"
#include "traces/file_io.hpp"
#include "traces/hostlist.hpp"
#include "traces/read_report.hpp"
#include "traces/time_format.hpp"

namespace slurmtwin::experiments {
namespace {

using svg::escape;

constexpr std::size_t kMaxCdfPoints = 300;        // points per CDF curve (quantiles): keeps the file small
constexpr std::size_t kMaxGanttBars = 40'000;     // rectangles in the Gantt view
constexpr std::size_t kMaxFairnessRows = 40;      // accounts shown in the fairness chart
constexpr std::size_t kMaxSensitivityPlots = 36;  // parameter x objective scatters
constexpr double kDay = 86400;                    // s

// Page style: plain, printable, no external fonts.
constexpr std::string_view kCss =
    R"(body{font-family:sans-serif;margin:1.5em auto;max-width:1100px;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left}.note{color:#555;font-size:.9em}
svg.plot{display:block;margin:.6em 0;font-size:11px}svg .title{font-weight:bold;font-size:12px}
svg .frame{fill:none;stroke:#888}svg .grid{stroke:#e4e4e4}svg .tick{fill:#444}svg .small{font-size:8px}
svg .label{fill:#222}svg .legend{fill:#222}svg .diagonal{stroke:#999;stroke-dasharray:4 3}svg .error-bar{fill:none;stroke-width:1;stroke-opacity:.6}
.grid2{display:flex;flex-wrap:wrap;gap:0 1em})";

// Optional: marks the page with how many plots have a non-empty box (tests read it from the DOM) and
// logs a console error for a plot that did not render. The report reads the same without it.
// Wrapped in CDATA so that the page is also well-formed XML (tests parse it).
constexpr std::string_view kScript = R"(<script>
//<![CDATA[
window.addEventListener('load',function(){var n=0;document.querySelectorAll('svg.plot').forEach(function(s){
var b=s.getBBox();if(b.width>0&&b.height>0){n++;}else{console.error('plot did not render: '+s.dataset.plot);}});
document.body.setAttribute('data-plots-rendered',String(n));});
//]]>
</script>)";

std::string page(const std::string& title, const std::string& body, std::size_t plots) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "script-src 'unsafe-inline'\"/>\n<title>{0}</title>\n<style>{1}</style>\n</head>\n"
      "<body data-plots=\"{2}\">\n<h1>{0}</h1>\n{3}{4}\n</body>\n</html>\n",
      escape(title), kCss, plots, body, kScript);
}

std::string duration_label(double s) {
  if (s < 60) return fmt::format("{:.3g} s", s);
  if (s < 3600) return fmt::format("{:.3g} min", s / 60);
  if (s < kDay) return fmt::format("{:.3g} h", s / 3600);
  return fmt::format("{:.3g} d", s / kDay);
}

/// Ticks of a log wait-time axis, at durations people read.
std::vector<std::pair<double, std::string>> wait_ticks() {
  std::vector<std::pair<double, std::string>> out;
  for (double s : {1.0, 10.0, 60.0, 600.0, 3600.0, 6 * 3600.0, kDay, 7 * kDay, 30 * kDay, 365 * kDay})
    out.emplace_back(s, s == 1 ? std::string("≤1 s") : duration_label(s));
  return out;
}

struct JobRow {
  std::string partition, qos, account, state, nodes, id;
  Seconds submit = 0, start = kUnsetTime, end = kUnsetTime;
  Seconds recorded_start = kUnsetTime;  // what the trace recorded (a sacct dump), if anything
};

Seconds to_seconds(const std::string& s, const std::string& file, std::uint64_t line,
                   std::string_view field) {
  if (s.empty()) return kUnsetTime;
  try {
    std::size_t used = 0;
    const auto v = std::stoll(s, &used);
    if (used == s.size()) return v;
  } catch (const std::logic_error&) {
  }
  throw InputError(file, line, std::string(field), fmt::format("'{}' is not a number of seconds", s));
}

std::vector<JobRow> read_jobs_csv(const std::string& file) {
  const auto content = read_input_file(file);
  csv::require_text(content, file, "jobs.csv");
  csv::Reader reader(content, file);
  csv::Record rec;
  if (!reader.next(rec)) throw InputError(file, 1, "", "empty file: expected the jobs.csv header");
  const csv::Header header(rec.fields);
  const auto col = [&](std::string_view name) { return header.require(name, file, rec.line); };
  const auto c_id = col("job_id"), c_part = col("partition"), c_qos = col("qos"), c_acct = col("account"),
             c_submit = col("submit"), c_start = col("start"), c_end = col("end"), c_state = col("state"),
             c_nodes = col("nodes");
  const auto c_recorded = header.find("recorded_start");  // optional: jobs.csv before it had one
  std::vector<JobRow> rows;
  while (reader.next(rec)) {
    if (rec.fields.size() != header.size())
      throw InputError(file, rec.line, "",
                       fmt::format("{} fields, the header has {}", rec.fields.size(), header.size()));
    JobRow j;
    j.id = rec.fields[c_id];
    j.partition = rec.fields[c_part];
    j.qos = rec.fields[c_qos];
    j.account = rec.fields[c_acct];
    j.state = rec.fields[c_state];
    j.nodes = rec.fields[c_nodes];
    j.submit = to_seconds(rec.fields[c_submit], file, rec.line, "submit");
    j.start = to_seconds(rec.fields[c_start], file, rec.line, "start");
    j.end = to_seconds(rec.fields[c_end], file, rec.line, "end");
    if (c_recorded) j.recorded_start = to_seconds(rec.fields[*c_recorded], file, rec.line, "recorded_start");
    rows.push_back(std::move(j));
  }
  return rows;
}

YAML::Node read_json(const std::string& file) {
  try {
    return YAML::Load(read_input_file(file));  // JSON as written by metrics_to_json is valid YAML
  } catch (const YAML::Exception& e) {
    throw InputError(file, static_cast<std::uint64_t>(std::max(e.mark.line + 1, 0)), "", e.msg);
  }
}

double json_number(const YAML::Node& n, const std::string& file, std::string_view key) {
  if (!n || !n.IsScalar()) throw InputError(file, 0, std::string(key), "missing or not a number");
  try {
    return std::stod(n.Scalar());
  } catch (const std::logic_error&) {
    throw InputError(file, static_cast<std::uint64_t>(n.Mark().line + 1), std::string(key), "not a number");
  }
}

/// The empirical CDF of `waits` (s), at most kMaxCdfPoints quantiles, waits below 1 s drawn at 1 s.
svg::Series cdf_series(const std::string& name, std::vector<double> waits) {
  std::sort(waits.begin(), waits.end());
  svg::Series s;
  s.name = fmt::format("{} ({} jobs)", name, waits.size());
  s.step = true;
  const std::size_t n = waits.size();
  const std::size_t points = std::min(n, kMaxCdfPoints);
  for (std::size_t k = 0; k < points; ++k) {
    // The last index of each of `points` equal slices, so the curve ends at (max, 1).
    const std::size_t i = (k + 1) * n / points - 1;
    s.x.push_back(std::max(1.0, waits[i]));
    s.y.push_back(static_cast<double>(i + 1) / static_cast<double>(n));
  }
  return s;
}

std::string wait_cdf_plot(const std::vector<JobRow>& jobs, std::string JobRow::*group,
                          const std::string& what, const std::string& id) {
  std::map<std::string, std::vector<double>> waits;
  for (const auto& j : jobs)
    if (j.start != kUnsetTime) waits[j.*group].push_back(static_cast<double>(j.start - j.submit));
  std::vector<svg::Series> series;
  for (auto& [name, w] : waits) series.push_back(cdf_series(name, std::move(w)));
  svg::PlotOptions o;
  o.id = id;
  o.title = fmt::format("Wait time CDF per {}", what);
  // From 0.5 s, so that the waits below 1 s (drawn at 1 s) stand off the axis.
  o.x = {"wait (start - submit), log scale", true, 0.5, 0, wait_ticks()};
  o.x.hi = 1;
  for (const auto& s : series)
    for (double v : s.x) o.x.hi = std::max(o.x.hi, v);
  o.y = {"fraction of started jobs", false, 0, 1, {}};
  return svg::plot(series, o);
}

/// A memory or GPU utilisation of metrics.json in percent; "-" where not recorded (-1, or absent in
/// files written before it was).
std::string held_share(const YAML::Node& m, const std::string& file, const char* key) {
  if (!m[key]) return "-";
  const double v = json_number(m[key], file, key);
  return v < 0 ? std::string("-") : fmt::format("{:.1f}%", 100 * v);
}

/// One chart of metrics.json's per-bucket series `keys` (each with its legend name), times `scale`.
/// The first key must be there; the others are drawn when present and not empty (memory and GPU
/// utilisation: not in older files, empty for a predicted schedule or a site without GPUs).
std::string series_plot(const YAML::Node& m, const std::string& file,
                        const std::vector<std::pair<const char*, std::string>>& keys, const std::string& id,
                        const std::string& title, const std::string& y_label, double scale) {
  const double bucket =
      m["series_bucket_s"] ? json_number(m["series_bucket_s"], file, "series_bucket_s") : 3600;
  std::vector<svg::Series> drawn;
  for (const auto& [key, name] : keys) {
    const auto arr = m[key];
    if (drawn.empty() && (!arr || !arr.IsSequence())) throw InputError(file, 0, key, "missing or not a list");
    if (!arr || !arr.IsSequence() || arr.size() == 0) continue;
    svg::Series s;
    s.name = name;
    for (std::size_t k = 0; k < arr.size(); ++k) {
      s.x.push_back((static_cast<double>(k) + 0.5) * bucket / kDay);
      s.y.push_back(scale * json_number(arr[k], file, key));
    }
    drawn.push_back(std::move(s));
  }
  svg::PlotOptions o;
  o.id = id;
  o.title = title;
  o.legend = drawn.size() > 1;
  o.width = 900;
  o.x.label = fmt::format("days since the first submit ({} buckets)", duration_label(bucket));
  o.y.label = y_label;
  if (scale == 100) o.y.hi = 100;  // utilisation in percent: full scale
  return svg::plot(drawn, o);
}

/// Pending jobs by reason over time (metrics.json pending_reasons_series): the 8 reasons with the most
/// job-buckets, one line each; nothing for files written before the series existed.
std::string reasons_plot(const YAML::Node& m, const std::string& file, std::size_t& plots) {
  const auto reasons = m["pending_reasons_series"];
  if (!reasons || !reasons.IsMap() || reasons.size() == 0) return "";
  std::vector<std::pair<double, std::string>> by_total;
  for (const auto& kv : reasons) {
    double total = 0;
    for (const auto& v : kv.second) total += json_number(v, file, "pending_reasons_series");
    by_total.emplace_back(-total, kv.first.as<std::string>());
  }
  std::sort(by_total.begin(), by_total.end());
  constexpr std::size_t kShown = 8;
  std::vector<std::pair<std::string, std::string>> keys;  // (key in a map of its own, legend name)
  YAML::Node top;
  for (std::size_t k = 0; k < by_total.size() && k < kShown; ++k) {
    const auto& name = by_total[k].second;
    top[name] = reasons[name];
    keys.emplace_back(name, name);
  }
  top["series_bucket_s"] = m["series_bucket_s"];
  std::vector<std::pair<const char*, std::string>> refs;
  for (const auto& [key, name] : keys) refs.emplace_back(key.c_str(), name);
  ++plots;
  return fmt::format(
             "<p class=\"note\">Pending jobs by the reason the scheduler last gave them (as squeue shows "
             "it), at "
             "the start of each bucket{}.</p>\n",
             by_total.size() > kShown
                 ? fmt::format("; the {} most frequent of {} reasons", kShown, by_total.size())
                 : std::string()) +
         series_plot(top, file, refs, "pending-reasons", "Pending jobs by reason", "pending jobs", 1);
}

/// "n001" < "n002" < "n010": digit runs compare as numbers.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t i2 = i, j2 = j;
      while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2]))) ++i2;
      while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2]))) ++j2;
      const auto da = a.substr(i, i2 - i), db = b.substr(j, j2 - j);
      if (da.size() != db.size()) return da.size() < db.size();
      if (da != db) return da < db;
      i = i2;
      j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

std::string gantt_section(const std::vector<JobRow>& jobs, const YAML::Node& m, const std::string& file,
                          const ReportOptions& opt, std::size_t& plots) {
  const auto first = static_cast<Seconds>(json_number(m["first_submit"], file, "first_submit"));
  Seconds from = first;
  if (opt.gantt_from.empty()) {
    // Default: the window centred on the hour with the longest mean queue (the busiest time).
    const auto q = m["queue_length_series"];
    std::size_t best = 0;
    double best_v = -1;
    for (std::size_t k = 0; q && q.IsSequence() && k < q.size(); ++k)
      if (const double v = json_number(q[k], file, "queue_length_series"); v > best_v) {
        best_v = v;
        best = k;
      }
    from = std::max(first, first + static_cast<Seconds>(best) * 3600 + 1800 - opt.gantt_length / 2);
  } else if (opt.gantt_from.front() == '+') {
    from = first + to_seconds(opt.gantt_from.substr(1), "--gantt-from", 0, "gantt-from");
  } else {
    const auto t = parse_timestamp(opt.gantt_from);
    if (!t || *t == kUnsetTime)
      throw std::invalid_argument(
          "--gantt-from: expected YYYY-MM-DDTHH:MM:SS or +SECONDS after the first submit");
    from = *t;
  }
  const Seconds to = from + opt.gantt_length;

  // The colour tells the partition, QOS or account; past the palette's 12 colours, the 11 groups with
  // the most jobs in the view keep theirs and the rest share the last.
  const auto group_of = opt.gantt_colour == "qos"       ? &JobRow::qos
                        : opt.gantt_colour == "account" ? &JobRow::account
                                                        : &JobRow::partition;
  const auto in_view = [&](const JobRow& j) {
    return j.start != kUnsetTime && j.start < to && !j.nodes.empty() && (j.end == kUnsetTime || j.end > from);
  };
  std::map<std::string, std::size_t> jobs_of;
  for (const auto& j : jobs)
    if (in_view(j)) ++jobs_of[j.*group_of];
  std::vector<std::pair<std::size_t, std::string>> by_jobs;
  for (const auto& [g, n] : jobs_of) by_jobs.emplace_back(n, g);
  std::stable_sort(by_jobs.begin(), by_jobs.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  constexpr std::size_t kColours = 12;
  std::vector<std::string> legend;
  for (std::size_t k = 0; k < by_jobs.size() && (k + 1 < kColours || by_jobs.size() == kColours); ++k)
    legend.push_back(by_jobs[k].second);
  std::sort(legend.begin(), legend.end());
  std::map<std::string, std::size_t> colour_index;  // group -> its legend entry; others: the last
  for (std::size_t k = 0; k < legend.size(); ++k) colour_index[legend[k]] = k;
  if (legend.size() < by_jobs.size())
    legend.push_back(fmt::format("{} other {}", by_jobs.size() - legend.size(),
                                 opt.gantt_colour == "qos" ? std::string("QOS") : opt.gantt_colour + "s"));
  const auto colour_of = [&](const std::string& group) {
    const auto it = colour_index.find(group);
    return it != colour_index.end() ? it->second : legend.size() - 1;
  };
  struct Piece {
    std::string node;
    double a, b;
    std::size_t colour;
    const JobRow* job;
  };
  std::vector<Piece> pieces;
  std::set<std::string> nodes_seen;
  for (const auto& j : jobs) {
    if (!in_view(j)) continue;
    const Seconds end = j.end == kUnsetTime ? to : j.end;
    const auto colour = colour_of(j.*group_of);
    for (const auto& n : expand_hostlist(j.nodes)) {
      nodes_seen.insert(n);
      pieces.push_back({n, static_cast<double>(std::max(j.start, from) - from) / 3600,
                        static_cast<double>(std::min(end, to) - from) / 3600, colour, &j});
    }
  }
  std::vector<std::string> rows(nodes_seen.begin(), nodes_seen.end());
  std::sort(rows.begin(), rows.end(), natural_less);
  std::string note;
  if (rows.size() > opt.gantt_max_nodes) {
    note += fmt::format(" Showing the first {} of {} busy nodes.", opt.gantt_max_nodes, rows.size());
    rows.resize(opt.gantt_max_nodes);
  }
  std::map<std::string, std::size_t> row_of;
  for (std::size_t r = 0; r < rows.size(); ++r) row_of[rows[r]] = r;
  std::vector<svg::GanttBar> bars;
  for (const auto& p : pieces) {
    const auto it = row_of.find(p.node);
    if (it == row_of.end()) continue;
    if (bars.size() == kMaxGanttBars) {
      note += fmt::format(" Only the first {} job-node bars are drawn.", kMaxGanttBars);
      break;
    }
    bars.push_back(
        {it->second, p.a, p.b, p.colour,
         fmt::format("job {} on {} ({}, QOS {}, account {}, {}): {} .. {}", p.job->id, p.node,
                     p.job->partition, p.job->qos, p.job->account, p.job->state,
                     format_timestamp(p.job->start),
                     p.job->end == kUnsetTime ? std::string("running") : format_timestamp(p.job->end))});
  }
  svg::PlotOptions o;
  o.id = "gantt";
  o.title = fmt::format("Jobs on nodes, {} .. {} (UTC)", format_timestamp(from), format_timestamp(to));
  o.width = 900;
  o.x = {"hours from the start of the view", false, 0, static_cast<double>(opt.gantt_length) / 3600, {}};
  o.y.label = "node";
  ++plots;
  return fmt::format(
      "<h2>Jobs on nodes (Gantt view)</h2>\n<p class=\"note\">Each bar is a job on one node, coloured by "
      "{} (<code>--gantt-colour</code>); hover for the job. Choose the range with <code>--gantt-from</code> "
      "and <code>--gantt-hours</code> (default: the day around the longest queue).{}</p>\n{}",
      opt.gantt_colour == "qos" ? "QOS" : opt.gantt_colour, escape(note),
      rows.empty() ? "<p class=\"note\">No job ran in this range.</p>\n" : svg::gantt(rows, bars, legend, o));
}

std::string wait_table(const YAML::Node& group, const std::string& what) {
  if (!group || !group.IsMap() || group.size() == 0) return "";
  std::string out = fmt::format(
      "<table><tr><th class=\"l\">{}</th><th>jobs</th><th>wait "
      "mean</th><th>median</th><th>p90</th><th>p99</th>"
      "<th>max</th><th>bounded slowdown</th></tr>\n",
      escape(what));
  for (const auto& kv : group) {
    const auto& w = kv.second;
    const auto d = [&](const char* k) { return w[k] ? duration_label(std::round(w[k].as<double>())) : "-"; };
    out += fmt::format(
        "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{:.2f}</td></tr>\n",
        escape(kv.first.as<std::string>()), w["jobs"] ? w["jobs"].as<std::string>() : "-", d("wait_mean_s"),
        d("wait_median_s"), d("wait_p90_s"), d("wait_p99_s"), d("wait_max_s"),
        w["bounded_slowdown_mean"] ? w["bounded_slowdown_mean"].as<double>() : 0.0);
  }
  return out + "</table>\n";
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const auto ranks = [](const std::vector<double>& v) {
    std::vector<std::size_t> idx(v.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](auto i, auto j) { return v[i] < v[j]; });
    std::vector<double> r(v.size());
    for (std::size_t k = 0; k < idx.size();) {  // ties share their mean rank
      std::size_t e = k;
      while (e + 1 < idx.size() && v[idx[e + 1]] == v[idx[k]]) ++e;
      for (std::size_t t = k; t <= e; ++t) r[idx[t]] = 0.5 * static_cast<double>(k + e);
      k = e + 1;
    }
    return r;
  };
  const auto ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n,
               mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0;
}

}  // namespace

/// The twin against history: the recorded and simulated wait CDFs of the jobs with both starts, and
/// metrics.json's fidelity per partition, QOS and week. "" when the trace recorded no start.
std::string history_section(const std::vector<JobRow>& jobs, const YAML::Node& m, const std::string& file) {
  const auto f = m["fidelity"];
  if (!f || !f.IsMap()) return {};
  std::vector<double> simulated, recorded;
  for (const auto& j : jobs) {
    if (j.start == kUnsetTime || j.recorded_start == kUnsetTime) continue;
    simulated.push_back(static_cast<double>(j.start - j.submit));
    recorded.push_back(static_cast<double>(j.recorded_start - j.submit));
  }
  const auto num = [&](const YAML::Node& n, const char* k) { return json_number(n[k], file, k); };
  std::string out = fmt::format(
      "<h2>Against history: the twin vs what happened</h2>\n<p class=\"note\">For the {:.0f} jobs whose "
      "start the trace recorded: mean |simulated − recorded start| {}, p90 {}; mean wait {} simulated vs "
      "{} recorded ({:+.1f}%).</p>\n",
      num(f, "jobs"), duration_label(std::round(num(f, "start_error_mean_abs_s"))),
      duration_label(std::round(num(f, "start_error_p90_abs_s"))),
      duration_label(std::round(num(f, "simulated_mean_wait_s"))),
      duration_label(std::round(num(f, "recorded_mean_wait_s"))), 100 * num(f, "mean_wait_deviation"));
  if (!simulated.empty()) {
    std::vector<svg::Series> series{cdf_series("simulated", std::move(simulated)),
                                    cdf_series("recorded", std::move(recorded))};
    svg::PlotOptions o;
    o.id = "history-wait-cdf";
    o.title = "Wait time CDF: simulated vs recorded";
    o.x = {"wait (start - submit), log scale", true, 0.5, 0, wait_ticks()};
    o.x.hi = 1;
    for (const auto& s : series)
      for (double v : s.x) o.x.hi = std::max(o.x.hi, v);
    o.y = {"fraction of jobs", false, 0, 1, {}};
    out += svg::plot(series, o);
  }
  for (const auto& [key, what] : {std::pair{"by_partition", "partition"}, std::pair{"by_qos", "QOS"},
                                  std::pair{"by_week", "week from"}}) {
    const auto table = f[key];
    if (!table || !table.IsMap() || table.size() == 0) continue;
    out += fmt::format(
        "<table><tr><th class=\"l\">{}</th><th>jobs</th><th>mean |Δstart|</th><th>recorded mean "
        "wait</th><th>simulated mean wait</th><th>deviation</th></tr>\n",
        what);
    for (const auto& row : table)
      out += fmt::format(
          "<tr><td "
          "class=\"l\">{}</td><td>{:.0f}</td><td>{}</td><td>{}</td><td>{}</td><td>{:+.1f}%</td></tr>\n",
          escape(row.first.as<std::string>()), num(row.second, "jobs"),
          duration_label(std::round(num(row.second, "start_error_mean_abs_s"))),
          duration_label(std::round(num(row.second, "recorded_mean_wait_s"))),
          duration_label(std::round(num(row.second, "simulated_mean_wait_s"))),
          100 * num(row.second, "mean_wait_deviation"));
    out += "</table>\n";
  }
  return out;
}

std::string replay_report_html(const std::string& run_dir, const ReportOptions& opt) {
  const auto dir = std::filesystem::path(run_dir);
  const auto jobs_file = (dir / "jobs.csv").string(), metrics_file = (dir / "metrics.json").string();
  for (const auto& f : {jobs_file, metrics_file})
    if (!std::filesystem::exists(f))
      throw InputError(f, 0, "", "absent: a replay output directory holds jobs.csv and metrics.json");
  const auto jobs = read_jobs_csv(jobs_file);
  const auto m = read_json(metrics_file);
  if (!m.IsMap()) throw InputError(metrics_file, 1, "", "expected a JSON object");
  std::size_t plots = 0;
  std::string body;

  const auto jn = m["jobs"];
  const auto ov = m["overall"];
  const auto num = [&](const YAML::Node& n, const char* k) { return json_number(n[k], metrics_file, k); };
  body += fmt::format(
      "<p class=\"note\">Replay output <code>{}</code>. Waits are start − submit (s); utilisation is "
      "what jobs hold over what the nodes have, over the makespan (GPUs: - when the nodes have "
      "none).</p>\n<table><tr><th class=\"l\">jobs in the trace</th><td>{:.0f}</td></tr>"
      "<tr><th class=\"l\">started / never started / rejected at submit</th><td>{:.0f} / {:.0f} / "
      "{:.0f}</td></tr>"
      "<tr><th class=\"l\">wait mean / median / p90 / p99</th><td>{} / {} / {} / {}</td></tr>"
      "<tr><th class=\"l\">bounded slowdown, mean</th><td>{:.2f}</td></tr>"
      "<tr><th class=\"l\">utilisation: CPUs / memory / GPUs</th><td>{:.1f}% / {} / {}</td></tr>"
      "<tr><th class=\"l\">makespan</th><td>{:.2f} days</td></tr>"
      "<tr><th class=\"l\">queue length mean / max</th><td>{:.1f} / {:.0f}</td></tr></table>\n",
      escape(run_dir), num(jn, "input"), num(jn, "started"), num(jn, "never_started"), num(jn, "rejected"),
      duration_label(std::round(num(ov, "wait_mean_s"))),
      duration_label(std::round(num(ov, "wait_median_s"))), duration_label(std::round(num(ov, "wait_p90_s"))),
      duration_label(std::round(num(ov, "wait_p99_s"))), num(ov, "bounded_slowdown_mean"),
      100 * num(m, "utilisation"), held_share(m, metrics_file, "memory_utilisation"),
      held_share(m, metrics_file, "gpu_utilisation"), num(m, "makespan_s") / kDay,
      num(m["queue_length"], "mean"), num(m["queue_length"], "max"));

  body += "<h2>Wait times</h2>\n";
  body += wait_cdf_plot(jobs, &JobRow::partition, "partition", "wait-cdf-partition");
  body += wait_table(m["by_partition"], "partition");
  body += wait_cdf_plot(jobs, &JobRow::qos, "QOS", "wait-cdf-qos");
  body += wait_table(m["by_qos"], "QOS");
  plots += 2;
  if (const auto history = history_section(jobs, m, metrics_file); !history.empty()) {
    body += history;
    if (history.find("<svg") != std::string::npos) ++plots;
  }

  body += "<h2>Utilisation and queue length over time</h2>\n";
  body += series_plot(m, metrics_file,
                      {{"utilisation_series", "CPUs"},
                       {"memory_utilisation_series", "memory"},
                       {"gpu_utilisation_series", "GPUs"}},
                      "utilisation", "Utilisation: CPUs, memory and GPUs held by jobs", "held (%)", 100);
  body += series_plot(m, metrics_file, {{"queue_length_series", "pending jobs"}}, "queue-length",
                      "Queue length", "pending jobs (mean)", 1);
  plots += 2;
  body += reasons_plot(m, metrics_file, plots);

  body += "<h2>Fairness: usage share vs target share per top-level account</h2>\n";
  const auto fair = m["fairness"];
  if (fair && fair.IsMap() && fair.size() > 0) {
    // (-max(usage, target), account, usage, target): the accounts that use or are owed the most first,
    // so that a top consumer with a small target is never cut (ties: by name).
    std::vector<std::tuple<double, std::string, double, double>> rows;
    for (const auto& kv : fair) {
      const double usage = num(kv.second, "usage_share"), target = num(kv.second, "target_share");
      rows.emplace_back(-std::max(usage, target), kv.first.as<std::string>(), usage, target);
    }
    std::sort(rows.begin(), rows.end());
    std::string note =
        "Usage share: the account's share of the CPU-seconds its jobs used in the replay; target: its "
        "normalised shares (Fairshare) among the top-level accounts with jobs in the trace.";
    if (rows.size() > kMaxFairnessRows) {
      note += fmt::format(" The {} accounts of {} with the largest usage or target are shown.",
                          kMaxFairnessRows, rows.size());
      rows.resize(kMaxFairnessRows);
    }
    std::vector<std::string> labels;
    std::vector<std::pair<double, double>> values;
    for (const auto& [key, a, u, t] : rows) {
      labels.push_back(a);
      values.emplace_back(u, t);
    }
    svg::PlotOptions o;
    o.id = "fairness";
    o.title = "Usage share vs target share";
    o.width = 760;
    o.x.label = "share (0..1)";
    body += fmt::format("<p class=\"note\">{}</p>\n", escape(note)) +
            svg::paired_bars(labels, values, {"usage share", "target share"}, o);
    ++plots;
  } else {
    body += "<p class=\"note\">metrics.json has no fairness entries (no accounts).</p>\n";
  }

  body += gantt_section(jobs, m, metrics_file, opt, plots);
  return page(opt.title.empty() ? "SlurmTwin replay report" : opt.title, body, plots);
}

/// The constraints of a sweep: how many points meet each and the range its metric took; with none
/// feasible, the point that came closest.
std::string constraints_section(const std::vector<SweepConstraint>& constraints, const Feasibility& f,
                                const std::vector<SweepRow>& rows, std::size_t points) {
  if (constraints.empty()) return {};
  std::string out = fmt::format(
      "<h2>Constraints</h2>\n<p class=\"note\" id=\"feasible\">{} of {} points meet every constraint.</p>\n"
      "<table><tr><th>constraint</th><th>met by</th><th>observed range</th></tr>\n",
      f.count, points);
  for (std::size_t k = 0; k < constraints.size(); ++k) {
    const auto& r = f.constraints[k];
    out += fmt::format(
        "<tr><td>{}</td><td>{} of {}</td><td>{}</td></tr>\n", escape(constraints[k].text), r.met, points,
        std::isnan(r.lo) ? std::string("no values") : fmt::format("{:.6g} .. {:.6g}", r.lo, r.hi));
  }
  out += "</table>\n";
  if (f.closest) {
    const auto& row = rows[*f.closest];
    std::string values;
    for (std::size_t k = 0; k < constraints.size(); ++k)
      values += fmt::format("{}{} = {:.6g}", values.empty() ? "" : ", ", escape(constraints[k].metric),
                            row.constraint_values[k]);
    out += fmt::format(
        "<p class=\"note\" id=\"infeasible\"><strong>No point meets every constraint</strong>: no Pareto "
        "front "
        "is drawn. The closest point is <code>{}</code> ({}): {}.</p>\n",
        escape(row.key), escape(row.params_json), values);
  }
  return out;
}

std::string sweep_report_html(const std::string& db_path, const ReportOptions& opt) {
  if (!std::filesystem::exists(db_path))
    throw InputError(db_path, 0, "", "absent: expected a sweep database");
  const SweepStore store(db_path, StoreAccess::kRead);
  const auto objectives = store.objectives();
  const auto all_rows = store.rows();
  if (objectives.empty() || all_rows.empty())
    throw InputError(db_path, 0, "", "the sweep database has no objectives or no points");
  std::vector<const SweepRow*> exact;
  for (const auto& r : all_rows)
    if (r.engine == "exact") exact.push_back(&r);

  // The parameters the exact rows set, in the order first seen.
  std::vector<std::string> param_names;
  for (const auto* r : exact)
    for (const auto& [name, value] : r->params)
      if (std::find(param_names.begin(), param_names.end(), name) == param_names.end())
        param_names.push_back(name);
  const std::size_t k_obj = objectives.size();
  std::vector<std::vector<double>> obj_rows;
  std::vector<Goal> goals;
  for (const auto& o : objectives) goals.push_back(o.goal);
  for (const auto* r : exact) obj_rows.push_back(r->objectives);
  // The front is drawn from the points that meet every constraint of the latest spec.
  const auto constraints = store.constraints();
  std::vector<bool> is_exact(all_rows.size(), false);
  for (const auto* r : exact) is_exact[static_cast<std::size_t>(r - all_rows.data())] = true;
  const auto assessed = assess_constraints(all_rows, constraints, is_exact);
  std::vector<bool> feasible;  // per exact point
  std::vector<std::size_t> feasible_index;
  std::vector<std::vector<double>> feasible_rows;
  for (std::size_t i = 0; i < exact.size(); ++i) {
    feasible.push_back(assessed.feasible[static_cast<std::size_t>(exact[i] - all_rows.data())]);
    if (!feasible.back()) continue;
    feasible_index.push_back(i);
    feasible_rows.push_back(obj_rows[i]);
  }
  std::vector<std::size_t> front;
  for (const auto k : pareto_front(feasible_rows, goals)) front.push_back(feasible_index[k]);
  const std::set<std::size_t> on_front(front.begin(), front.end());
  // "You are here": the site's current settings, as the sweep recorded them (an exact point, index into
  // `exact`, or none).
  const auto current = store.current();
  std::vector<std::size_t> candidates;  // into all_rows: the feasible exact points with every objective
  for (auto i : feasible_index) {
    const auto& o = obj_rows[i];
    if (std::none_of(o.begin(), o.end(), [](double v) { return std::isnan(v); }))
      candidates.push_back(static_cast<std::size_t>(exact[i] - all_rows.data()));
  }
  const auto standing =
      assess_current(all_rows, current ? current->key : std::string(), constraints, candidates, goals);
  std::optional<std::size_t> here;
  for (std::size_t i = 0; i < exact.size() && standing.row; ++i)
    if (exact[i] == &all_rows[*standing.row]) here = i;
  std::size_t plots = 0;
  // Each objective in the unit a person reads it in (waits in s, min, h or d, by their median over the
  // points), its goal as an arrow that cannot be read as a unit.
  std::vector<double> divisor(k_obj, 1);
  std::vector<std::string> unit(k_obj), label(k_obj);  // unit: "" or " (h)"
  for (std::size_t k = 0; k < k_obj; ++k) {
    std::vector<double> v;
    for (const auto& row : obj_rows)
      if (!std::isnan(row[k])) v.push_back(std::abs(row[k]));
    if (metric_unit(objectives[k].metric) == "s" && !v.empty()) {
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
      const auto readable = readable_time_unit(v[v.size() / 2]);
      divisor[k] = readable.seconds;
      unit[k] = fmt::format(" ({})", readable.name);
    }
    label[k] = fmt::format("{}{} {}", objectives[k].metric, unit[k], goal_arrow(goals[k]));
  }
  const auto shown = [&](std::size_t i, std::size_t k) { return obj_rows[i][k] / divisor[k]; };
  const auto shown_se = [&](std::size_t i, std::size_t k) {
    return exact[i]->standard_error(k) / divisor[k];
  };

  std::string body = fmt::format(
      "<p class=\"note\">Sweep database <code>{}</code>: {} points by the exact simulator, {} objectives, {} "
      "parameters; {} points on the Pareto front{}.</p>\n",
      escape(db_path), exact.size(), k_obj, param_names.size(), front.size(),
      constraints.empty() ? "" : " (of the points that meet every constraint)");
  body += constraints_section(constraints, assessed, all_rows, exact.size());
  if (current) {
    std::string settings;
    for (const auto& [n, v] : current->params)
      settings += fmt::format("{}{} = {:g}", settings.empty() ? "" : ", ", n, v);
    body +=
        fmt::format("<h2>You are here</h2>\n<p class=\"note\" id=\"current\">The site's current settings: {}",
                    escape(settings));
    if (!here) {
      body += " (not evaluated by the exact simulator yet).</p>\n";
    } else {
      body += ".";
      if (!constraints.empty()) {
        std::vector<std::string> broken;
        for (auto k : standing.broken) broken.push_back(escape(constraints[k].text));
        body += broken.empty() ? std::string(" They meet every constraint.")
                               : fmt::format(" They break {}.", fmt::join(broken, ", "));
      }
      body += on_front.count(*here) ? std::string(" They are on the Pareto front.")
              : standing.better > 0 ? " " + better_points_text(standing.better) + "."
                                    : std::string();
      body += "</p>\n<table><tr><th>objective</th><th>here</th><th>best point</th><th>change</th></tr>\n";
      for (std::size_t k = 0; k < k_obj; ++k) {
        const double v = shown(*here, k);
        std::optional<bool> noise_resolved;  // by the replicates' standard errors; none with one replay
        if (standing.best[k] < all_rows.size())
          noise_resolved = resolved(all_rows[standing.best[k]], *exact[*here], k);
        const auto b = standing.best[k];
        const double best = b < all_rows.size() ? all_rows[b].objectives[k] / divisor[k] : std::nan("");
        const double se = shown_se(*here, k);
        body += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", escape(label[k]),
                            std::isnan(se) ? fmt::format("{:.6g}", v) : fmt::format("{:.6g} ± {:.3g}", v, se),
                            std::isnan(best) ? std::string("-") : fmt::format("{:.6g}", best),
                            std::isnan(best) || v == 0 || best == v
                                ? std::string("-")
                                : fmt::format("{:+.1f}%{}", 100 * (best - v) / std::abs(v),
                                              !noise_resolved   ? ""
                                              : *noise_resolved ? " (resolved)"
                                                                : " (within noise: two standard errors)"));
      }
      body += "</table>\n";
      if (exact[*here]->replicates <= 1)
        body +=
            "<p class=\"note\">One replay per point: timer phase alone moves a week's mean wait by a few "
            "percent, so a change that small is not resolved (<code>replicates</code> in the spec gives "
            "each point a standard error).</p>\n";
    }
  }
  std::uint32_t replicates = 1;
  for (const auto* r : exact) replicates = std::max(replicates, r->replicates);
  if (replicates > 1)
    body += fmt::format(
        "<p class=\"note\">Each point's values are means over up to {} replays at spread timer phases "
        "(<code>replicates</code>), shown ± their standard error.</p>\n",
        replicates);

  body += "<h2>Pareto front</h2>\n";
  if (k_obj >= 2) {
    body += "<div class=\"grid2\">\n";
    for (std::size_t k = 1; k < k_obj && k < 4; ++k) {
      // Grey: every point that meets the constraints; pink: one that fails a constraint; orange: the
      // points on the front of all objectives; the line joins the front of these two objectives alone
      // (with more than two objectives the two fronts differ), feasible points only.
      svg::Series all{constraints.empty() ? "all points" : "meets the constraints",
                      {},
                      {},
                      "#bbbbbb",
                      false,
                      false,
                      3,
                      {},
                      {},
                      {}};
      svg::Series failing{"fails a constraint", {}, {}, "#f0a0b4", false, false, 3, {}, {}, {}};
      svg::Series best{
          "on the Pareto front (all objectives)", {}, {}, svg::colour(5), false, false, 4, {}, {}, {}};
      svg::Series pair{"front of these two", {}, {}, svg::colour(0), true, false, 0, {}, {}, {}};
      svg::Series you{"you are here (current settings)", {}, {}, "#000000", false, false, 6, {}, {}, {}};
      if (here) {
        you.x.push_back(shown(*here, 0));
        you.y.push_back(shown(*here, k));
        you.tooltips.push_back(exact[*here]->params_json);
        you.x_err.push_back(shown_se(*here, 0));
        you.y_err.push_back(shown_se(*here, k));
      }
      std::vector<std::vector<double>> two;
      for (const auto i : feasible_index) two.push_back({shown(i, 0), shown(i, k)});
      for (std::size_t i = 0; i < exact.size(); ++i) {
        for (auto* series : {&all, &failing, &best}) {
          if (series == &best && !on_front.count(i)) continue;
          if (series == &all && !feasible[i]) continue;
          if (series == &failing && feasible[i]) continue;
          series->x.push_back(shown(i, 0));
          series->y.push_back(shown(i, k));
          series->tooltips.push_back(exact[i]->params_json);
          series->x_err.push_back(shown_se(i, 0));  // NaN (no bar) without replicates
          series->y_err.push_back(shown_se(i, k));
        }
      }
      auto front2 = pareto_front(two, {goals[0], goals[k]});
      std::sort(front2.begin(), front2.end(), [&](auto a, auto b) { return two[a] < two[b]; });
      for (auto i : front2) {
        pair.x.push_back(two[i][0]);
        pair.y.push_back(two[i][1]);
      }
      svg::PlotOptions o;
      o.id = fmt::format("pareto-{}", k);
      o.title = fmt::format("{} vs {}", label[0], label[k]);
      o.x.label = label[0];
      o.y.label = label[k];
      o.width = 520;
      std::vector<svg::Series> drawn_series = {all, pair, best};
      if (!failing.x.empty()) drawn_series.insert(drawn_series.begin(), failing);
      if (here) drawn_series.push_back(you);
      body += svg::plot(drawn_series, o);
      ++plots;
    }
    body += "</div>\n";
  } else {
    body += "<p class=\"note\">One objective: the front is the best point.</p>\n";
  }
  body += "<table><tr>";
  const auto with_setting_unit = [](const std::string& p) {
    const auto setting = setting_unit(p);
    return setting.empty() ? p : fmt::format("{} ({})", p, setting);
  };
  for (const auto& p : param_names) body += fmt::format("<th>{}</th>", escape(with_setting_unit(p)));
  for (const auto& l : label) body += fmt::format("<th>{}</th>", escape(l));
  body += "</tr>\n";
  std::vector<std::size_t> order(front.begin(), front.end());
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return obj_rows[a][0] < obj_rows[b][0]; });
  for (auto i : order) {
    body += "<tr>";
    for (const auto& p : param_names)
      body += exact[i]->params.count(p) ? fmt::format("<td>{:g}</td>", exact[i]->params.at(p)) : "<td>-</td>";
    for (std::size_t k = 0; k < k_obj; ++k) {
      const double se = shown_se(i, k);
      body += std::isnan(se) ? fmt::format("<td>{:.6g}</td>", shown(i, k))
                             : fmt::format("<td>{:.6g} ± {:.3g}</td>", shown(i, k), se);
    }
    body += "</tr>\n";
  }
  body += "</table>\n";

  body +=
      "<h2>Parameter sensitivity</h2>\n<p class=\"note\">Each objective against each parameter over all "
      "points; ρ is Spearman's rank correlation.</p>\n<div class=\"grid2\">\n";
  std::size_t drawn = 0;
  for (std::size_t k = 0; k < k_obj; ++k)
    for (const auto& p : param_names) {
      if (drawn == kMaxSensitivityPlots) break;
      svg::Series s{objectives[k].metric, {}, {}, svg::colour(k), false, false, 3, {}, {}, {}};
      bool positive = true;
      for (std::size_t i = 0; i < exact.size(); ++i) {
        if (!exact[i]->params.count(p) || std::isnan(obj_rows[i][k])) continue;
        s.x.push_back(exact[i]->params.at(p));
        s.y.push_back(shown(i, k));
        s.y_err.push_back(shown_se(i, k));
        positive = positive && s.x.back() > 0;
      }
      if (s.x.empty()) continue;
      const auto [lo, hi] = std::minmax_element(s.x.begin(), s.x.end());
      svg::PlotOptions o;
      o.id = fmt::format("sensitivity-{}-{}", k, drawn);
      o.title = fmt::format("{} (ρ = {:.2f})", p, spearman(s.x, s.y));
      o.x.label = with_setting_unit(p);
      o.x.log = positive && *hi > 100 * *lo;  // ranges over decades read better on a log axis
      o.y.label = label[k];
      o.legend = false;
      o.width = 340;
      o.height = 250;
      body += svg::plot({s}, o);
      ++plots;
      ++drawn;
    }
  body += "</div>\n";

  body += "<h2>Surrogate vs exact simulator</h2>\n";
  // Points the exact simulator evaluated and the surrogate predicted (sweep --engine hybrid, compare).
  std::vector<const SweepRow*> both;
  for (const auto* r : exact)
    if (r->has_prediction()) both.push_back(r);
  if (!both.empty()) {
    body += "<div class=\"grid2\">\n";
    for (std::size_t k = 0; k < k_obj; ++k) {
      svg::Series s{"surrogate", {}, {}, svg::colour(k), false, false, 3, {}, {}, {}};
      double abs_err = 0;
      for (const auto* r : both) {
        s.x.push_back(r->objectives[k] / divisor[k]);
        s.y.push_back(r->predicted[k] / divisor[k]);
        abs_err += std::abs(s.y.back() - s.x.back());
      }
      svg::PlotOptions o;
      o.id = fmt::format("surrogate-{}", k);
      o.title = fmt::format("{}: surrogate vs exact ({} points, MAE {:.4g}{})", objectives[k].metric,
                            both.size(), abs_err / static_cast<double>(both.size()), unit[k]);
      o.x.label = "exact simulator" + unit[k];
      o.y.label = "surrogate (median)" + unit[k];
      o.diagonal = true;
      o.legend = false;
      o.width = 360;
      o.height = 300;
      body += svg::plot({s}, o);
      ++plots;
    }
    body += "</div>\n";
  } else {
    body +=
        "<p class=\"note\" id=\"no-surrogate\">Omitted: the database has no points evaluated by both the "
        "exact "
        "simulator and the surrogate.</p>\n";
  }
  return page(opt.title.empty() ? "SlurmTwin sweep report" : opt.title, body, plots);
}

}  // namespace slurmtwin::experiments
