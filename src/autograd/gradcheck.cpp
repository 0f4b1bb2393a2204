#include "tandem/autograd/gradcheck.h"

#include <cmath>

#include "tandem/autograd/engine.h"
#include "tandem/autograd/grad_mode.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/reduction.h"

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
  tensor_list analytic = grad({scalar}, wanted, {}, false, /*allow_unused=*/true);
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

}  // namespace tandem::autograd
