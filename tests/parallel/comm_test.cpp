// broadcast_coalesced and reduce_add_coalesced.
#include "parallel/parallel_testing.h"

namespace {

namespace parallel = tandem::parallel;
using tandem::Device;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::cpu_devices;
using tandem::testing::throws_with;

std::vector<Tensor> mixed_tensors() {
  return {tandem::randn({3, 4}),
          tandem::randn({5}, tandem::kFloat64),
          tandem::randn({2, 2}),
          tandem::arange(6.0, tandem::kInt64),
          tandem::randn({4, 3}).t()};  // not contiguous
}

TEST(BroadcastCoalesced, SourceDeviceGetsTheInputsOthersGetCopies) {
  const std::vector<Tensor> tensors = mixed_tensors();
  for (size_t buffer_size : {parallel::kDefaultBufferSize, size_t{16}}) {
    const auto result =
        parallel::broadcast_coalesced(tensors, cpu_devices(3), buffer_size);
    ASSERT_EQ(result.size(), 3u);
    for (size_t i = 0; i < tensors.size(); ++i) {
      EXPECT_TRUE(result[0][i].is_same(tensors[i]));
      for (int j = 1; j < 3; ++j) {
        const Tensor& copy = result[j][i];
        EXPECT_EQ(copy.device(), Device(tandem::kCPU, j));
        EXPECT_EQ(copy.dtype(), tensors[i].dtype());
        EXPECT_TRUE(copy.is_contiguous());
        EXPECT_NE(copy.data_ptr(), tensors[i].data_ptr());
        EXPECT_TRUE(all_close(copy.to("cpu:0"), tensors[i], 0, 0));
      }
    }
  }
}

TEST(BroadcastCoalesced, OnlyTheFirstDeviceSharesTheInputs) {
  const std::vector<Tensor> tensors = {tandem::randn({3})};
  const auto twice =
      parallel::broadcast_coalesced(tensors, {Device("cpu:0"), Device("cpu:0")});
  EXPECT_TRUE(twice[0][0].is_same(tensors[0]));
  EXPECT_NE(twice[1][0].data_ptr(), tensors[0].data_ptr());
  const auto elsewhere =
      parallel::broadcast_coalesced(tensors, {Device("cpu:1"), Device("cpu:0")});
  EXPECT_NE(elsewhere[0][0].data_ptr(), tensors[0].data_ptr());
  EXPECT_NE(elsewhere[1][0].data_ptr(), tensors[0].data_ptr());
  EXPECT_TRUE(all_close(elsewhere[1][0], tensors[0], 0, 0));
}

TEST(BroadcastCoalesced, CopiesHaveTheirOwnVersionCounters) {
  const std::vector<Tensor> tensors = {tandem::randn({4}), tandem::randn({4})};
  auto result = parallel::broadcast_coalesced(tensors, cpu_devices(2));
  const uint32_t before = result[1][1]._version();
  result[1][0].add_(1.0);
  EXPECT_EQ(result[1][1]._version(), before);
  EXPECT_TRUE(all_close(result[1][1].to("cpu:0"), tensors[1], 0, 0));
}

TEST(BroadcastCoalesced, Errors) {
  EXPECT_TRUE(throws_with(
      [] {
        parallel::broadcast_coalesced({tandem::ones({2}), tandem::ones({2}).to("cpu:1")},
                                      cpu_devices(2));
      },
      "all tensors must be on one device, but tensor 0 is on cpu:0 and tensor 1 on "
      "cpu:1"));
  EXPECT_TRUE(throws_with([] { parallel::broadcast_coalesced({tandem::ones({2})}, {}); },
                          "expected at least one device"));
}

TEST(ReduceAddCoalesced, SumsLeftToRightInReplicaOrder) {
  std::vector<std::vector<Tensor>> inputs;
  for (int j = 0; j < 4; ++j) {
    std::vector<Tensor> grads;
    for (const Tensor& t : mixed_tensors()) {
      grads.push_back(t.is_floating_point() ? t.mul(1e3 * (j + 1)) : t);
    }
    for (Tensor& g : grads) g = g.to(Device(tandem::kCPU, j));
    inputs.push_back(grads);
  }
  for (size_t buffer_size : {parallel::kDefaultBufferSize, size_t{8}}) {
    for (const char* destination : {"cpu:0", "cpu:2", "cpu:6"}) {
      const auto sums = parallel::reduce_add_coalesced(inputs, destination, buffer_size);
      ASSERT_EQ(sums.size(), inputs[0].size());
      for (size_t i = 0; i < sums.size(); ++i) {
        Tensor want = inputs[0][i].to("cpu:0");
        for (int j = 1; j < 4; ++j) want = want + inputs[j][i].to("cpu:0");
        EXPECT_EQ(sums[i].device(), Device(destination));
        EXPECT_TRUE(all_close(sums[i].to("cpu:0"), want, 0, 0)) << i;
      }
    }
  }
}

TEST(ReduceAddCoalesced, Errors) {
  EXPECT_TRUE(throws_with(
      [] {
        parallel::reduce_add_coalesced({{tandem::ones({2})}, {tandem::ones({3})}},
                                       "cpu:0");
      },
      "input 1 has invalid size: got [3]"));
  EXPECT_TRUE(throws_with(
      [] {
        parallel::reduce_add_coalesced({{tandem::ones({2})}, {}}, "cpu:0");
      },
      "input 1 has 0 tensors, but input 0 has 1"));
}

}  // namespace
