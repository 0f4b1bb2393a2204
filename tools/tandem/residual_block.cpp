#include "residual_block.h"

#include <ostream>

#include "tandem/ops/activation.h"

namespace tandem::cli {
namespace {

nn::Conv2d conv_without_bias(int64_t in, int64_t out, int64_t kernel, int64_t stride) {
  return nn::Conv2d(
      nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false));
}

}  // namespace

ResidualBlockImpl::ResidualBlockImpl(int64_t in_channels,
                                     int64_t out_channels,
                                     int64_t stride)
    : in_channels_(in_channels), out_channels_(out_channels), stride_(stride) {
  reset();
}

void ResidualBlockImpl::reset() {
  conv1_ = register_module("conv1",
                           conv_without_bias(in_channels_, out_channels_, 3, stride_));
  bn1_ = register_module("bn1", nn::BatchNorm2d(out_channels_));
  conv2_ =
      register_module("conv2", conv_without_bias(out_channels_, out_channels_, 3, 1));
  bn2_ = register_module("bn2", nn::BatchNorm2d(out_channels_));
  if (stride_ != 1 || in_channels_ != out_channels_) {
    shortcut_conv_ = register_module(
        "shortcut_conv", conv_without_bias(in_channels_, out_channels_, 1, stride_));
    shortcut_bn_ = register_module("shortcut_bn", nn::BatchNorm2d(out_channels_));
  }
}

Tensor ResidualBlockImpl::forward(const Tensor& input) {
  Tensor out = relu(bn1_->forward(conv1_->forward(input)));
  out = bn2_->forward(conv2_->forward(out));
  Tensor shortcut =
      shortcut_conv_ ? shortcut_bn_->forward(shortcut_conv_->forward(input)) : input;
  return relu(out + shortcut);
}

void ResidualBlockImpl::pretty_print(std::ostream& stream) const {
  stream << "ResidualBlock(" << in_channels_ << ", " << out_channels_
         << ", stride=" << stride_ << ")";
}

}  // namespace tandem::cli
