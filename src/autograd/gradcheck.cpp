#include "tandem/autograd/gradcheck.h"

#include <cmath>

#include "tandem/autograd/engine.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/reduction.h"
#include "tandem/ops/shape.h"

namespace tandem::autograd {
namespace {

// The scalar the check differentiates: sum(fn(inputs) * weights), so every
// output element contributes with its own weight and errors cannot cancel.
double weighted_output(const GradcheckFn& fn,
                       const tensor_list& inputs,
                       const Tensor& weights) {
  NoGradGuard no_grad;
  Tensor out = fn(inputs);
  return (out.to(kFloat64) * weights).sum().item<double>();
}

}  // namespace

GradcheckResult gradcheck(const GradcheckFn& fn,
                          const tensor_list& inputs,
                          const GradcheckOptions& options) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    TANDEM_CHECK(!t.defined() || !t.requires_grad() || t.dtype() == kFloat64,
                 "gradcheck: input ",
                 i,
                 " is ",
                 t.dtype(),
                 "; use float64 inputs for a meaningful check");
    // The finite differences nudge inputs through host pointers.
    TANDEM_CHECK(!t.defined() || !t.requires_grad() || t.is_cpu(),
                 "gradcheck: input ",
                 i,
                 " is on ",
                 t.device(),
                 "; gradcheck perturbs CPU inputs (move them with .to(\"cpu\") ",
                 "and the computation inside fn to the device)");
  }
  Tensor out = fn(inputs);
  TANDEM_CHECK(out.requires_grad(),
               "gradcheck: the output does not require ",
               "grad; no input that requires grad reaches it");
  Generator gen(1234);
  Tensor weights = randn(out.sizes(), gen, TensorOptions(kFloat64).device(out.device()));
  Tensor scalar = (out.to(kFloat64) * weights).sum();
  tensor_list wanted;
  std::vector<size_t> index;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].defined() && inputs[i].requires_grad()) {
      wanted.push_back(inputs[i]);
      index.push_back(i);
    }
  }
  tensor_list analytic = grad({scalar}, wanted, {}, {}, false, /*allow_unused=*/true);
  for (size_t k = 0; k < wanted.size(); ++k) {
    const Tensor& input = wanted[k];
    Tensor a = analytic[k].defined() ? analytic[k].contiguous() : zeros_like(input);
    // Perturb the input in place through a no-grad alias of its storage.
    Tensor alias = input.detach();
    TANDEM_CHECK(
        alias.is_contiguous(), "gradcheck: input ", index[k], " must be contiguous");
    auto* p = alias.data_ptr<double>();
    const double* pa = a.data_ptr<double>();
    for (int64_t e = 0; e < input.numel(); ++e) {
      const double orig = p[e];
      p[e] = orig + options.eps;
      double plus = weighted_output(fn, inputs, weights);
      p[e] = orig - options.eps;
      double minus = weighted_output(fn, inputs, weights);
      p[e] = orig;
      double numeric = (plus - minus) / (2 * options.eps);
      double diff = std::abs(numeric - pa[e]);
      if (!(diff <= options.atol + options.rtol * std::abs(numeric))) {
        GradcheckResult r;
        r.ok = false;
        r.message = detail::str("gradcheck: input ",
                                index[k],
                                " (shape ",
                                input.sizes(),
                                ") element ",
                                e,
                                ": numerical gradient ",
                                numeric,
                                " but backward gave ",
                                pa[e],
                                " (",
                                out.grad_fn() ? out.grad_fn()->name() : "",
                                ")");
        return r;
      }
    }
  }
  return {};
}

GradcheckResult gradgradcheck(const GradcheckFn& fn,
                              const tensor_list& inputs,
                              const GradcheckOptions& options) {
  Tensor out = fn(inputs);
  Generator gen(4321);
  Tensor v = randn(out.sizes(), gen, TensorOptions(out.dtype()).device(out.device()));
  tensor_list extended = inputs;
  extended.push_back(v.requires_grad_());
  const size_t n = inputs.size();
  // The inputs' gradients for weighting v, flattened into one tensor;
  // those that do not depend on anything come back as zeros.
  auto first_order = [&fn, n](const tensor_list& in) {
    EnableGradGuard grad_mode;  // gradcheck evaluates without grad mode
    const tensor_list originals(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(n));
    tensor_list targets;
    for (const Tensor& t : originals) {
      if (t.defined() && t.requires_grad()) targets.push_back(t);
    }
    const tensor_list grads = grad({fn(originals)},
                                   targets,
                                   {in[n]},
                                   {},
                                   /*create_graph=*/true,
                                   /*allow_unused=*/true);
    tensor_list flat;
    for (size_t i = 0; i < grads.size(); ++i) {
      const Tensor g = grads[i].defined() ? grads[i] : zeros_like(targets[i]);
      flat.push_back(g.reshape({-1}));
    }
    return cat(flat, 0);
  };
  GradcheckResult result = gradcheck(first_order, extended, options);
  if (!result.ok) result.message = "gradgradcheck: " + result.message;
  return result;
}

}  // namespace tandem::autograd
