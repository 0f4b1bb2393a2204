// gradcheck: compares autograd's gradients with central finite differences
// (gradgradcheck: the gradients' own gradients, for create_graph).
//
// `fn` maps the inputs to one output tensor; every input that requires grad
// is perturbed one element at a time by +-eps, and the numerical Jacobian
// (times a fixed random output weighting) is compared with what backward
// produces. Use float64 inputs: float32 differences are too coarse.
//
//   auto x = tandem::randn({3, 4}, tandem::TensorOptions(tandem::kFloat64)
//                                      .requires_grad(true));
//   EXPECT_TRUE(tandem::autograd::gradcheck(
//       [](const tandem::autograd::tensor_list& in) { return in[0].exp(); },
//       {x}));
#pragma once

#include <functional>
#include <string>

#include "tandem/graph/node.h"

namespace tandem::autograd {

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
};

struct GradcheckResult {
  bool ok = true;
  /// Why it failed: the input, the element and both gradients.
  std::string message;
  explicit operator bool() const { return ok; }
};

using GradcheckFn = std::function<Tensor(const tensor_list&)>;

GradcheckResult gradcheck(const GradcheckFn& fn,
                          const tensor_list& inputs,
                          const GradcheckOptions& options = {});

/// Checks second derivatives the same way: the first-order gradients of
/// fn (for a random output weighting v that itself requires grad, taken
/// with create_graph) are checked by gradcheck against finite differences
/// of those gradients, with respect to the inputs and to v. PyTorch's
/// gradgradcheck.
GradcheckResult gradgradcheck(const GradcheckFn& fn,
                              const tensor_list& inputs,
                              const GradcheckOptions& options = {});

}  // namespace tandem::autograd
