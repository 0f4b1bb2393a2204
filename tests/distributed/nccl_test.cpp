// Collectives on CUDA tensors (NCCL), each rank on cuda:<local rank % GPUs>.
// Every test skips, on every rank alike (the ranks share one host and one
// build), without a GPU per rank or without NCCL in the build. Values are
// small integers, so sums are exact; AVG is compared with a tolerance
// (NCCL multiplies by 1/size before the sum).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "distributed/distributed_testing.h"
#include "tandem/core/cuda.h"
#include "tandem/distributed/process_group.h"

namespace tandem::distributed {
namespace {

using testing::error_of;
using testing::expect_values;
using testing::make;
using testing::world;

int64_t triangle(int size) { return int64_t{size} * (size + 1) / 2; }

Device gpu() {
  return Device(kCUDA, static_cast<int>(get_local_rank() % tandem::cuda::device_count()));
}

template <typename T>
Tensor make_on_gpu(int64_t n, const std::function<T(int64_t)>& value) {
  return make<T>(n, value).to(gpu());
}

// "" when this build runs collectives on CUDA tensors, else its error. The
// probe is an allreduce that every rank makes, once.
std::string nccl_missing() {
  static const std::string missing = [] {
    Tensor x = tandem::ones({1}, TensorOptions().device(gpu()));
    const std::string error = error_of([&] { world()->allreduce(x).wait(); });
    return error.find("has no NCCL") != std::string::npos ? error : std::string();
  }();
  return missing;
}

class Nccl : public ::testing::Test {
 protected:
  void SetUp() override {
    const int64_t gpus = tandem::cuda::device_count();
    if (gpus == 0) GTEST_SKIP() << "no GPU (tandem::cuda::device_count() is 0)";
    if (get_local_world_size() > gpus) {
      GTEST_SKIP() << get_local_world_size() << " ranks on this host but " << gpus
                   << " GPU(s): NCCL needs a GPU per rank";
    }
    if (const std::string why = nccl_missing(); !why.empty()) GTEST_SKIP() << why;
  }
};

TEST_F(Nccl, AllreduceSumMinMaxProduct) {
  auto pg = world();
  const int64_t r = pg->rank();
  const int64_t w = pg->size();
  auto sum =
      make_on_gpu<float>(1000, [&](int64_t i) { return float((r + 1) * (i % 97)); });
  auto lo = make_on_gpu<int64_t>(10, [&](int64_t i) { return (r + 1) * 10 + i; });
  auto hi = make_on_gpu<int64_t>(10, [&](int64_t i) { return (r + 1) * 10 + i; });
  auto prod = make_on_gpu<double>(10, [&](int64_t) { return double(r + 1); });
  auto w1 = pg->allreduce(sum);
  auto w2 = pg->allreduce(lo, AllreduceOptions().reduce_op(ReduceOp::MIN));
  auto w3 = pg->allreduce(hi, AllreduceOptions().reduce_op(ReduceOp::MAX));
  auto w4 = pg->allreduce(prod, AllreduceOptions().reduce_op(ReduceOp::PRODUCT));
  for (auto* work : {&w1, &w2, &w3, &w4}) work->wait();
  double factorial = 1;
  for (int64_t k = 2; k <= w; ++k) factorial *= double(k);
  expect_values<float>(sum.cpu(),
                       [&](int64_t i) { return float(triangle(int(w)) * (i % 97)); });
  expect_values<int64_t>(lo.cpu(), [&](int64_t i) { return 10 + i; });
  expect_values<int64_t>(hi.cpu(), [&](int64_t i) { return w * 10 + i; });
  expect_values<double>(prod.cpu(), [&](int64_t) { return factorial; });
}

TEST_F(Nccl, AllreduceAvg) {
  auto pg = world();
  const int64_t w = pg->size();
  const int64_t r = pg->rank();
  auto d = make_on_gpu<double>(100, [&](int64_t i) { return double(w * (r + 1) * i); });
  pg->allreduce(d, AllreduceOptions().reduce_op(ReduceOp::AVG)).wait();
  const Tensor result = d.cpu();
  const double* p = result.data_ptr<double>();
  for (int64_t i = 0; i < 100; ++i) {
    const double expected = double(triangle(pg->size()) * i);
    EXPECT_NEAR(p[i], expected, 1e-12 * expected) << "rank " << r << ", element " << i;
  }
}

TEST_F(Nccl, Broadcast) {
  auto pg = world();
  const int64_t root = pg->size() - 1;
  const int64_t r = pg->rank();
  auto x = make_on_gpu<int64_t>(333, [&](int64_t i) { return r * 1000 + i; });
  pg->broadcast(x, BroadcastOptions().root_rank(pg->size() - 1)).wait();
  expect_values<int64_t>(x.cpu(), [&](int64_t i) { return root * 1000 + i; });
}

TEST_F(Nccl, AllgatherIntoListAndTensor) {
  auto pg = world();
  const int64_t w = pg->size();
  const int64_t r = pg->rank();
  const int64_t n = 7;
  auto input = make_on_gpu<float>(n, [&](int64_t i) { return float(r * 100 + i); });
  std::vector<Tensor> outputs;
  outputs.reserve(size_t(w));
  for (int64_t k = 0; k < w; ++k) outputs.push_back(tandem::zeros({n}, gpu()));
  auto flat = tandem::zeros({n * w}, gpu());
  // In place: this rank's slice of the output is the input.
  auto in_place = tandem::zeros({n * w}, gpu());
  in_place.narrow(0, r * n, n).copy_(input);
  auto w1 = pg->allgather(outputs, input);
  auto w2 = pg->allgather_into_tensor(flat, input);
  auto w3 = pg->allgather_into_tensor(in_place, in_place.narrow(0, r * n, n));
  w1.wait();
  w2.wait();
  w3.wait();
  for (int64_t k = 0; k < w; ++k) {
    expect_values<float>(outputs[size_t(k)].cpu(),
                         [&](int64_t i) { return float(k * 100 + i); });
  }
  const auto gathered = [&](int64_t i) {
    const int64_t from = i / n;
    return float(from * 100 + i % n);
  };
  expect_values<float>(flat.cpu(), gathered);
  expect_values<float>(in_place.cpu(), gathered);
}

TEST_F(Nccl, ReduceScatterFromListAndTensor) {
  auto pg = world();
  const int w = pg->size();
  const int64_t r = pg->rank();
  const int64_t n = 5;
  std::vector<Tensor> inputs;
  for (int64_t j = 0; j < w; ++j) {
    inputs.push_back(make_on_gpu<double>(
        n, [&](int64_t i) { return double((r + 1) * (j * 10 + i)); }));
  }
  auto flat = make_on_gpu<double>(n * w, [&](int64_t i) { return double((r + 1) * i); });
  auto out_list = tandem::zeros({n}, TensorOptions().dtype(kFloat64).device(gpu()));
  auto out_flat = tandem::zeros({n}, TensorOptions().dtype(kFloat64).device(gpu()));
  auto w1 = pg->reduce_scatter(out_list, inputs);
  auto w2 = pg->reduce_scatter_tensor(out_flat, flat);
  w1.wait();
  w2.wait();
  const auto t = double(triangle(w));
  expect_values<double>(out_list.cpu(),
                        [&](int64_t i) { return t * double(r * 10 + i); });
  expect_values<double>(out_flat.cpu(), [&](int64_t i) { return t * double(r * n + i); });
}

TEST_F(Nccl, OrderedAfterEarlierAndBeforeLaterGpuWork) {
  // Plenty of GPU work queued just before the call: the collective must
  // see its result, and work queued after wait() must see the sum.
  auto pg = world();
  const int64_t n = int64_t{1} << 22;
  auto x = tandem::zeros({n}, gpu());
  for (int k = 0; k < 50; ++k) x.add_(double(pg->rank() + 1));
  auto work = pg->allreduce(x);
  work.wait();
  x.mul_(2.0);
  const auto expected = float(triangle(pg->size()) * 2 * 50);
  expect_values<float>(x.cpu(), [&](int64_t) { return expected; });
}

TEST_F(Nccl, InterleavedWithCpuCollectives) {
  // One sequence: MPI and NCCL collectives in flight together.
  auto pg = world();
  const int64_t r = pg->rank();
  std::vector<Tensor> on_gpu;
  std::vector<Tensor> on_cpu;
  std::vector<Work> works;
  for (int k = 0; k < 10; ++k) {
    on_gpu.push_back(
        make_on_gpu<float>(64, [&](int64_t i) { return float((r + 1) * (k + i)); }));
    on_cpu.push_back(
        make<float>(64, [&](int64_t i) { return float((r + 1) * (k - i)); }));
    works.push_back(pg->allreduce(on_gpu.back()));
    works.push_back(pg->allreduce(on_cpu.back()));
  }
  for (auto& work : works) work.wait();
  const auto t = float(triangle(pg->size()));
  for (int k = 0; k < 10; ++k) {
    expect_values<float>(on_gpu[size_t(k)].cpu(),
                         [&](int64_t i) { return t * float(k + i); });
    expect_values<float>(on_cpu[size_t(k)], [&](int64_t i) { return t * float(k - i); });
  }
}

TEST_F(Nccl, WorkDescribesTheDevice) {
  auto pg = world();
  auto x = tandem::ones({4}, gpu());
  auto work = pg->allreduce(x);
  work.wait();
  EXPECT_NE(
      work.description().find(tandem::detail::str("4 float32 elements on ", gpu(), ")")),
      std::string::npos)
      << work.description();
  ASSERT_EQ(work.result().size(), 1u);
  EXPECT_TRUE(work.result()[0].is_cuda());
}

TEST_F(Nccl, MixedDevicesAreRejected) {
  auto pg = world();
  const int w = pg->size();
  const Tensor on_gpu = tandem::zeros({4}, gpu());
  const Tensor on_cpu = tandem::zeros({4});
  std::vector<Tensor> outputs(size_t(w), tandem::zeros({4}, gpu()));
  outputs[0] = on_cpu;
  const std::string mixed =
      "; a collective takes CPU tensors (MPI) or tensors on one GPU (NCCL)";
  EXPECT_EQ(error_of([&] { pg->allgather(outputs, on_gpu); }),
            tandem::detail::str("allgather: outputs[0] is on ",
                                on_cpu.device(),
                                " but input is on ",
                                gpu(),
                                mixed));
  EXPECT_EQ(error_of([&] {
              pg->reduce_scatter_tensor(on_cpu, tandem::zeros({4 * int64_t{w}}, gpu()));
            }),
            tandem::detail::str("reduce_scatter_tensor: output is on ",
                                on_cpu.device(),
                                " but input is on ",
                                gpu(),
                                mixed));
  if (tandem::cuda::device_count() >= 2) {
    const Device other(kCUDA, (gpu().index() + 1) % 2);
    EXPECT_EQ(error_of([&] {
                pg->allgather_into_tensor(tandem::zeros({4 * int64_t{w}}, other), on_gpu);
              }),
              tandem::detail::str("allgather_into_tensor: output is on ",
                                  other,
                                  " but input is on ",
                                  gpu(),
                                  mixed));
  }
  // Rejected calls take no sequence number: the group still works.
  auto x = tandem::ones({4}, gpu());
  pg->allreduce(x).wait();
  expect_values<float>(x.cpu(), [&](int64_t) { return float(w); });
}

}  // namespace
}  // namespace tandem::distributed
