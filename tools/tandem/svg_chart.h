// A line chart drawn as SVG by hand: panels stacked above one another,
// sharing their x axis, each with axes at nice tick values, grid lines, one
// polyline per series (broken where a value is not a number), a marker per
// point and a key to its series; above them a legend naming each run in its
// colour.
//
//   Chart chart{"run.jsonl", "epoch", {"run.jsonl"}, {}};
//   chart.panels.push_back({"loss", {{0, "train_loss", "train", false,
//                                     {{1, 0.61, 1}, {2, 0.43, 2}}}}});
//   const std::string svg = svg_of(chart);
//
// Every marker says where its point came from, for a reader (a <title> a
// browser shows on hover) and for a program: data-x and data-y hold the
// values as the shortest text that reads back as the same double, with
// data-run, data-series and data-line. Tick marks carry data-value, so the
// axis transform can be checked from the drawing itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::cli {

struct ChartPoint {
  double x = 0;
  /// NaN: no value here (the polyline breaks).
  double y = 0;
  /// The source line, for data-line and the marker's title.
  int64_t line = 0;
};

struct ChartSeries {
  /// Index into Chart::runs; picks the colour.
  size_t run = 0;
  /// What the values are ("test_loss"); data-series and the titles.
  std::string field;
  /// The series' name in the panel's key ("test").
  std::string label;
  bool dashed = false;
  std::vector<ChartPoint> points;
};

struct ChartPanel {
  std::string title;
  std::vector<ChartSeries> series;
};

struct Chart {
  std::string title;
  /// The x axis's name ("epoch", "step"); its ticks are whole numbers.
  std::string x_label;
  /// The runs' names, in colour order (the legend).
  std::vector<std::string> runs;
  std::vector<ChartPanel> panels;
};

/// The chart as a standalone SVG document. Throws tandem::Error when the
/// values span more than a double can (no scale could show them).
std::string svg_of(const Chart& chart);

/// Tick values 1, 2 or 5 times a power of ten apart (whole numbers when
/// `integers`), about `target` of them, from a multiple at or below `lo` to
/// one at or above `hi`.
std::vector<double> nice_ticks(double lo, double hi, int target, bool integers);

/// The shortest text that reads back as the same double (data-* values).
std::string exact_text(double value);
/// A pixel coordinate, to a hundredth.
std::string pixel_text(double value);
/// A tick's label, with the decimals its ticks' `step` needs.
std::string tick_text(double value, double step);

/// Escapes & < > " ' for SVG/HTML text and attribute values.
std::string xml_escaped(const std::string& text);

}  // namespace tandem::cli
