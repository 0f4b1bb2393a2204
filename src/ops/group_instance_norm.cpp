// group_norm and instance_norm, composed from the normalisation ops (and so
// differentiable twice, as they are):
//   - group_norm is layer_norm over each sample's group [N, G, C / G * L],
//     then the per-channel affine;
//   - instance_norm is PyTorch's own composition: batch_norm over [1, N * C,
//     *] with weight, bias and running statistics repeated N times, the
//     repeated running statistics averaged back over the batch afterwards.
#include "ops/op_utils.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/normalization.h"
#include "tandem/ops/reduction.h"
#include "tandem/ops/shape.h"

namespace tandem {
namespace {

// `t` [C] seen against input [N, C, *]: [C, 1, ..., 1].
Tensor per_channel(const Tensor& t, int64_t input_dim) {
  IntList shape(static_cast<size_t>(input_dim - 1), 1);
  shape[0] = t.size(0);
  return view(t, shape);
}

// `t` [C] repeated n times: [n * C] (a new tensor).
Tensor repeated(const Tensor& t, int64_t n) {
  if (!t.defined()) return t;
  return reshape(expand(unsqueeze(t, 0), {n, t.size(0)}), {n * t.size(0)});
}

void check_channel_vector(const char* op,
                          const char* name,
                          const Tensor& t,
                          const Tensor& input) {
  if (!t.defined()) return;
  TANDEM_CHECK(t.dim() == 1 && t.size(0) == input.size(1),
               op,
               ": expected ",
               name,
               " of shape [",
               input.size(1),
               "] (one value per channel of input of shape ",
               input.sizes(),
               "), got ",
               t.sizes());
}

}  // namespace

Tensor group_norm(const Tensor& input,
                  int64_t num_groups,
                  const Tensor& weight,
                  const Tensor& bias,
                  double eps) {
  const char* op = "group_norm";
  const profiler::Span span = detail::op_span(op, {&input});
  detail::check_defined(op, input, "input");
  detail::check_floating(op, input, "input");
  TANDEM_CHECK(
      input.dim() >= 2,
      "group_norm: expected an input [N, C, ...] with at least 2 dims, got shape ",
      input.sizes());
  TANDEM_CHECK(num_groups > 0 && input.size(1) % num_groups == 0,
               "group_norm: num_groups=",
               num_groups,
               " must be positive and divide the ",
               input.size(1),
               " channels of input of shape ",
               input.sizes());
  for (const Tensor* t : {&weight, &bias}) {
    detail::check_same_device(op, {&input, t});
    detail::check_same_dtype(op, *t, t == &weight ? "weight" : "bias", input, "input");
    check_channel_vector(op, t == &weight ? "weight" : "bias", *t, input);
  }
  const int64_t n = input.size(0);
  const int64_t group_numel = input.numel() / std::max<int64_t>(n * num_groups, 1);
  Tensor out = reshape(
      layer_norm(
          reshape(input, {n, num_groups, group_numel}), {group_numel}, {}, {}, eps),
      input.sizes());
  if (weight.defined()) out = out * per_channel(weight, input.dim());
  if (bias.defined()) out = out + per_channel(bias, input.dim());
  return out;
}

Tensor instance_norm(const Tensor& input,
                     const Tensor& running_mean,
                     const Tensor& running_var,
                     const Tensor& weight,
                     const Tensor& bias,
                     bool use_input_stats,
                     double momentum,
                     double eps) {
  const char* op = "instance_norm";
  const profiler::Span span = detail::op_span(op, {&input});
  detail::check_defined(op, input, "input");
  detail::check_floating(op, input, "input");
  TANDEM_CHECK(input.dim() >= 3,
               "instance_norm: expected an input [N, C, ...] with at least 3 dims, ",
               "got shape ",
               input.sizes());
  for (const auto& [name, t] : {std::pair<const char*, const Tensor*>{"weight", &weight},
                                {"bias", &bias},
                                {"running_mean", &running_mean},
                                {"running_var", &running_var}}) {
    detail::check_same_device(op, {&input, t});
    detail::check_same_dtype(op, *t, name, input, "input");
    check_channel_vector(op, name, *t, input);
  }
  TANDEM_CHECK(use_input_stats || (running_mean.defined() && running_var.defined()),
               "instance_norm: running_mean and running_var must be defined when ",
               "use_input_stats is false");
  if (use_input_stats) {
    const int64_t spatial =
        input.numel() / std::max<int64_t>(input.size(0) * input.size(1), 1);
    TANDEM_CHECK(spatial > 1,
                 "instance_norm: expected more than 1 spatial element when training, ",
                 "got input of shape ",
                 input.sizes());
  }
  const int64_t n = input.size(0), c = input.size(1);
  IntList flat = input.sizes();
  flat[0] = 1;
  flat[1] = n * c;
  Tensor mean_n, var_n;
  if (running_mean.defined()) mean_n = repeated(running_mean.detach(), n);
  if (running_var.defined()) var_n = repeated(running_var.detach(), n);
  const Tensor out = batch_norm(reshape(input, flat),
                                mean_n,
                                var_n,
                                repeated(weight, n),
                                repeated(bias, n),
                                use_input_stats,
                                momentum,
                                eps);
  if (use_input_stats) {
    NoGradGuard no_grad;
    for (const auto& [running, updated] :
         {std::pair{running_mean, mean_n}, std::pair{running_var, var_n}}) {
      if (!running.defined()) continue;
      Tensor target = running;
      target.copy_(mean(view(updated, {n, c}), {0}));
    }
  }
  return reshape(out, input.sizes());
}

}  // namespace tandem
