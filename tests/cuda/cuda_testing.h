// Helpers for the CUDA backend's tests (tests/cuda/): the device under test,
// a fixture that skips without it, seeded inputs, and comparisons with a
// float64 CPU reference at the tolerance of the dtype computed in.
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

// ---- comparisons ----

/// The largest finite |value| of `t` (0 if none), as a double.
inline double max_abs(const Tensor& t) {
  const Tensor host = t.detach().to(Device(kCPU), kFloat64).contiguous();
  const double* p = host.data_ptr<double>();
  double largest = 0;
  for (int64_t i = 0; i < host.numel(); ++i) {
    if (std::isfinite(p[i])) largest = std::max(largest, std::abs(p[i]));
  }
  return largest;
}

/// `got` (any device) against a reference: exactly for integral and bool
/// results; for floating ones, |got - want| <= rtol * |want| + atol * max|want|
/// with (rtol, atol) = (1e-4, 1e-5) for float32 and (1e-10, 1e-12) for float64,
/// both times `loosen`. Scaling atol by the largest element keeps results
/// that cancel to near zero from failing on their own relative error.
inline ::testing::AssertionResult close_to(const Tensor& got,
                                           const Tensor& want,
                                           double loosen = 1) {
  if (!got.defined() || !want.defined()) {
    return ::testing::AssertionFailure() << "undefined tensor (got " << got.defined()
                                         << ", want " << want.defined() << ")";
  }
  if (!got.is_floating_point()) return all_close(got, want, 0, 0);
  const bool single = got.dtype() == kFloat32 || want.dtype() == kFloat32;
  const double rtol = (single ? 1e-4 : 1e-10) * loosen;
  const double atol = (single ? 1e-5 : 1e-12) * loosen * max_abs(want);
  return all_close(got, want, rtol, atol);
}

/// Same dtype, shape and values, bit for bit (NaN matches NaN).
inline ::testing::AssertionResult identical(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype()) {
    return ::testing::AssertionFailure()
           << "dtype " << got.dtype() << " != expected " << want.dtype();
  }
  return all_close(got, want, 0, 0);
}

// ---- the op table: forward and backward against the float64 reference ----

/// One input of a case: floating values uniform in [low, high) that require
/// grad unless `constant`, or (index) int64 values in [low, high).
struct CaseInput {
  IntList shape;
  double low = -2, high = 2;
  bool index = false;
  bool constant = false;
};
inline CaseInput F(IntList shape) { return {std::move(shape)}; }
/// Positive (log, sqrt, divisors, ...).
inline CaseInput P(IntList shape) { return {std::move(shape), 0.5, 2.0}; }
/// int64 in [0, high).
inline CaseInput I(IntList shape, int64_t high) {
  return {std::move(shape), 0, static_cast<double>(high), true};
}
/// Positive and without gradient (class weights, running statistics).
inline CaseInput W(IntList shape) { return {std::move(shape), 0.5, 2.0, false, true}; }

struct OpCase {
  std::string name;
  std::vector<CaseInput> inputs;
  std::function<Tensor(const std::vector<Tensor>&)> fn;
  double loosen = 1;  // tolerance factor (see close_to)
};
inline void PrintTo(const OpCase& c, std::ostream* out) { *out << c.name; }

/// The case's inputs, float64 and int64 on cpu:0, the same on every call.
inline std::vector<Tensor> case_inputs(const OpCase& c) {
  Generator gen(std::hash<std::string>()(c.name));
  std::vector<Tensor> out;
  for (const CaseInput& in : c.inputs) {
    if (in.index) {
      out.push_back(integers(
          in.shape, gen, static_cast<int64_t>(in.low), static_cast<int64_t>(in.high)));
    } else {
      out.push_back(uniform(in.shape, gen, in.low, in.high));
    }
  }
  return out;
}

struct CaseRun {
  Tensor output;
  std::vector<Tensor> grads;  // of the inputs that require grad, in order
};

/// Runs `c` on `device` with floating inputs in `dtype`: forward, then the
/// backward of a fixed random weighting of the output.
inline CaseRun run_case(const OpCase& c, Device device, ScalarType dtype) {
  const std::vector<Tensor> reference = case_inputs(c);
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < reference.size(); ++i) {
    Tensor t =
        reference[i].to(device,
                        reference[i].is_floating_point() ? dtype : reference[i].dtype(),
                        false,
                        /*copy=*/true);
    const CaseInput& spec = c.inputs[i];
    if (!spec.index && !spec.constant) t.requires_grad_();
    inputs.push_back(t);
  }
  CaseRun run{c.fn(inputs), {}};
  if (run.output.requires_grad()) {
    Generator gen(99);
    const Tensor weights =
        randn(run.output.sizes(), gen, kFloat64).to(device, run.output.dtype());
    (run.output * weights).sum().backward();
  }
  for (const Tensor& t : inputs) {
    if (t.requires_grad()) run.grads.push_back(t.grad());
  }
  return run;
}

/// The case on device_under_test() in `dtype` equals the float64 CPU
/// reference: output, its device and dtype, and every input's gradient.
inline void expect_case_matches_reference(const OpCase& c, ScalarType dtype) {
  const CaseRun want = run_case(c, Device(kCPU), kFloat64);
  const CaseRun got = run_case(c, device_under_test(), dtype);
  const std::string what =
      detail::str(c.name, " in ", dtype, " on ", device_under_test());
  ASSERT_TRUE(got.output.defined()) << what;
  EXPECT_EQ(got.output.device(), device_under_test()) << what;
  if (want.output.is_floating_point()) {
    EXPECT_EQ(got.output.dtype(), dtype) << what;
  }
  EXPECT_TRUE(close_to(got.output, want.output, c.loosen)) << what << ": output";
  ASSERT_EQ(got.grads.size(), want.grads.size()) << what;
  for (size_t i = 0; i < got.grads.size(); ++i) {
    if (!want.grads[i].defined()) {
      EXPECT_FALSE(got.grads[i].defined()) << what << ": gradient " << i;
      continue;
    }
    ASSERT_TRUE(got.grads[i].defined()) << what << ": gradient " << i << " is missing";
    EXPECT_EQ(got.grads[i].device(), device_under_test()) << what << ": gradient " << i;
    EXPECT_EQ(got.grads[i].dtype(), dtype) << what << ": gradient " << i;
    EXPECT_TRUE(close_to(got.grads[i], want.grads[i], c.loosen))
        << what << ": gradient of input " << i;
  }
}

/// A parameterised fixture over OpCase rows, skipping without a device.
class CudaOpCaseTest : public CudaTest, public ::testing::WithParamInterface<OpCase> {};

/// Test names from the rows' names.
inline std::string case_name(const ::testing::TestParamInfo<OpCase>& info) {
  return info.param.name;
}

}  // namespace tandem::testing
