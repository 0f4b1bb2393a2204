#include "trace_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "tandem/core/error.h"

namespace tandem::cli {
namespace {

using nlohmann::json;

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read '" + path + "': " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error("cannot read '" + path + "': " + std::strerror(errno));
  return text.str();
}

// "line L, column C" of the byte at `offset` (1-based, as editors count).
std::string place_of(const std::string& text, size_t offset) {
  offset = std::min(offset, text.size());
  const auto lines = std::count(text.begin(), text.begin() + offset, '\n');
  const size_t line_start = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  const size_t column =
      line_start == std::string::npos ? offset : offset - line_start - 1;
  return "line " + std::to_string(lines + 1) + ", column " + std::to_string(column + 1);
}

std::string arg_text(const std::string& key, const json& value) {
  return key + ": " + (value.is_string() ? value.get<std::string>() : value.dump());
}

}  // namespace

bool looks_like_trace_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  const size_t first = head.find_first_not_of(" \t\r\n");
  return first != std::string::npos && head[first] == '{' &&
         head.find("\"traceEvents\"") != std::string::npos;
}

TraceFile read_trace_file(const std::string& path) {
  const std::string text = read_all(path);
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error("'" + path + "' is not JSON at " +
                place_of(text, e.byte > 0 ? e.byte - 1 : 0));
  }
  if (!root.is_object() || !root.contains("traceEvents") ||
      !root["traceEvents"].is_array())
    throw Error("'" + path + "' is not a Chrome trace: it has no \"traceEvents\" list");
  TraceFile trace;
  trace.path = path;
  // Flow ends by id, bound later to the span starting where they are.
  std::map<int64_t, std::tuple<int64_t, int64_t, double>> starts;
  std::vector<std::pair<int64_t, std::tuple<int64_t, int64_t, double>>> ends;
  size_t index = 0;
  for (const json& e : root["traceEvents"]) {
    ++index;
    const auto where = [&] { return "'" + path + "': event " + std::to_string(index); };
    if (!e.is_object() || !e.contains("ph") || !e["ph"].is_string())
      throw Error(where() + " has no \"ph\" (its kind)");
    const std::string ph = e["ph"].get<std::string>();
    try {
      const int64_t pid = e.value("pid", int64_t{0});
      const int64_t tid = e.value("tid", int64_t{0});
      if (ph == "M") {
        const std::string name = e.value("name", std::string());
        const std::string value =
            e.contains("args") ? e["args"].value("name", std::string()) : std::string();
        if (name == "process_name") trace.processes[pid] = value;
        if (name == "thread_name") trace.threads[{pid, tid}] = value;
      } else if (ph == "X") {
        TraceSpan span;
        span.name = e.value("name", std::string());
        span.category = e.value("cat", std::string());
        span.pid = pid;
        span.tid = tid;
        span.ts_us = e.at("ts").get<double>();
        span.dur_us = e.value("dur", 0.0);
        if (span.dur_us < 0) throw Error(where() + " has a negative \"dur\"");
        if (e.contains("args") && e["args"].is_object()) {
          for (const auto& [key, value] : e["args"].items())
            span.args.push_back(arg_text(key, value));
        }
        trace.spans.push_back(std::move(span));
      } else if (ph == "s" || ph == "f") {
        const auto at = std::tuple{pid, tid, e.at("ts").get<double>()};
        const auto id = e.at("id").get<int64_t>();
        if (ph == "s") {
          starts[id] = at;
        } else {
          ends.emplace_back(id, at);
        }
      }
    } catch (const json::exception& bad) {
      throw Error(where() + " (\"ph\": \"" + ph + "\") is malformed: " + bad.what());
    }
  }
  std::stable_sort(
      trace.spans.begin(), trace.spans.end(), [](const TraceSpan& a, const TraceSpan& b) {
        return a.ts_us < b.ts_us;
      });
  std::map<std::tuple<int64_t, int64_t, double>, size_t> span_at;
  for (size_t i = trace.spans.size(); i-- > 0;) {
    const TraceSpan& s = trace.spans[i];
    span_at[{s.pid, s.tid, s.ts_us}] = i;  // the first of spans starting together
  }
  for (const auto& [id, end] : ends) {
    auto start = starts.find(id);
    if (start == starts.end()) continue;
    auto from = span_at.find(start->second);
    auto to = span_at.find(end);
    if (from != span_at.end() && to != span_at.end())
      trace.flows.emplace_back(from->second, to->second);
  }
  return trace;
}

}  // namespace tandem::cli
