#include "trace_chart.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <vector>

#include "svg_chart.h"
#include "tandem/core/error.h"

namespace tandem::cli {
namespace {

// ---- layout (pixels) ----
constexpr double kWidth = 1200;
constexpr double kLabels = 210;  // the lanes' names
constexpr double kRight = 20;
constexpr double kTop = 64;  // title, key and the time axis
constexpr double kBar = 15;  // one nesting level
constexpr double kLaneGap = 6;
constexpr double kProcessGap = 10;
constexpr double kCharWidth = 6.2;  // of the 10 px font, for fitting names
constexpr int kMaxDepth = 6;        // deeper spans share the last row
constexpr const char* kFont = "font-family=\"DejaVu Sans, Arial, sans-serif\"";

struct Lane {
  int64_t pid;
  int64_t tid;
  int depth = 1;  // rows
  double y = 0;
};

// Per span, its nesting depth on its own thread (0: outermost).
std::vector<int> depths(const std::vector<TraceSpan>& spans) {
  std::vector<int> depth(spans.size(), 0);
  std::map<std::pair<int64_t, int64_t>, std::vector<double>> open;  // ends, a stack
  for (size_t i = 0; i < spans.size(); ++i) {
    std::vector<double>& stack = open[{spans[i].pid, spans[i].tid}];
    while (!stack.empty() && stack.back() <= spans[i].ts_us) stack.pop_back();
    depth[i] = static_cast<int>(std::min<size_t>(stack.size(), kMaxDepth - 1));
    stack.push_back(spans[i].ts_us + spans[i].dur_us);
  }
  return depth;
}

std::string lane_name(const TraceFile& trace, int64_t pid, int64_t tid) {
  auto thread = trace.threads.find({pid, tid});
  return thread != trace.threads.end() && !thread->second.empty()
             ? thread->second
             : "thread " + std::to_string(tid);
}

std::string process_name(const TraceFile& trace, int64_t pid) {
  auto it = trace.processes.find(pid);
  return it != trace.processes.end() ? it->second : "process " + std::to_string(pid);
}

}  // namespace

const char* category_colour(const std::string& category) {
  static const std::map<std::string, const char*> colours = {
      {"autograd", "#1f77b4"},  // blue
      {"parallel", "#ff7f0e"},  // orange
      {"copy", "#2ca02c"},      // green
      {"comm", "#d62728"},      // red
      {"ddp", "#9467bd"},       // purple
      {"op", "#8c564b"},        // brown
      {"optim", "#e377c2"},     // pink
      {"data", "#bcbd22"},      // olive
      {"io", "#17becf"},        // cyan
  };
  auto it = colours.find(category);
  return it != colours.end() ? it->second : "#7f7f7f";  // grey: anything else
}

std::string trace_svg(const TraceFile& trace) {
  if (trace.spans.empty()) throw Error("'" + trace.path + "' holds no spans to draw");
  const std::vector<TraceSpan>& spans = trace.spans;
  const std::vector<int> depth = depths(spans);
  double t0 = spans.front().ts_us;
  double t1 = t0;
  std::map<std::pair<int64_t, int64_t>, Lane> lanes;
  std::set<std::string> categories;
  for (size_t i = 0; i < spans.size(); ++i) {
    const TraceSpan& s = spans[i];
    t0 = std::min(t0, s.ts_us);
    t1 = std::max(t1, s.ts_us + s.dur_us);
    Lane& lane = lanes.try_emplace({s.pid, s.tid}, Lane{s.pid, s.tid}).first->second;
    lane.depth = std::max(lane.depth, depth[i] + 1);
    categories.insert(s.category);
  }
  // Lanes top to bottom by process, then thread; a gap between processes.
  double y = kTop + 10;
  int64_t last_pid = lanes.begin()->first.first;
  for (auto& [key, lane] : lanes) {
    if (key.first != last_pid) y += kProcessGap;
    last_pid = key.first;
    lane.y = y;
    y += lane.depth * kBar + kLaneGap;
  }
  const double height = y + 10;
  const double ms_lo = 0;
  const double ms_hi = std::max((t1 - t0) / 1e3, 1e-3);
  const std::vector<double> ticks = nice_ticks(ms_lo, ms_hi, 8, false);
  const double x_lo = kLabels;
  const double x_hi = kWidth - kRight;
  const double ms_range = ticks.back() - ticks.front();
  const auto x_of = [&](double ts_us) {
    return x_lo + ((ts_us - t0) / 1e3 - ticks.front()) / ms_range * (x_hi - x_lo);
  };

  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << pixel_text(kWidth)
      << "\" height=\"" << pixel_text(height) << "\" viewBox=\"0 0 " << pixel_text(kWidth)
      << " " << pixel_text(height) << "\" " << kFont << ">\n"
      << "<title>" << xml_escaped(trace.path) << "</title>\n"
      << "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
         "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M "
         "0 0 "
         "L 10 5 L 0 10 z\" fill=\"#333333\"/></marker></defs>\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
      << "<text x=\"12\" y=\"20\" font-size=\"15\" font-weight=\"bold\">"
      << xml_escaped(trace.path) << ": " << spans.size() << " spans, "
      << trace.flows.size() << " arrows</text>\n";
  // The key.
  double key_x = 12;
  out << "<g class=\"key\">\n";
  for (const std::string& c : categories) {
    out << "<rect x=\"" << pixel_text(key_x)
        << "\" y=\"28\" width=\"12\" height=\"10\" fill=\"" << category_colour(c)
        << "\"/><text x=\"" << pixel_text(key_x + 16) << "\" y=\"37\" font-size=\"11\">"
        << xml_escaped(c) << "</text>\n";
    key_x += 28 + kCharWidth * static_cast<double>(c.size());
  }
  out << "</g>\n";
  // The time axis, with a grid line per tick.
  out << "<g class=\"axis\">\n";
  for (double tick : ticks) {
    const double x = x_lo + (tick - ticks.front()) / ms_range * (x_hi - x_lo);
    out << "<line class=\"tick\" data-value=\"" << exact_text(tick) << "\" x1=\""
        << pixel_text(x) << "\" x2=\"" << pixel_text(x) << "\" y1=\"" << pixel_text(kTop)
        << "\" y2=\"" << pixel_text(height - 10) << "\" stroke=\"#e5e5e5\"/>\n"
        << "<text x=\"" << pixel_text(x) << "\" y=\"" << pixel_text(kTop - 4)
        << "\" font-size=\"10\" text-anchor=\"middle\">"
        << tick_text(tick, ticks.size() > 1 ? ticks[1] - ticks[0] : 1) << "</text>\n";
  }
  out << "<text x=\"" << pixel_text(x_lo - 8) << "\" y=\"" << pixel_text(kTop - 4)
      << "\" font-size=\"10\" text-anchor=\"end\">ms</text>\n</g>\n";
  // Lane names: the process on its first lane, then the thread.
  out << "<g class=\"lanes\">\n";
  int64_t named_pid = -1;
  for (const auto& [key, lane] : lanes) {
    std::string label = lane_name(trace, key.first, key.second);
    if (key.first != named_pid) {
      out << "<text x=\"8\" y=\"" << pixel_text(lane.y + 11)
          << "\" font-size=\"11\" font-weight=\"bold\">"
          << xml_escaped(process_name(trace, key.first)) << "</text>\n";
      named_pid = key.first;
    }
    out << "<text x=\"" << pixel_text(x_lo - 8) << "\" y=\"" << pixel_text(lane.y + 11)
        << "\" font-size=\"10\" text-anchor=\"end\" fill=\"#555555\">"
        << xml_escaped(label) << "</text>\n"
        << "<rect x=\"" << pixel_text(x_lo) << "\" y=\"" << pixel_text(lane.y)
        << "\" width=\"" << pixel_text(x_hi - x_lo) << "\" height=\""
        << pixel_text(lane.depth * kBar) << "\" fill=\"#f6f6f6\"/>\n";
  }
  out << "</g>\n<g class=\"spans\">\n";
  std::vector<std::pair<double, double>> anchor(
      spans.size());  // a bar's start, mid-height
  for (size_t i = 0; i < spans.size(); ++i) {
    const TraceSpan& s = spans[i];
    const Lane& lane = lanes.at({s.pid, s.tid});
    const double x = x_of(s.ts_us);
    const double w = std::max(x_of(s.ts_us + s.dur_us) - x, 0.6);
    const double top = lane.y + depth[i] * kBar;
    anchor[i] = {x, top + (kBar - 1) / 2};
    std::string title = s.name + " (" + s.category + "): " + exact_text(s.dur_us) + " us";
    for (const std::string& a : s.args) title += ", " + a;
    out << "<rect class=\"span\" data-name=\"" << xml_escaped(s.name) << "\" data-cat=\""
        << xml_escaped(s.category) << "\" data-pid=\"" << s.pid << "\" data-tid=\""
        << s.tid << "\" data-ts=\"" << exact_text(s.ts_us) << "\" data-dur=\""
        << exact_text(s.dur_us) << "\" x=\"" << pixel_text(x) << "\" y=\""
        << pixel_text(top) << "\" width=\"" << pixel_text(w) << "\" height=\""
        << pixel_text(kBar - 1) << "\" fill=\"" << category_colour(s.category)
        << "\"><title>" << xml_escaped(title) << "</title></rect>\n";
    const auto fits = static_cast<size_t>((w - 4) / kCharWidth);
    if (fits >= 4) {
      const std::string shown =
          s.name.size() <= fits ? s.name : s.name.substr(0, fits - 1) + "\u2026";
      out << "<text x=\"" << pixel_text(x + 2) << "\" y=\"" << pixel_text(top + 11)
          << "\" font-size=\"10\" fill=\"#ffffff\" pointer-events=\"none\">"
          << xml_escaped(shown) << "</text>\n";
    }
  }
  out << "</g>\n<g class=\"flows\">\n";
  for (const auto& [from, to] : trace.flows) {
    out << "<line class=\"flow\" data-from=\"" << from << "\" data-to=\"" << to
        << "\" x1=\"" << pixel_text(anchor[from].first) << "\" y1=\""
        << pixel_text(anchor[from].second) << "\" x2=\"" << pixel_text(anchor[to].first)
        << "\" y2=\"" << pixel_text(anchor[to].second)
        << "\" stroke=\"#333333\" stroke-width=\"1.2\" marker-end=\"url(#arrow)\"/>\n";
  }
  out << "</g>\n</svg>\n";
  return out.str();
}

}  // namespace tandem::cli
