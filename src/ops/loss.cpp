// Loss functions: mse_loss, nll_loss and cross_entropy, forward and backward.
//
// nll_loss runs as direct loops (the nll_loss kernels in backend/dispatch.h) with an
// exact hand-written backward; cross_entropy is log_softmax followed by the same kernel,
// which also adds PyTorch's label smoothing. weight is a constant: no gradient flows to
// it (PyTorch does not implement one either).
#include "tandem/ops/loss.h"

#include "ops/loss_impl.h"
#include "ops/op_utils.h"
#include "tandem/graph/node.h"
#include "tandem/ops/activation.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/reduction.h"

namespace tandem {
namespace {

using autograd::SavedVariable;
using autograd::tensor_list;

// The argument checks nll_loss and cross_entropy share, naming `op`.
void check_nll_args(const char* op,
                    const Tensor& input,
                    const Tensor& target,
                    const Tensor& weight,
                    Reduction reduction) {
  detail::check_defined(op, input, "input");
  detail::check_defined(op, target, "target");
  detail::check_same_device(op, {&input, &target, &weight});
  detail::check_reduction(op, reduction);
  detail::check_floating(op, input, "input");
  TANDEM_CHECK(input.dim() == 1 || input.dim() == 2,
               op,
               ": expected input of shape [N, C] or [C], got ",
               input.sizes());
  TANDEM_CHECK(target.dtype() == kInt64,
               op,
               ": expected target of dtype int64 (class indices), got ",
               target.dtype());
  IntList want = input.dim() == 2 ? IntList{input.sizes()[0]} : IntList{};
  TANDEM_CHECK(target.sizes() == want,
               op,
               ": expected target of shape ",
               want,
               ", got ",
               target.sizes());
  if (!weight.defined()) return;
  const int64_t classes = input.sizes().back();
  TANDEM_CHECK(weight.sizes() == IntList{classes},
               op,
               ": expected weight of shape [",
               classes,
               "] (one per class), got ",
               weight.sizes());
  TANDEM_CHECK(weight.dtype() == input.dtype(),
               op,
               ": expected weight of dtype ",
               input.dtype(),
               " (the input's), got ",
               weight.dtype());
}

// nll_loss of checked arguments, with label smoothing (see the nll_loss kernels in
// backend/dispatch.h).
Tensor nll_loss_checked(const Tensor& log_probs,
                        const Tensor& target,
                        const Tensor& weight,
                        Reduction reduction,
                        int64_t ignore_index,
                        double smoothing) {
  const int64_t classes = log_probs.sizes().back();
  const int64_t rows = target.numel();
  // [C] input and [] target run as one row; these lambdas outlive the call.
  auto as_matrix = [=](const Tensor& t) {
    return detail::raw_view(t, {rows, classes}, {classes, 1}, t.storage_offset());
  };
  auto as_column = [=](const Tensor& t) {
    return detail::raw_view(t, {rows}, {1}, t.storage_offset());
  };
  Tensor in = log_probs.detach().contiguous();
  Tensor tgt = target.contiguous();
  Tensor w = weight.defined() ? weight.contiguous() : Tensor();
  const ScalarType scalar_type = log_probs.dtype();
  const Device device = log_probs.device();
  Tensor out;
  Tensor losses;
  if (reduction == Reduction::None) {
    out = detail::make_empty(target.sizes(), scalar_type, device);
    losses = as_column(out);
  }
  auto sums = detail::kernels_for(in).nll_loss_forward(
      losses, as_matrix(in), as_column(tgt), w, smoothing, ignore_index);
  // PyTorch's weighted mean: divide by the weight of the counted targets
  // (NaN when every target is ignored, as in PyTorch).
  const double scale = reduction == Reduction::Mean ? 1 / sums.weight : 1;
  if (reduction != Reduction::None) {
    out = scalar_tensor(sums.loss * scale, TensorOptions(scalar_type).device(device));
  }
  if (!autograd::any_requires_grad({&log_probs})) return out;
  IntList sizes = log_probs.sizes();
  SavedVariable saved_target(tgt), saved_weight(w);
  autograd::record_function(
      "NllLossBackward", {log_probs}, {&out}, [=](const tensor_list& g) {
        Tensor grad_in = detail::make_empty(sizes, scalar_type, device);
        detail::kernels_for(grad_in).nll_loss_backward(
            as_matrix(grad_in),
            g[0].contiguous(),
            as_column(saved_target.unpack("NllLossBackward")),
            saved_weight.unpack("NllLossBackward"),
            smoothing,
            scale,
            ignore_index);
        // Linear in g, as the loss is in the log-probabilities: under
        // create_graph its own backward is the loss again.
        autograd::record_function(
            "NllLossBackwardBackward", {g[0]}, {&grad_in}, [=](const tensor_list& gg) {
              return tensor_list{nll_loss_checked(gg[0],
                                                  saved_target.unpack("NllLossBackward"),
                                                  saved_weight.unpack("NllLossBackward"),
                                                  reduction,
                                                  ignore_index,
                                                  smoothing)};
            });
        return tensor_list{grad_in};
      });
  return out;
}

}  // namespace

namespace detail {

void check_reduction(const char* op, Reduction reduction) {
  TANDEM_CHECK(reduction != Reduction::BatchMean,
               op,
               ": reduction batchmean is only for kl_div; use mean, sum or none");
}

Tensor reduce_loss(const char* op, const Tensor& losses, Reduction reduction) {
  switch (reduction) {
    case Reduction::None:
      return losses;
    case Reduction::Mean:
      return mean(losses);
    case Reduction::Sum:
      return sum(losses);
    case Reduction::BatchMean:
      break;
  }
  check_reduction(op, reduction);
  TANDEM_INTERNAL_ASSERT(false, "unknown reduction ", static_cast<int>(reduction));
}

void check_pointwise_loss_args(const char* op,
                               const Tensor& input,
                               const Tensor& target) {
  check_defined(op, input, "input");
  check_defined(op, target, "target");
  check_same_device(op, {&input, &target});
  check_floating(op, input, "input");
  // A deliberate difference from PyTorch, which broadcasts mismatched shapes
  // with only a warning: a [N] prediction against a [N, 1] target silently
  // becomes an [N, N] loss, which is almost always a bug.
  TANDEM_CHECK(input.sizes() == target.sizes(),
               op,
               ": expected target of the input's shape ",
               input.sizes(),
               ", got ",
               target.sizes(),
               " (reshape one of them; tandem does not broadcast here)");
}

}  // namespace detail

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  const profiler::Span span = detail::op_span("mse_loss", {&input, &target});
  detail::check_pointwise_loss_args("mse_loss", input, target);
  return detail::reduce_loss("mse_loss", square(input - target), reduction);
}

Tensor nll_loss(const Tensor& input,
                const Tensor& target,
                const Tensor& weight,
                Reduction reduction,
                int64_t ignore_index) {
  const profiler::Span span = detail::op_span("nll_loss", {&input, &target});
  check_nll_args("nll_loss", input, target, weight, reduction);
  return nll_loss_checked(input, target, weight, reduction, ignore_index, 0.0);
}

Tensor cross_entropy(const Tensor& input,
                     const Tensor& target,
                     const Tensor& weight,
                     Reduction reduction,
                     int64_t ignore_index,
                     double label_smoothing) {
  const profiler::Span span = detail::op_span("cross_entropy", {&input, &target});
  check_nll_args("cross_entropy", input, target, weight, reduction);
  TANDEM_CHECK(label_smoothing >= 0 && label_smoothing <= 1,
               "cross_entropy: expected label_smoothing in [0, 1], got ",
               label_smoothing);
  // Classes are dim 1 of [N, C] and dim 0 of [C].
  Tensor log_probs = log_softmax(input, input.dim() - 1);
  return nll_loss_checked(
      log_probs, target, weight, reduction, ignore_index, label_smoothing);
}

}  // namespace tandem
