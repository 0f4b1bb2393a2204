// AdaptiveAvgPool2d and AdaptiveMaxPool2d: option checks, printing and
// forwards to the adaptive pooling ops.
#include "tandem/nn/modules/adaptive_pooling.h"

#include "tandem/core/error.h"
#include "tandem/ops/pooling.h"

namespace tandem::nn {
namespace {

void check_output_size(const char* layer, const ExpandingArray<2>& size) {
  TANDEM_CHECK(
      size[0] > 0 && size[1] > 0, layer, ": output_size must be positive, got ", size);
}

void check_input(const char* layer, const Tensor& input) {
  TANDEM_CHECK(input.defined(), layer, ": the input is undefined");
  TANDEM_CHECK(input.dim() == 3 || input.dim() == 4,
               layer,
               ": expected a 3-D [C, H, W] (unbatched) or 4-D [N, C, H, W] (batched) ",
               "input, got shape ",
               input.sizes());
}

}  // namespace

AdaptiveAvgPool2dImpl::AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& options)
    : options(options) {
  reset();
}

void AdaptiveAvgPool2dImpl::reset() {
  check_output_size("AdaptiveAvgPool2d", options.output_size());
}

void AdaptiveAvgPool2dImpl::pretty_print(std::ostream& stream) const {
  stream << "AdaptiveAvgPool2d(output_size=" << options.output_size() << ")";
}

Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& input) {
  check_input("AdaptiveAvgPool2d", input);
  return adaptive_avg_pool2d(input, options.output_size());
}

AdaptiveMaxPool2dImpl::AdaptiveMaxPool2dImpl(const AdaptiveMaxPool2dOptions& options)
    : options(options) {
  reset();
}

void AdaptiveMaxPool2dImpl::reset() {
  check_output_size("AdaptiveMaxPool2d", options.output_size());
}

void AdaptiveMaxPool2dImpl::pretty_print(std::ostream& stream) const {
  stream << "AdaptiveMaxPool2d(output_size=" << options.output_size() << ")";
}

Tensor AdaptiveMaxPool2dImpl::forward(const Tensor& input) {
  return std::get<0>(forward_with_indices(input));
}

std::tuple<Tensor, Tensor> AdaptiveMaxPool2dImpl::forward_with_indices(
    const Tensor& input) {
  check_input("AdaptiveMaxPool2d", input);
  return adaptive_max_pool2d_with_indices(input, options.output_size());
}

}  // namespace tandem::nn
