// Upsample: resamples [N, C, H, W] input to a size or by a scale factor,
// nearest-neighbour or bilinear, as LibTorch's torch::nn::Upsample (which
// calls functional::interpolate).
//
//   tandem::nn::Upsample up(tandem::nn::UpsampleOptions().scale_factor({2}));
//   tandem::nn::Upsample smooth(tandem::nn::UpsampleOptions()
//                                   .size({{64, 64}})
//                                   .mode(tandem::kBilinear)
//                                   .align_corners(true));
//   std::cout << up;   // Upsample(scale_factor=[2], mode=kNearest)
#pragma once

#include <ostream>

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/options/upsampling.h"

namespace tandem::nn {

class UpsampleImpl : public Cloneable<UpsampleImpl> {
 public:
  explicit UpsampleImpl(const UpsampleOptions& options = {});
  /// Nothing to create; the options are checked when the layer runs.
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  UpsampleOptions options;
};
TANDEM_MODULE(Upsample);

}  // namespace tandem::nn
