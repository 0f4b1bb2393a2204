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
#include <utility>
#include <vector>

#include "tandem/core/device.h"

namespace tandem::profiler {

/// A value shown with an event (the trace's "args"): a number or a text.
struct Arg {
  std::string key;
  std::string value;
  bool is_number = false;
};

/// One finished span: what ran, where, and when (nanoseconds on the
/// steady clock, which all processes of one machine share).
struct Event {
  std::string name;
  std::string category;  // "op", "autograd", "parallel", "copy", "comm", ...
  Device device{kCPU};
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  // The recording thread's number in this process, or, for the spans on a
  // device's queue (category kQueueCategory), queue_track(device).
  uint64_t thread = 0;
  std::string thread_name;  // its name (executor threads: "tandem cpu:1")
  std::vector<Arg> args;
  uint64_t flow_out = 0;           // an arrow starting here (0: none)
  std::vector<uint64_t> flows_in;  // arrows ending here
  int rank = -1;                   // the process's rank, once merged
};

/// The category of the spans timed on a device's queue (Span::time_on_queue):
/// when the device itself ran the work a host span queued there.
inline constexpr std::string_view kQueueCategory = "kernel";

/// The track number of `device`'s queue (its GPU stream) in a trace: above
/// every thread's.
inline uint64_t queue_track(Device device) {
  return (uint64_t{1} << 32) + static_cast<uint64_t>(device.index());
}

/// What a Session records besides the spans' names and times.
struct SessionOptions {
  /// Each op span's input shapes and dtypes (as PyTorch's record_shapes).
  bool record_shapes = false;
};

namespace detail {
extern std::atomic<bool> g_recording;
extern std::atomic<bool> g_recording_shapes;
}  // namespace detail

/// Whether a Session is recording now.
inline bool recording() noexcept {
  return detail::g_recording.load(std::memory_order_relaxed);
}
/// Whether it also records op input shapes.
inline bool recording_shapes() noexcept {
  return detail::g_recording_shapes.load(std::memory_order_relaxed);
}

/// The steady clock in nanoseconds, as events are stamped.
int64_t now_ns();

/// Keeps `event`, stamped with this thread, if a Session records: for work
/// seen begin and end at different places (a collective started by one
/// call and completed by another), timed with now_ns().
void record(Event event);

/// A fresh arrow id (never 0).
uint64_t new_flow();
/// Says that the bytes at `data` were made by the span that starts `flow`;
/// the first span that reads them takes it (take_flow), so an arrow goes
/// from a copy to where its result is used.
void mark_data(const void* data, uint64_t flow);
/// The arrow into the bytes at `data`, forgotten once taken (0: none).
uint64_t take_flow(const void* data);

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
  Span(Span&& other) noexcept
      : event_(std::exchange(other.event_, std::nullopt)),
        queue_(other.queue_),
        queue_start_(std::exchange(other.queue_start_, 0)) {}
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  Span& operator=(Span&&) = delete;

  /// Whether this span is being recorded; the calls below do nothing
  /// when it is not.
  bool active() const noexcept { return event_.has_value(); }
  Span& arg(std::string_view key, int64_t value);
  Span& arg(std::string_view key, std::string_view text);
  /// Starts an arrow here and returns its id (0 when inactive).
  uint64_t start_flow();
  /// Ends the arrow `flow` here (0: none).
  Span& end_flow(uint64_t flow);
  /// Also times the work this span queues on `queue`, a device whose work
  /// runs behind the host (a GPU's stream): once the session stops, its
  /// events hold a copy of this span, of category kQueueCategory on the
  /// queue's track, from when the device reached the span's start to when
  /// it reached its end. Nothing on a CPU device. Call it first, before the
  /// span queues anything.
  Span& time_on_queue(Device queue) {
    if (event_ && queue_start_ == 0) begin_on_queue(queue);
    return *this;
  }

 private:
  void begin(std::string_view category, std::string_view name, Device device);
  void end();
  void begin_on_queue(Device queue);
  void end_on_queue() noexcept;

  std::optional<Event> event_;  // engaged only while a Session records
  Device queue_{kCPU};
  uint64_t queue_start_ = 0;  // the queue's mark at the start (0: untimed)
};

/// A recording session: spans from every thread are kept from construction
/// until stop() or destruction. One at a time in a process.
class Session {
 public:
  explicit Session(SessionOptions options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Ends the recording (spans still open then are not kept) and takes
  /// its events, waiting for the devices to reach the ends of the spans
  /// timed on their queues; a second call does nothing.
  void stop();
  /// The events recorded so far, ordered by start time; those on devices'
  /// queues once the session has stopped.
  std::vector<Event> events() const;

 private:
  bool stopped_ = false;
  std::vector<Event> events_;  // once stopped, ordered by start time
};

/// One row of key_averages: the spans of one name on one device (and,
/// grouped by shapes, of one list of input shapes).
struct OpStats {
  std::string name;
  Device device{kCPU};
  std::string input_shapes;  // grouped by shapes: the spans' "shapes"
  int64_t calls = 0;
  int64_t total_ns = 0;  // wall time inside the spans
  int64_t self_ns = 0;   // less the time in spans nested in them (same thread)
  // The same on the device's queue, for spans timed there (a GPU's time).
  int64_t queue_total_ns = 0;
  int64_t queue_self_ns = 0;
};

enum class SortBy { kSelfTime, kTotalTime, kCalls, kName, kQueueSelfTime };
enum class GroupBy {
  kName,           // (name, device)
  kNameAndShapes,  // (name, device, input shapes), as record_shapes gives them
};

/// The events grouped by `group_by`, sorted by `sort_by` (largest first;
/// names ascending). A span on a device's queue adds its time to the
/// queue columns of its host span's row, not a row of its own.
std::vector<OpStats> key_averages(const std::vector<Event>& events,
                                  SortBy sort_by = SortBy::kSelfTime,
                                  GroupBy group_by = GroupBy::kName);

/// The rows as a text table, at most `row_limit` of them (0: all); with
/// columns for the queue times when a row has some, and for the input
/// shapes when a row has them.
std::string table(const std::vector<OpStats>& rows, size_t row_limit = 0);

/// The events as Chrome trace event JSON: a process per device of each
/// rank (named "cpu:1", or "rank 1 cpu:1" for events of rank 1; `rank`
/// >= 0 is the rank of the events that have none), a thread per recording
/// thread, an arrow per flow, times in microseconds from the earliest
/// event. Throws naming `path` when it cannot be written.
std::string chrome_trace_json(const std::vector<Event>& events, int rank = -1);
void write_chrome_trace(const std::vector<Event>& events,
                        const std::string& path,
                        int rank = -1);

}  // namespace tandem::profiler
