// MaxPool1d and AvgPool1d: printing and forwards to the pooling ops.
#include "tandem/nn/modules/pooling1d.h"

#include "tandem/core/error.h"
#include "tandem/ops/pooling.h"

namespace tandem::nn {
namespace {

void check_input(const char* layer, const Tensor& input) {
  TANDEM_CHECK(input.defined(), layer, ": the input is undefined");
  TANDEM_CHECK(input.dim() == 2 || input.dim() == 3,
               layer,
               ": expected a 2-D [C, L] (unbatched) or 3-D [N, C, L] (batched) input, ",
               "got shape ",
               input.sizes());
}

}  // namespace

MaxPool1dImpl::MaxPool1dImpl(const MaxPool1dOptions& options) : options(options) {}

void MaxPool1dImpl::pretty_print(std::ostream& stream) const {
  stream << "MaxPool1d(kernel_size=" << options.kernel_size()
         << ", stride=" << options.stride() << ", padding=" << options.padding()
         << ", dilation=" << options.dilation()
         << ", ceil_mode=" << (options.ceil_mode() ? "true" : "false") << ")";
}

Tensor MaxPool1dImpl::forward(const Tensor& input) {
  return std::get<0>(forward_with_indices(input));
}

std::tuple<Tensor, Tensor> MaxPool1dImpl::forward_with_indices(const Tensor& input) {
  check_input("MaxPool1d", input);
  return max_pool1d_with_indices(input,
                                 options.kernel_size(),
                                 options.stride(),
                                 options.padding(),
                                 options.dilation(),
                                 options.ceil_mode());
}

AvgPool1dImpl::AvgPool1dImpl(const AvgPool1dOptions& options) : options(options) {}

void AvgPool1dImpl::pretty_print(std::ostream& stream) const {
  stream << "AvgPool1d(kernel_size=" << options.kernel_size()
         << ", stride=" << options.stride() << ", padding=" << options.padding() << ")";
}

Tensor AvgPool1dImpl::forward(const Tensor& input) {
  check_input("AvgPool1d", input);
  return avg_pool1d(input,
                    options.kernel_size(),
                    options.stride(),
                    options.padding(),
                    options.ceil_mode(),
                    options.count_include_pad());
}

}  // namespace tandem::nn
