// key_averages and table over spans timed on a device's queue and over
// recorded shapes (Note [Spans on a device's queue] in core/profiler.cpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tandem/core/profiler.h"

namespace tandem::profiler {
namespace {

Event span(std::string name, Device device, int64_t start, int64_t end, uint64_t thread) {
  Event e;
  e.name = std::move(name);
  e.category = "op";
  e.device = device;
  e.start_ns = start;
  e.end_ns = end;
  e.thread = thread;
  return e;
}

// The span `host` as its device ran it, on the device's queue track.
Event on_queue(Event host, int64_t start, int64_t end) {
  host.category = kQueueCategory;
  host.start_ns = start;
  host.end_ns = end;
  host.thread = queue_track(host.device);
  return host;
}

TEST(ProfilerTable, QueueTimeJoinsItsHostSpansRow) {
  const Device gpu("cuda:0");
  // linear launches mm and add in 10 us of host time; the GPU runs them
  // later and for longer: mm 300 us, add 40 us, linear 400 us (with gaps).
  const Event linear = span("linear", gpu, 0, 10'000, 1);
  const Event mm = span("mm", gpu, 1'000, 4'000, 1);
  const Event add = span("add", gpu, 5'000, 7'000, 1);
  const std::vector<Event> events = {linear,
                                     mm,
                                     add,
                                     on_queue(linear, 20'000, 420'000),
                                     on_queue(mm, 30'000, 330'000),
                                     on_queue(add, 350'000, 390'000)};
  const std::vector<OpStats> rows = key_averages(events, SortBy::kQueueSelfTime);
  ASSERT_EQ(rows.size(), 3u) << "a queue span is no row of its own";
  EXPECT_EQ(rows[0].name, "mm");
  EXPECT_EQ(rows[0].calls, 1) << "the queue span is not a second call";
  EXPECT_EQ(rows[0].total_ns, 3'000);
  EXPECT_EQ(rows[0].queue_total_ns, 300'000);
  EXPECT_EQ(rows[0].queue_self_ns, 300'000);
  EXPECT_EQ(rows[1].name, "linear");
  EXPECT_EQ(rows[1].queue_total_ns, 400'000);
  EXPECT_EQ(rows[1].queue_self_ns, 60'000) << "less mm and add, nested on the queue";
  EXPECT_EQ(rows[1].self_ns, 5'000) << "host self time as before";
  EXPECT_EQ(rows[2].name, "add");

  const std::string text = table(rows);
  EXPECT_NE(text.find("Queue self ms"), std::string::npos) << text;
  EXPECT_NE(text.find("0.300"), std::string::npos) << "mm's 300 us on the queue\n"
                                                   << text;
}

TEST(ProfilerTable, NoQueueOrShapeColumnsWithoutThem) {
  const std::vector<Event> events = {span("mm", Device("cpu:0"), 0, 100, 1)};
  const std::string text = table(key_averages(events));
  EXPECT_EQ(text.find("Queue"), std::string::npos) << text;
  EXPECT_EQ(text.find("Input shapes"), std::string::npos) << text;
}

TEST(ProfilerTable, GroupsByInputShapesWhenAsked) {
  std::vector<Event> events;
  for (const char* shapes :
       {"[[2, 3], [3, 4]]", "[[2, 3], [3, 4]]", "[[8, 3], [3, 4]]"}) {
    Event e = span("mm", Device("cpu:0"), 0, 100, 1);
    e.args.push_back({"shapes", shapes, false});
    events.push_back(e);
  }
  EXPECT_EQ(key_averages(events).size(), 1u) << "by name alone";
  const std::vector<OpStats> rows =
      key_averages(events, SortBy::kCalls, GroupBy::kNameAndShapes);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].input_shapes, "[[2, 3], [3, 4]]");
  EXPECT_EQ(rows[0].calls, 2);
  EXPECT_EQ(rows[1].input_shapes, "[[8, 3], [3, 4]]");
  const std::string text = table(rows);
  EXPECT_NE(text.find("Input shapes"), std::string::npos) << text;
  EXPECT_NE(text.find("[[8, 3], [3, 4]]"), std::string::npos) << text;
}

TEST(ProfilerTable, NestingIsPerRank) {
  // Two ranks' thread 1 overlap in a merged trace: neither nests in the other.
  Event a = span("a", Device("cpu:0"), 0, 100, 1);
  Event b = span("b", Device("cpu:0"), 10, 50, 1);
  a.rank = 0;
  b.rank = 1;
  const std::vector<OpStats> rows = key_averages({a, b}, SortBy::kName);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].self_ns, 100);
  EXPECT_EQ(rows[1].self_ns, 40);
}

TEST(ProfilerTable, ACpuSpanHasNoQueueToTime) {
  Session session;
  {
    Span s("op", "on the host", Device("cpu:1"));
    s.time_on_queue(Device("cpu:1"));
  }
  session.stop();
  const std::vector<Event> events = session.events();
  ASSERT_EQ(events.size(), 1u) << "the host span alone: a CPU span is the work";
  EXPECT_EQ(events[0].category, "op");
}

TEST(ProfilerTable, QueueSpansAppearInTheTraceOnTheirTrack) {
  const Device gpu("cuda:0");
  Event host = span("mm", gpu, 0, 1'000, 3);
  host.thread_name = "main";
  Event queued = on_queue(host, 2'000, 9'000);
  queued.thread_name = "cuda:0 queue";
  const std::string json = chrome_trace_json({host, queued});
  EXPECT_NE(json.find("\"cat\":\"kernel\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"cuda:0 queue\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"tid\":" + std::to_string(queue_track(gpu))), std::string::npos)
      << json;
}

}  // namespace
}  // namespace tandem::profiler
