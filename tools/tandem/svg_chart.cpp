#include "svg_chart.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>

#include "tandem/core/error.h"

namespace tandem::cli {
namespace {

// ---- layout (pixels) ----
constexpr double kWidth = 760;
constexpr double kLeft = 72;  // room for tick labels such as 12000
constexpr double kRight = 24;
constexpr double kTitleHeight = 34;
constexpr double kLegendRow = 18;
constexpr double kPanelTitle = 24;
constexpr double kPlotHeight = 190;
constexpr double kXAxisHeight = 38;  // tick labels and the axis's name
constexpr double kPanelGap = 10;
constexpr double kPlotWidth = kWidth - kLeft - kRight;
// Between the frame and the outermost ticks, so that no marker sits on it.
constexpr double kInset = 6;

// Matplotlib's tab10: ten colours told apart also by most colour-blind readers.
constexpr const char* kColours[] = {"#1f77b4",
                                    "#ff7f0e",
                                    "#2ca02c",
                                    "#d62728",
                                    "#9467bd",
                                    "#8c564b",
                                    "#e377c2",
                                    "#7f7f7f",
                                    "#bcbd22",
                                    "#17becf"};
constexpr const char* kDash = "7 4";
constexpr const char* kFont = "font-family=\"DejaVu Sans, Arial, sans-serif\"";

const char* colour_of(size_t run) { return kColours[run % std::size(kColours)]; }

// A value range and its ticks, mapped onto a pixel range.
struct Axis {
  std::vector<double> ticks;
  double pixel_lo = 0;  // where ticks.front() goes
  double pixel_hi = 0;  // where ticks.back() goes

  double to_pixel(double value) const {
    const double lo = ticks.front();
    const double hi = ticks.back();
    return pixel_lo + (value - lo) / (hi - lo) * (pixel_hi - pixel_lo);
  }
  double step() const { return ticks[1] - ticks[0]; }
};

Axis axis_over(double lo, double hi, int target, bool integers) {
  if (lo == hi) {
    const double pad = integers ? 1 : (lo == 0 ? 1 : std::abs(lo) * 0.05);
    lo -= pad;
    hi += pad;
  }
  if (!std::isfinite(hi - lo)) throw Error("the values span more than a chart can show");
  return {nice_ticks(lo, hi, target, integers), 0, 0};
}

// The finite range of what `pick` takes from the points of `series`.
template <class Pick>
std::pair<double, double> range_of(const std::vector<const ChartSeries*>& series,
                                   Pick pick) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (const ChartSeries* s : series) {
    for (const ChartPoint& p : s->points) {
      if (!std::isfinite(p.y)) continue;
      lo = std::min(lo, pick(p));
      hi = std::max(hi, pick(p));
    }
  }
  return {lo, hi};
}

class Drawing {
 public:
  explicit Drawing(const Chart& chart) : chart_(chart) {}

  std::string svg() {
    std::vector<const ChartSeries*> all;
    for (const ChartPanel& panel : chart_.panels)
      for (const ChartSeries& s : panel.series) all.push_back(&s);
    const auto [x_lo, x_hi] = range_of(all, [](const ChartPoint& p) { return p.x; });
    x_ = axis_over(x_lo, x_hi, /*target=*/8, /*integers=*/true);
    x_.pixel_lo = kLeft + kInset;
    x_.pixel_hi = kLeft + kPlotWidth - kInset;

    const double legend_height = kLegendRow * static_cast<double>(chart_.runs.size());
    double top = kTitleHeight + legend_height + 8;
    const double height =
        top + static_cast<double>(chart_.panels.size()) *
                  (kPanelTitle + kPlotHeight + kXAxisHeight + kPanelGap);
    out_ << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth
         << "\" height=\"" << pixel_text(height) << "\" viewBox=\"0 0 " << kWidth << " "
         << pixel_text(height) << "\" " << kFont << " font-size=\"12\">\n"
         << "<title>" << xml_escaped(chart_.title) << "</title>\n"
         << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
         << "<text x=\"" << kLeft << "\" y=\"22\" font-size=\"16\" font-weight=\"bold\">"
         << xml_escaped(chart_.title) << "</text>\n";
    legend(kTitleHeight);
    for (const ChartPanel& panel : chart_.panels) {
      draw(panel, top);
      top += kPanelTitle + kPlotHeight + kXAxisHeight + kPanelGap;
    }
    out_ << "</svg>\n";
    return out_.str();
  }

 private:
  void legend(double top) {
    out_ << "<g class=\"legend\">\n";
    for (size_t run = 0; run < chart_.runs.size(); ++run) {
      const double y = top + kLegendRow * static_cast<double>(run) + kLegendRow / 2;
      out_ << "<g class=\"legend-run\" data-run=\"" << run << "\" data-colour=\""
           << colour_of(run) << "\"><line x1=\"" << kLeft << "\" x2=\"" << kLeft + 26
           << "\" y1=\"" << pixel_text(y) << "\" y2=\"" << pixel_text(y) << "\" stroke=\""
           << colour_of(run) << "\" stroke-width=\"4\"/><text x=\"" << kLeft + 34
           << "\" y=\"" << pixel_text(y + 4) << "\">" << xml_escaped(chart_.runs[run])
           << "</text></g>\n";
    }
    out_ << "</g>\n";
  }

  void draw(const ChartPanel& panel, double top) {
    std::vector<const ChartSeries*> series;
    for (const ChartSeries& s : panel.series) series.push_back(&s);
    const auto [y_lo, y_hi] = range_of(series, [](const ChartPoint& p) { return p.y; });
    const double plot_top = top + kPanelTitle;
    Axis y = axis_over(y_lo, y_hi, /*target=*/5, /*integers=*/false);
    y.pixel_lo = plot_top + kPlotHeight - kInset;
    y.pixel_hi = plot_top + kInset;

    out_ << "<g class=\"panel\" data-panel=\"" << xml_escaped(panel.title) << "\">\n"
         << "<text x=\"" << kLeft << "\" y=\"" << pixel_text(top + 16)
         << "\" font-size=\"14\" font-weight=\"bold\">" << xml_escaped(panel.title)
         << "</text>\n";
    key(panel, top);
    ticks(y, plot_top);
    out_ << "<rect x=\"" << kLeft << "\" y=\"" << pixel_text(plot_top) << "\" width=\""
         << kPlotWidth << "\" height=\"" << kPlotHeight
         << "\" fill=\"none\" stroke=\"#444444\"/>\n"
         << "<text x=\"" << pixel_text(kLeft + kPlotWidth / 2) << "\" y=\""
         << pixel_text(plot_top + kPlotHeight + 32) << "\" text-anchor=\"middle\">"
         << xml_escaped(chart_.x_label) << "</text>\n";
    for (const ChartSeries* s : series) lines(*s, y);
    for (const ChartSeries* s : series) markers(*s, y);
    out_ << "</g>\n";
  }

  // The panel's series names beside their line style.
  void key(const ChartPanel& panel, double top) {
    std::vector<std::pair<std::string, bool>> styles;
    for (const ChartSeries& s : panel.series) {
      const std::pair<std::string, bool> style{s.label, s.dashed};
      if (std::find(styles.begin(), styles.end(), style) == styles.end())
        styles.push_back(style);
    }
    double x = kLeft + kPlotWidth;
    for (auto it = styles.rbegin(); it != styles.rend(); ++it) {
      x -= 8.0 * static_cast<double>(it->first.size()) + 44;
      out_ << "<line x1=\"" << pixel_text(x) << "\" x2=\"" << pixel_text(x + 28)
           << "\" y1=\"" << pixel_text(top + 12) << "\" y2=\"" << pixel_text(top + 12)
           << "\" stroke=\"#444444\" stroke-width=\"2\""
           << (it->second ? std::string(" stroke-dasharray=\"") + kDash + "\"" : "")
           << "/><text x=\"" << pixel_text(x + 34) << "\" y=\"" << pixel_text(top + 16)
           << "\">" << xml_escaped(it->first) << "</text>\n";
    }
  }

  void ticks(const Axis& y, double plot_top) {
    const double bottom = plot_top + kPlotHeight;
    for (double value : x_.ticks) {
      const std::string at = pixel_text(x_.to_pixel(value));
      out_ << "<line class=\"tick x-tick\" data-value=\"" << exact_text(value)
           << "\" x1=\"" << at << "\" x2=\"" << at << "\" y1=\"" << pixel_text(plot_top)
           << "\" y2=\"" << pixel_text(bottom + 5) << "\" stroke=\"#e4e4e4\"/><text x=\""
           << at << "\" y=\"" << pixel_text(bottom + 18) << "\" text-anchor=\"middle\">"
           << tick_text(value, x_.step()) << "</text>\n";
    }
    for (double value : y.ticks) {
      const std::string at = pixel_text(y.to_pixel(value));
      out_ << "<line class=\"tick y-tick\" data-value=\"" << exact_text(value)
           << "\" x1=\"" << pixel_text(kLeft - 5) << "\" x2=\""
           << pixel_text(kLeft + kPlotWidth) << "\" y1=\"" << at << "\" y2=\"" << at
           << "\" stroke=\"#e4e4e4\"/><text x=\"" << pixel_text(kLeft - 8) << "\" y=\""
           << pixel_text(y.to_pixel(value) + 4) << "\" text-anchor=\"end\">"
           << tick_text(value, y.step()) << "</text>\n";
    }
  }

  // One polyline per run of consecutive finite points.
  void lines(const ChartSeries& s, const Axis& y) {
    std::string points;
    size_t count = 0;
    auto flush = [&] {
      if (count >= 2) {
        out_ << "<polyline class=\"series\" data-run=\"" << s.run << "\" data-series=\""
             << xml_escaped(s.field) << "\" fill=\"none\" stroke=\"" << colour_of(s.run)
             << "\" stroke-width=\"2\" stroke-linejoin=\"round\""
             << (s.dashed ? std::string(" stroke-dasharray=\"") + kDash + "\"" : "")
             << " points=\"" << points << "\"/>\n";
      }
      points.clear();
      count = 0;
    };
    for (const ChartPoint& p : s.points) {
      if (!std::isfinite(p.y)) {
        flush();
        continue;
      }
      if (count++ > 0) points += ' ';
      points.append(pixel_text(x_.to_pixel(p.x)))
          .append(",")
          .append(pixel_text(y.to_pixel(p.y)));
    }
    flush();
  }

  void markers(const ChartSeries& s, const Axis& y) {
    const bool many = s.points.size() > 80;
    const std::string& run = chart_.runs[s.run];
    for (const ChartPoint& p : s.points) {
      if (!std::isfinite(p.y)) continue;
      out_ << "<circle class=\"point\" cx=\"" << pixel_text(x_.to_pixel(p.x))
           << "\" cy=\"" << pixel_text(y.to_pixel(p.y)) << "\" r=\""
           << (many ? "1.5" : "3.5") << "\" fill=\""
           << (s.dashed ? "#ffffff" : colour_of(s.run)) << "\" stroke=\""
           << colour_of(s.run) << "\" stroke-width=\"1.5\" data-run=\"" << s.run
           << "\" data-series=\"" << xml_escaped(s.field) << "\" data-line=\"" << p.line
           << "\" data-x=\"" << exact_text(p.x) << "\" data-y=\"" << exact_text(p.y)
           << "\"><title>" << xml_escaped(run) << " line " << p.line << ": "
           << xml_escaped(chart_.x_label) << " " << exact_text(p.x) << ", "
           << xml_escaped(s.field) << " " << exact_text(p.y) << "</title></circle>\n";
    }
  }

  const Chart& chart_;
  Axis x_;
  std::ostringstream out_;
};

}  // namespace

std::string tick_text(double value, double step) {
  const int decimals =
      step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", decimals, value == 0 ? 0.0 : value);
  return text;
}

std::string exact_text(double value) {
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  return std::string(text, end);
}

std::string pixel_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

std::vector<double> nice_ticks(double lo, double hi, int target, bool integers) {
  const double raw = (hi - lo) / std::max(1, target);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / magnitude;
  double step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * magnitude;
  if (integers) step = std::max(step, 1.0);
  // Multiples k * step, so that no rounding accumulates along the axis.
  const double first = std::floor(lo / step + 1e-9);
  const double last = std::ceil(hi / step - 1e-9);
  std::vector<double> ticks;
  for (double k = first; k <= last; ++k) ticks.push_back(k * step);
  if (ticks.size() < 2) ticks.push_back((last + 1) * step);
  return ticks;
}

std::string xml_escaped(const std::string& text) {
  // XML allows no control characters but tab and the line ends, not even
  // escaped; a file name could hold one.
  static constexpr std::string_view kSpecial = "&<>\"'";
  static constexpr const char* kEntities[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"};
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const size_t special = kSpecial.find(c);
    if (special != std::string_view::npos) {
      out += kEntities[special];
    } else {
      out += static_cast<unsigned char>(c) < 0x20 && c != '\t' ? '?' : c;
    }
  }
  return out;
}

std::string svg_of(const Chart& chart) { return Drawing(chart).svg(); }

}  // namespace tandem::cli
