#include "tandem/nn/utils/clip_grad.h"

#include <cmath>

#include "tandem/graph/grad_mode.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/reduction.h"
#include "tandem/ops/shape.h"

namespace tandem::nn::utils {
namespace {

// torch.norm(x, p) over all elements, in x's dtype.
Tensor vector_norm(const Tensor& x, double p) {
  if (x.numel() == 0) return zeros({}, TensorOptions(x.dtype()).device(x.device()));
  if (std::isinf(p)) return p > 0 ? x.abs().max() : x.abs().min();
  if (p == 0) return x.ne(0).to(x.dtype()).sum();
  if (p == 1) return x.abs().sum();
  if (p == 2) return (x * x).sum().sqrt();
  return x.abs().pow(p).sum().pow(1.0 / p);
}

std::vector<Tensor> grads_of(const std::vector<Tensor>& parameters) {
  std::vector<Tensor> grads;
  for (const auto& p : parameters) {
    TANDEM_CHECK(p.defined(), "clip_grad: a parameter is undefined");
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  return grads;
}

}  // namespace

double clip_grad_norm_(const std::vector<Tensor>& parameters,
                       double max_norm,
                       double norm_type,
                       bool error_if_nonfinite) {
  NoGradGuard no_grad;
  const std::vector<Tensor> grads = grads_of(parameters);
  if (grads.empty()) return 0;
  // As PyTorch: the norm of the per-gradient norms, in the first gradient's
  // dtype and on its device.
  const TensorOptions first = TensorOptions(grads[0].dtype()).device(grads[0].device());
  std::vector<Tensor> norms;
  norms.reserve(grads.size());
  for (const auto& g : grads) norms.push_back(vector_norm(g, norm_type).to(first));
  Tensor total = norms.size() == 1 ? norms[0] : vector_norm(stack(norms), norm_type);
  const double total_norm = total.item<double>();
  TANDEM_CHECK(!error_if_nonfinite || std::isfinite(total_norm),
               "clip_grad_norm_: the total norm of order ",
               norm_type,
               " for gradients from `parameters` is non-finite, so it cannot be ",
               "clipped. To disable this error and scale the gradients by the ",
               "non-finite norm anyway, set error_if_nonfinite=false");
  // The coefficient in the norm's dtype, rounded as PyTorch's tensor math.
  const double coef = (max_norm / (total + 1e-6)).clamp_max(1.0).item<double>();
  for (const auto& g : grads) {
    Tensor grad = g;
    grad.mul_(coef);
  }
  return total_norm;
}

double clip_grad_norm_(std::initializer_list<Tensor> parameters,
                       double max_norm,
                       double norm_type,
                       bool error_if_nonfinite) {
  return clip_grad_norm_(
      std::vector<Tensor>(parameters), max_norm, norm_type, error_if_nonfinite);
}

double clip_grad_norm_(const Tensor& parameter,
                       double max_norm,
                       double norm_type,
                       bool error_if_nonfinite) {
  return clip_grad_norm_(
      std::vector<Tensor>{parameter}, max_norm, norm_type, error_if_nonfinite);
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  NoGradGuard no_grad;
  for (const auto& g : grads_of(parameters)) {
    Tensor grad = g;
    grad.clamp_(-clip_value, clip_value);
  }
}

void clip_grad_value_(std::initializer_list<Tensor> parameters, double clip_value) {
  clip_grad_value_(std::vector<Tensor>(parameters), clip_value);
}

void clip_grad_value_(const Tensor& parameter, double clip_value) {
  clip_grad_value_(std::vector<Tensor>{parameter}, clip_value);
}

}  // namespace tandem::nn::utils
