// Tensor::pin_memory and is_pinned where pinning is impossible: without the
// CUDA backend or without a GPU, pin_memory() says what was asked and why
// it cannot be done, nothing is pinned and cuda::host_memory_stats() is all
// zeros. (With a GPU, tests/cuda/pinned_memory_test.cpp covers pinning
// itself.)
#include "support/tensor_testing.h"
#include "tandem/core/cuda.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::throws_with;

TEST(PinMemory, OrdinaryTensorsAreNotPinned) {
  const Tensor x = arange(0, 12, kFloat32).view({3, 4});
  EXPECT_FALSE(x.is_pinned());
  EXPECT_FALSE(x.t().is_pinned());
  EXPECT_FALSE(x.to("cpu:1").is_pinned());
  EXPECT_FALSE(zeros({0}).is_pinned());
  EXPECT_TRUE(throws_with([] { (void)Tensor().is_pinned(); }, "undefined"));
}

TEST(PinMemory, WithoutAGpuPinningThrowsSayingWhy) {
  if (cuda::is_available())
    GTEST_SKIP() << "a CUDA device is present: pinning works here";
  const Tensor x = arange(0, 12, kFloat32).view({3, 4});
  // What was asked ...
  EXPECT_TRUE(throws_with([&] { (void)x.pin_memory(); },
                          "pin_memory: cannot page-lock host memory"));
  // ... and why it cannot be done.
  const std::string why =
      cuda::is_built() ? "no CUDA device is available" : "tandem was built without CUDA";
  EXPECT_TRUE(throws_with([&] { (void)x.pin_memory(); }, why));
  EXPECT_TRUE(throws_with([] { (void)zeros({0}).pin_memory(); }, why));
  EXPECT_FALSE(x.is_pinned());  // unchanged
}

TEST(PinMemory, WithoutAGpuHostMemoryStatsAreZero) {
  if (cuda::is_available())
    GTEST_SKIP() << "a CUDA device is present: tests/cuda/pinned_memory_test.cpp counts";
  // A failed attempt pins nothing, and counts for nothing.
  const Tensor x = arange(0, 12, kFloat32);
  EXPECT_TRUE(throws_with([&] { (void)x.pin_memory(); }, "pin_memory"));
  const cuda::HostMemoryStats s = cuda::host_memory_stats();
  EXPECT_EQ(s.allocations, 0);
  EXPECT_EQ(s.cache_hits, 0);
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.bytes_cached, 0);
  EXPECT_EQ(s.bytes_allocated, 0);
}

TEST(PinMemory, NonBlockingCopiesBetweenCpuDevicesAreOrdinaryCopies) {
  const Tensor x = arange(0, 6, kFloat64);
  const Tensor y = x.to(Device("cpu:1"), /*non_blocking=*/true);
  EXPECT_EQ(y.device(), Device("cpu:1"));
  EXPECT_TRUE(testing::all_close(y, x, 0, 0));
  Tensor z = zeros({6}, kFloat32);
  z.copy_(x, /*non_blocking=*/true);
  EXPECT_TRUE(testing::all_close(z, x, 0, 0));
}

}  // namespace
}  // namespace tandem
