// key_averages and its table: the profiler's spans summed per op.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>

#include "core/profiler_events.h"
#include "tandem/core/profiler.h"

namespace tandem::profiler {
namespace {

using detail::microseconds;
using detail::milliseconds;

// Per event, the time covered by spans nested directly inside it on its
// own track (a thread, or a device's queue) of its own rank. `events` is
// ordered by start time.
std::vector<int64_t> nested_time(const std::vector<Event>& events) {
  std::vector<int64_t> nested(events.size(), 0);
  std::map<std::pair<int, uint64_t>, std::vector<size_t>> open;  // per track, a stack
  for (size_t i = 0; i < events.size(); ++i) {
    std::vector<size_t>& stack = open[{events[i].rank, events[i].thread}];
    while (!stack.empty() && events[stack.back()].end_ns <= events[i].start_ns)
      stack.pop_back();
    if (!stack.empty() && events[i].end_ns <= events[stack.back()].end_ns) {
      nested[stack.back()] += events[i].end_ns - events[i].start_ns;
    }
    stack.push_back(i);
  }
  return nested;
}

// The "shapes" argument op spans carry when the session records shapes.
std::string input_shapes(const Event& e) {
  for (const Arg& a : e.args) {
    if (a.key == "shapes") return a.value;
  }
  return "";
}

bool before(const OpStats& a, const OpStats& b, SortBy sort_by) {
  switch (sort_by) {
    case SortBy::kSelfTime:
      return a.self_ns > b.self_ns;
    case SortBy::kTotalTime:
      return a.total_ns > b.total_ns;
    case SortBy::kCalls:
      return a.calls > b.calls;
    case SortBy::kName:
      return a.name < b.name;
    case SortBy::kQueueSelfTime:
      return a.queue_self_ns > b.queue_self_ns;
  }
  return false;
}

}  // namespace

std::vector<OpStats> key_averages(const std::vector<Event>& unordered,
                                  SortBy sort_by,
                                  GroupBy group_by) {
  const std::vector<Event> events = detail::by_start(unordered);
  const std::vector<int64_t> nested = nested_time(events);
  std::map<std::tuple<std::string, std::string, std::string>, OpStats> rows;
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    const std::string shapes = group_by == GroupBy::kNameAndShapes ? input_shapes(e) : "";
    OpStats& row = rows[{e.name, e.device.str(), shapes}];
    row.name = e.name;
    row.device = e.device;
    row.input_shapes = shapes;
    const int64_t total = e.end_ns - e.start_ns;
    if (e.category == kQueueCategory) {
      row.queue_total_ns += total;
      row.queue_self_ns += total - nested[i];
    } else {
      row.calls += 1;
      row.total_ns += total;
      row.self_ns += total - nested[i];
    }
  }
  std::vector<OpStats> out;
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  std::stable_sort(out.begin(), out.end(), [sort_by](const OpStats& a, const OpStats& b) {
    return before(a, b, sort_by);
  });
  return out;
}

std::string table(const std::vector<OpStats>& rows, size_t row_limit) {
  int64_t all_self = 0;
  size_t name_width = 4;
  bool queued = false;
  bool shaped = false;
  for (const OpStats& row : rows) {
    all_self += row.self_ns;
    name_width = std::max(name_width, row.name.size());
    queued = queued || row.queue_total_ns > 0;
    shaped = shaped || !row.input_shapes.empty();
  }
  const int width = static_cast<int>(name_width);
  std::ostringstream out;
  char line[512];
  std::snprintf(line,
                sizeof line,
                "%-*s  %-8s %8s %12s %12s %12s %7s",
                width,
                "Name",
                "Device",
                "Calls",
                "Self ms",
                "Total ms",
                "Avg us",
                "Self %");
  out << line;
  if (queued) {
    std::snprintf(line, sizeof line, " %13s %14s", "Queue self ms", "Queue total ms");
    out << line;
  }
  out << (shaped ? "  Input shapes\n" : "\n");
  const size_t shown = row_limit == 0 ? rows.size() : std::min(row_limit, rows.size());
  for (size_t i = 0; i < shown; ++i) {
    const OpStats& r = rows[i];
    const double share =
        all_self > 0 ? 100.0 * static_cast<double>(r.self_ns) / all_self : 0.0;
    std::snprintf(line,
                  sizeof line,
                  "%-*s  %-8s %8lld %12s %12s %12s %6.1f%%",
                  width,
                  r.name.c_str(),
                  r.device.str().c_str(),
                  static_cast<long long>(r.calls),
                  milliseconds(r.self_ns).c_str(),
                  milliseconds(r.total_ns).c_str(),
                  microseconds(r.calls > 0 ? r.total_ns / r.calls : 0).c_str(),
                  share);
    out << line;
    if (queued) {
      std::snprintf(line,
                    sizeof line,
                    " %13s %14s",
                    milliseconds(r.queue_self_ns).c_str(),
                    milliseconds(r.queue_total_ns).c_str());
      out << line;
    }
    out << (shaped ? "  " + r.input_shapes + "\n" : "\n");
  }
  return out.str();
}

}  // namespace tandem::profiler
