// broadcast_coalesced and reduce_add_coalesced over GPUs, where they go
// through NCCL (Note [comm over NCCL] in src/parallel/comm.cpp): over every
// GPU, in both orders, copies are exact and sums match a float64 CPU
// reference; with TANDEM_COMM_NCCL=0 (peer copies and add kernels) the
// results are the same bits, DataParallel's backward included; float sums
// over three or more GPUs are the replica-order sums bit for bit, NCCL or
// not; and over one GPU, where NCCL is never used, the results are right.
// Tests that need two (three) GPUs skip without them. Under
// TANDEM_CUDA_TEST_DEVICE=cpu:1 they run over logical CPU devices, where
// comm never uses NCCL.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include "cuda/cuda_testing.h"

namespace tandem {
namespace {

using testing::all_devices_under_test;
using testing::close_to;
using testing::device_under_test;
using testing::identical;

// Sets TANDEM_COMM_NCCL while it lives.
class CommNcclSetting {
 public:
  explicit CommNcclSetting(const char* value) {
    if (const char* old = std::getenv(kName)) previous_ = old;
    setenv(kName, value, /*overwrite=*/1);
  }
  ~CommNcclSetting() {
    if (previous_) {
      setenv(kName, previous_->c_str(), 1);
    } else {
      unsetenv(kName);
    }
  }
  CommNcclSetting(const CommNcclSetting&) = delete;
  CommNcclSetting& operator=(const CommNcclSetting&) = delete;
  CommNcclSetting(CommNcclSetting&&) = delete;
  CommNcclSetting& operator=(CommNcclSetting&&) = delete;

 private:
  static constexpr const char* kName = "TANDEM_COMM_NCCL";
  std::optional<std::string> previous_;
};

std::string list(const std::vector<Device>& devices) {
  std::string out;
  for (const Device& d : devices) {
    if (!out.empty()) out += ",";
    out += d.str();
  }
  return out;
}

std::vector<Device> reversed(std::vector<Device> devices) {
  std::reverse(devices.begin(), devices.end());
  return devices;
}

// Contiguous tensors of every dtype, one of them empty, on cpu:0; the last
// is 2-D (see on()).
std::vector<Tensor> mixed(Generator& gen) {
  return {testing::uniform({3, 4}, gen).to(kFloat32),
          testing::uniform({5}, gen),
          testing::integers({7}, gen, -1000, 1000),
          testing::integers({300, 5}, gen, 0, 256, kUInt8),
          testing::integers({6}, gen, 0, 2, kBool),
          testing::uniform({0}, gen).to(kFloat32),
          testing::uniform({40, 30}, gen).to(kFloat32)};
}

// `tensors` on `device`, the last one transposed there (not contiguous).
std::vector<Tensor> on(Device device, const std::vector<Tensor>& tensors) {
  std::vector<Tensor> out;
  for (const Tensor& t : tensors) out.push_back(t.to(device));
  out.back() = out.back().t();
  return out;
}

// The float64 (or int64) CPU sum of inputs[0][i] + inputs[1][i] + ...
Tensor reference_sum(const std::vector<std::vector<Tensor>>& inputs, size_t i) {
  const ScalarType wide = inputs[0][i].is_floating_point() ? kFloat64 : kInt64;
  Tensor sum = zeros(inputs[0][i].sizes(), TensorOptions(wide));
  for (const auto& input : inputs) sum = sum + input[i].to(Device(kCPU), wide);
  return sum;
}

// Each device's own summands: float32, float64, int64 and uint8 (small
// enough not to wrap), the last not contiguous.
std::vector<std::vector<Tensor>> summands(const std::vector<Device>& devices,
                                          Generator& gen) {
  std::vector<std::vector<Tensor>> inputs;
  for (const Device& device : devices) {
    inputs.push_back(on(device,
                        {testing::uniform({3, 4}, gen).to(kFloat32),
                         testing::uniform({1000}, gen),
                         testing::integers({7}, gen, -1000, 1000),
                         testing::integers({300}, gen, 0, 32, kUInt8),
                         testing::uniform({40, 30}, gen).to(kFloat32)}));
  }
  return inputs;
}

// `n` float64 values of magnitudes 2^-20 to 2^40 and both signs, each a
// float32 value too, on cpu:0: a sum of three or more of them depends on
// the order of the additions, in either dtype.
Tensor wide_range(int64_t n, Generator& gen) {
  Tensor values = testing::uniform({n}, gen).contiguous();
  const Tensor exponents = testing::integers({n}, gen, -20, 40).contiguous();
  auto* v = values.data_ptr<double>();
  const auto* e = exponents.data_ptr<int64_t>();
  for (int64_t k = 0; k < n; ++k) v[k] = std::ldexp(v[k], static_cast<int>(e[k]));
  return values;
}

// inputs[order[0]][i] + inputs[order[1]][i] + ..., added left to right on
// cpu:0 in the tensors' own dtype.
Tensor sum_in_order(const std::vector<std::vector<Tensor>>& inputs,
                    size_t i,
                    const std::vector<size_t>& order) {
  Tensor sum = inputs[order[0]][i].to(Device(kCPU));
  for (size_t k = 1; k < order.size(); ++k)
    sum = sum + inputs[order[k]][i].to(Device(kCPU));
  return sum;
}

// Every sum equals the reference: float32 to its tolerance, the rest to
// theirs (exactly for integers).
void expect_sums(const std::vector<Tensor>& sums,
                 const std::vector<std::vector<Tensor>>& inputs,
                 Device destination,
                 const std::string& what) {
  ASSERT_EQ(sums.size(), inputs[0].size()) << what;
  for (size_t i = 0; i < sums.size(); ++i) {
    EXPECT_EQ(sums[i].device(), destination) << what << " tensor " << i;
    EXPECT_EQ(sums[i].dtype(), inputs[0][i].dtype()) << what << " tensor " << i;
    const Tensor want = reference_sum(inputs, i);
    EXPECT_TRUE(close_to(sums[i].to(Device(kCPU)),
                         sums[i].is_floating_point() ? want : want.to(sums[i].dtype())))
        << what << " tensor " << i;
  }
}

class CudaCommNccl : public testing::CudaTest {
 protected:
  void SetUp() override {
    testing::CudaTest::SetUp();
    gpus = all_devices_under_test();
  }

  // Empty when there are two devices to test over; otherwise why not.
  std::string two_devices_missing() const {
    if (gpus.size() >= 2) return "";
    return detail::str("needs 2 GPUs; ", gpus.size(), " visible");
  }

  // Every GPU when there are three or more; three logical CPU devices
  // under TANDEM_CUDA_TEST_DEVICE=cpu:N; otherwise none.
  std::vector<Device> three_or_more() const {
    const Device first = device_under_test();
    if (first.is_cpu()) {
      return {first, Device(kCPU, first.index() + 1), Device(kCPU, first.index() + 2)};
    }
    return gpus.size() >= 3 ? gpus : std::vector<Device>{};
  }

  std::vector<Device> gpus;
};

TEST_F(CudaCommNccl, BroadcastOverEveryGpuIsExact) {
  if (const std::string why = two_devices_missing(); !why.empty()) GTEST_SKIP() << why;
  const std::vector<Tensor> cpu = mixed(gen);
  const std::vector<Tensor> want = on(Device(kCPU), cpu);
  const std::vector<Tensor> sources = on(gpus[0], cpu);
  // Reversed, the source is the last rank and devices[0] gets copies.
  for (const auto& devices : {gpus, reversed(gpus)}) {
    for (size_t buffer : {parallel::kDefaultBufferSize, size_t{64}}) {
      const std::string what = detail::str(list(devices), " buffer ", buffer);
      const auto copies = parallel::broadcast_coalesced(sources, devices, buffer);
      ASSERT_EQ(copies.size(), devices.size()) << what;
      for (size_t j = 0; j < devices.size(); ++j) {
        ASSERT_EQ(copies[j].size(), cpu.size()) << what;
        for (size_t i = 0; i < cpu.size(); ++i) {
          const std::string which = detail::str(what, ": tensor ", i, " on ", devices[j]);
          const Tensor& copy = copies[j][i];
          EXPECT_EQ(copy.device(), devices[j]) << which;
          EXPECT_TRUE(identical(copy.to(Device(kCPU)), want[i])) << which;
          if (j == 0 && devices[0] == gpus[0]) {
            EXPECT_TRUE(copy.is_same(sources[i])) << which;
            continue;
          }
          EXPECT_TRUE(copy.is_contiguous()) << which;
          if (copy.numel() > 0) {
            EXPECT_NE(copy.data_ptr(), sources[i].data_ptr()) << which;
          }
        }
      }
    }
  }
}

TEST_F(CudaCommNccl, ReduceOverEveryGpuMatchesTheFloat64Sum) {
  if (const std::string why = two_devices_missing(); !why.empty()) GTEST_SKIP() << why;
  for (const auto& devices : {gpus, reversed(gpus)}) {
    const auto inputs = summands(devices, gen);
    // The first and last ranks through NCCL; the CPU through the add kernels.
    for (const Device& destination : {devices[0], devices.back(), Device(kCPU)}) {
      for (size_t buffer : {parallel::kDefaultBufferSize, size_t{64}}) {
        const std::string what =
            detail::str(list(devices), " to ", destination, " buffer ", buffer);
        expect_sums(parallel::reduce_add_coalesced(inputs, destination, buffer),
                    inputs,
                    destination,
                    what);
      }
    }
  }
}

TEST_F(CudaCommNccl, NcclOnAndOffAgree) {
  if (const std::string why = two_devices_missing(); !why.empty()) GTEST_SKIP() << why;
  const std::vector<Tensor> sources = on(gpus[0], mixed(gen));
  const auto inputs = summands(gpus, gen);
  const auto run = [&](const char* setting) {
    const CommNcclSetting nccl(setting);
    return std::pair(parallel::broadcast_coalesced(sources, gpus, 64),
                     parallel::reduce_add_coalesced(inputs, gpus[0], 64));
  };
  const auto [copies_off, sums_off] = run("0");
  const auto [copies_on, sums_on] = run("1");
  for (size_t j = 0; j < gpus.size(); ++j) {
    for (size_t i = 0; i < sources.size(); ++i) {
      EXPECT_TRUE(
          identical(copies_on[j][i].to(Device(kCPU)), copies_off[j][i].to(Device(kCPU))))
          << "tensor " << i << " on " << gpus[j];
    }
  }
  // NCCL sums only where its order cannot change a bit: the same bits
  // either way, over any number of GPUs.
  for (size_t i = 0; i < sums_on.size(); ++i) {
    EXPECT_TRUE(identical(sums_on[i].to(Device(kCPU)), sums_off[i].to(Device(kCPU))))
        << "sum " << i;
  }
}

// The spec's deterministic reduction: with summands whose sum depends on
// the order of the additions, every float sum over three or more devices,
// to any of them, is ((g0 + g1) + g2) + ... bit for bit, NCCL on or off.
// Integer sums (NCCL's where it is on) are exact.
TEST_F(CudaCommNccl, FloatSumsOverThreeOrMoreGpusAreInReplicaOrder) {
  const std::vector<Device> devices = three_or_more();
  if (devices.empty()) GTEST_SKIP() << "needs 3 GPUs; " << gpus.size() << " visible";
  std::vector<std::vector<Tensor>> inputs;
  for (const Device& device : devices) {
    inputs.push_back(on(device,
                        {wide_range(4096, gen).to(kFloat32),
                         wide_range(4096, gen),
                         testing::integers({7}, gen, -1000, 1000),
                         wide_range(1200, gen).to(kFloat32).view({40, 30})}));
  }
  std::vector<size_t> order(devices.size());
  for (size_t j = 0; j < order.size(); ++j) order[j] = j;
  std::vector<size_t> backwards(order.rbegin(), order.rend());
  std::vector<Tensor> want;
  for (size_t i = 0; i < inputs[0].size(); ++i) {
    want.push_back(sum_in_order(inputs, i, order));
    // Otherwise the test could not tell the orders apart.
    if (inputs[0][i].is_floating_point()) {
      ASSERT_FALSE(identical(want[i], sum_in_order(inputs, i, backwards)))
          << "tensor " << i << ": the summands do not depend on the order";
    }
  }
  for (const char* setting : {"1", "0"}) {
    const CommNcclSetting nccl(setting);
    for (const Device& destination : {devices[0], devices[1], devices.back()}) {
      for (size_t buffer : {parallel::kDefaultBufferSize, size_t{64}}) {
        const std::string what = detail::str(
            "TANDEM_COMM_NCCL=", setting, " to ", destination, " buffer ", buffer);
        const auto sums = parallel::reduce_add_coalesced(inputs, destination, buffer);
        ASSERT_EQ(sums.size(), want.size()) << what;
        for (size_t i = 0; i < sums.size(); ++i) {
          EXPECT_EQ(sums[i].device(), destination) << what << " tensor " << i;
          EXPECT_TRUE(identical(sums[i].to(Device(kCPU)), want[i]))
              << what << " tensor " << i;
        }
      }
    }
  }
}

TEST_F(CudaCommNccl, DataParallelGradientsAgreeWithNcclOnAndOff) {
  if (const std::string why = two_devices_missing(); !why.empty()) GTEST_SKIP() << why;
  auto original = nn::Sequential(nn::Linear(6, 16), nn::ReLU(), nn::Linear(16, 3)).ptr();
  const Tensor x = testing::uniform({24, 6}, gen).to(kFloat32);
  const auto grads = [&](const char* setting) {
    const CommNcclSetting nccl(setting);
    auto net = std::dynamic_pointer_cast<nn::SequentialImpl>(original->clone());
    net->to(gpus[0]);
    nn::DataParallel dp(net, nn::DataParallelOptions().device_ids(gpus));
    dp(x).sum().backward();
    std::vector<Tensor> out;
    for (const Tensor& p : net->parameters()) {
      EXPECT_EQ(p.grad().device(), gpus[0]);
      out.push_back(p.grad().to(Device(kCPU)));
    }
    return out;
  };
  const std::vector<Tensor> off = grads("0");
  const std::vector<Tensor> on_ = grads("1");
  ASSERT_EQ(on_.size(), off.size());
  for (size_t i = 0; i < off.size(); ++i) {
    EXPECT_TRUE(identical(on_[i], off[i])) << "parameter " << i;
  }
}

// NCCL cannot put two ranks on one GPU: had comm tried it for {g, g}, making
// the communicators would have failed, so right results show it did not.
TEST_F(CudaCommNccl, OneGpuNeedsNoNcclAndIsRight) {
  const Device g = device_under_test();
  const Device cpu(kCPU);
  const std::vector<Tensor> cpu_tensors = mixed(gen);
  const std::vector<Tensor> want = on(cpu, cpu_tensors);
  const std::vector<Tensor> sources = on(g, cpu_tensors);
  for (const std::vector<Device>& devices :
       std::vector<std::vector<Device>>{{g}, {g, g}, {g, cpu}, {cpu, g}}) {
    const std::string what = list(devices);
    const auto copies = parallel::broadcast_coalesced(sources, devices, 64);
    for (size_t j = 0; j < devices.size(); ++j) {
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(copies[j][i].device(), devices[j]) << what;
        EXPECT_TRUE(identical(copies[j][i].to(cpu), want[i]))
            << what << ": tensor " << i << " on " << devices[j];
      }
    }
    if (devices.size() < 2) continue;
    const auto inputs = summands(devices, gen);
    for (const Device& destination : devices) {
      expect_sums(parallel::reduce_add_coalesced(inputs, destination, 64),
                  inputs,
                  destination,
                  detail::str(what, " to ", destination));
    }
  }
}

}  // namespace
}  // namespace tandem
