// A Chrome trace (what `tandem train --profile` writes, or any tool that
// writes the trace event format's complete events) read back for drawing:
// its processes and threads, its spans ("X" events) and the arrows between
// them ("s"/"f" flow events, bound to the span that starts where they are).
//
//   const TraceFile trace = read_trace_file("run.json");
//   for (const TraceSpan& s : trace.spans) ... s.ts_us, s.dur_us ...
//
// A file that cannot be read, is not JSON (the message names the line and
// column) or has no "traceEvents" list is an error naming the file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tandem::cli {

struct TraceSpan {
  std::string name;
  std::string category;
  int64_t pid = 0;
  int64_t tid = 0;
  double ts_us = 0;
  double dur_us = 0;
  /// "key: value", as the trace's args hold them.
  std::vector<std::string> args;
};

struct TraceFile {
  std::string path;
  std::map<int64_t, std::string> processes;  // pid -> name ("cpu:1", "rank 1 cpu:0")
  std::map<std::pair<int64_t, int64_t>, std::string> threads;  // (pid, tid) -> name
  std::vector<TraceSpan> spans;                                // by start time
  std::vector<std::pair<size_t, size_t>> flows;  // (from, to) indices into spans
};

/// Whether the file at `path` starts like a Chrome trace (a JSON object
/// with "traceEvents" near its start) rather than JSON Lines.
bool looks_like_trace_file(const std::string& path);

TraceFile read_trace_file(const std::string& path);

}  // namespace tandem::cli
