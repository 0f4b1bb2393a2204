// The profiler: spans of work recorded on every thread while a Session is
// alive, exported as a Chrome trace (one process per device, one track per
// thread; opens in Perfetto and chrome://tracing) and summed into a table
// like PyTorch's key_averages().
//
//   {
//     tandem::profiler::Session session;
//     ... steps ...
//     session.stop();
//     tandem::profiler::write_chrome_trace(session.events(), "trace.json");
//     std::cout << tandem::profiler::table(
//         tandem::profiler::key_averages(session.events()));
//   }
//
// Off (no Session alive), a Span costs one relaxed atomic load, a branch
// and an empty std::optional. See Note [Profiler spans].
#pragma once

#include <atomic>
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tandem/core/device.h"

namespace tandem::profiler {

/// One finished span: what ran, where, and when (nanoseconds on the
/// steady clock, which all processes of one machine share).
struct Event {
  std::string name;
  std::string category;  // "autograd", "parallel", "optim", "user", ...
  Device device{kCPU};
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t thread = 0;      // the recording thread's number in this process
  std::string thread_name;  // its name (executor threads: "tandem cpu:1")
};

namespace detail {
extern std::atomic<bool> g_recording;
int64_t now_ns();
void record(Event event);
}  // namespace detail

/// Whether a Session is recording now.
inline bool recording() noexcept {
  return detail::g_recording.load(std::memory_order_relaxed);
}

/// Records its lifetime as one event when a Session is alive at its
/// construction; otherwise does nothing.
class Span {
 public:
  Span(std::string_view category, std::string_view name, Device device) {
    if (recording()) begin(category, name, device);
  }
  /// The same with a name made only when recording (`name()` returns it).
  template <typename NameFn>
  requires std::invocable<NameFn&> Span(std::string_view category,
                                        NameFn&& name,
                                        Device device) {
    if (recording()) begin(category, name(), device);
  }
  ~Span() {
    if (event_) end();
  }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

 private:
  void begin(std::string_view category, std::string_view name, Device device);
  void end();

  std::optional<Event> event_;  // engaged only while a Session records
};

/// A recording session: spans from every thread are kept from construction
/// until stop() or destruction. One at a time in a process.
class Session {
 public:
  Session();
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Ends the recording (spans still open then are not kept) and takes
  /// its events; a second call does nothing.
  void stop();
  /// The events recorded so far, ordered by start time.
  std::vector<Event> events() const;

 private:
  bool stopped_ = false;
  std::vector<Event> events_;  // once stopped, ordered by start time
};

/// One row of key_averages: the spans of one name on one device.
struct OpStats {
  std::string name;
  Device device{kCPU};
  int64_t calls = 0;
  int64_t total_ns = 0;  // wall time inside the spans
  int64_t self_ns = 0;   // less the time in spans nested in them (same thread)
};

enum class SortBy { kSelfTime, kTotalTime, kCalls, kName };

/// The events grouped by (name, device), sorted by `sort_by` (largest
/// first; names ascending).
std::vector<OpStats> key_averages(const std::vector<Event>& events,
                                  SortBy sort_by = SortBy::kSelfTime);

/// The rows as a text table, at most `row_limit` of them (0: all).
std::string table(const std::vector<OpStats>& rows, size_t row_limit = 0);

/// The events as Chrome trace event JSON: a process per device (named
/// "cpu:1", or "rank 1 cpu:1" with `rank` >= 0), a thread per recording
/// thread, times in microseconds from the earliest event. Throws naming
/// `path` when it cannot be written.
std::string chrome_trace_json(const std::vector<Event>& events, int rank = -1);
void write_chrome_trace(const std::vector<Event>& events,
                        const std::string& path,
                        int rank = -1);

}  // namespace tandem::profiler
