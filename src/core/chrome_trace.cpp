// chrome_trace_json: the profiler's events as Chrome trace event JSON.
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "core/profiler_events.h"
#include "tandem/core/error.h"
#include "tandem/core/profiler.h"

namespace tandem::profiler {
namespace {

using detail::microseconds;

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
  const std::vector<Event> events = detail::by_start(unordered);
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
