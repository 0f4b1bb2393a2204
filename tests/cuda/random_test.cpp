// Random numbers on the device under test: dropout (p = 0 and 1, the kept
// fraction near 1 - p, survivors scaled by 1 / (1 - p), the gradient, seeds
// reproduce masks, no pattern across neighbouring elements, rows or lanes)
// and the random fills (uniform, normal, randint ranges and moments;
// manual_seed, explicit generators and saved generator states reproduce).
// Device streams need not equal the CPU's; only their statistics are checked.
#include <cmath>

#include "cuda/cuda_testing.h"

namespace tandem {
namespace {

using testing::device_under_test;
using testing::identical;
using testing::to_dut;

constexpr int64_t kMillion = 1 << 20;

// The mean of a tensor's values, on the CPU in float64.
double mean_of(const Tensor& t) {
  return t.to(Device(kCPU), kFloat64).mean().item<double>();
}
double std_of(const Tensor& t) {
  const Tensor d = t.to(Device(kCPU), kFloat64);
  return std::sqrt(square(d - d.mean()).mean().item<double>());
}

class CudaRandom : public testing::CudaTest {};

TEST_F(CudaRandom, DropoutKeepsAboutOneMinusPAndScalesTheRest) {
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    const Tensor x =
        full({kMillion}, 2.0, TensorOptions(dtype).device(device_under_test()));
    for (double p : {0.1, 0.5, 0.8}) {
      const Tensor y = dropout(x, p, /*train=*/true);
      EXPECT_EQ(y.device(), device_under_test());
      const Tensor host = y.to(Device(kCPU), kFloat64);
      const double kept = mean_of(host != 0);
      // 1M Bernoulli draws: the standard error is at most 0.0005.
      EXPECT_NEAR(kept, 1 - p, 0.003) << dtype << " p = " << p;
      const double scaled = 2 / (1 - p);
      const int64_t zeros_seen = (host == 0).sum().item<int64_t>();
      const int64_t scaled_seen =
          ((host - scaled).abs() < 1e-5 * scaled).sum().item<int64_t>();
      EXPECT_EQ(zeros_seen + scaled_seen, kMillion)
          << dtype << " p = " << p << ": values other than 0 and " << scaled;
    }
    // p = 0 and evaluation return the input; p = 1 gives zeros.
    EXPECT_TRUE(dropout(x, 0.0, true).is_same(x));
    EXPECT_TRUE(dropout(x, 0.5, false).is_same(x));
    EXPECT_EQ(dropout(x, 1.0, true).abs().sum().item<double>(), 0.0);
  }
}

TEST_F(CudaRandom, DropoutMasksReproduceFromASeedAndMoveOn) {
  const Tensor x = to_dut(testing::uniform({1000, 37}, gen), kFloat32);
  manual_seed(11);
  const Tensor a = dropout(x, 0.5, true);
  manual_seed(11);
  const Tensor b = dropout(x, 0.5, true);
  const Tensor c = dropout(x, 0.5, true);
  EXPECT_TRUE(identical(a.to(kCPU), b.to(kCPU)));
  EXPECT_FALSE(equal(b.to(kCPU), c.to(kCPU)));
  // A different seed, a different mask.
  manual_seed(12);
  EXPECT_FALSE(equal(dropout(x, 0.5, true).to(kCPU), a.to(kCPU)));
}

TEST_F(CudaRandom, DropoutMaskHasNoPattern) {
  const Tensor ones_2d = ones({1024, 1024}, TensorOptions().device(device_under_test()));
  const Tensor mask = (dropout(ones_2d, 0.5, true) != 0).to(Device(kCPU), kFloat64);
  const Tensor flat = mask.reshape({-1});
  // Neighbours agree half the time when independent.
  const double same_as_next =
      mean_of(flat.narrow(0, 0, kMillion - 1) == flat.narrow(0, 1, kMillion - 1));
  EXPECT_NEAR(same_as_next, 0.5, 0.005);
  // Every lane of 8 (a generator's outputs per call) keeps about half.
  const Tensor lanes = flat.reshape({-1, 8}).mean({0});
  EXPECT_TRUE(testing::all_close(lanes, full({8}, 0.5, kFloat64), 0, 0.01)) << lanes;
  // Rows (and the two halves) are not copies of each other.
  EXPECT_NEAR(mean_of(mask[0] == mask[1]), 0.5, 0.1);
  EXPECT_NEAR(mean_of(mask.narrow(0, 0, 512) == mask.narrow(0, 512, 512)), 0.5, 0.005);
}

TEST_F(CudaRandom, DropoutGradientIsTheScaledMask) {
  const Tensor x =
      ones({4000}, TensorOptions(kFloat64).device(device_under_test())).requires_grad_();
  const Tensor y = dropout(x, 0.25, true);
  y.backward(ones_like(y));
  EXPECT_EQ(x.grad().device(), device_under_test());
  // With x = 1 the output is the mask / (1 - p) itself.
  EXPECT_TRUE(identical(x.grad().to(kCPU), y.detach().to(kCPU)));
  EXPECT_GT((x.grad().to(kCPU) == 0).sum().item<int64_t>(), 0);
}

TEST_F(CudaRandom, UniformAndNormalFills) {
  const Device dev = device_under_test();
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    const TensorOptions options = TensorOptions(dtype).device(dev);
    const Tensor u = rand({kMillion + 3}, options);
    EXPECT_EQ(u.device(), dev);
    EXPECT_EQ(u.dtype(), dtype);
    EXPECT_GE(u.min().item<double>(), 0.0) << dtype;
    EXPECT_LT(u.max().item<double>(), 1.0) << dtype;
    EXPECT_NEAR(mean_of(u), 0.5, 0.002) << dtype;
    EXPECT_NEAR(std_of(u), std::sqrt(1.0 / 12), 0.002) << dtype;
    // Neighbours uncorrelated: E[(u_i - 1/2)(u_{i+1} - 1/2)] = 0.
    const Tensor c = u.to(Device(kCPU), kFloat64) - 0.5;
    EXPECT_NEAR(mean_of(c.narrow(0, 0, kMillion) * c.narrow(0, 1, kMillion)), 0, 0.001);
    Tensor ranged = empty({kMillion}, options);
    ranged.uniform_(-3, 5);
    EXPECT_GE(ranged.min().item<double>(), -3.0);
    EXPECT_LT(ranged.max().item<double>(), 5.0);
    EXPECT_NEAR(mean_of(ranged), 1.0, 0.02) << dtype;

    const Tensor n = randn({kMillion + 1}, options);
    EXPECT_NEAR(mean_of(n), 0, 0.005) << dtype;
    EXPECT_NEAR(std_of(n), 1, 0.005) << dtype;
    EXPECT_TRUE(std::isfinite(n.abs().max().item<double>())) << dtype;
    const Tensor nc = n.to(Device(kCPU), kFloat64);
    EXPECT_NEAR(mean_of(nc.narrow(0, 0, kMillion) * nc.narrow(0, 1, kMillion)), 0, 0.005);
    // The fraction beyond 2 sigma: 4.55% for a normal distribution.
    EXPECT_NEAR(mean_of(nc.abs() > 2), 0.0455, 0.002) << dtype;
    Tensor shifted = empty({kMillion}, options);
    shifted.normal_(2, 3);
    EXPECT_NEAR(mean_of(shifted), 2, 0.015) << dtype;
    EXPECT_NEAR(std_of(shifted), 3, 0.015) << dtype;
  }
}

TEST_F(CudaRandom, RandintCoversTheRangeEvenly) {
  const Device dev = device_under_test();
  for (ScalarType dtype : {kInt64, kFloat32, kUInt8}) {
    const int64_t low = dtype == kUInt8 ? 0 : -5;
    const Tensor r = randint(low, 7, {kMillion}, TensorOptions(dtype).device(dev));
    EXPECT_EQ(r.device(), dev);
    EXPECT_EQ(r.dtype(), dtype);
    const Tensor host = r.to(Device(kCPU), kInt64);
    EXPECT_EQ(host.min().item<int64_t>(), low) << dtype;
    EXPECT_EQ(host.max().item<int64_t>(), 6) << dtype;
    EXPECT_TRUE(identical(host.to(kFloat64), r.to(Device(kCPU), kFloat64)))
        << dtype << ": not whole numbers";
    const double expected = static_cast<double>(kMillion) / static_cast<double>(7 - low);
    for (int64_t v = low; v < 7; ++v) {
      const auto count = static_cast<double>((host == v).sum().item<int64_t>());
      EXPECT_NEAR(count / expected, 1.0, 0.03) << dtype << " value " << v;
    }
  }
  // A range wider than 32 bits.
  const Tensor wide =
      randint(0, int64_t{1} << 40, {100000}, TensorOptions(kInt64).device(dev));
  EXPECT_GT(wide.max().item<int64_t>(), int64_t{1} << 39);
}

TEST_F(CudaRandom, SeedsGeneratorsAndSavedStatesReproduce) {
  const TensorOptions options = TensorOptions().device(device_under_test());
  manual_seed(42);
  const Tensor a = randn({5000}, options);
  const Tensor ai =
      randint(0, 1000, {5000}, TensorOptions(kInt64).device(device_under_test()));
  manual_seed(42);
  EXPECT_TRUE(identical(randn({5000}, options).to(kCPU), a.to(kCPU)));
  EXPECT_TRUE(identical(
      randint(0, 1000, {5000}, TensorOptions(kInt64).device(device_under_test()))
          .to(kCPU),
      ai.to(kCPU)));
  EXPECT_FALSE(equal(randn({5000}, options).to(kCPU), a.to(kCPU)));
  // An explicit generator: its own stream, reproducible, untouched by the default.
  Generator g(7);
  const Tensor first = rand({5000}, g, options);
  Generator h(7);
  rand({100}, options);
  EXPECT_TRUE(identical(rand({5000}, h, options).to(kCPU), first.to(kCPU)));
  EXPECT_FALSE(equal(rand({5000}, g, options).to(kCPU), first.to(kCPU)));
  // A saved state resumes exactly (checkpoints), dropout included.
  const std::string state = default_generator().get_state();
  const Tensor x = rand({3000}, options);
  const Tensor mask = dropout(ones({3000}, options), 0.3, true);
  default_generator().set_state(state);
  EXPECT_TRUE(identical(rand({3000}, options).to(kCPU), x.to(kCPU)));
  EXPECT_TRUE(
      identical(dropout(ones({3000}, options), 0.3, true).to(kCPU), mask.to(kCPU)));
}

}  // namespace
}  // namespace tandem
