// The losses written as compositions of differentiable ops: binary cross
// entropy (on probabilities and on logits), l1, smooth l1, huber, kl_div,
// cosine embedding and margin ranking. Autograd differentiates them (to any
// order, in every operand) and each step is one fused elementwise kernel,
// so no hand-written backward is needed; the stable pieces (log_sigmoid's
// kernel) keep large logits finite.
//
// Note [Masked branches]
// ~~~~~~~~~~~~~~~~~~~~~~
// where(c, a, b) sends a zero gradient into the branch it did not pick, and
// 0 * inf is NaN: a branch must stay finite (with a finite derivative) even
// where it is not taken. So smooth_l1 with beta 0 is l1 rather than
// d^2 / 0, and kl_div's log(target) reads 1 where target is 0.
#include <string>

#include "ops/loss_impl.h"
#include "ops/op_utils.h"
#include "tandem/ops/activation.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/loss.h"
#include "tandem/ops/reduction.h"

namespace tandem {
namespace {

// A weight multiplies the per-element losses: it must broadcast to the
// input's shape without growing it.
void check_broadcasts_to(const char* op,
                         const char* name,
                         const Tensor& t,
                         const Tensor& input) {
  if (!t.defined()) return;
  detail::check_same_device(op, {&input, &t});
  detail::check_same_dtype(op, t, name, input, "input");
  bool fits = t.dim() <= input.dim();
  for (int64_t i = 1; fits && i <= t.dim(); ++i) {
    const int64_t have = t.sizes()[t.dim() - i];
    fits = have == 1 || have == input.sizes()[input.dim() - i];
  }
  TANDEM_CHECK(fits,
               op,
               ": expected ",
               name,
               " broadcastable to the input's shape ",
               input.sizes(),
               ", got ",
               t.sizes());
}

Tensor weighted(const Tensor& losses, const Tensor& weight) {
  return weight.defined() ? losses * weight : losses;
}

// The two-input losses' operands: one floating dtype, one shape, one device.
void check_pair(const char* op, const Tensor& input1, const Tensor& input2) {
  detail::check_defined(op, input1, "input1");
  detail::check_defined(op, input2, "input2");
  detail::check_same_device(op, {&input1, &input2});
  detail::check_floating(op, input1, "input1");
  detail::check_same_dtype(op, input2, "input2", input1, "input1");
  TANDEM_CHECK(input1.sizes() == input2.sizes(),
               op,
               ": expected input1 and input2 of one shape, got ",
               input1.sizes(),
               " and ",
               input2.sizes());
}

}  // namespace

Tensor binary_cross_entropy(const Tensor& input,
                            const Tensor& target,
                            const Tensor& weight,
                            Reduction reduction) {
  constexpr const char* op = "binary_cross_entropy";
  detail::check_pointwise_loss_args(op, input, target);
  detail::check_reduction(op, reduction);
  check_broadcasts_to(op, "weight", weight, input);
  // Checked where it costs no device synchronisation (PyTorch's CUDA kernel
  // asserts on the device instead); elsewhere a value outside [0, 1] gives NaN.
  if (input.device().is_cpu() && input.numel() > 0) {
    const double lo = min(input).item<double>(), hi = max(input).item<double>();
    TANDEM_CHECK(lo >= 0 && hi <= 1,
                 op,
                 ": expected input values in [0, 1] (probabilities), got values in [",
                 lo,
                 ", ",
                 hi,
                 "]; for scores use binary_cross_entropy_with_logits");
  }
  // PyTorch clamps each log at -100, so a probability of exactly 0 or 1
  // gives a finite loss.
  const Tensor log_p = clamp_min(log(input), -100);
  const Tensor log_not_p = clamp_min(log(1 - input), -100);
  const Tensor losses = -(target * log_p + (1 - target) * log_not_p);
  return detail::reduce_loss(op, weighted(losses, weight), reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input,
                                        const Tensor& target,
                                        const Tensor& weight,
                                        const Tensor& pos_weight,
                                        Reduction reduction) {
  constexpr const char* op = "binary_cross_entropy_with_logits";
  detail::check_pointwise_loss_args(op, input, target);
  detail::check_reduction(op, reduction);
  check_broadcasts_to(op, "weight", weight, input);
  check_broadcasts_to(op, "pos_weight", pos_weight, input);
  // -log(sigmoid(x)) = softplus(-x) = max(-x, 0) + log1p(exp(-|x|)), so
  // (1 - y) x + softplus(-x) is max(x, 0) - x y + log1p(exp(-|x|)).
  const Tensor neg_log_sigmoid = -log_sigmoid(input);
  const Tensor log_weight =
      pos_weight.defined() ? 1 + (pos_weight - 1) * target : Tensor();
  const Tensor losses =
      (1 - target) * input +
      (log_weight.defined() ? log_weight * neg_log_sigmoid : neg_log_sigmoid);
  return detail::reduce_loss(op, weighted(losses, weight), reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  detail::check_pointwise_loss_args("l1_loss", input, target);
  return detail::reduce_loss("l1_loss", abs(input - target), reduction);
}

Tensor smooth_l1_loss(const Tensor& input,
                      const Tensor& target,
                      Reduction reduction,
                      double beta) {
  constexpr const char* op = "smooth_l1_loss";
  detail::check_pointwise_loss_args(op, input, target);
  TANDEM_CHECK(beta >= 0, op, ": beta must be non-negative, got ", beta);
  const Tensor d = abs(input - target);
  // See Note [Masked branches].
  if (beta == 0) return detail::reduce_loss(op, d, reduction);
  return detail::reduce_loss(
      op, where(d < beta, square(d) * (0.5 / beta), d - 0.5 * beta), reduction);
}

Tensor huber_loss(const Tensor& input,
                  const Tensor& target,
                  Reduction reduction,
                  double delta) {
  constexpr const char* op = "huber_loss";
  detail::check_pointwise_loss_args(op, input, target);
  TANDEM_CHECK(delta > 0, op, ": delta must be positive, got ", delta);
  const Tensor d = abs(input - target);
  return detail::reduce_loss(
      op, where(d < delta, square(d) * 0.5, (d - 0.5 * delta) * delta), reduction);
}

Tensor kl_div(const Tensor& input,
              const Tensor& target,
              Reduction reduction,
              bool log_target) {
  constexpr const char* op = "kl_div";
  detail::check_pointwise_loss_args(op, input, target);
  detail::check_same_dtype(op, target, "target", input, "input");
  Tensor losses;
  if (log_target) {
    losses = exp(target) * (target - input);
  } else {
    // xlogy(target, target): 0 where target is 0 (Note [Masked branches]).
    const Tensor safe = where(target == 0, ones_like(target), target);
    losses = target * log(safe) - target * input;
  }
  if (reduction != Reduction::BatchMean)
    return detail::reduce_loss(op, losses, reduction);
  // PyTorch's batchmean: the sum over the batch size (the sum for a 0-dim input).
  const Tensor total = sum(losses);
  return input.dim() == 0 ? total : total / static_cast<double>(input.sizes()[0]);
}

Tensor cosine_embedding_loss(const Tensor& input1,
                             const Tensor& input2,
                             const Tensor& target,
                             double margin,
                             Reduction reduction) {
  constexpr const char* op = "cosine_embedding_loss";
  check_pair(op, input1, input2);
  detail::check_defined(op, target, "target");
  detail::check_same_device(op, {&input1, &target});
  detail::check_reduction(op, reduction);
  TANDEM_CHECK(input1.dim() == 1 || input1.dim() == 2,
               op,
               ": expected inputs of shape [N, D] or [D], got ",
               input1.sizes());
  const IntList want = input1.dim() == 2 ? IntList{input1.sizes()[0]} : IntList{};
  TANDEM_CHECK(target.sizes() == want,
               op,
               ": expected target of shape ",
               want,
               " (one label per row of inputs ",
               input1.sizes(),
               "), got ",
               target.sizes());
  // PyTorch's formula, with its epsilon under each squared norm.
  constexpr double kEpsilon = 1e-12;
  const IntList dim{input1.dim() - 1};
  const Tensor dot = sum(input1 * input2, dim);
  const Tensor norms =
      sqrt((sum(square(input1), dim) + kEpsilon) * (sum(square(input2), dim) + kEpsilon));
  const Tensor cos = dot / norms;
  const Tensor zero = zeros_like(cos);
  const Tensor losses = where(target == 1, 1 - cos, zero) +
                        where(target == -1, clamp_min(cos - margin, 0), zero);
  return detail::reduce_loss(op, losses, reduction);
}

Tensor margin_ranking_loss(const Tensor& input1,
                           const Tensor& input2,
                           const Tensor& target,
                           double margin,
                           Reduction reduction) {
  constexpr const char* op = "margin_ranking_loss";
  check_pair(op, input1, input2);
  detail::check_defined(op, target, "target");
  detail::check_same_device(op, {&input1, &target});
  detail::check_reduction(op, reduction);
  TANDEM_CHECK(target.sizes() == input1.sizes(),
               op,
               ": expected target of the inputs' shape ",
               input1.sizes(),
               ", got ",
               target.sizes());
  return detail::reduce_loss(
      op, clamp_min(-target * (input1 - input2) + margin, 0), reduction);
}

}  // namespace tandem
