// BatchNorm1d / BatchNorm2d / BatchNorm3d: parameters, buffers, the momentum rule and
// the forward, following torch.nn.modules.batchnorm._BatchNorm.
#include "tandem/nn/modules/batch_norm.h"

#include "tandem/core/error.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/nn/init.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/normalization.h"

namespace tandem::nn {

template <typename Derived>
BatchNormImplBase<Derived>::BatchNormImplBase(const BatchNormOptions& options)
    : options(options) {
  reset();
}

template <typename Derived>
void BatchNormImplBase<Derived>::reset() {
  const int64_t c = options.num_features();
  // Not this->name(): reset() runs in the base's constructor, where the
  // dynamic type is still the base.
  TANDEM_CHECK(c > 0, "BatchNorm: num_features must be positive, got ", c);
  const bool affine = options.affine(), tracked = options.track_running_stats();
  weight = this->register_parameter("weight", affine ? empty({c}) : Tensor(), affine);
  bias = this->register_parameter("bias", affine ? empty({c}) : Tensor(), affine);
  running_mean = this->register_buffer("running_mean", tracked ? empty({c}) : Tensor());
  running_var = this->register_buffer("running_var", tracked ? empty({c}) : Tensor());
  num_batches_tracked = this->register_buffer("num_batches_tracked",
                                              tracked ? empty({}, kInt64) : Tensor());
  reset_parameters();
}

template <typename Derived>
void BatchNormImplBase<Derived>::reset_running_stats() {
  if (!options.track_running_stats()) return;
  NoGradGuard no_grad;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

template <typename Derived>
void BatchNormImplBase<Derived>::reset_parameters() {
  reset_running_stats();
  if (!options.affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

template <typename Derived>
void BatchNormImplBase<Derived>::pretty_print(std::ostream& stream) const {
  stream << this->name() << "(" << options.num_features() << ", eps=" << options.eps()
         << ", momentum=";
  if (options.momentum()) {
    stream << *options.momentum();
  } else {
    stream << "None";
  }
  stream << ", affine=" << (options.affine() ? "true" : "false")
         << ", track_running_stats=" << (options.track_running_stats() ? "true" : "false")
         << ")";
}

template <typename Derived>
Tensor BatchNormImplBase<Derived>::forward(const Tensor& input) {
  check_input_dim(input);
  const bool training = this->is_training();
  // Without a momentum the running statistics are the plain average of all
  // batches so far: batch k gets weight 1 / k.
  double average_factor = options.momentum().value_or(0.0);
  if (training && options.track_running_stats()) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(1);
    if (!options.momentum()) {
      average_factor = 1.0 / static_cast<double>(num_batches_tracked.item<int64_t>());
    }
  }
  // Without running statistics, eval mode normalises with the batch's too.
  return batch_norm(input,
                    running_mean,
                    running_var,
                    weight,
                    bias,
                    /*training=*/training || !running_mean.defined(),
                    average_factor,
                    options.eps());
}

void BatchNorm1dImpl::check_input_dim(const Tensor& input) const {
  TANDEM_CHECK(input.dim() == 2 || input.dim() == 3,
               "BatchNorm1d: expected a 2-D [N, C] or 3-D [N, C, L] input, got shape ",
               input.sizes());
}

void BatchNorm2dImpl::check_input_dim(const Tensor& input) const {
  TANDEM_CHECK(input.dim() == 4,
               "BatchNorm2d: expected a 4-D [N, C, H, W] input, got shape ",
               input.sizes());
}

void BatchNorm3dImpl::check_input_dim(const Tensor& input) const {
  TANDEM_CHECK(input.dim() == 5,
               "BatchNorm3d: expected a 5-D [N, C, D, H, W] input, got shape ",
               input.sizes());
}

template class BatchNormImplBase<BatchNorm1dImpl>;
template class BatchNormImplBase<BatchNorm2dImpl>;
template class BatchNormImplBase<BatchNorm3dImpl>;

}  // namespace tandem::nn
