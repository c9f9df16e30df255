#pragma once
// Small inline-SVG charts for the HTML report: line/scatter plots with linear or log axes, horizontal
// paired bars, and a Gantt chart. Output is deterministic text (fixed precision) with no external
// references, so a report is one self-contained file.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace slurmtwin::experiments::svg {

/// Text escaped for XML/HTML content and attribute values.
std::string escape(std::string_view s);
/// Colour k of a palette distinguishable by colour-blind readers (cycles).
std::string colour(std::size_t k);

struct Series {
  std::string name;
  std::vector<double> x, y;
  std::string colour;                 // "" = palette colour of the series index
  bool line = true;                   // join the points
  bool step = false;                  // join with horizontal-then-vertical steps (CDFs)
  double marker_radius = 0;           // > 0: draw a circle at each point (px)
  std::vector<std::string> tooltips;  // optional, one per point (<title> of the marker)
  // Optional error bars, one per point: the point ± this many x (y) units; 0 or NaN draws none.
  std::vector<double> x_err, y_err;
};

struct Axis {
  std::string label;
  bool log = false;                                   // log10 scale; values <= 0 are clamped to `lo`
  double lo = 0, hi = 0;                              // range; lo == hi = from the data
  std::vector<std::pair<double, std::string>> ticks;  // explicit ticks; empty = automatic
};

struct PlotOptions {
  std::string id;     // data-plot attribute (what tests look for)
  std::string title;  // drawn above the plot
  Axis x, y;
  int width = 640, height = 340;  // px
  bool legend = true;
  bool diagonal = false;  // draw y = x (for predicted-vs-exact scatters)
};

/// A line and/or scatter plot of `series`.
std::string plot(const std::vector<Series>& series, const PlotOptions& options);

/// Horizontal bars, two per label (e.g. usage share vs target share). values[i] = (first, second).
std::string paired_bars(const std::vector<std::string>& labels,
                        const std::vector<std::pair<double, double>>& values,
                        const std::pair<std::string, std::string>& legend, const PlotOptions& options);

struct GanttBar {
  std::size_t row = 0;
  double from = 0, to = 0;  // x units
  std::size_t colour = 0;   // palette index
  std::string tooltip;
};

/// A Gantt chart: one row per label, bars in x units over [options.x.lo, options.x.hi].
std::string gantt(const std::vector<std::string>& rows, const std::vector<GanttBar>& bars,
                  const std::vector<std::string>& legend, const PlotOptions& options);

/// About `n` round tick values covering [lo, hi] (1, 2, 5 x 10^k steps).
std::vector<double> nice_ticks(double lo, double hi, int n);

}  // namespace slurmtwin::experiments::svg
