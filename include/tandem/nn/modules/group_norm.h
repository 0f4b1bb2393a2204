// GroupNorm: normalises each sample's groups of channels with their own
// mean and variance, as LibTorch's torch::nn::GroupNorm; with affine (the
// default) a per-channel weight (initialised to 1) and bias (0).
//
//   tandem::nn::GroupNorm gn(/*num_groups=*/4, /*num_channels=*/32);
//   auto y = gn->forward(x);   // x: [N, 32, ...]
//   std::cout << gn;           // GroupNorm(4, 32, eps=1e-05, affine=true)
#pragma once

#include <cstdint>
#include <ostream>

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/options/group_norm.h"

namespace tandem::nn {

class GroupNormImpl : public Cloneable<GroupNormImpl> {
 public:
  GroupNormImpl(int64_t num_groups, int64_t num_channels)
      : GroupNormImpl(GroupNormOptions(num_groups, num_channels)) {}
  explicit GroupNormImpl(const GroupNormOptions& options);

  /// Checks the options and creates weight and bias [C] when affine.
  void reset() override;
  /// weight to 1, bias to 0.
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  GroupNormOptions options;
  /// [C]; undefined unless options.affine().
  Tensor weight;
  Tensor bias;
};
TANDEM_MODULE(GroupNorm);

}  // namespace tandem::nn
