// The op consistency table: one row per differentiable op (and per
// interesting variant) of tandem/ops/*.h. Each row runs
//   - on cpu:0 in float64: the reference, forward and gradients;
//   - on cpu:1: same values, outputs and gradients on cpu:1;
//   - in float32: close to the reference (rtol 1e-4);
//   - through gradcheck in float64;
//   - under create_graph: the recorded backward equals the kernels', and
//     passes gradgradcheck in float64 (second derivatives); rows marked
//     without them (the fused recurrent layers) must refuse create_graph.
// A new op without a row here fails review (STYLE.md, recommendation 15).
#include <functional>
#include <string>
#include <vector>

#include "consistency/op_cases.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using autograd::tensor_list;
using testing::all_close;
using testing::op_table::Input;
using testing::op_table::op_cases;
using testing::op_table::OpCase;

// The row's inputs on cpu:0: float64 (requiring grad) and int64 indices,
// the same for every run of the row.
tensor_list reference_inputs(const OpCase& c) {
  Generator gen(std::hash<std::string>()(c.name));
  tensor_list out;
  for (const Input& in : c.inputs) {
    if (in.index) {
      out.push_back(randint(
          static_cast<int64_t>(in.low), static_cast<int64_t>(in.high), in.shape, gen));
    } else {
      Tensor t = rand(in.shape, gen, kFloat64) * (in.high - in.low) + in.low;
      out.push_back(in.constant ? t : t.requires_grad_());
    }
  }
  return out;
}

// The same inputs moved to `device`, floating ones converted to `dtype`.
tensor_list converted(const tensor_list& inputs, Device device, ScalarType dtype) {
  tensor_list out;
  for (const Tensor& t : inputs) {
    if (!t.is_floating_point()) {
      out.push_back(t.to(device));
      continue;
    }
    Tensor c = t.detach().to(device, dtype, false, /*copy=*/true);
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

void expect_close_runs(const OpCase& c,
                       const RunResult& got,
                       const RunResult& want,
                       double rtol,
                       double atol,
                       const char* what) {
  EXPECT_TRUE(all_close(got.output, want.output, rtol, atol)) << c.name << " " << what;
  ASSERT_EQ(got.grads.size(), want.grads.size());
  for (size_t i = 0; i < got.grads.size(); ++i) {
    if (!want.grads[i].defined()) {
      EXPECT_FALSE(got.grads[i].defined()) << what << " grad " << i;
      continue;
    }
    EXPECT_TRUE(all_close(got.grads[i], want.grads[i], rtol, atol))
        << c.name << " " << what << " gradient of input " << i;
  }
}

class OpConsistency : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpConsistency, DevicesDtypesAndGradcheck) {
  const OpCase& c = GetParam();
  const tensor_list inputs = reference_inputs(c);
  const RunResult reference = run(c, converted(inputs, Device("cpu:0"), kFloat64));
  EXPECT_EQ(reference.output.dtype(), kFloat64);

  const RunResult other = run(c, converted(inputs, Device("cpu:1"), kFloat64));
  EXPECT_EQ(other.output.device(), Device("cpu:1"));
  for (const Tensor& g : other.grads) {
    if (g.defined()) {
      EXPECT_EQ(g.device(), Device("cpu:1"));
    }
  }
  // Same kernels, so equal up to the BLAS's per-thread summation order.
  expect_close_runs(c, other, reference, 1e-12, 1e-12, "on cpu:1");

  const RunResult single = run(c, converted(inputs, Device("cpu:0"), kFloat32));
  EXPECT_EQ(single.output.dtype(), kFloat32);
  expect_close_runs(c, single, reference, 1e-4, 1e-5, "in float32");

  auto check = autograd::gradcheck(c.fn, inputs);
  EXPECT_TRUE(check) << check.message;
}

TEST_P(OpConsistency, SecondDerivatives) {
  const OpCase& c = GetParam();
  const tensor_list inputs = reference_inputs(c);
  if (!c.second_derivatives) {
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
  const Tensor weighted = (out * randn(out.sizes(), kFloat64)).sum();
  const tensor_list plain = autograd::grad({weighted}, wanted, {}, true, false, true);
  const tensor_list recorded = autograd::grad({weighted}, wanted, {}, true, true, true);
  for (size_t i = 0; i < wanted.size(); ++i) {
    ASSERT_EQ(plain[i].defined(), recorded[i].defined()) << c.name << " input " << i;
    if (plain[i].defined()) {
      EXPECT_TRUE(all_close(recorded[i], plain[i], 1e-12, 1e-12))
          << c.name << " input " << i;
    }
  }
  // ...and their own derivatives match finite differences.
  auto check = autograd::gradgradcheck(c.fn, inputs);
  EXPECT_TRUE(check) << c.name << ": " << check.message;
}

INSTANTIATE_TEST_SUITE_P(Ops,
                         OpConsistency,
                         ::testing::ValuesIn(op_cases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace tandem
