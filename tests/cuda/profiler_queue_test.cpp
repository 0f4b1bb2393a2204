// The profiler on the device under test: op spans timed on the GPU's queue
// (Note [Spans on a device's queue] in core/profiler.cpp). Under
// TANDEM_CUDA_TEST_DEVICE=cpu:N the same steps run on a CPU device, where a
// span is the work itself and nothing is queued.
#include <algorithm>

#include "cuda/cuda_testing.h"

namespace tandem {
namespace {

using testing::device_under_test;

class CudaProfilerQueue : public testing::CudaTest {};

std::vector<profiler::Event> of_category(const std::vector<profiler::Event>& events,
                                         std::string_view category) {
  std::vector<profiler::Event> out;
  std::copy_if(events.begin(), events.end(), std::back_inserter(out), [&](const auto& e) {
    return e.category == category;
  });
  return out;
}

TEST_F(CudaProfilerQueue, OpSpansAreTimedOnTheDevicesQueue) {
  const Device device = device_under_test();
  const Tensor a = rand({1024, 1024}, gen).to(device);
  const Tensor b = rand({1024, 1024}, gen).to(device);
  tandem::cuda::synchronize(device.is_cuda() ? device.index() : -1);
  profiler::Session session;
  Tensor c = a;
  for (int i = 0; i < 8; ++i) c = mm(c, b) * 1e-3;
  const double checksum = c.sum().item<double>();  // waits for the device
  session.stop();
  EXPECT_TRUE(std::isfinite(checksum));
  const std::vector<profiler::Event> events = session.events();
  const std::vector<profiler::Event> host = of_category(events, "op");
  const std::vector<profiler::Event> queued =
      of_category(events, profiler::kQueueCategory);
  ASSERT_FALSE(host.empty());
  if (device.is_cpu()) {
    EXPECT_TRUE(queued.empty()) << "a CPU span is the work: nothing to time on a queue";
    return;
  }
  // Every op span on the GPU has its twin on the GPU's queue track.
  EXPECT_EQ(
      queued.size(),
      static_cast<size_t>(std::count_if(
          host.begin(), host.end(), [&](const auto& e) { return e.device == device; })));
  const int64_t session_start = host.front().start_ns;
  const int64_t kAnchorSlack =
      100'000;  // the anchor's host reading is late by this much at most
  for (const profiler::Event& e : queued) {
    EXPECT_EQ(e.device, device);
    EXPECT_EQ(e.thread, profiler::queue_track(device));
    EXPECT_LE(e.start_ns, e.end_ns) << e.name;
    EXPECT_GE(e.start_ns, session_start - kAnchorSlack)
        << e.name << " ran before it was queued";
  }
  // The same 8 products on the queue take longer than their launches on the
  // host: 8 x 2 GFLOP is milliseconds of GPU time, a launch microseconds.
  const std::vector<profiler::OpStats> rows = profiler::key_averages(events);
  const auto mm_row = std::find_if(rows.begin(), rows.end(), [&](const auto& r) {
    return r.name == "mm" && r.device == device;
  });
  ASSERT_NE(mm_row, rows.end());
  EXPECT_EQ(mm_row->calls, 8);
  EXPECT_GT(mm_row->queue_total_ns, 0);
  EXPECT_GT(mm_row->queue_self_ns, mm_row->self_ns / 2) << profiler::table(rows);
  // The products ran one after the other on the one stream.
  std::vector<profiler::Event> products;
  std::copy_if(
      queued.begin(), queued.end(), std::back_inserter(products), [](const auto& e) {
        return e.name == "mm";
      });
  ASSERT_EQ(products.size(), 8u);
  for (size_t i = 1; i < products.size(); ++i) {
    EXPECT_GE(products[i].start_ns, products[i - 1].end_ns - 1'000) << "overlap at " << i;
  }
  EXPECT_NE(profiler::table(rows).find("Queue self ms"), std::string::npos);
}

TEST_F(CudaProfilerQueue, ASpanEndingAfterItsSessionLeavesTheNextOneWhole) {
  const Device device = device_under_test();
  const Tensor a = rand({64, 64}, gen).to(device);
  std::optional<profiler::Session> first;
  first.emplace();
  std::optional<profiler::Span> open;
  open.emplace("op", "open across stop", device);
  open->time_on_queue(device);
  first->stop();
  open.reset();  // its marks are handed back, unread, at the next stop
  profiler::Session second;
  const Tensor b = mm(a, a);
  tandem::cuda::synchronize(device.is_cuda() ? device.index() : -1);
  second.stop();
  const std::vector<profiler::Event> events = second.events();
  EXPECT_TRUE(std::none_of(events.begin(), events.end(), [](const auto& e) {
    return e.name == "open across stop";
  }));
  const size_t expected_queued = device.is_cpu() ? 0u : 1u;
  EXPECT_EQ(of_category(events, profiler::kQueueCategory).size(), expected_queued);
}

}  // namespace
}  // namespace tandem
