// tandem::c10d, LibTorch's spelling of the process group: the collectives
// through it give tandem's results, and a call with other than one tensor,
// or with tensors the collective cannot take, is refused on the calling
// thread, naming the call, and leaves the group usable. Every rank makes
// the same calls.
#include "tandem/distributed/c10d.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "distributed/distributed_testing.h"
#include "tandem/ops/factory.h"

namespace tandem::c10d {
namespace {

using distributed::testing::error_of;
using distributed::testing::expect_values;

const std::string kOneTensor =
    " (tandem's c10d, like LibTorch's MPI backend, takes one per call), got ";

std::shared_ptr<ProcessGroupMPI> group() {
  return ProcessGroupMPI::createProcessGroupMPI();
}

TEST(C10d, CreateProcessGroupMPIIsTheWorldGroup) {
  auto pg = group();
  EXPECT_EQ(pg->getRank(), distributed::get_rank());
  EXPECT_EQ(pg->getSize(), distributed::get_world_size());
  EXPECT_EQ(pg->getBackendName(), "mpi");
  std::vector<int> every_rank;
  for (int r = 0; r < pg->getSize(); ++r) every_rank.push_back(r);
  EXPECT_EQ(ProcessGroupMPI::createProcessGroupMPI(every_rank)->getSize(), pg->getSize());
  EXPECT_EQ(error_of([&] { ProcessGroupMPI::createProcessGroupMPI({pg->getSize()}); }),
            "ProcessGroupMPI::createProcessGroupMPI: subgroups are not supported; ranks "
            "must be empty or list every rank 0.." +
                std::to_string(pg->getSize() - 1) + " in order");
}

TEST(C10d, AllreduceReducesTheOneTensorInPlace) {
  auto pg = group();
  const int n = pg->getSize();
  const double rank = pg->getRank();
  std::vector<Tensor> tensors = {tandem::full({3}, rank + 1.0, kFloat64)};
  auto work = pg->allreduce(tensors);
  EXPECT_TRUE(work->wait());
  EXPECT_TRUE(work->isCompleted());
  EXPECT_TRUE(work->isSuccess());
  EXPECT_EQ(work->exception(), nullptr);
  EXPECT_TRUE(work->result()[0].is_same(tensors[0]));
  expect_values<double>(tensors[0], [&](int64_t) { return n * (n + 1) / 2.0; });

  tensors[0].fill_(rank);
  pg->allreduce(tensors, {.reduceOp = ReduceOp::AVG})->wait(std::chrono::seconds(10));
  expect_values<double>(tensors[0], [&](int64_t) { return (n - 1) / 2.0; });
  tensors[0].fill_(rank);
  pg->allreduce(tensors, AllreduceOptions{.reduceOp = ReduceOp::MAX})->wait();
  expect_values<double>(tensors[0], [&](int64_t) { return n - 1.0; });
}

TEST(C10d, BroadcastAllgatherAndBarrier) {
  auto pg = group();
  const int n = pg->getSize();
  const int64_t rank = pg->getRank();
  std::vector<Tensor> tensors = {tandem::full({2}, rank * 10, kInt64)};
  pg->broadcast(tensors, {.rootRank = n - 1})->wait();
  expect_values<int64_t>(tensors[0], [&](int64_t) { return (n - 1) * int64_t{10}; });

  std::vector<Tensor> input = {tandem::full({2}, rank, kInt64)};
  std::vector<std::vector<Tensor>> outputs(1);
  for (int r = 0; r < n; ++r) outputs[0].push_back(tandem::zeros({2}, kInt64));
  pg->allgather(outputs, input)->wait();
  for (int r = 0; r < n; ++r) {
    expect_values<int64_t>(outputs[0][static_cast<size_t>(r)],
                           [&](int64_t) { return r; });
  }
  auto barrier = pg->barrier();
  EXPECT_TRUE(barrier->wait());
  EXPECT_TRUE(barrier->result().empty());
}

TEST(C10d, CallsWithOtherThanOneTensorAreRefused) {
  auto pg = group();
  std::vector<Tensor> none;
  std::vector<Tensor> two = {tandem::zeros({2}), tandem::zeros({2})};
  EXPECT_EQ(error_of([&] { pg->allreduce(none); }),
            "ProcessGroup::allreduce: expected exactly one tensor in tensors" +
                kOneTensor + "0");
  EXPECT_EQ(error_of([&] { pg->allreduce(two); }),
            "ProcessGroup::allreduce: expected exactly one tensor in tensors" +
                kOneTensor + "2");
  EXPECT_EQ(error_of([&] { pg->broadcast(two); }),
            "ProcessGroup::broadcast: expected exactly one tensor in tensors" +
                kOneTensor + "2");
  std::vector<std::vector<Tensor>> outputs(2);
  EXPECT_EQ(error_of([&] { pg->allgather(outputs, two); }),
            "ProcessGroup::allgather: expected exactly one tensor in inputTensors" +
                kOneTensor + "2");
  std::vector<Tensor> one = {tandem::zeros({2})};
  EXPECT_EQ(
      error_of([&] { pg->allgather(outputs, one); }),
      "ProcessGroup::allgather: expected exactly one list in outputTensors (one list "
      "of getSize() tensors), got 2");
}

TEST(C10d, TensorsTheCollectiveCannotTakeAreRefusedNamingIt) {
  auto pg = group();
  const std::string size = std::to_string(pg->getSize());
  std::vector<Tensor> bytes = {tandem::zeros({2}, kUInt8)};
  EXPECT_EQ(error_of([&] { pg->allreduce(bytes); }),
            "allreduce: expected tensor of dtype float32, float64 or int64, got uint8");
  std::vector<Tensor> one = {tandem::zeros({2})};
  EXPECT_EQ(error_of([&] { pg->broadcast(one, {.rootRank = pg->getSize()}); }),
            "ProcessGroup::broadcast: rootRank " + size +
                " is out of range for a group of size " + size);
  EXPECT_EQ(
      error_of([&] { pg->broadcast(one, {.rootTensor = 1}); }),
      "ProcessGroup::broadcast: rootTensor 1 is out of range for a call of one tensor");
  std::vector<std::vector<Tensor>> outputs(1);
  for (int r = 0; r < pg->getSize(); ++r) outputs[0].push_back(tandem::zeros({3}));
  EXPECT_EQ(
      error_of([&] { pg->allgather(outputs, one); }),
      "allgather: outputs[0] has shape [3] and dtype float32, expected input's shape "
      "[2] and dtype float32");
  // Nothing was sent: the group still works.
  pg->allreduce(one)->wait();
  expect_values<float>(one[0], [](int64_t) { return 0.0f; });
}

}  // namespace
}  // namespace tandem::c10d
