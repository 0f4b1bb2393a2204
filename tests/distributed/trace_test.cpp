// One profile for a whole job (distributed/trace.h): clock offsets, and a
// DDP run's events of every rank gathered on rank 0 with their collectives'
// spans (bucket allreduces with bytes, each with an arrow from its launch)
// and the waits for them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>

#include "distributed_testing.h"
#include "tandem/tandem.h"

namespace tandem::distributed {
namespace {

using testing::world;

TEST(Trace, ClockOffsetsAreRankZerosOwnAndSmallOnOneMachine) {
  auto pg = world();
  const std::vector<int64_t> offsets = clock_offsets(*pg);
  ASSERT_EQ(offsets.size(), static_cast<size_t>(pg->size()));
  EXPECT_EQ(offsets[0], 0);
  // One machine: every process reads the same CLOCK_MONOTONIC, so only the
  // barrier's exit skew (microseconds; more on a loaded machine) is left.
  for (int64_t offset : offsets) EXPECT_LT(std::llabs(offset), 50'000'000) << offset;
}

TEST(Trace, ADdpStepOfEveryRankLandsOnRankZeroWithBucketSpans) {
  auto pg = world();
  manual_seed(3);
  nn::Sequential model(nn::Linear(16, 64), nn::ReLU(), nn::Linear(64, 4));
  nn::DistributedDataParallel ddp(model);
  profiler::Session session;
  for (int step = 0; step < 2; ++step) {
    ddp->forward(randn({8, 16})).sum().backward();
  }
  session.stop();
  const std::vector<profiler::Event> mine = session.events();
  const std::vector<profiler::Event> all = gather_trace(*pg, mine);
  if (pg->rank() != 0) {
    EXPECT_TRUE(all.empty());
    return;
  }
  std::set<int> ranks;
  for (const profiler::Event& e : all) ranks.insert(e.rank);
  EXPECT_EQ(ranks.size(), static_cast<size_t>(pg->size()));
  EXPECT_EQ(*ranks.begin(), 0);

  for (int r = 0; r < pg->size(); ++r) {
    int allreduces = 0;
    int waits = 0;
    for (const profiler::Event& e : all) {
      if (e.rank != r) continue;
      if (e.category == "comm" && e.name.rfind("allreduce bucket 0 of ", 0) == 0) {
        ++allreduces;
        EXPECT_LE(e.start_ns, e.end_ns);
        ASSERT_FALSE(e.args.empty());
        EXPECT_EQ(e.args[0].key, "bytes");
        EXPECT_GT(std::stoll(e.args[0].value), 0);
        EXPECT_EQ(e.thread_name, "tandem comm");
        // The arrow from the bucket's launch on the backward's thread.
        ASSERT_EQ(e.flows_in.size(), 1u) << "rank " << r;
        EXPECT_TRUE(std::any_of(all.begin(),
                                all.end(),
                                [&](const profiler::Event& l) {
                                  return l.rank == r && l.name == "DDP launch bucket" &&
                                         l.flow_out == e.flows_in[0];
                                }))
            << "rank " << r;
      }
      if (e.name == "DDP wait bucket") ++waits;
    }
    EXPECT_EQ(allreduces, 2) << "rank " << r;  // one a step
    EXPECT_GE(waits, 2) << "rank " << r;
  }
  // In the JSON, each rank's devices are processes of their own.
  const std::string json = profiler::chrome_trace_json(all);
  EXPECT_NE(json.find("\"name\":\"rank 0 cpu:0\""), std::string::npos);
  if (pg->size() > 1) {
    EXPECT_NE(json.find("\"name\":\"rank 1 cpu:0\""), std::string::npos);
    EXPECT_NE(json.find("\"pid\":1001"), std::string::npos);
  }
}

TEST(Trace, NoEventsGatherToNothing) {
  auto pg = world();
  const std::vector<profiler::Event> all = gather_trace(*pg, {});
  EXPECT_TRUE(all.empty());
}

}  // namespace
}  // namespace tandem::distributed
