// The profiler over a DataParallel step: each device's work lies on its own
// track, and the two replicas' spans overlap in time.
#include <algorithm>
#include <string>

#include "parallel/parallel_testing.h"
#include "tandem/core/profiler.h"

namespace {

namespace nn = tandem::nn;
namespace profiler = tandem::profiler;
using tandem::Device;
using tandem::testing::cpu_devices;
using tandem::testing::make_mlp;

std::vector<profiler::Event> named(const std::vector<profiler::Event>& events,
                                   const std::string& name,
                                   Device device) {
  std::vector<profiler::Event> out;
  for (const profiler::Event& e : events) {
    if (e.name == name && e.device == device) out.push_back(e);
  }
  return out;
}

bool overlap(const profiler::Event& a, const profiler::Event& b) {
  return a.start_ns < b.end_ns && b.start_ns < a.end_ns;
}

// Each forward takes milliseconds: long enough that, started together on
// two threads, they overlap even on a loaded machine in some step.
constexpr size_t kSteps = 5;

TEST(ProfilerTrace, ADataParallelStepLiesOnBothDevicesAndOverlaps) {
  nn::Sequential mlp = make_mlp(512, 1024, 10);
  nn::DataParallel dp(mlp, nn::DataParallelOptions().device_ids(cpu_devices(2)));
  const tandem::Tensor x = tandem::randn({512, 512});
  profiler::Session session;
  for (size_t step = 0; step < kSteps; ++step) dp(x).sum().backward();
  session.stop();
  const std::vector<profiler::Event> events = session.events();

  const auto forward0 = named(events, "replica forward", Device("cpu:0"));
  const auto forward1 = named(events, "replica forward", Device("cpu:1"));
  ASSERT_EQ(forward0.size(), kSteps);
  ASSERT_EQ(forward1.size(), kSteps);
  int overlapping = 0;
  for (size_t i = 0; i < kSteps; ++i)
    overlapping += overlap(forward0[i], forward1[i]) ? 1 : 0;
  EXPECT_GE(overlapping, 1) << "the replicas' forwards never ran at the same time";
  EXPECT_NE(forward0[0].thread, forward1[0].thread);

  EXPECT_EQ(named(events, "scatter", Device("cpu:0")).size(), kSteps);
  EXPECT_EQ(named(events, "gather", Device("cpu:0")).size(), kSteps);
  EXPECT_EQ(named(events, "replicate", Device("cpu:0")).size(), kSteps);
  const auto backward_on = [&](Device d) {
    return std::count_if(events.begin(), events.end(), [&](const profiler::Event& e) {
      return e.category == "autograd" && e.device == d;
    });
  };
  EXPECT_GT(backward_on(Device("cpu:0")), 0);
  EXPECT_GT(backward_on(Device("cpu:1")), 0);

  // Each step's hand-off of the batch's second half to cpu:1 (shared
  // memory, not a copy) has an arrow to cpu:1's replica forward.
  const auto copies1 = named(events, "share", Device("cpu:1"));
  ASSERT_GE(copies1.size(), kSteps);
  int arrows = 0;
  for (const profiler::Event& forward : forward1) {
    for (uint64_t flow : forward.flows_in) {
      arrows +=
          std::count_if(copies1.begin(), copies1.end(), [&](const profiler::Event& c) {
            return c.flow_out == flow && c.end_ns <= forward.start_ns;
          });
    }
  }
  EXPECT_EQ(arrows, static_cast<int>(kSteps));
  EXPECT_EQ(copies1[0].args.size(), 3u);

  const std::string json = profiler::chrome_trace_json(events);
  EXPECT_NE(json.find("\"name\":\"cpu:0\""), std::string::npos);
  EXPECT_NE(json.find("\"name\":\"cpu:1\""), std::string::npos);
  const std::string text = profiler::table(profiler::key_averages(events));
  EXPECT_NE(text.find("replica forward"), std::string::npos);
  EXPECT_NE(text.find("LinearBackward"), std::string::npos) << text;
}

}  // namespace
