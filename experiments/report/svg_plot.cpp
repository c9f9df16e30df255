#include "experiments/report/svg_plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "traces/text.hpp"

namespace slurmtwin::experiments::svg {
namespace {

// Margins around the plotting area (px): room for tick labels, axis labels and the title.
constexpr double kLeft = 70, kRight = 30, kTop = 30, kBottom = 46;
constexpr double kLegendWidth = 230;  // px, right of the plot when there is a legend
constexpr double kLegendRow = 16;     // px per legend entry
constexpr double kDataPad = 0.04;     // fraction of a data-driven linear range added at each end

struct Scale {
  double lo = 0, hi = 1;  // data range (log10 of it for a log axis)
  double p0 = 0, p1 = 1;  // pixel range
  bool log = false;
  double operator()(double v) const {
    double t = log ? std::log10(std::max(v, std::pow(10.0, lo))) : v;
    t = std::clamp(t, lo, hi);
    return p0 + (t - lo) / (hi - lo) * (p1 - p0);
  }
};

Scale make_scale(const Axis& axis, const std::vector<double>& data, double p0, double p1) {
  Scale s;
  s.log = axis.log;
  s.p0 = p0;
  s.p1 = p1;
  double lo = axis.lo, hi = axis.hi;
  if (lo == hi) {
    lo = std::numeric_limits<double>::infinity();
    hi = -lo;
    for (double v : data) {
      if (!std::isfinite(v) || (axis.log && v <= 0)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    if (!std::isfinite(lo)) lo = hi = axis.log ? 1 : 0;
    if (!axis.log && lo > 0 && lo < 0.3 * hi) lo = 0;  // start a mostly positive axis at 0
    if (!axis.log && hi > lo) {  // keep extreme points off the frame (an axis at 0 stays at 0)
      const double pad = kDataPad * (hi - lo);
      hi += pad;
      if (lo != 0) lo -= pad;
    }
  }
  if (axis.log) {
    lo = std::floor(std::log10(std::max(lo, 1e-300)));
    hi = std::ceil(std::log10(std::max(hi, 1e-300)));
  }
  if (hi <= lo) {  // a single value: give it a visible range around it
    const double pad = axis.log ? 1 : (lo == 0 ? 1 : std::abs(lo) * 0.1);
    lo -= pad;
    hi += pad;
  }
  s.lo = lo;
  s.hi = hi;
  return s;
}

std::string num(double v) {
  return fmt::format("{:.1f}", v);
}

std::string tick_label(double v) {
  if (v == 0) return "0";
  const double a = std::abs(v);
  if (a >= 1e6 || a < 1e-3) return fmt::format("{:.0e}", v);
  return fmt::format("{:g}", std::round(v * 1e4) / 1e4);
}

std::vector<std::pair<double, std::string>> auto_ticks(const Scale& s) {
  std::vector<std::pair<double, std::string>> out;
  if (s.log) {
    for (double e = s.lo; e <= s.hi + 1e-9; ++e)
      out.emplace_back(std::pow(10.0, e), tick_label(std::pow(10.0, e)));
    return out;
  }
  for (double v : nice_ticks(s.lo, s.hi, 6)) out.emplace_back(v, tick_label(v));
  return out;
}

std::string open_svg(const PlotOptions& o, double width, double height) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" data-plot=\"{}\" width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">\n<title>{}</title>\n"
      "<text x=\"{}\" y=\"18\" class=\"title\">{}</text>\n",
      escape(o.id), num(width), num(height), num(width), num(height), escape(o.title), escape(o.title),
      num(kLeft), escape(o.title));
}

std::string axes(const Scale& sx, const Scale& sy, const Axis& ax, const Axis& ay, double plot_w,
                 double plot_h) {
  std::string out = fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"frame\"/>\n",
                                num(kLeft), num(kTop), num(plot_w), num(plot_h));
  const auto xt = ax.ticks.empty() ? auto_ticks(sx) : ax.ticks;
  for (const auto& [v, label] : xt) {
    if (sx.log ? (v <= 0 || std::log10(v) < sx.lo - 1e-9 || std::log10(v) > sx.hi + 1e-9)
               : (v < sx.lo - 1e-9 || v > sx.hi + 1e-9))
      continue;
    const double x = sx(v);
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" class=\"grid\"/><text x=\"{0}\" y=\"{3}\" "
        "class=\"tick\" text-anchor=\"middle\">{4}</text>\n",
        num(x), num(kTop), num(kTop + plot_h), num(kTop + plot_h + 14), escape(label));
  }
  const auto yt = ay.ticks.empty() ? auto_ticks(sy) : ay.ticks;
  for (const auto& [v, label] : yt) {
    if (sy.log ? (v <= 0 || std::log10(v) < sy.lo - 1e-9 || std::log10(v) > sy.hi + 1e-9)
               : (v < sy.lo - 1e-9 || v > sy.hi + 1e-9))
      continue;
    const double y = sy(v);
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" class=\"grid\"/><text x=\"{3}\" y=\"{4}\" "
        "class=\"tick\" text-anchor=\"end\">{5}</text>\n",
        num(kLeft), num(y), num(kLeft + plot_w), num(kLeft - 4), num(y + 4), escape(label));
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"label\" text-anchor=\"middle\">{}</text>\n",
                     num(kLeft + plot_w / 2), num(kTop + plot_h + 34), escape(ax.label));
  out += fmt::format(
      "<text x=\"14\" y=\"{0}\" class=\"label\" text-anchor=\"middle\" transform=\"rotate(-90 14 "
      "{0})\">{1}</text>\n",
      num(kTop + plot_h / 2), escape(ay.label));
  return out;
}

std::string legend_box(const std::vector<std::pair<std::string, std::string>>& entries, double x) {
  std::string out;
  double y = kTop + 4;
  for (const auto& [name, c] : entries) {
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" "
        "class=\"legend\">{}</text>\n",
        num(x), num(y), c, num(x + 16), num(y + 9), escape(name));
    y += kLegendRow;
  }
  return out;
}

}  // namespace

std::string escape(std::string_view s) {
  return text::xml_escape(s);
}

std::string colour(std::size_t k) {
  // Okabe-Ito palette (colour-blind safe), then darker variants.
  static const char* const kPalette[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00",
                                         "#F0E442", "#000000", "#004D80", "#A36F00", "#006B4E", "#8F5175"};
  return kPalette[k % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

std::vector<double> nice_ticks(double lo, double hi, int n) {
  assert(n > 0);
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / n;
  const int e = static_cast<int>(std::floor(std::log10(raw)));
  const double mag = std::pow(10.0, e);
  double m = 10;  // step = m * 10^e, m in {1, 2, 2.5, 5, 10}
  for (double c : {1.0, 2.0, 2.5, 5.0})
    if (c * mag >= raw) {
      m = c;
      break;
    }
  // Each tick as (k * m) * 10^e, or (k * m) / 10^-e for e < 0: one rounding, so 0.6 prints as 0.6.
  const double div = e < 0 ? std::round(std::pow(10.0, -e)) : 1, mul = e < 0 ? 1 : mag;
  const auto tick = [&](double k) { return k * m * mul / div; };
  std::vector<double> out;
  for (double k = std::ceil(lo / (m * mag) - 1e-9); tick(k) <= hi + m * mag * 1e-9; ++k)
    out.push_back(tick(k) + 0.0);
  return out;
}

namespace {
// Whether point i of a series has an error bar (Series::x_err, y_err).
bool has_bar(const std::vector<double>& err, std::size_t i) {
  return i < err.size() && err[i] > 0 && std::isfinite(err[i]);
}
}  // namespace

std::string plot(const std::vector<Series>& series, const PlotOptions& o) {
  const bool legend = o.legend && !series.empty();
  const double width = o.width + (legend ? kLegendWidth : 0);
  const double plot_w = o.width - kLeft - kRight, plot_h = o.height - kTop - kBottom;
  std::vector<double> xs, ys;
  for (const auto& s : series) {
    assert(s.x.size() == s.y.size());
    assert(s.x_err.empty() || s.x_err.size() == s.x.size());
    assert(s.y_err.empty() || s.y_err.size() == s.y.size());
    xs.insert(xs.end(), s.x.begin(), s.x.end());
    ys.insert(ys.end(), s.y.begin(), s.y.end());
    for (std::size_t i = 0; i < s.x.size(); ++i) {  // the axes hold the error bars too
      if (has_bar(s.x_err, i)) xs.insert(xs.end(), {s.x[i] - s.x_err[i], s.x[i] + s.x_err[i]});
      if (has_bar(s.y_err, i)) ys.insert(ys.end(), {s.y[i] - s.y_err[i], s.y[i] + s.y_err[i]});
    }
  }
  if (o.diagonal) {  // both axes over the same range, so y = x is the diagonal
    std::vector<double> all = xs;
    all.insert(all.end(), ys.begin(), ys.end());
    xs = ys = all;
  }
  const auto sx = make_scale(o.x, xs, kLeft, kLeft + plot_w);
  const auto sy = make_scale(o.y, ys, kTop + plot_h, kTop);
  std::string out = open_svg(o, width, o.height) + axes(sx, sy, o.x, o.y, plot_w, plot_h);
  if (o.diagonal)
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"diagonal\"/>\n", num(sx.p0),
                       num(sy.p0), num(sx.p1), num(sy.p1));
  std::vector<std::pair<std::string, std::string>> entries;
  for (std::size_t k = 0; k < series.size(); ++k) {
    const auto& s = series[k];
    const auto c = s.colour.empty() ? colour(k) : s.colour;
    entries.emplace_back(s.name, c);
    if (s.line && s.x.size() > 1) {
      std::string d;
      for (std::size_t i = 0; i < s.x.size(); ++i) {
        if (i == 0)
          d += fmt::format("M{} {}", num(sx(s.x[i])), num(sy(s.y[i])));
        else if (s.step)
          d += fmt::format("H{}V{}", num(sx(s.x[i])), num(sy(s.y[i])));
        else
          d += fmt::format("L{} {}", num(sx(s.x[i])), num(sy(s.y[i])));
      }
      out += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\"/>\n", d, c);
    }
    // Error bars under the markers: a line across the interval with 3 px caps at its ends.
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      const double x = sx(s.x[i]), y = sy(s.y[i]);
      if (has_bar(s.x_err, i)) {
        const double a = sx(s.x[i] - s.x_err[i]), b = sx(s.x[i] + s.x_err[i]);
        out += fmt::format(
            "<path d=\"M{0} {2}H{1}M{0} {3}V{4}M{1} {3}V{4}\" class=\"error-bar\" stroke=\"{5}\"/>\n", num(a),
            num(b), num(y), num(y - 3), num(y + 3), c);
      }
      if (has_bar(s.y_err, i)) {
        const double a = sy(s.y[i] - s.y_err[i]), b = sy(s.y[i] + s.y_err[i]);
        out += fmt::format(
            "<path d=\"M{2} {0}V{1}M{3} {0}H{4}M{3} {1}H{4}\" class=\"error-bar\" stroke=\"{5}\"/>\n", num(a),
            num(b), num(x), num(x - 3), num(x + 3), c);
      }
    }
    if (s.marker_radius > 0)
      for (std::size_t i = 0; i < s.x.size(); ++i) {
        out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\" fill-opacity=\"0.75\"",
                           num(sx(s.x[i])), num(sy(s.y[i])), num(s.marker_radius), c);
        out += i < s.tooltips.size() ? fmt::format("><title>{}</title></circle>\n", escape(s.tooltips[i]))
                                     : "/>\n";
      }
  }
  if (legend) out += legend_box(entries, o.width + 4);
  return out + "</svg>\n";
}

std::string paired_bars(const std::vector<std::string>& labels,
                        const std::vector<std::pair<double, double>>& values,
                        const std::pair<std::string, std::string>& legend, const PlotOptions& o) {
  assert(labels.size() == values.size());
  constexpr double kRow = 22;  // px per label: two bars of 9 px and a gap
  constexpr double kLabelWidth = 150;
  const double plot_w = o.width - kLabelWidth - kRight;
  const double plot_h = std::max(1.0, kRow * static_cast<double>(labels.size()));
  const double height = kTop + plot_h + kBottom;
  const double width = o.width + kLegendWidth;
  double hi = 0;
  for (const auto& [a, b] : values) hi = std::max({hi, a, b});
  if (!(hi > 0)) hi = 1;
  const auto ticks = nice_ticks(0, hi, 5);
  hi = std::max(hi, ticks.back());
  const auto x_of = [&](double v) { return kLabelWidth + v / hi * plot_w; };
  std::string out = open_svg(o, width, height);
  for (double t : ticks)
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" class=\"grid\"/><text x=\"{0}\" y=\"{3}\" "
        "class=\"tick\" "
        "text-anchor=\"middle\">{4}</text>\n",
        num(x_of(t)), num(kTop), num(kTop + plot_h), num(kTop + plot_h + 14), tick_label(t));
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const double y = kTop + kRow * static_cast<double>(i);
    out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"tick\" text-anchor=\"end\">{}</text>\n",
                       num(kLabelWidth - 4), num(y + 15), escape(labels[i]));
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"9\" fill=\"{}\"><title>{}: {} {:.4g}</title></rect>\n",
        num(kLabelWidth), num(y + 2), num(x_of(values[i].first) - kLabelWidth), colour(0), escape(labels[i]),
        escape(legend.first), values[i].first);
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"9\" fill=\"{}\"><title>{}: {} {:.4g}</title></rect>\n",
        num(kLabelWidth), num(y + 11), num(x_of(values[i].second) - kLabelWidth), colour(1),
        escape(labels[i]), escape(legend.second), values[i].second);
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"label\" text-anchor=\"middle\">{}</text>\n",
                     num(kLabelWidth + plot_w / 2), num(kTop + plot_h + 34), escape(o.x.label));
  out += legend_box({{legend.first, colour(0)}, {legend.second, colour(1)}}, o.width + 4);
  return out + "</svg>\n";
}

std::string gantt(const std::vector<std::string>& rows, const std::vector<GanttBar>& bars,
                  const std::vector<std::string>& legend, const PlotOptions& o) {
  constexpr double kRow = 6;  // px per row (a node)
  const double plot_w = o.width - kLeft - kRight;
  const double plot_h = std::max(kRow, kRow * static_cast<double>(rows.size()));
  const double height = kTop + plot_h + kBottom;
  const double width = o.width + kLegendWidth;
  const auto sx = make_scale(o.x, {o.x.lo, o.x.hi}, kLeft, kLeft + plot_w);
  Scale sy;  // no y ticks (rows are labelled below); the one tick given lies outside the range
  sy.p0 = kTop + plot_h;
  sy.p1 = kTop;
  const Axis no_ticks{o.y.label, false, 0, 1, {{-1.0, ""}}};
  std::string out = open_svg(o, width, height) + axes(sx, sy, o.x, no_ticks, plot_w, plot_h);
  // Row labels: at most about 25, evenly spaced, so they stay readable.
  const std::size_t every = std::max<std::size_t>(1, rows.size() / 25);
  for (std::size_t r = 0; r < rows.size(); r += every)
    out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"tick small\" text-anchor=\"end\">{}</text>\n",
                       num(kLeft - 4), num(kTop + kRow * static_cast<double>(r) + kRow), escape(rows[r]));
  for (const auto& b : bars) {
    const double x0 = sx(b.from), x1 = sx(b.to);
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#fff\" "
        "stroke-width=\"0.3\"><title>{}"
        "</title></rect>\n",
        num(x0), num(kTop + kRow * static_cast<double>(b.row) + 0.5), num(std::max(0.6, x1 - x0)),
        num(kRow - 1), colour(b.colour), escape(b.tooltip));
  }
  std::vector<std::pair<std::string, std::string>> entries;
  for (std::size_t k = 0; k < legend.size(); ++k) entries.emplace_back(legend[k], colour(k));
  out += legend_box(entries, o.width + 4);
  return out + "</svg>\n";
}

}  // namespace slurmtwin::experiments::svg
