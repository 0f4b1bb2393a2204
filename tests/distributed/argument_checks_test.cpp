// Wrong arguments are rejected on the calling thread with a clear
// tandem::Error, before anything is sent and without taking a sequence
// number, so the group stays usable. Every rank makes the same calls.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "distributed/distributed_testing.h"
#include "tandem/distributed/process_group.h"

namespace tandem::distributed {
namespace {

using testing::error_of;
using testing::world;

TEST(ArgumentChecks, NonContiguousTensor) {
  auto pg = world();
  auto x = tandem::zeros({3, 4}, kFloat32).t();
  EXPECT_EQ(
      error_of([&] { pg->allreduce(x); }),
      "allreduce: expected a contiguous tensor, got shape [4, 3] with strides [1, 4] "
      "(call .contiguous() first)");
}

TEST(ArgumentChecks, UnsupportedDtypes) {
  auto pg = world();
  EXPECT_EQ(error_of([&] { pg->allreduce(tandem::zeros({2}, kUInt8)); }),
            "allreduce: expected tensor of dtype float32, float64 or int64, got uint8");
  EXPECT_EQ(error_of([&] { pg->broadcast(tandem::zeros({2}, kBool)); }),
            "broadcast: expected tensor of dtype float32, float64 or int64, got bool");
  EXPECT_EQ(
      error_of([&] {
        pg->allreduce(tandem::zeros({2}, kInt64),
                      AllreduceOptions().reduce_op(ReduceOp::AVG));
      }),
      "allreduce: ReduceOp::AVG needs a floating-point tensor, got int64 (use SUM and "
      "divide)");
}

TEST(ArgumentChecks, UndefinedTensor) {
  auto pg = world();
  EXPECT_EQ(error_of([&] { pg->allreduce(Tensor()); }),
            "allreduce: tensor is an undefined tensor");
}

TEST(ArgumentChecks, BroadcastRootOutOfRange) {
  auto pg = world();
  auto x = tandem::zeros({2}, kFloat32);
  const std::string size = std::to_string(pg->size());
  EXPECT_EQ(
      error_of([&] { pg->broadcast(x, BroadcastOptions().root_rank(pg->size())); }),
      "broadcast: root_rank " + size + " is out of range for a group of size " + size);
  EXPECT_EQ(error_of([&] { pg->broadcast(x, BroadcastOptions().root_rank(-1)); }),
            "broadcast: root_rank -1 is out of range for a group of size " + size);
}

TEST(ArgumentChecks, AllgatherOutputs) {
  auto pg = world();
  const int w = pg->size();
  auto input = tandem::zeros({4}, kFloat32);
  std::vector<Tensor> too_many(static_cast<size_t>(w + 1), tandem::zeros({4}, kFloat32));
  EXPECT_EQ(error_of([&] { pg->allgather(too_many, input); }),
            "allgather: expected " + std::to_string(w) +
                " output tensors (one per rank), got " + std::to_string(w + 1));
  std::vector<Tensor> outputs;
  for (int k = 0; k < w; ++k) outputs.push_back(tandem::zeros({4}, kFloat32));
  outputs.back() = tandem::zeros({5}, kFloat32);
  EXPECT_EQ(error_of([&] { pg->allgather(outputs, input); }),
            "allgather: outputs[" + std::to_string(w - 1) +
                "] has shape [5] and dtype float32, expected input's shape [4] and dtype "
                "float32");
  outputs.back() = tandem::zeros({4}, kFloat64);
  EXPECT_EQ(error_of([&] { pg->allgather(outputs, input); }),
            "allgather: outputs[" + std::to_string(w - 1) +
                "] has shape [4] and dtype float64, expected input's shape [4] and dtype "
                "float32");
}

TEST(ArgumentChecks, AllgatherIntoTensorSizes) {
  auto pg = world();
  const int w = pg->size();
  auto input = tandem::zeros({4}, kFloat32);
  EXPECT_EQ(error_of([&] {
              pg->allgather_into_tensor(tandem::zeros({4 * w + 1}, kFloat32), input);
            }),
            "allgather_into_tensor: output has " + std::to_string(4 * w + 1) +
                " elements, expected size * input.numel() = " + std::to_string(w) +
                " * 4 = " + std::to_string(4 * w));
  EXPECT_EQ(
      error_of([&] { pg->allgather_into_tensor(tandem::zeros({4 * w}, kInt64), input); }),
      "allgather_into_tensor: output has dtype int64 but input has dtype float32");
  if (w > 1) {
    auto out = tandem::zeros({4 * w}, kFloat32);
    const int64_t other = pg->rank() == 0 ? 4 : 0;  // a slice that is not this rank's
    EXPECT_EQ(
        error_of([&] { pg->allgather_into_tensor(out, out.narrow(0, other, 4)); }),
        "allgather_into_tensor: input overlaps output other than as output's slice for "
        "this rank");
  }
}

TEST(ArgumentChecks, ReduceScatterSizes) {
  auto pg = world();
  const int w = pg->size();
  auto output = tandem::zeros({3}, kFloat64);
  EXPECT_EQ(error_of([&] {
              pg->reduce_scatter_tensor(output, tandem::zeros({3 * w + 2}, kFloat64));
            }),
            "reduce_scatter_tensor: input has " + std::to_string(3 * w + 2) +
                " elements, expected size * output.numel() = " + std::to_string(w) +
                " * 3 = " + std::to_string(3 * w));
  auto flat = tandem::zeros({3 * w}, kFloat64);
  EXPECT_EQ(error_of([&] { pg->reduce_scatter_tensor(flat.narrow(0, 0, 3), flat); }),
            "reduce_scatter_tensor: output overlaps input; use separate tensors");
  std::vector<Tensor> inputs(static_cast<size_t>(w), tandem::zeros({3}, kFloat32));
  EXPECT_EQ(error_of([&] { pg->reduce_scatter(output, inputs); }),
            "reduce_scatter: inputs[0] has shape [3] and dtype float32, expected "
            "output's shape "
            "[3] and dtype float64");
}

TEST(ArgumentChecks, Timeouts) {
  auto pg = world();
  auto x = tandem::zeros({2}, kFloat32);
  EXPECT_EQ(error_of([&] {
              pg->allreduce(x, AllreduceOptions().timeout(std::chrono::milliseconds(-5)));
            }),
            "allreduce: the timeout must be positive, got -5 ms");
  EXPECT_EQ(error_of([&] { pg->set_timeout(std::chrono::milliseconds(0)); }),
            "set_timeout: the timeout must be positive, got 0 ms");
}

TEST(ArgumentChecks, RejectedCallsTakeNoSequenceNumberAndTheGroupStaysUsable) {
  auto pg = world();
  const auto before = pg->sequence_number();
  EXPECT_THROW(pg->allreduce(tandem::zeros({2}, kUInt8)), tandem::Error);
  EXPECT_THROW(
      pg->broadcast(tandem::zeros({2}, kFloat32), BroadcastOptions().root_rank(-1)),
      tandem::Error);
  EXPECT_EQ(pg->sequence_number(), before);
  auto x = tandem::ones({3}, kFloat64);
  auto work = pg->allreduce(x);
  EXPECT_EQ(work.sequence_number(), before + 1);
  work.wait();
  testing::expect_values<double>(x, [&](int64_t) { return double(pg->size()); });
}

TEST(ArgumentChecks, UndefinedWorkAndSecondInit) {
  Work work;
  EXPECT_FALSE(work.defined());
  EXPECT_EQ(error_of([&] { work.wait(); }),
            "Work: the handle is undefined (default-constructed)");
  EXPECT_EQ(error_of([] { init_process_group(); }),
            "init_process_group: the default process group is already initialized "
            "(destroy_process_group() ends it)");
}

}  // namespace
}  // namespace tandem::distributed
