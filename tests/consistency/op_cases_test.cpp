// The op table: every row of the *_cases_test.cpp files (one per
// differentiable op of tandem/ops/*.h and per interesting variant) runs
//   - on cpu:0 in float64: the reference, forward and gradients;
//   - on cpu:1 and on each cuda:N that tandem::cuda::device_count() reports,
//     in float64 and in float32: outputs and every input's gradient on that
//     device, in that dtype, close to the reference at the dtype's tolerance
//     (support/dtype_tolerance.h); without a GPU the CUDA test of each row
//     is skipped, saying why;
//   - through gradcheck in float64 on cpu:0, unless the row says why finite
//     differences do not apply (too large, for one);
//   - under create_graph: the recorded backward equals the kernels', and
//     passes gradgradcheck in float64 (second derivatives); rows marked
//     without them (the fused recurrent layers) must refuse create_graph.
// A new op without a row fails review (STYLE.md, recommendation 15).
#include <functional>
#include <string>
#include <vector>

#include "consistency/op_cases.h"
#include "support/dtype_tolerance.h"
#include "support/tensor_testing.h"
#include "tandem/core/cuda.h"
#include "tandem/tandem.h"

namespace tandem::testing::op_table {
namespace {

// The row's inputs on cpu:0: float64 values that float32 holds exactly (so
// the float32 runs see the reference's inputs), requiring grad unless
// constant, and int64 indices; the same for every run of the row.
tensor_list reference_inputs(const OpCase& c) {
  Generator gen(std::hash<std::string>()(c.name));
  tensor_list out;
  for (const Input& in : c.inputs) {
    if (in.index) {
      out.push_back(randint(
          static_cast<int64_t>(in.low), static_cast<int64_t>(in.high), in.shape, gen));
      continue;
    }
    Tensor t = (rand(in.shape, gen, kFloat64) * (in.high - in.low) + in.low)
                   .to(kFloat32)
                   .to(kFloat64);
    out.push_back(in.constant ? t : t.requires_grad_());
  }
  return out;
}

// The same inputs copied to `device`, floating ones converted to `dtype`.
tensor_list converted(const tensor_list& inputs, Device device, ScalarType dtype) {
  tensor_list out;
  for (const Tensor& t : inputs) {
    const ScalarType d = t.is_floating_point() ? dtype : t.dtype();
    Tensor c = t.detach().to(device, d, /*non_blocking=*/false, /*copy=*/true);
    out.push_back(t.requires_grad() ? c.requires_grad_() : c);
  }
  return out;
}

struct RunResult {
  Tensor output;
  tensor_list grads;  // of the inputs that require grad, in order
};

// Forward, then backward of a fixed random weighting of the output.
RunResult run(const OpCase& c, const tensor_list& inputs) {
  RunResult r{c.fn(inputs), {}};
  EXPECT_TRUE(r.output.requires_grad()) << c.name << ": output does not require grad";
  if (!r.output.requires_grad()) return r;
  Generator gen(99);
  Tensor weights =
      randn(r.output.sizes(), gen, kFloat64).to(r.output.device(), r.output.dtype());
  (r.output * weights).sum().backward();
  for (const Tensor& t : inputs) {
    if (t.requires_grad()) r.grads.push_back(t.grad());
  }
  return r;
}

// The row on `device` in float64 and in float32 against the reference:
// output, its device and dtype, and every input's gradient.
void expect_matches_reference(const OpCase& c, Device device) {
  const tensor_list inputs = reference_inputs(c);
  const RunResult want = run(c, converted(inputs, Device("cpu:0"), kFloat64));
  ASSERT_EQ(want.output.dtype(), kFloat64) << c.name << ": the reference";
  for (const ScalarType dtype : {kFloat64, kFloat32}) {
    const std::string what = detail::str(c.name, " in ", dtype, " on ", device);
    const RunResult got = run(c, converted(inputs, device, dtype));
    ASSERT_TRUE(got.output.defined()) << what;
    EXPECT_EQ(got.output.device(), device) << what;
    EXPECT_EQ(got.output.dtype(), dtype) << what;
    EXPECT_TRUE(close_to(got.output, want.output, c.flags.loosen)) << what << ": output";
    ASSERT_EQ(got.grads.size(), want.grads.size()) << what;
    for (size_t i = 0; i < got.grads.size(); ++i) {
      if (!want.grads[i].defined()) {
        EXPECT_FALSE(got.grads[i].defined()) << what << ": gradient " << i;
        continue;
      }
      ASSERT_TRUE(got.grads[i].defined()) << what << ": gradient " << i << " is missing";
      EXPECT_EQ(got.grads[i].device(), device) << what << ": gradient " << i;
      EXPECT_EQ(got.grads[i].dtype(), dtype) << what << ": gradient " << i;
      EXPECT_TRUE(close_to(got.grads[i], want.grads[i], c.flags.loosen))
          << what << ": gradient of input " << i;
    }
  }
}

// The elements finite differences would nudge: those of the inputs that
// require grad.
int64_t differentiable_elements(const OpCase& c) {
  int64_t n = 0;
  for (const Input& in : c.inputs) {
    if (in.index || in.constant) continue;
    int64_t elements = 1;
    for (const int64_t size : in.shape) elements *= size;
    n += elements;
  }
  return n;
}

TEST_P(OpTable, MatchesTheReferenceOnCpu1) {
  expect_matches_reference(GetParam(), Device("cpu:1"));
}

TEST_P(OpTable, MatchesTheReferenceOnEachCudaDevice) {
  if (!tandem::cuda::is_built()) {
    GTEST_SKIP() << "no CUDA device: this build has no CUDA backend (the row ran on "
                    "cpu:0 and cpu:1)";
  }
  const int64_t count = tandem::cuda::device_count();
  if (count == 0) {
    GTEST_SKIP() << "no CUDA device: tandem::cuda::device_count() is 0 (the row ran "
                    "on cpu:0 and cpu:1)";
  }
  for (int64_t i = 0; i < count; ++i) {
    expect_matches_reference(GetParam(), Device(kCUDA, static_cast<int>(i)));
  }
}

TEST_P(OpTable, PassesGradcheck) {
  const OpCase& c = GetParam();
  if (c.flags.no_finite_differences != nullptr) {
    GTEST_SKIP() << c.name << " (" << differentiable_elements(c)
                 << " input elements): " << c.flags.no_finite_differences;
  }
  ASSERT_LE(differentiable_elements(c), kFiniteDifferenceBudget)
      << c.name << ": too large for finite differences in CI; shrink the row or mark it "
      << "kTooLargeForFiniteDifferences";
  auto check = autograd::gradcheck(c.fn, reference_inputs(c));
  EXPECT_TRUE(check) << check.message;
}

TEST_P(OpTable, SecondDerivatives) {
  const OpCase& c = GetParam();
  const tensor_list inputs = reference_inputs(c);
  if (!c.flags.second_derivatives) {
    const Tensor loss = c.fn(inputs).sum();
    EXPECT_THROW(autograd::grad({loss}, {inputs[0]}, {}, true, true), Error) << c.name;
    return;
  }
  // The recorded formulas give the kernels' first derivatives...
  tensor_list wanted;
  for (const Tensor& t : inputs) {
    if (t.requires_grad()) wanted.push_back(t);
  }
  const Tensor out = c.fn(inputs);
  Generator gen(7);
  const Tensor weighted = (out * randn(out.sizes(), gen, kFloat64)).sum();
  const tensor_list plain = autograd::grad({weighted}, wanted, {}, true, false, true);
  const tensor_list recorded = autograd::grad({weighted}, wanted, {}, true, true, true);
  for (size_t i = 0; i < wanted.size(); ++i) {
    ASSERT_EQ(plain[i].defined(), recorded[i].defined()) << c.name << " input " << i;
    if (plain[i].defined()) {
      EXPECT_TRUE(close_to(recorded[i], plain[i])) << c.name << " input " << i;
    }
  }
  // ...and their own derivatives match finite differences (where they
  // apply: PassesGradcheck says why not).
  if (c.flags.no_finite_differences != nullptr) return;
  auto check = autograd::gradgradcheck(c.fn, inputs);
  EXPECT_TRUE(check) << c.name << ": " << check.message;
}

}  // namespace
}  // namespace tandem::testing::op_table
