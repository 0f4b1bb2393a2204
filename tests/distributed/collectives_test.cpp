// Results of every collective on every rank, with values chosen so that
// the expected result is exact in floating point (small integers, and AVG
// of multiples of the group size).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "distributed/distributed_testing.h"
#include "tandem/distributed/process_group.h"

namespace tandem::distributed {
namespace {

using testing::expect_values;
using testing::make;
using testing::world;

// 1 + 2 + ... + size
int64_t triangle(int size) { return int64_t{size} * (size + 1) / 2; }

TEST(Allreduce, SumFloat32) {
  auto pg = world();
  const int r = pg->rank();
  auto x = make<float>(1000, [&](int64_t i) { return float((r + 1) * (i % 97)); });
  pg->allreduce(x).wait();
  const auto t = triangle(pg->size());
  expect_values<float>(x, [&](int64_t i) { return float(t * (i % 97)); });
}

TEST(Allreduce, SumFloat64LargeTensor) {
  // Big enough that Open MPI's non-blocking allreduce takes many rounds,
  // each of which needs the comm thread's polling to progress.
  auto pg = world();
  const int r = pg->rank();
  const int64_t n = int64_t{1} << 20;
  auto x = make<double>(n, [&](int64_t i) { return (r + 1) * 0.5 * double(i % 1000); });
  pg->allreduce(x).wait();
  const auto t = triangle(pg->size());
  expect_values<double>(x, [&](int64_t i) { return double(t) * 0.5 * double(i % 1000); });
}

TEST(Allreduce, SumInt64BeyondFloatPrecision) {
  auto pg = world();
  const int64_t r = pg->rank();
  auto x =
      make<int64_t>(257, [&](int64_t i) { return (r + 1) * (int64_t{1} << 40) + i; });
  pg->allreduce(x).wait();
  const auto t = triangle(pg->size());
  expect_values<int64_t>(
      x, [&](int64_t i) { return t * (int64_t{1} << 40) + pg->size() * i; });
}

TEST(Allreduce, AvgFloat32AndFloat64) {
  auto pg = world();
  const int w = pg->size();
  const int r = pg->rank();
  // rank r holds w * (r + 1) * i: the sum is w * triangle(w) * i, and the
  // division by w is exact.
  auto f = make<float>(100, [&](int64_t i) { return float(w * (r + 1) * i); });
  auto d = make<double>(100, [&](int64_t i) { return double(w * (r + 1) * i); });
  auto avg = AllreduceOptions().reduce_op(ReduceOp::AVG);
  auto wf = pg->allreduce(f, avg);
  auto wd = pg->allreduce(d, avg);
  wf.wait();
  wd.wait();
  const auto t = triangle(w);
  expect_values<float>(f, [&](int64_t i) { return float(t * i); });
  expect_values<double>(d, [&](int64_t i) { return double(t * i); });
}

TEST(Allreduce, MinMaxProduct) {
  auto pg = world();
  const int64_t r = pg->rank();
  const int64_t w = pg->size();
  auto lo = make<int64_t>(10, [&](int64_t i) { return (r + 1) * 10 + i; });
  auto hi = make<int64_t>(10, [&](int64_t i) { return (r + 1) * 10 + i; });
  auto prod = make<double>(10, [&](int64_t i) { return double(r + 1); });
  // Collectives in flight may finish in any order: wait for each.
  auto w1 = pg->allreduce(lo, AllreduceOptions().reduce_op(ReduceOp::MIN));
  auto w2 = pg->allreduce(hi, AllreduceOptions().reduce_op(ReduceOp::MAX));
  auto w3 = pg->allreduce(prod, AllreduceOptions().reduce_op(ReduceOp::PRODUCT));
  w1.wait();
  w2.wait();
  w3.wait();
  double factorial = 1;
  for (int64_t k = 2; k <= w; ++k) factorial *= double(k);
  expect_values<int64_t>(lo, [&](int64_t i) { return 10 + i; });
  expect_values<int64_t>(hi, [&](int64_t i) { return w * 10 + i; });
  expect_values<double>(prod, [&](int64_t) { return factorial; });
}

TEST(Allreduce, EmptyTensor) {
  auto pg = world();
  auto x = tandem::empty({0}, kFloat32);
  pg->allreduce(x).wait();
  EXPECT_EQ(x.numel(), 0);
}

TEST(Broadcast, FromRankZeroAndFromTheLastRank) {
  auto pg = world();
  const int64_t r = pg->rank();
  const int last = pg->size() - 1;
  auto a = make<double>(33, [&](int64_t i) { return double(r * 1000 + i); });
  auto b = make<int64_t>(33, [&](int64_t i) { return r * 1000 + i; });
  pg->broadcast(a).wait();
  pg->broadcast(b, BroadcastOptions().root_rank(last)).wait();
  expect_values<double>(a, [&](int64_t i) { return double(i); });
  expect_values<int64_t>(b, [&](int64_t i) { return int64_t{last} * 1000 + i; });
}

TEST(Allgather, IntoAList) {
  auto pg = world();
  const int64_t r = pg->rank();
  auto input = make<float>(7, [&](int64_t i) { return float(r * 100 + i); });
  std::vector<Tensor> outputs;
  for (int k = 0; k < pg->size(); ++k) outputs.push_back(tandem::zeros({7}, kFloat32));
  auto work = pg->allgather(outputs, input);
  work.wait();
  ASSERT_EQ(work.result().size(), outputs.size());
  for (int k = 0; k < pg->size(); ++k) {
    expect_values<float>(outputs[static_cast<size_t>(k)],
                         [&](int64_t i) { return float(k * 100 + i); });
  }
}

TEST(Allgather, IntoATensorAndInPlace) {
  auto pg = world();
  const int64_t r = pg->rank();
  const int64_t w = pg->size();
  auto input = make<int64_t>(5, [&](int64_t i) { return r * 100 + i; });
  auto output = tandem::zeros({w * 5}, kInt64);
  pg->allgather_into_tensor(output, input).wait();
  expect_values<int64_t>(output, [&](int64_t j) { return (j / 5) * 100 + j % 5; });

  // The input may be this rank's own slice of the output (MPI_IN_PLACE).
  auto flat =
      make<int64_t>(w * 5, [&](int64_t j) { return j / 5 == r ? r * 100 + j % 5 : -1; });
  pg->allgather_into_tensor(flat, flat.narrow(0, r * 5, 5)).wait();
  expect_values<int64_t>(flat, [&](int64_t j) { return (j / 5) * 100 + j % 5; });
}

TEST(ReduceScatter, FromAList) {
  auto pg = world();
  const int r = pg->rank();
  const int w = pg->size();
  std::vector<Tensor> inputs;
  for (int k = 0; k < w; ++k) {
    inputs.push_back(
        make<double>(6, [&](int64_t i) { return double((r + 1) * (k * 10 + i)); }));
  }
  auto output = tandem::zeros({6}, kFloat64);
  pg->reduce_scatter(output, inputs).wait();
  const auto t = triangle(w);
  expect_values<double>(output, [&](int64_t i) { return double(t * (r * 10 + i)); });
}

TEST(ReduceScatter, FromATensorSumAndAvg) {
  auto pg = world();
  const int r = pg->rank();
  const int w = pg->size();
  auto input = make<float>(w * 4, [&](int64_t j) { return float(w * (r + 1) * j); });
  auto sum = tandem::zeros({4}, kFloat32);
  auto avg = tandem::zeros({4}, kFloat32);
  auto w1 = pg->reduce_scatter_tensor(sum, input);
  auto w2 = pg->reduce_scatter_tensor(
      avg, input, ReduceScatterOptions().reduce_op(ReduceOp::AVG));
  w1.wait();
  w2.wait();
  const auto t = triangle(w);
  expect_values<float>(sum, [&](int64_t i) { return float(w * t * (r * 4 + i)); });
  expect_values<float>(avg, [&](int64_t i) { return float(t * (r * 4 + i)); });
}

TEST(Barrier, CompletesAndTakesASequenceNumber) {
  auto pg = world();
  const auto before = pg->sequence_number();
  auto work = pg->barrier();
  work.wait();
  EXPECT_EQ(work.sequence_number(), before + 1);
  EXPECT_EQ(work.description(), "barrier #" + std::to_string(before + 1));
  EXPECT_TRUE(work.result().empty());
}

}  // namespace
}  // namespace tandem::distributed
