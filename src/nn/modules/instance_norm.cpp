// InstanceNorm2d: parameters, buffers and the forward, following
// torch.nn.modules.instancenorm._InstanceNorm (input statistics while
// training or without running statistics, running ones in eval).
#include "tandem/nn/modules/instance_norm.h"

#include "tandem/core/error.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/nn/init.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/normalization.h"
#include "tandem/ops/shape.h"

namespace tandem::nn {

InstanceNorm2dImpl::InstanceNorm2dImpl(const InstanceNormOptions& options)
    : options(options) {
  reset();
}

void InstanceNorm2dImpl::reset() {
  const int64_t c = options.num_features();
  TANDEM_CHECK(c > 0, "InstanceNorm2d: num_features must be positive, got ", c);
  const bool affine = options.affine(), tracked = options.track_running_stats();
  weight = register_parameter("weight", affine ? empty({c}) : Tensor(), affine);
  bias = register_parameter("bias", affine ? empty({c}) : Tensor(), affine);
  running_mean = register_buffer("running_mean", tracked ? empty({c}) : Tensor());
  running_var = register_buffer("running_var", tracked ? empty({c}) : Tensor());
  num_batches_tracked =
      register_buffer("num_batches_tracked", tracked ? empty({}, kInt64) : Tensor());
  reset_parameters();
}

void InstanceNorm2dImpl::reset_running_stats() {
  if (!options.track_running_stats()) return;
  NoGradGuard no_grad;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

void InstanceNorm2dImpl::reset_parameters() {
  reset_running_stats();
  if (!options.affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

void InstanceNorm2dImpl::pretty_print(std::ostream& stream) const {
  stream << "InstanceNorm2d(" << options.num_features() << ", eps=" << options.eps()
         << ", momentum=" << options.momentum()
         << ", affine=" << (options.affine() ? "true" : "false")
         << ", track_running_stats=" << (options.track_running_stats() ? "true" : "false")
         << ")";
}

Tensor InstanceNorm2dImpl::forward(const Tensor& input) {
  TANDEM_CHECK(input.defined(), "InstanceNorm2d: the input is undefined");
  TANDEM_CHECK(
      input.dim() == 3 || input.dim() == 4,
      "InstanceNorm2d: expected a 3-D [C, H, W] (unbatched) or 4-D [N, C, H, W] ",
      "(batched) input, got shape ",
      input.sizes());
  // As PyTorch, a channel count other than num_features is an error only
  // where parameters or buffers have num_features entries.
  const int64_t c = input.size(input.dim() - 3);
  const bool sized = options.affine() || options.track_running_stats();
  TANDEM_CHECK(!sized || c == options.num_features(),
               "InstanceNorm2d: expected input with ",
               options.num_features(),
               " channels (num_features), got shape ",
               input.sizes());
  const bool unbatched = input.dim() == 3;
  const Tensor x = unbatched ? unsqueeze(input, 0) : input;
  const Tensor out = instance_norm(x,
                                   running_mean,
                                   running_var,
                                   weight,
                                   bias,
                                   is_training() || !options.track_running_stats(),
                                   options.momentum(),
                                   options.eps());
  return unbatched ? squeeze(out, 0) : out;
}

}  // namespace tandem::nn
