// batch_norm and layer_norm: argument checks, the running-statistics update
// and the backward nodes. The per-channel and per-row arithmetic is in
// backend/cpu/normalization.cpp; under create_graph the backward is
// norm_recorded_backward.cpp's instead.
#include "tandem/ops/normalization.h"

#include <algorithm>
#include <initializer_list>
#include <utility>

#include "ops/norm_recorded_backward.h"
#include "ops/op_utils.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/graph/node.h"
#include "tandem/ops/elementwise.h"

namespace tandem {
namespace {

using autograd::SavedVariable;
using autograd::tensor_list;

using NamedTensor = std::pair<const char*, const Tensor*>;

// Defined input; every tensor on its device and of its floating dtype.
void check_operands(const char* op,
                    const Tensor& input,
                    std::initializer_list<NamedTensor> others) {
  detail::check_defined(op, input, "input");
  detail::check_floating(op, input, "input");
  for (const auto& [name, t] : others) {
    detail::check_same_device(op, {&input, t});
    detail::check_same_dtype(op, *t, name, input, "input");
  }
}

// A new contiguous copy of `t` without history: a constant that later
// in-place updates of `t` cannot change.
Tensor constant_copy(const Tensor& t) {
  Tensor copy = detail::make_empty(t.sizes(), t.dtype(), t.device());
  detail::kernels_for(copy).copy(copy, t);
  return copy;
}

// A contiguous tensor seen as `rows` rows of `n` (layer_norm's layout).
Tensor as_rows(const Tensor& t, int64_t rows, int64_t n) {
  return detail::raw_view(t, {rows, n}, {n, 1}, t.storage_offset());
}

// A contiguous tensor seen as [N, C, L] around its channel dim 1.
Tensor as_channels(const Tensor& t) {
  const int64_t n = t.size(0), c = t.size(1);
  int64_t l = 1;
  for (int64_t d = 2; d < t.dim(); ++d) l *= t.size(d);
  return detail::raw_view(t, {n, c, l}, {c * l, l, 1}, t.storage_offset());
}

// Moves a running statistic towards the batch's: r = (1 - m) * r + m * s.
void update_running(const Tensor& running, const Tensor& batch_value, double momentum) {
  if (!running.defined()) return;
  NoGradGuard no_grad;
  Tensor r = running;
  r.mul_(1 - momentum).add_(batch_value, momentum);
}

void check_batch_norm_args(const Tensor& input,
                           const Tensor& running_mean,
                           const Tensor& running_var,
                           const Tensor& weight,
                           const Tensor& bias,
                           bool training) {
  const char* op = "batch_norm";
  check_operands(op,
                 input,
                 {{"running_mean", &running_mean},
                  {"running_var", &running_var},
                  {"weight", &weight},
                  {"bias", &bias}});
  TANDEM_CHECK(
      input.dim() >= 2,
      "batch_norm: expected an input [N, C, ...] with at least 2 dims, got shape ",
      input.sizes());
  const int64_t channels = input.size(1);
  for (const auto& [name, t] : {NamedTensor{"running_mean", &running_mean},
                                NamedTensor{"running_var", &running_var},
                                NamedTensor{"weight", &weight},
                                NamedTensor{"bias", &bias}}) {
    if (!t->defined()) continue;
    TANDEM_CHECK(t->dim() == 1 && t->size(0) == channels,
                 "batch_norm: expected ",
                 name,
                 " of shape [",
                 channels,
                 "] (one value per channel of input of shape ",
                 input.sizes(),
                 "), got ",
                 t->sizes());
  }
  if (training) {
    TANDEM_CHECK(input.numel() / std::max<int64_t>(channels, 1) > 1,
                 "batch_norm: expected more than 1 value per channel when training, ",
                 "got input of shape ",
                 input.sizes());
    return;
  }
  TANDEM_CHECK(running_mean.defined() && running_var.defined(),
               "batch_norm: running_mean and running_var must be defined in ",
               "evaluation mode (training=false)");
}

}  // namespace

Tensor batch_norm(const Tensor& input,
                  const Tensor& running_mean,
                  const Tensor& running_var,
                  const Tensor& weight,
                  const Tensor& bias,
                  bool training,
                  double momentum,
                  double eps) {
  const profiler::Span span = detail::op_span("batch_norm", {&input});
  check_batch_norm_args(input, running_mean, running_var, weight, bias, training);
  const int64_t channels = input.size(1);
  const Tensor x = input.detach().contiguous();
  const backend::Kernels& kernels = detail::kernels_for(x);
  Tensor mean, invstd;
  if (training) {
    mean = detail::make_empty({channels}, x.dtype(), x.device());
    Tensor var = detail::make_empty({channels}, x.dtype(), x.device());
    kernels.batch_norm_stats(mean, var, as_channels(x));
    invstd = rsqrt(var + eps);
    // The running variance follows the unbiased estimate, as in PyTorch.
    const double count = static_cast<double>(x.numel() / channels);
    update_running(running_mean, mean, momentum);
    update_running(running_var, var * (count / (count - 1)), momentum);
  } else {
    mean = constant_copy(running_mean.detach());
    invstd = rsqrt(running_var.detach() + eps);
  }
  Tensor out = detail::make_empty(input.sizes(), input.dtype(), input.device());
  const Tensor w = weight.defined() ? weight.detach().contiguous() : Tensor();
  const Tensor b = bias.defined() ? bias.detach().contiguous() : Tensor();
  kernels.batch_norm_apply(as_channels(out), as_channels(x), mean, invstd, w, b);

  if (!autograd::any_requires_grad({&input, &weight, &bias})) return out;
  const bool need_input = input.requires_grad();
  const bool need_weight = weight.defined() && weight.requires_grad();
  const bool need_bias = bias.defined() && bias.requires_grad();
  SavedVariable saved_input(input), saved_weight(weight.defined() ? weight : Tensor());
  autograd::record_function(
      "BatchNormBackward", {input, weight, bias}, {&out}, [=](const tensor_list& g) {
        const char* node = "BatchNormBackward";
        const Tensor input_saved = saved_input.unpack(node);
        if (GradMode::is_enabled()) {
          return detail::recorded_batch_norm_backward(
              g[0],
              input_saved,
              saved_weight.unpack(node),
              training,
              mean,
              invstd,
              eps,
              {need_input, need_weight, need_bias});
        }
        const Tensor x = input_saved.detach().contiguous();
        const Tensor grad_out = g[0].contiguous();
        Tensor gi = detail::gradient_like(need_input, x);
        Tensor gw = detail::gradient_like(need_weight, {channels}, x);
        Tensor gb = detail::gradient_like(need_bias, {channels}, x);
        const Tensor w = saved_weight.defined()
                             ? saved_weight.unpack(node).detach().contiguous()
                             : Tensor();
        detail::kernels_for(x).batch_norm_backward(gi.defined() ? as_channels(gi) : gi,
                                                   gw,
                                                   gb,
                                                   as_channels(grad_out),
                                                   as_channels(x),
                                                   mean,
                                                   invstd,
                                                   w,
                                                   training);
        return tensor_list{gi, gw, gb};
      });
  return out;
}

Tensor layer_norm(const Tensor& input,
                  const IntList& normalized_shape,
                  const Tensor& weight,
                  const Tensor& bias,
                  double eps) {
  const profiler::Span span = detail::op_span("layer_norm", {&input});
  const char* op = "layer_norm";
  check_operands(op, input, {{"weight", &weight}, {"bias", &bias}});
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  const IntList& sizes = input.sizes();
  TANDEM_CHECK(k >= 1, "layer_norm: normalized_shape must not be empty");
  TANDEM_CHECK(
      input.dim() >= k && IntList(sizes.end() - k, sizes.end()) == normalized_shape,
      "layer_norm: normalized_shape ",
      normalized_shape,
      " does not match the last dims of input of shape ",
      sizes);
  for (const auto& [name, t] :
       {NamedTensor{"weight", &weight}, NamedTensor{"bias", &bias}}) {
    if (!t->defined()) continue;
    TANDEM_CHECK(t->sizes() == normalized_shape,
                 "layer_norm: expected ",
                 name,
                 " of shape ",
                 normalized_shape,
                 " (normalized_shape), got ",
                 t->sizes());
  }
  const int64_t n = numel_of(normalized_shape);
  const int64_t rows = n == 0 ? 0 : input.numel() / n;
  const Tensor x = input.detach().contiguous();
  Tensor out = detail::make_empty(sizes, x.dtype(), x.device());
  Tensor mean = detail::make_empty({rows}, x.dtype(), x.device());
  Tensor rstd = detail::make_empty({rows}, x.dtype(), x.device());
  const Tensor w = weight.defined() ? weight.detach().contiguous() : Tensor();
  const Tensor b = bias.defined() ? bias.detach().contiguous() : Tensor();
  if (out.numel() > 0) {
    detail::kernels_for(x).layer_norm(
        as_rows(out, rows, n), mean, rstd, as_rows(x, rows, n), w, b, eps);
  }

  if (!autograd::any_requires_grad({&input, &weight, &bias})) return out;
  const bool need_input = input.requires_grad();
  const bool need_weight = weight.defined() && weight.requires_grad();
  const bool need_bias = bias.defined() && bias.requires_grad();
  SavedVariable saved_input(input), saved_weight(weight.defined() ? weight : Tensor());
  autograd::record_function(
      "LayerNormBackward", {input, weight, bias}, {&out}, [=](const tensor_list& g) {
        const char* node = "LayerNormBackward";
        const Tensor input_saved = saved_input.unpack(node);
        if (GradMode::is_enabled()) {
          return detail::recorded_layer_norm_backward(
              g[0],
              input_saved,
              saved_weight.unpack(node),
              k,
              eps,
              {need_input, need_weight, need_bias});
        }
        const Tensor x = input_saved.detach().contiguous();
        const Tensor grad_out = g[0].contiguous();
        Tensor gi = detail::gradient_like(need_input, x);
        Tensor gw = detail::gradient_like(need_weight, normalized_shape, x);
        Tensor gb = detail::gradient_like(need_bias, normalized_shape, x);
        const Tensor w = saved_weight.defined()
                             ? saved_weight.unpack(node).detach().contiguous()
                             : Tensor();
        if (x.numel() > 0) {
          detail::kernels_for(x).layer_norm_backward(
              gi.defined() ? as_rows(gi, rows, n) : gi,
              gw,
              gb,
              as_rows(grad_out, rows, n),
              as_rows(x, rows, n),
              mean,
              rstd,
              w);
        } else {
          for (Tensor* t : {&gw, &gb}) {
            if (t->defined()) detail::kernels_for(x).fill(*t, 0);
          }
        }
        return tensor_list{gi, gw, gb};
      });
  return out;
}

}  // namespace tandem
