// Pinned host memory and asynchronous copies on the GPU under test:
// pin_memory round trips and is_pinned; cuda::host_memory_stats counts the
// allocator's blocks; non_blocking copies from pinned memory, which must
// read the values the source held when the copy was issued even if its
// block is freed and handed out again meanwhile (Note [Pinned blocks and
// pending copies]); blocking and pageable copies, whose sources may be
// overwritten at once; scatter from a pinned batch; and loaders that pin
// their batches.
//
// Pinning needs a real GPU (page-locked memory comes from the CUDA
// driver), so under TANDEM_CUDA_TEST_DEVICE=cpu:N these tests skip.
#include "cuda/cuda_testing.h"
#include "data/test_datasets.h"

namespace tandem {
namespace {

using testing::device_under_test;
using testing::identical;

class CudaPinnedMemory : public testing::CudaTest {
 protected:
  void SetUp() override {
    testing::CudaTest::SetUp();
    if (IsSkipped()) return;
    if (!device_under_test().is_cuda()) {
      GTEST_SKIP() << "pinned memory needs a GPU (page-locked memory comes from the "
                      "CUDA driver); "
                   << device_under_test() << " is a CPU device";
    }
  }

  // Queues about a tenth of a second of matrix products on the GPU, so that
  // work queued after them is still pending when the host goes on.
  void keep_the_gpu_busy() {
    const Tensor a = (randn({4096, 4096}, gen) * (1.0 / 64)).to(device_under_test());
    Tensor y = a;
    for (int i = 0; i < 64; ++i) y = y.matmul(a);
  }
};

TEST_F(CudaPinnedMemory, PinMemoryRoundTrips) {
  const Tensor x = testing::uniform({300, 37}, gen).to(kFloat32);
  EXPECT_FALSE(x.is_pinned());
  const Tensor p = x.pin_memory();
  EXPECT_TRUE(p.is_pinned());
  EXPECT_FALSE(x.is_pinned());  // a copy: x is unchanged
  EXPECT_NE(p.data_ptr(), x.data_ptr());
  EXPECT_TRUE(p.is_cpu());
  EXPECT_TRUE(identical(p, x));
  EXPECT_TRUE(p.pin_memory().is_same(p));      // already pinned: itself
  const Tensor view = p.narrow(0, 5, 10).t();  // views of pinned memory are pinned
  EXPECT_TRUE(view.is_pinned());
  EXPECT_TRUE(view.pin_memory().is_same(view));
  EXPECT_TRUE(identical(p.to(device_under_test()).to(kCPU), x));

  // A transposed view pins as a contiguous copy; logical CPU devices keep
  // their device; empty tensors and every dtype pin.
  const Tensor t = x.t().pin_memory();
  EXPECT_TRUE(t.is_pinned());
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_TRUE(identical(t, x.t()));
  const Tensor on_cpu1 = x.to("cpu:1").pin_memory();
  EXPECT_EQ(on_cpu1.device(), Device("cpu:1"));
  EXPECT_TRUE(on_cpu1.is_pinned());
  EXPECT_TRUE(zeros({0, 3}).pin_memory().is_pinned());
  for (ScalarType dtype : {kBool, kUInt8, kInt64, kFloat64}) {
    const Tensor d = x.gt(0).to(dtype);
    EXPECT_TRUE(identical(d.pin_memory(), d)) << dtype;
  }

  // Differentiable, as PyTorch's pin_memory.
  const Tensor leaf = x.clone().requires_grad_();
  const Tensor pinned_leaf = leaf.pin_memory();
  EXPECT_TRUE(pinned_leaf.requires_grad());
  (pinned_leaf * 2).sum().backward();
  EXPECT_TRUE(identical(leaf.grad(), full_like(x, 2)));

  EXPECT_TRUE(
      testing::throws_with([] { (void)zeros({2}).to(device_under_test()).pin_memory(); },
                           "only CPU tensors can be pinned"));
  EXPECT_FALSE(zeros({2}).to(device_under_test()).is_pinned());
}

TEST_F(CudaPinnedMemory, HostMemoryStatsCountPinnedBlocks) {
  const auto consistent = [](const cuda::HostMemoryStats& s) {
    return s.bytes_allocated == s.bytes_in_use + s.bytes_cached && s.bytes_in_use >= 0 &&
           s.bytes_cached >= 0 && s.cache_hits <= s.allocations;
  };
  const cuda::HostMemoryStats before = cuda::host_memory_stats();
  EXPECT_TRUE(consistent(before));
  const int64_t n = 3 * 1000 * 1000 + 17;  // float32 elements
  const auto block = static_cast<int64_t>(
      detail::cpu_block_size(static_cast<size_t>(n) * sizeof(float)));
  Tensor p = zeros({n}, kFloat32).pin_memory();
  const cuda::HostMemoryStats pinned = cuda::host_memory_stats();
  EXPECT_TRUE(consistent(pinned));
  EXPECT_EQ(pinned.allocations, before.allocations + 1);
  EXPECT_EQ(pinned.bytes_in_use, before.bytes_in_use + block);
  EXPECT_GE(pinned.bytes_allocated, before.bytes_allocated);
  // Freed, the block stays page-locked and cached, and is the next one of
  // its size.
  p = Tensor();
  const cuda::HostMemoryStats freed = cuda::host_memory_stats();
  EXPECT_TRUE(consistent(freed));
  EXPECT_EQ(freed.bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(freed.bytes_allocated, pinned.bytes_allocated);
  EXPECT_GE(freed.bytes_cached, block);
  cuda::empty_cache();  // GPU memory only
  const Tensor again = ones({n}, kFloat32).pin_memory();
  const cuda::HostMemoryStats reused = cuda::host_memory_stats();
  EXPECT_EQ(reused.allocations, freed.allocations + 1);
  EXPECT_EQ(reused.cache_hits, freed.cache_hits + 1);
  EXPECT_EQ(reused.bytes_allocated, freed.bytes_allocated);
  EXPECT_EQ(reused.bytes_in_use, before.bytes_in_use + block);
  // Pinning nothing is not a request.
  (void)zeros({0}).pin_memory();
  EXPECT_EQ(cuda::host_memory_stats().allocations, reused.allocations);
}

TEST_F(CudaPinnedMemory, NonBlockingCopiesFromPinnedMemoryArriveAfterSynchronize) {
  const Tensor x = testing::uniform({1 << 22}, gen).to(kFloat32);  // 16 MiB
  const Tensor p = x.pin_memory();
  keep_the_gpu_busy();
  const Tensor d = p.to(device_under_test(), /*non_blocking=*/true);
  Tensor into = zeros({1 << 22}, TensorOptions(kFloat64).device(device_under_test()));
  into.copy_(p, /*non_blocking=*/true);  // converts on the GPU after the copy
  cuda::synchronize();
  EXPECT_TRUE(identical(d.to(kCPU), x));
  EXPECT_TRUE(identical(into.to(kCPU), x.to(kFloat64)));
  // A view of pinned memory copies from where it starts.
  const Tensor part = p.narrow(0, 1000, 5000).to(device_under_test(), true);
  cuda::synchronize();
  EXPECT_TRUE(identical(part.to(kCPU), x.narrow(0, 1000, 5000)));
}

TEST_F(CudaPinnedMemory, AFreedBlockIsNotReusedBeforeItsCopyIsDone) {
  const int64_t n = 1 << 24;  // 64 MiB of float32
  const Tensor x = testing::uniform({n}, gen).to(kFloat32);
  Tensor p = x.pin_memory();
  const void* first_block = p.data_ptr();
  keep_the_gpu_busy();
  const Tensor d = p.to(device_under_test(), /*non_blocking=*/true);
  p = Tensor();  // the only handle: the block is freed while the copy waits
  // A block of the same size, written at once: were it the freed one, the
  // pending copy would read these values.
  Tensor q = full({n}, -1.0, kFloat32).pin_memory();
  q.fill_(-2);
  const void* second_block = q.data_ptr();
  cuda::synchronize();
  EXPECT_TRUE(identical(d.to(kCPU), x));
  EXPECT_TRUE(identical(q, full({n}, -2.0, kFloat32)));
  // Once the copy is done, the freed block is cached and reused.
  q = Tensor();
  const Tensor r = zeros({n}, kFloat32).pin_memory();
  EXPECT_TRUE(r.data_ptr() == first_block || r.data_ptr() == second_block);
}

TEST_F(CudaPinnedMemory, BlockingAndPageableSourcesMayBeOverwrittenAtOnce) {
  const Tensor x = testing::uniform({1 << 22}, gen).to(kFloat32);
  // Blocking from pinned memory: the copy is done on return.
  Tensor p = x.pin_memory();
  keep_the_gpu_busy();
  const Tensor from_pinned = p.to(device_under_test());
  p.fill_(-1);
  // Pageable, even non_blocking: CUDA staged the source before returning.
  Tensor pageable = x.clone();
  keep_the_gpu_busy();
  const Tensor from_pageable = pageable.to(device_under_test(), /*non_blocking=*/true);
  pageable.fill_(-1);
  cuda::synchronize();
  EXPECT_TRUE(identical(from_pinned.to(kCPU), x));
  EXPECT_TRUE(identical(from_pageable.to(kCPU), x));
}

// scatter copies its chunks with non_blocking: from a pinned batch the
// copies may still run when it returns, and what runs after them on each
// GPU sees the values; a chunk for the host stays a view. Backward sends
// each piece's gradient back into the batch's.
TEST_F(CudaPinnedMemory, ScatterFromPinnedMemoryIsRightAndDifferentiable) {
  std::vector<Device> devices = testing::all_devices_under_test();
  devices.emplace_back(kCPU);
  const auto n = static_cast<int64_t>(devices.size());
  const Tensor x = testing::uniform({16 * n, 1 << 14}, gen).to(kFloat32);
  Tensor batch = x.pin_memory();
  batch.requires_grad_();
  keep_the_gpu_busy();
  const std::vector<Tensor> pieces = parallel::scatter(batch, devices, 0);
  ASSERT_EQ(pieces.size(), devices.size());
  Tensor loss = zeros({}, kFloat32);
  for (size_t j = 0; j < pieces.size(); ++j) {
    EXPECT_EQ(pieces[j].device(), devices[j]);
    loss = loss + (pieces[j] * static_cast<double>(j + 1)).sum().to(kCPU);
  }
  cuda::synchronize();
  const std::vector<Tensor> want = x.chunk(n, 0);
  for (size_t j = 0; j < pieces.size(); ++j) {
    EXPECT_TRUE(identical(pieces[j].detach().to(kCPU), want[j])) << devices[j];
  }
  loss.backward();
  std::vector<Tensor> grads;
  for (size_t j = 0; j < want.size(); ++j) {
    grads.push_back(full_like(want[j], static_cast<double>(j + 1)));
  }
  EXPECT_TRUE(identical(batch.grad(), cat(grads, 0)));
}

TEST_F(CudaPinnedMemory, LoadersPinTheirBatches) {
  using data::data_testing::counting_tensors;
  using data::data_testing::CountingDataset;
  auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
      counting_tensors(20),
      data::DataLoaderOptions().batch_size(6).workers(2).pin_memory(true));
  int64_t rows = 0;
  for (const data::Batch& batch : loader->epoch(0)) {
    EXPECT_TRUE(batch.data.is_pinned());
    EXPECT_TRUE(batch.target.is_pinned());
    const Tensor target = batch.target.to(device_under_test(), /*non_blocking=*/true);
    cuda::synchronize();
    const auto first = static_cast<double>(rows);
    EXPECT_TRUE(identical(
        target.to(kCPU),
        arange(first, first + static_cast<double>(batch.target.size(0)), kInt64)));
    rows += batch.target.size(0);
  }
  EXPECT_EQ(rows, 20);

  auto stacked = data::make_data_loader<data::samplers::SequentialSampler>(
      CountingDataset(7).map(data::transforms::Stack<>()),
      data::DataLoaderOptions().batch_size(3).workers(1).pin_memory(true));
  for (auto& batch : *stacked) {
    EXPECT_TRUE(batch.data.is_pinned());
    EXPECT_TRUE(batch.target.is_pinned());
  }
}

}  // namespace
}  // namespace tandem
