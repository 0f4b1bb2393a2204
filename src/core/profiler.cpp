#include "tandem/core/profiler.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <utility>

#include "tandem/core/error.h"

// Note [Profiler spans]
// A Span asks one relaxed atomic whether a Session is alive; when none is,
// that load and a branch are all it costs. While one is, a span reads the
// steady clock at both ends and appends one Event to the process's list
// under a mutex. The list is one for the process, not one per thread: the
// spans tandem records are ops, autograd nodes and data-parallel phases,
// microseconds and more each, where an uncontended lock is noise. Every
// process of one machine reads the same steady clock (CLOCK_MONOTONIC), so
// the traces of the ranks of one mpirun job line up without offsets.
//
// Arrows (Chrome trace flows) follow data: a copy starts a flow and marks
// its result's bytes with it (mark_data); the first span that reads those
// bytes (a replica's forward, for a scatter's copy) takes it (take_flow).
// The table of marked bytes lives as long as the session; an entry is
// replaced when a later copy writes the same address, so an arrow links
// the last copy into a block to the first reader after it.

namespace tandem::profiler {
namespace detail {

std::atomic<bool> g_recording{false};
std::atomic<bool> g_recording_shapes{false};
// Guards g_events, g_marked and the start and stop of a session.
std::mutex g_mutex;
std::vector<Event> g_events;
std::map<const void*, uint64_t> g_marked;  // bytes -> the flow that made them

namespace {

struct ThreadIdentity {
  uint64_t number;
  std::string name;
};

const ThreadIdentity& this_thread_identity() {
  static std::atomic<uint64_t> next{0};
  thread_local const ThreadIdentity identity = [] {
    char name[64] = {0};
    pthread_getname_np(pthread_self(), name, sizeof name);
    return ThreadIdentity{next.fetch_add(1), name};
  }();
  return identity;
}

}  // namespace
}  // namespace detail

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void record(Event event) {
  const detail::ThreadIdentity& me = detail::this_thread_identity();
  event.thread = me.number;
  event.thread_name = me.name;
  std::lock_guard<std::mutex> lock(detail::g_mutex);
  if (recording()) detail::g_events.push_back(std::move(event));
}

uint64_t new_flow() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void mark_data(const void* data, uint64_t flow) {
  if (flow == 0) return;
  std::lock_guard<std::mutex> lock(detail::g_mutex);
  if (recording()) detail::g_marked[data] = flow;
}

uint64_t take_flow(const void* data) {
  std::lock_guard<std::mutex> lock(detail::g_mutex);
  auto it = detail::g_marked.find(data);
  if (it == detail::g_marked.end()) return 0;
  const uint64_t flow = it->second;
  detail::g_marked.erase(it);
  return flow;
}

void Span::begin(std::string_view category, std::string_view name, Device device) {
  event_.emplace();
  event_->category = category;
  event_->name = name;
  event_->device = device;
  event_->start_ns = now_ns();
}

void Span::end() {
  event_->end_ns = now_ns();
  record(std::move(*event_));
}

Span& Span::arg(std::string_view key, int64_t value) {
  if (event_) event_->args.push_back({std::string(key), std::to_string(value), true});
  return *this;
}

Span& Span::arg(std::string_view key, std::string_view text) {
  if (event_) event_->args.push_back({std::string(key), std::string(text), false});
  return *this;
}

uint64_t Span::start_flow() {
  if (!event_) return 0;
  event_->flow_out = new_flow();
  return event_->flow_out;
}

Span& Span::end_flow(uint64_t flow) {
  if (event_ && flow != 0) event_->flows_in.push_back(flow);
  return *this;
}

Session::Session(SessionOptions options) {
  std::lock_guard<std::mutex> lock(detail::g_mutex);
  TANDEM_CHECK(
      !detail::g_recording.load(),
      "profiler::Session: another session is recording; one at a time in a process");
  detail::g_events.clear();
  detail::g_marked.clear();
  detail::g_recording_shapes.store(options.record_shapes);
  detail::g_recording.store(true);
}

namespace {

std::vector<Event> by_start(std::vector<Event> events) {
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.start_ns < b.start_ns;
  });
  return events;
}

}  // namespace

Session::~Session() { stop(); }

void Session::stop() {
  if (stopped_) return;  // and never stops a later session
  std::vector<Event> taken;
  {
    std::lock_guard<std::mutex> lock(detail::g_mutex);
    detail::g_recording.store(false);
    detail::g_recording_shapes.store(false);
    taken.swap(detail::g_events);
    detail::g_marked.clear();
  }
  events_ = by_start(std::move(taken));
  stopped_ = true;
}

std::vector<Event> Session::events() const {
  if (stopped_) return events_;
  std::vector<Event> events;
  {
    std::lock_guard<std::mutex> lock(detail::g_mutex);
    events = detail::g_events;
  }
  return by_start(std::move(events));
}

namespace {

// Per event, the time covered by spans nested directly inside it on its
// own thread. `events` is ordered by start time.
std::vector<int64_t> nested_time(const std::vector<Event>& events) {
  std::vector<int64_t> nested(events.size(), 0);
  std::map<uint64_t, std::vector<size_t>> open;  // per thread, a stack
  for (size_t i = 0; i < events.size(); ++i) {
    std::vector<size_t>& stack = open[events[i].thread];
    while (!stack.empty() && events[stack.back()].end_ns <= events[i].start_ns)
      stack.pop_back();
    if (!stack.empty() && events[i].end_ns <= events[stack.back()].end_ns) {
      nested[stack.back()] += events[i].end_ns - events[i].start_ns;
    }
    stack.push_back(i);
  }
  return nested;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
      out += buffer;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// `ns` in units of `unit_ns` (1000: microseconds), three decimals.
std::string in_units(int64_t ns, double unit_ns) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f", static_cast<double>(ns) / unit_ns);
  return buffer;
}
std::string microseconds(int64_t ns) { return in_units(ns, 1e3); }
std::string milliseconds(int64_t ns) { return in_units(ns, 1e6); }

}  // namespace

std::vector<OpStats> key_averages(const std::vector<Event>& unordered, SortBy sort_by) {
  const std::vector<Event> events = by_start(unordered);
  const std::vector<int64_t> nested = nested_time(events);
  std::map<std::pair<std::string, std::string>, OpStats> rows;
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    OpStats& row = rows[{e.name, e.device.str()}];
    row.name = e.name;
    row.device = e.device;
    row.calls += 1;
    row.total_ns += e.end_ns - e.start_ns;
    row.self_ns += e.end_ns - e.start_ns - nested[i];
  }
  std::vector<OpStats> out;
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  std::stable_sort(out.begin(), out.end(), [sort_by](const OpStats& a, const OpStats& b) {
    switch (sort_by) {
      case SortBy::kSelfTime:
        return a.self_ns > b.self_ns;
      case SortBy::kTotalTime:
        return a.total_ns > b.total_ns;
      case SortBy::kCalls:
        return a.calls > b.calls;
      case SortBy::kName:
        return a.name < b.name;
    }
    return false;
  });
  return out;
}

std::string table(const std::vector<OpStats>& rows, size_t row_limit) {
  int64_t all_self = 0;
  size_t name_width = 4;
  for (const OpStats& row : rows) {
    all_self += row.self_ns;
    name_width = std::max(name_width, row.name.size());
  }
  std::ostringstream out;
  char line[512];
  std::snprintf(line,
                sizeof line,
                "%-*s  %-8s %8s %12s %12s %12s %7s\n",
                static_cast<int>(name_width),
                "Name",
                "Device",
                "Calls",
                "Self ms",
                "Total ms",
                "Avg us",
                "Self %");
  out << line;
  const size_t shown = row_limit == 0 ? rows.size() : std::min(row_limit, rows.size());
  for (size_t i = 0; i < shown; ++i) {
    const OpStats& r = rows[i];
    const double share =
        all_self > 0 ? 100.0 * static_cast<double>(r.self_ns) / all_self : 0.0;
    std::snprintf(line,
                  sizeof line,
                  "%-*s  %-8s %8lld %12s %12s %12s %6.1f%%\n",
                  static_cast<int>(name_width),
                  r.name.c_str(),
                  r.device.str().c_str(),
                  static_cast<long long>(r.calls),
                  milliseconds(r.self_ns).c_str(),
                  milliseconds(r.total_ns).c_str(),
                  microseconds(r.calls > 0 ? r.total_ns / r.calls : 0).c_str(),
                  share);
    out << line;
  }
  return out.str();
}

namespace {

std::string args_json(const std::vector<Arg>& args) {
  std::string out = "{";
  for (const Arg& a : args) {
    if (out.size() > 1) out += ',';
    out += json_string(a.key) + ":" + (a.is_number ? a.value : json_string(a.value));
  }
  return out + "}";
}

// Flow ids are unique in a process; in a merged trace, each rank's own.
uint64_t trace_flow_id(uint64_t flow, int rank) {
  return rank >= 0 ? (static_cast<uint64_t>(rank) << 40) + flow : flow;
}

}  // namespace

std::string chrome_trace_json(const std::vector<Event>& unordered, int rank) {
  const std::vector<Event> events = by_start(unordered);
  const int64_t origin = events.empty() ? 0 : events.front().start_ns;
  // (rank, device) -> process id: rank * 1000 + its devices' order of use.
  std::map<std::pair<int, std::string>, int> pids;
  std::map<int, int> devices_of_rank;
  std::map<std::pair<int, uint64_t>, std::string> threads;
  std::ostringstream body;
  for (const Event& e : events) {
    const int r = e.rank >= 0 ? e.rank : rank;
    const std::string device = e.device.str();
    auto [it, added] = pids.emplace(std::pair{r, device}, 0);
    if (added) it->second = std::max(r, 0) * 1000 + ++devices_of_rank[r];
    const int pid = it->second;
    threads.emplace(
        std::pair{pid, e.thread},
        e.thread_name.empty() ? "thread " + std::to_string(e.thread) : e.thread_name);
    const std::string where = ",\"pid\":" + std::to_string(pid) +
                              ",\"tid\":" + std::to_string(e.thread) +
                              ",\"ts\":" + microseconds(e.start_ns - origin);
    body << ",\n{\"name\":" << json_string(e.name)
         << ",\"cat\":" << json_string(e.category) << ",\"ph\":\"X\"" << where
         << ",\"dur\":" << microseconds(e.end_ns - e.start_ns);
    if (!e.args.empty()) body << ",\"args\":" << args_json(e.args);
    body << "}";
    // Arrows, bound to the enclosing span at its start (Chrome's flow
    // events "s" and "f" with binding point "e").
    if (e.flow_out != 0) {
      body << ",\n{\"name\":\"flow\",\"cat\":\"flow\",\"ph\":\"s\",\"id\":"
           << trace_flow_id(e.flow_out, r) << where << "}";
    }
    for (uint64_t flow : e.flows_in) {
      body << ",\n{\"name\":\"flow\",\"cat\":\"flow\",\"ph\":\"f\",\"bp\":\"e\",\"id\":"
           << trace_flow_id(flow, r) << where << "}";
    }
  }
  std::ostringstream out;
  out << "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"origin_ns\":" << origin
      << "},\"traceEvents\":[\n";
  bool first = true;
  auto meta = [&](const char* what, int pid, uint64_t tid, const std::string& name) {
    out << (first ? "" : ",\n") << "{\"name\":\"" << what
        << "\",\"ph\":\"M\",\"pid\":" << pid << ",\"tid\":" << tid
        << ",\"args\":{\"name\":" << json_string(name) << "}}";
    first = false;
  };
  for (const auto& [key, pid] : pids) {
    const auto& [r, device] = key;
    meta("process_name",
         pid,
         0,
         r >= 0 ? "rank " + std::to_string(r) + " " + device : device);
  }
  for (const auto& [key, name] : threads)
    meta("thread_name", key.first, key.second, name);
  std::string rest = body.str();
  if (first && !rest.empty()) rest.erase(0, 2);  // no metadata: drop the leading ",\n"
  out << rest << "\n]}\n";
  return out.str();
}

void write_chrome_trace(const std::vector<Event>& events,
                        const std::string& path,
                        int rank) {
  const std::string json = chrome_trace_json(events, rank);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  TANDEM_CHECK(file.good(), "profiler: cannot write the trace to '", path, "'");
  file << json;
  file.close();
  TANDEM_CHECK(
      !file.fail(), "profiler: writing the trace to '", path, "' failed (disk full?)");
}

}  // namespace tandem::profiler
