// MaxPool2d and AvgPool2d: printing and forwards to the pooling ops.
#include "tandem/nn/modules/pooling.h"

#include "tandem/ops/pooling.h"

namespace tandem::nn {

MaxPool2dImpl::MaxPool2dImpl(const MaxPool2dOptions& options) : options(options) {}

void MaxPool2dImpl::pretty_print(std::ostream& stream) const {
  stream << "MaxPool2d(kernel_size=" << options.kernel_size()
         << ", stride=" << options.stride() << ", padding=" << options.padding()
         << ", dilation=" << options.dilation()
         << ", ceil_mode=" << (options.ceil_mode() ? "true" : "false") << ")";
}

Tensor MaxPool2dImpl::forward(const Tensor& input) {
  return std::get<0>(forward_with_indices(input));
}

std::tuple<Tensor, Tensor> MaxPool2dImpl::forward_with_indices(const Tensor& input) {
  return max_pool2d_with_indices(input,
                                 options.kernel_size(),
                                 options.stride(),
                                 options.padding(),
                                 options.dilation(),
                                 options.ceil_mode());
}

AvgPool2dImpl::AvgPool2dImpl(const AvgPool2dOptions& options) : options(options) {}

void AvgPool2dImpl::pretty_print(std::ostream& stream) const {
  stream << "AvgPool2d(kernel_size=" << options.kernel_size()
         << ", stride=" << options.stride() << ", padding=" << options.padding() << ")";
}

Tensor AvgPool2dImpl::forward(const Tensor& input) {
  return avg_pool2d(input,
                    options.kernel_size(),
                    options.stride(),
                    options.padding(),
                    options.ceil_mode(),
                    options.count_include_pad(),
                    options.divisor_override());
}

}  // namespace tandem::nn
