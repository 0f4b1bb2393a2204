// InstanceNorm2d: normalises each (sample, channel) plane of [N, C, H, W]
// (or [C, H, W]) input with its own mean and variance, as LibTorch's
// torch::nn::InstanceNorm2d. By default (as PyTorch) it has no affine
// parameters and no running statistics; with track_running_stats it keeps
// running_mean / running_var (averaged over the batch) for eval mode, with
// affine a per-channel weight (1) and bias (0).
//
//   tandem::nn::InstanceNorm2d in(64);
//   tandem::nn::InstanceNorm2d tracked(
//       tandem::nn::InstanceNormOptions(64).affine(true).track_running_stats(true));
//   std::cout << in;  // InstanceNorm2d(64, eps=1e-05, momentum=0.1, affine=false,
//                     //                track_running_stats=false)
#pragma once

#include <cstdint>
#include <ostream>

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/options/instance_norm.h"

namespace tandem::nn {

using InstanceNorm2dOptions = InstanceNormOptions;

class InstanceNorm2dImpl : public Cloneable<InstanceNorm2dImpl> {
 public:
  explicit InstanceNorm2dImpl(int64_t num_features)
      : InstanceNorm2dImpl(InstanceNormOptions(num_features)) {}
  explicit InstanceNorm2dImpl(const InstanceNormOptions& options);

  /// Creates the parameters (if affine) and buffers (if
  /// track_running_stats) and initialises them.
  void reset() override;
  /// running_mean to 0, running_var to 1, num_batches_tracked to 0.
  void reset_running_stats();
  /// reset_running_stats(), and weight to 1, bias to 0.
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  InstanceNormOptions options;
  /// [C]; undefined unless options.affine().
  Tensor weight;
  Tensor bias;
  /// [C] and an int64 0-dim count (kept for PyTorch's state_dict; instance
  /// norm does not advance it); undefined unless track_running_stats.
  Tensor running_mean;
  Tensor running_var;
  Tensor num_batches_tracked;
};
TANDEM_MODULE(InstanceNorm2d);

}  // namespace tandem::nn
