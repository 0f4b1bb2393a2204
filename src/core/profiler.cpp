#include "tandem/core/profiler.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <map>
#include <mutex>
#include <utility>

#include "core/device_services.h"
#include "core/profiler_events.h"
#include "tandem/core/error.h"
#include "tandem/core/warning.h"

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

// Note [Spans on a device's queue]
// On a GPU, an op's span on the host covers only the launch of its
// kernels; the kernels run later, in stream order. So an op span on a
// device whose work is queued also asks the device's backend for two
// marks (time_on_queue): one queued before its kernels and one after (on
// CUDA, events recorded on the device's stream). A mark's time is known
// only once the device has passed it, and asking means waiting, so the
// pairs wait in a list until the session stops; stop() then asks the
// backend for all their times at once (DeviceServices::queue_mark_times)
// and adds one event per pair, of category kQueueCategory, on the
// device's queue track: the span as the device ran it. The backend puts
// the times on the steady clock (the CUDA one by anchoring its events to
// a host reading: backend/cuda/queue_marks.cpp). This is the events
// method of PyTorch's autograd profiler, not CUPTI's per-kernel records
// (the toolkit here has no CUPTI): a span covers all the kernels its op
// queued, with the gaps between them. The marks of a span that ends after
// its session stopped are handed back unread.

namespace tandem::profiler {
namespace detail {

std::atomic<bool> g_recording{false};
std::atomic<bool> g_recording_shapes{false};
// Guards what follows and the start and stop of a session.
std::mutex g_mutex;
std::vector<Event> g_events;
std::map<const void*, uint64_t> g_marked;  // bytes -> the flow that made them

// A span timed on a device's queue, until its session stops.
struct QueuedSpan {
  Event event;  // the host span; its times are replaced by the marks'
  uint64_t start_mark = 0;
  uint64_t end_mark = 0;
};
std::vector<QueuedSpan> g_queued;
// Marks of spans that ended after their session: handed back at the next
// stop, per device type.
std::map<DeviceType, std::vector<uint64_t>> g_unread_marks;

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

std::vector<Event> by_start(std::vector<Event> events) {
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.start_ns < b.start_ns;
  });
  return events;
}

std::string in_units(int64_t ns, double unit_ns) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f", static_cast<double>(ns) / unit_ns);
  return buffer;
}

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
  if (queue_start_ != 0) end_on_queue();
  record(std::move(*event_));
}

void Span::end_on_queue() noexcept {
  uint64_t end_mark = 0;
  try {
    end_mark = ::tandem::detail::device_services(queue_.type()).queue_mark(queue_);
  } catch (const std::exception& e) {
    // A span ends in a destructor: a device fault found here (it will be
    // raised again by the next op) costs this span its queue twin, no more.
    warn(::tandem::detail::str(
        "profiler: a span on ", queue_, "'s queue is lost: ", e.what()));
    return;
  }
  detail::QueuedSpan queued{*event_, queue_start_, end_mark};
  queued.event.device = queue_;  // a copy to the host ran on its source
  std::lock_guard<std::mutex> lock(detail::g_mutex);
  if (recording()) {
    detail::g_queued.push_back(std::move(queued));
  } else {
    std::vector<uint64_t>& unread = detail::g_unread_marks[queue_.type()];
    unread.push_back(queue_start_);
    unread.push_back(end_mark);
  }
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

void Span::begin_on_queue(Device queue) {
  queue_ = queue;
  queue_start_ = ::tandem::detail::device_services(queue.type()).queue_mark(queue);
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

// The spans `queued` as their devices ran them (Note [Spans on a device's
// queue]), and the marks of `unread` handed back. A device fault found
// while waiting loses that device type's spans, with a warning: stop()
// runs in destructors.
std::vector<Event> events_on_queues(std::vector<detail::QueuedSpan> queued,
                                    std::map<DeviceType, std::vector<uint64_t>> unread) {
  std::map<DeviceType, std::vector<size_t>> of_type;
  for (size_t i = 0; i < queued.size(); ++i) {
    of_type[queued[i].event.device.type()].push_back(i);
  }
  for (auto& [type, marks] : unread) of_type[type];  // types with unread marks alone, too
  std::vector<Event> events;
  for (const auto& [type, spans] : of_type) {
    std::vector<uint64_t> marks = std::move(unread[type]);
    const size_t first_span_mark = marks.size();
    for (size_t i : spans) {
      marks.push_back(queued[i].start_mark);
      marks.push_back(queued[i].end_mark);
    }
    std::vector<int64_t> ns(marks.size());
    try {
      ::tandem::detail::device_services(type).queue_mark_times(
          marks.data(), marks.size(), ns.data());
    } catch (const std::exception& e) {
      warn(::tandem::detail::str(
          "profiler: the spans on the ", type, " queues are lost: ", e.what()));
      continue;
    }
    for (size_t k = 0; k < spans.size(); ++k) {
      Event e = std::move(queued[spans[k]].event);
      e.category = kQueueCategory;
      e.start_ns = ns[first_span_mark + 2 * k];
      e.end_ns = ns[first_span_mark + 2 * k + 1];
      e.thread = queue_track(e.device);
      e.thread_name = e.device.str() + " queue";
      e.flow_out = 0;  // the arrows stay with the host spans
      e.flows_in.clear();
      events.push_back(std::move(e));
    }
  }
  return events;
}

}  // namespace

Session::~Session() { stop(); }

void Session::stop() {
  if (stopped_) return;  // and never stops a later session
  std::vector<Event> taken;
  std::vector<detail::QueuedSpan> queued;
  std::map<DeviceType, std::vector<uint64_t>> unread;
  {
    std::lock_guard<std::mutex> lock(detail::g_mutex);
    detail::g_recording.store(false);
    detail::g_recording_shapes.store(false);
    taken.swap(detail::g_events);
    queued.swap(detail::g_queued);
    unread.swap(detail::g_unread_marks);
    detail::g_marked.clear();
  }
  std::vector<Event> on_queues = events_on_queues(std::move(queued), std::move(unread));
  std::move(on_queues.begin(), on_queues.end(), std::back_inserter(taken));
  events_ = detail::by_start(std::move(taken));
  stopped_ = true;
}

std::vector<Event> Session::events() const {
  if (stopped_) return events_;
  std::vector<Event> events;
  {
    std::lock_guard<std::mutex> lock(detail::g_mutex);
    events = detail::g_events;
  }
  return detail::by_start(std::move(events));
}

}  // namespace tandem::profiler
