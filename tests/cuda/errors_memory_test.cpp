// Errors and memory on the device under test: ops mixing the CPU and the
// device name both devices; bad indices found by the device (targets,
// index_select, embedding, gather, scatter_add, index_add) raise the CPU's
// error type and message, and the device works normally afterwards; device
// queries reject bad indices; asynchronous copies survive their source; and
// memory_stats' allocated bytes return to where they were once tensors die.
#include <cstring>

#include "cuda/cuda_testing.h"

namespace tandem {
namespace {

using testing::close_to;
using testing::device_under_test;
using testing::identical;
using testing::to_dut;

class CudaErrors : public testing::CudaTest {};

TEST_F(CudaErrors, MixingDevicesNamesBothDevices) {
  const Tensor h = ones({4, 4});
  const Tensor d = to_dut(h);
  const Tensor index = zeros({2}, kInt64);
  const Tensor weight = ones({3, 4, 2, 2});
  const std::vector<std::pair<std::string, std::function<void()>>> ops = {
      {"add", [&] { add(h, d); }},
      {"mul", [&] { mul(d, h); }},
      {"maximum", [&] { maximum(d, h); }},
      {"where", [&] { where(h > 0, d, d); }},
      {"mm", [&] { mm(h, d); }},
      {"linear", [&] { linear(d, h); }},
      {"cat",
       [&] {
         cat({d, h});
       }},
      {"index_select", [&] { index_select(d, 0, index); }},
      {"embedding", [&] { embedding(d, index); }},
      {"cross_entropy", [&] { cross_entropy(d, index.narrow(0, 0, 1).expand({4})); }},
      {"mse_loss", [&] { mse_loss(h, d); }},
      {"conv2d",
       [&] {
         conv2d(d.reshape({1, 4, 2, 2}), weight);
       }},
      {"add_",
       [&] {
         Tensor t = d.clone();
         t.add_(h);
       }},
  };
  for (const auto& [name, op] : ops) {
    try {
      op();
      ADD_FAILURE() << name << ": mixing cpu:0 and " << device_under_test()
                    << " did not throw";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("cpu:0"), std::string::npos) << name << ": " << message;
      EXPECT_NE(message.find(device_under_test().str()), std::string::npos)
          << name << ": " << message;
    }
  }
}

// The error an op raises, as "<IndexError|Error>: <message>".
std::string error_of(const std::function<void()>& op) {
  try {
    op();
  } catch (const IndexError& e) {
    return std::string("IndexError: ") + e.what();
  } catch (const Error& e) {
    return std::string("Error: ") + e.what();
  }
  return "no error";
}

TEST_F(CudaErrors, BadIndicesRaiseTheCpusError) {
  // One bad value at the end of a long index: every element is checked.
  Tensor long_targets = testing::integers({65536}, gen, 0, 10);
  long_targets.narrow(0, 65535, 1).fill_(10);
  const Tensor logits = testing::uniform({65536, 10}, gen);
  Tensor negative = testing::integers({8}, gen, 0, 5);
  negative.narrow(0, 3, 1).fill_(-1);
  const Tensor table = testing::uniform({50, 6}, gen);
  Tensor ids = testing::integers({30}, gen, 0, 50);
  ids.narrow(0, 29, 1).fill_(50);
  const Tensor grid = testing::uniform({4, 5}, gen);
  Tensor columns = testing::integers({4, 7}, gen, 0, 5);
  columns.select(0, 3).narrow(0, 6, 1).fill_(5);
  const Tensor src = testing::uniform({4, 7}, gen);
  using Op = std::function<void(bool)>;  // on the device or not
  auto at = [](const Tensor& t, bool on_device) { return on_device ? to_dut(t) : t; };
  const std::vector<std::pair<std::string, Op>> ops = {
      {"cross_entropy target too large",
       [&](bool dev) { cross_entropy(at(logits, dev), at(long_targets, dev)); }},
      {"cross_entropy negative target",
       [&](bool dev) {
         cross_entropy(at(logits.narrow(0, 0, 8), dev), at(negative, dev));
       }},
      {"nll_loss with weights",
       [&](bool dev) {
         nll_loss(
             at(logits, dev), at(long_targets, dev), at(ones({10}, kFloat64), dev), kSum);
       }},
      {"index_select", [&](bool dev) { index_select(at(table, dev), 0, at(ids, dev)); }},
      {"embedding", [&](bool dev) { embedding(at(table, dev), at(ids, dev)); }},
      {"gather", [&](bool dev) { gather(at(grid, dev), 1, at(columns, dev)); }},
      {"scatter_add",
       [&](bool dev) { scatter_add(at(grid, dev), 1, at(columns, dev), at(src, dev)); }},
      {"index_add",
       [&](bool dev) {
         index_add(at(table, dev), 0, at(ids, dev), at(ones({30, 6}, kFloat64), dev));
       }},
  };
  for (const auto& [name, op] : ops) {
    const std::string want = error_of([&] { op(false); });
    EXPECT_NE(want, "no error") << name << " on the CPU";
    EXPECT_EQ(error_of([&] { op(true); }), want) << name;
    // The device is still fine afterwards (no sticky error).
    const Tensor after = to_dut(testing::from_values({1, 2, 3}, {3})) * 2;
    EXPECT_TRUE(identical(after.to(kCPU), testing::from_values({2, 4, 6}, {3}))) << name;
  }
}

TEST_F(CudaErrors, DeviceQueriesRejectBadIndices) {
  EXPECT_THROW(tandem::cuda::get_device_properties(99), Error);
  EXPECT_THROW(tandem::cuda::get_device_properties(-1), Error);
  EXPECT_THROW(tandem::cuda::memory_stats(99), Error);
  EXPECT_THROW(zeros({2}, TensorOptions().device(Device(kCUDA, 99))), Error);
  EXPECT_EQ(device_count(kCUDA), tandem::cuda::device_count());
  if (device_under_test().is_cpu()) return;
  const auto properties =
      tandem::cuda::get_device_properties(device_under_test().index());
  EXPECT_FALSE(properties.name.empty());
  EXPECT_GT(properties.total_memory, int64_t{1} << 30);
  EXPECT_GT(properties.multiprocessors, 0);
  EXPECT_GE(properties.major, 7);
  int gpus = 0;
  for (const DeviceInfo& info : list_devices()) {
    if (!info.device.is_cuda()) continue;
    ++gpus;
    EXPECT_EQ(info.name, tandem::cuda::get_device_properties(info.device.index()).name);
  }
  EXPECT_EQ(gpus, tandem::cuda::device_count());
}

TEST_F(CudaErrors, AsynchronousCopiesOutliveTheirSource) {
  const Tensor want = testing::uniform({1 << 20}, gen).to(kFloat32);
  Tensor on_device;
  {
    const Tensor source = want.clone();
    on_device = source.to(device_under_test(), /*non_blocking=*/true);
  }
  // Reuse the freed host memory for other data straight away.
  std::vector<Tensor> scribbles;
  for (int i = 0; i < 4; ++i) scribbles.push_back(full({1 << 20}, -7.0));
  EXPECT_TRUE(identical(on_device.to(kCPU), want));
  // And back: a device tensor dying right after its copy to the host started.
  Tensor host;
  {
    const Tensor temp = to_dut(want) * 2;
    host = temp.to(Device(kCPU));
  }
  EXPECT_TRUE(identical(host, want * 2));
}

class CudaMemory : public testing::CudaTest {};

TEST_F(CudaMemory, AllocatedBytesReturnToTheStartWhenTensorsDie) {
  if (device_under_test().is_cpu()) {
    GTEST_SKIP() << "memory_stats counts CUDA memory; " << device_under_test()
                 << " is a CPU";
  }
  const int64_t index = device_under_test().index();
  auto work = [&] {
    nn::Linear fc(512, 256);
    fc->to(device_under_test());
    const Tensor x = to_dut(testing::uniform({128, 512}, gen), kFloat32).requires_grad_();
    cross_entropy(fc(x), to_dut(testing::integers({128}, gen, 0, 256))).backward();
    return fc->weight.grad().abs().sum().item<double>();
  };
  work();  // warm up: library handles and workspaces that stay
  tandem::cuda::synchronize();
  const auto start = tandem::cuda::memory_stats(index);
  {
    const Tensor big = zeros({1 << 22}, TensorOptions().device(device_under_test()));
    const Tensor bigger = big + 1;
    tandem::cuda::synchronize();
    const auto during = tandem::cuda::memory_stats(index);
    EXPECT_GE(during.allocated_bytes, start.allocated_bytes + 2 * (int64_t{4} << 22));
    EXPECT_GE(during.peak_allocated_bytes, during.allocated_bytes);
    EXPECT_GE(during.reserved_bytes, during.allocated_bytes);
    EXPECT_GT(during.allocations, start.allocations);
  }
  work();
  tandem::cuda::synchronize();
  EXPECT_EQ(tandem::cuda::memory_stats(index).allocated_bytes, start.allocated_bytes)
      << "bytes still allocated after every tensor of the test died";
  tandem::cuda::reset_peak_memory_stats(index);
  const auto reset = tandem::cuda::memory_stats(index);
  EXPECT_EQ(reset.peak_allocated_bytes, reset.allocated_bytes);
  const int64_t reserved = reset.reserved_bytes;
  tandem::cuda::empty_cache();
  EXPECT_LE(tandem::cuda::memory_stats(index).reserved_bytes, reserved);
}

}  // namespace
}  // namespace tandem
