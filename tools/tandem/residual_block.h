// The basic block of a ResNet (He et al., "Deep Residual Learning for Image
// Recognition", 2016, figure 2), as torchvision's BasicBlock builds it:
//
//   x -> conv3x3(stride) -> BN -> ReLU -> conv3x3 -> BN -> (+ shortcut(x)) -> ReLU
//
// The shortcut is x itself, or a strided 1x1 convolution and batch norm
// where the block changes the channel count or the image size. The
// convolutions have no bias (the batch norm that follows has one).
//
//   auto block = ResidualBlock(16, 32, /*stride=*/2);   // [N,16,28,28] -> [N,32,14,14]
#pragma once

#include <cstdint>

#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/modules/batch_norm.h"
#include "tandem/nn/modules/conv.h"

namespace tandem::cli {

class ResidualBlockImpl : public nn::Cloneable<ResidualBlockImpl> {
 public:
  ResidualBlockImpl(int64_t in_channels, int64_t out_channels, int64_t stride);

  void reset() override;
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

 private:
  int64_t in_channels_;
  int64_t out_channels_;
  int64_t stride_;
  nn::Conv2d conv1_{nullptr};
  nn::BatchNorm2d bn1_{nullptr};
  nn::Conv2d conv2_{nullptr};
  nn::BatchNorm2d bn2_{nullptr};
  // Empty (nullptr) when the shortcut is the identity.
  nn::Conv2d shortcut_conv_{nullptr};
  nn::BatchNorm2d shortcut_bn_{nullptr};
};

TANDEM_MODULE(ResidualBlock);

}  // namespace tandem::cli
