#include "tandem/core/profiler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "tandem/core/error.h"

namespace tandem::profiler {
namespace {

void busy_for(std::chrono::microseconds span) {
  const auto until = std::chrono::steady_clock::now() + span;
  while (std::chrono::steady_clock::now() < until) {
  }
}

TEST(Profiler, RecordsNothingWithoutASession) {
  // Begun with no session alive: not kept, even though it ends in one.
  std::optional<Span> begun_before;
  begun_before.emplace("user", "begun before", Device("cpu:0"));
  Session session;
  begun_before.reset();
  session.stop();
  EXPECT_TRUE(session.events().empty());
}

TEST(Profiler, AStoppedSessionLeavesALaterOneRecording) {
  std::optional<Session> first;
  first.emplace();
  { const Span span("user", "first", Device("cpu:0")); }
  first->stop();
  Session second;
  first.reset();  // its destructor must not end the second's recording
  { const Span span("user", "second", Device("cpu:0")); }
  second.stop();
  ASSERT_EQ(second.events().size(), 1u);
  EXPECT_EQ(second.events()[0].name, "second");
}

TEST(Profiler, KeepsSpansFromEveryThreadUntilStop) {
  Session session;
  { const Span span("user", "main", Device("cpu:0")); }
  std::thread other([] { const Span span("user", "other", Device("cpu:1")); });
  other.join();
  session.stop();
  { const Span span("user", "after stop", Device("cpu:0")); }
  const std::vector<Event> events = session.events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].name, "main");
  EXPECT_EQ(events[1].name, "other");
  EXPECT_EQ(events[1].device, Device("cpu:1"));
  EXPECT_NE(events[0].thread, events[1].thread);
  EXPECT_LE(events[0].start_ns, events[0].end_ns);
}

TEST(Profiler, OneSessionAtATime) {
  Session session;
  EXPECT_THROW(Session second, Error);
}

TEST(Profiler, SelfTimeExcludesNestedSpans) {
  std::vector<Event> events;
  // outer [0, 100), inner [10, 40) and [50, 70) on one thread; a span on
  // another thread inside outer's interval is not nested in it.
  events.push_back({"outer", "user", Device("cpu:0"), 0, 100, 1, ""});
  events.push_back({"inner", "user", Device("cpu:0"), 10, 40, 1, ""});
  events.push_back({"inner", "user", Device("cpu:0"), 50, 70, 1, ""});
  events.push_back({"elsewhere", "user", Device("cpu:1"), 20, 90, 2, ""});
  const std::vector<OpStats> rows = key_averages(events, SortBy::kName);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "elsewhere");
  EXPECT_EQ(rows[0].self_ns, 70);
  EXPECT_EQ(rows[1].name, "inner");
  EXPECT_EQ(rows[1].calls, 2);
  EXPECT_EQ(rows[1].total_ns, 50);
  EXPECT_EQ(rows[1].self_ns, 50);
  EXPECT_EQ(rows[2].name, "outer");
  EXPECT_EQ(rows[2].total_ns, 100);
  EXPECT_EQ(rows[2].self_ns, 50);
  const std::vector<OpStats> by_self = key_averages(events);
  EXPECT_EQ(by_self.front().name, "elsewhere");
  const std::string text = table(by_self);
  EXPECT_NE(text.find("Self ms"), std::string::npos);
  EXPECT_NE(text.find("outer"), std::string::npos);
  EXPECT_EQ(table(by_self, 1).find("outer"), std::string::npos);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST(Profiler, ChromeTraceHasAProcessPerDeviceAndThreadNames) {
  std::vector<Event> events;
  events.push_back({"a \"quoted\" name", "user", Device("cpu:0"), 1000, 3000, 7, "main"});
  events.push_back({"b", "user", Device("cpu:1"), 2000, 2500, 8, "tandem cpu:1"});
  const std::string json = chrome_trace_json(events, 1);
  EXPECT_EQ(count(json, "\"process_name\""), 2u);
  EXPECT_EQ(count(json, "\"rank 1 cpu:0\""), 1u);
  EXPECT_EQ(count(json, "\"rank 1 cpu:1\""), 1u);
  EXPECT_EQ(count(json, "\"tandem cpu:1\""), 1u);
  EXPECT_EQ(count(json, "\"ph\":\"X\""), 2u);
  EXPECT_NE(json.find("\"a \\\"quoted\\\" name\""), std::string::npos);
  // Times in microseconds from the first span; rank 1's processes 1001, 1002.
  EXPECT_NE(json.find("\"pid\":1002,\"tid\":8,\"ts\":1.000,\"dur\":0.500"),
            std::string::npos)
      << json;
}

TEST(Profiler, ArgsAndArrowsReachTheTrace) {
  Session session;
  uint64_t flow = 0;
  int data = 0;
  {
    Span copy("copy", "copy", Device("cpu:1"));
    copy.arg("bytes", int64_t{4096}).arg("from", "cpu:0");
    flow = copy.start_flow();
    mark_data(&data, flow);
  }
  {
    Span use("user", "use", Device("cpu:1"));
    use.end_flow(take_flow(&data));
  }
  EXPECT_EQ(take_flow(&data), 0u) << "a mark is taken once";
  session.stop();
  const std::vector<Event> events = session.events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_NE(flow, 0u);
  EXPECT_EQ(events[0].flow_out, flow);
  EXPECT_EQ(events[1].flows_in, std::vector<uint64_t>{flow});
  const std::string json = chrome_trace_json(events);
  EXPECT_NE(json.find("\"args\":{\"bytes\":4096,\"from\":\"cpu:0\"}"), std::string::npos)
      << json;
  EXPECT_EQ(count(json, "\"ph\":\"s\",\"id\":" + std::to_string(flow)), 1u) << json;
  EXPECT_EQ(count(json, "\"ph\":\"f\",\"bp\":\"e\",\"id\":" + std::to_string(flow)), 1u)
      << json;
}

TEST(Profiler, WithoutASessionSpansTakeNoArgsAndMarksNothing) {
  Span span("user", "idle", Device("cpu:0"));
  EXPECT_FALSE(span.active());
  EXPECT_EQ(span.start_flow(), 0u);
  int data = 0;
  mark_data(&data, 7);
  Session session;
  EXPECT_EQ(take_flow(&data), 0u);
}

TEST(Profiler, RecordKeepsAnIntervalSeenInTwoPlaces) {
  Session session;
  Event event;
  event.name = "allreduce";
  event.category = "comm";
  event.start_ns = now_ns();
  event.end_ns = event.start_ns + 10;
  record(event);
  session.stop();
  record(event);  // after the session: dropped
  ASSERT_EQ(session.events().size(), 1u);
  EXPECT_EQ(session.events()[0].name, "allreduce");
  EXPECT_FALSE(session.events()[0].thread_name.empty()) << "stamped with this thread";
}

TEST(Profiler, RecordShapesIsASessionOption) {
  EXPECT_FALSE(recording_shapes());
  {
    Session session({.record_shapes = true});
    EXPECT_TRUE(recording_shapes());
  }
  EXPECT_FALSE(recording_shapes());
  Session plain;
  EXPECT_FALSE(recording_shapes());
}

TEST(Profiler, MergedEventsOfEachRankHaveTheirOwnProcesses) {
  std::vector<Event> events;
  events.push_back({"a", "user", Device("cpu:0"), 1000, 2000, 1, "main"});
  events.push_back({"b", "user", Device("cpu:0"), 1500, 2500, 1, "main"});
  events[0].rank = 0;
  events[1].rank = 1;
  events[0].flow_out = 5;
  events[1].flow_out = 5;  // each rank's ids are its own
  const std::string json = chrome_trace_json(events);
  EXPECT_EQ(count(json, "\"rank 0 cpu:0\""), 1u) << json;
  EXPECT_EQ(count(json, "\"rank 1 cpu:0\""), 1u) << json;
  EXPECT_NE(json.find("\"pid\":1,"), std::string::npos);
  EXPECT_NE(json.find("\"pid\":1001,"), std::string::npos);
  EXPECT_EQ(count(json, "\"id\":5,"), 1u) << json;
  EXPECT_EQ(count(json, "\"id\":" + std::to_string((uint64_t{1} << 40) + 5)), 1u) << json;
}

TEST(Profiler, AnUnwritableTracePathIsAnErrorNamingIt) {
  try {
    write_chrome_trace({}, "/nonexistent/dir/trace.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/trace.json"),
              std::string::npos);
  }
}

TEST(Profiler, MeasuresWallTime) {
  Session session;
  {
    const Span span("user", "busy", Device("cpu:0"));
    busy_for(std::chrono::microseconds(2000));
  }
  session.stop();
  const std::vector<Event> events = session.events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_GE(events[0].end_ns - events[0].start_ns, 2'000'000);
}

}  // namespace
}  // namespace tandem::profiler
