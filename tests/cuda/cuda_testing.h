// Helpers for the CUDA backend's tests (tests/cuda/): the device under test,
// a fixture that skips without it, seeded inputs, and comparisons with a
// float64 CPU reference at the tolerance of the dtype computed in. Each op's
// forward and gradients on every GPU are the op table's
// (tests/consistency/); these tests cover the rest of the backend.
//
// The tests run on cuda:0. With TANDEM_CUDA_TEST_DEVICE set (e.g. cpu:1) the
// same tests run on that device instead: that is how the tests themselves are
// checked on a machine without a GPU. The suite is named *Cuda*, never
// *_CUDA (tests/main.cpp would filter those out before the override applies).
//
//   class CudaThing : public tandem::testing::CudaTest {};
//   TEST_F(CudaThing, ReluMatchesTheReference) {
//     Tensor x = uniform({3, 4}, gen);                      // float64, cpu:0
//     Tensor y = relu(to_dut(x, kFloat32));
//     EXPECT_EQ(y.device(), device_under_test());
//     EXPECT_TRUE(close_to(y, relu(x)));                    // float32 tolerance
//   }
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "support/dtype_tolerance.h"
#include "support/tensor_testing.h"
#include "tandem/core/cuda.h"
#include "tandem/tandem.h"

namespace tandem::testing {

/// cuda:0, or the device named by $TANDEM_CUDA_TEST_DEVICE.
inline Device device_under_test() {
  const char* spec = std::getenv("TANDEM_CUDA_TEST_DEVICE");
  return spec != nullptr && *spec != '\0' ? Device(std::string(spec)) : Device("cuda:0");
}

/// Empty when the tests can run on device_under_test(); otherwise why not.
inline std::string missing_device_reason() {
  const Device device = device_under_test();
  if (device.is_cpu()) {
    return device.index() == 0 ? "TANDEM_CUDA_TEST_DEVICE=cpu:0 is the reference device; "
                                 "use cpu:1 or above"
                               : "";
  }
  const char* instead =
      "; TANDEM_CUDA_TEST_DEVICE=cpu:1 runs these tests on a CPU device";
  if (!tandem::cuda::is_built()) {
    return detail::str("this build has no CUDA backend (configure with -DTANDEM_CUDA=ON)",
                       instead);
  }
  const int64_t count = tandem::cuda::device_count();
  if (count == 0) {
    return detail::str("tandem::cuda::device_count() is 0 (no GPU or no driver)",
                       instead);
  }
  if (device.index() >= count) {
    return detail::str(device, " was asked for but ", count, " GPU(s) are visible");
  }
  return "";
}

/// Skips each test, with one line saying why, when there is no device to
/// test; each test gets fresh seeded generators.
class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = missing_device_reason();
    if (!why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
    manual_seed(20240611);
  }
  Generator gen{1234};
};

/// The GPUs to run DataParallel over: cuda:0 .. cuda:N-1. Under the
/// override, the device under test and the next logical CPU device.
inline std::vector<Device> all_devices_under_test() {
  const Device first = device_under_test();
  if (first.is_cpu()) return {first, Device(kCPU, first.index() + 1)};
  std::vector<Device> devices;
  for (int64_t i = 0; i < tandem::cuda::device_count(); ++i) {
    devices.emplace_back(kCUDA, static_cast<int>(i));
  }
  return devices;
}

/// Two distinct devices for the spec's two-device cases: cuda:0 and cuda:1
/// when there are two GPUs, else cuda:0 and cpu:0 (under the override: the
/// device under test and the next CPU device).
inline std::vector<Device> device_pair() {
  const std::vector<Device> all = all_devices_under_test();
  TANDEM_CHECK(!all.empty(), "device_pair: no device to test");
  if (all.size() >= 2) return {all[0], all[1]};
  return {all[0], Device(kCPU)};
}

// ---- inputs ----

/// Values uniform in [low, high), float64 on cpu:0, rounded to the nearest
/// float32 so the float32 runs see exactly the reference's inputs.
inline Tensor uniform(const IntList& sizes,
                      Generator& gen,
                      double low = -1,
                      double high = 1) {
  return (rand(sizes, gen, kFloat64) * (high - low) + low).to(kFloat32).to(kFloat64);
}

/// Whole numbers in [low, high) as `dtype`, on cpu:0.
inline Tensor integers(const IntList& sizes,
                       Generator& gen,
                       int64_t low,
                       int64_t high,
                       ScalarType dtype = kInt64) {
  return randint(low, high, sizes, gen).to(dtype);
}

/// A copy of `t` on device_under_test(); floating tensors converted to
/// `dtype` when given. Never aliases `t` (for in-place tests).
inline Tensor to_dut(const Tensor& t, std::optional<ScalarType> dtype = std::nullopt) {
  const ScalarType d = dtype && t.is_floating_point() ? *dtype : t.dtype();
  return t.to(device_under_test(), d, /*non_blocking=*/false, /*copy=*/true);
}

// ---- comparisons (close_to: support/dtype_tolerance.h) ----

/// Same dtype, shape and values, bit for bit (NaN matches NaN).
inline ::testing::AssertionResult identical(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype()) {
    return ::testing::AssertionFailure()
           << "dtype " << got.dtype() << " != expected " << want.dtype();
  }
  return all_close(got, want, 0, 0);
}

}  // namespace tandem::testing
