// Conv2d: option checks, parameters, PyTorch's initialisation and forward.
#include "tandem/nn/modules/conv.h"

#include "nn/modules/conv_nd_impl.h"
#include "tandem/core/error.h"
#include "tandem/ops/conv.h"
#include "tandem/ops/factory.h"

namespace tandem::nn {

Conv2dImpl::Conv2dImpl(const Conv2dOptions& options) : options(options) { reset(); }

void Conv2dImpl::reset() {
  const int64_t in = options.in_channels(), out = options.out_channels();
  const int64_t groups = options.groups();
  detail::check_conv_channels("Conv2d", in, out, groups);
  // The other per-dimension options are checked by conv2d when it runs.
  const ExpandingArray<2>& k = options.kernel_size();
  TANDEM_CHECK(k[0] > 0 && k[1] > 0, "Conv2d: kernel_size must be positive, got ", k);
  weight = register_parameter("weight", empty({out, in / groups, k[0], k[1]}));
  bias = register_parameter("bias",
                            options.bias() ? empty({out}) : Tensor(),
                            /*requires_grad=*/options.bias());
  reset_parameters();
}

void Conv2dImpl::reset_parameters() { detail::reset_conv_parameters(weight, bias); }

void Conv2dImpl::pretty_print(std::ostream& stream) const {
  detail::print_conv<2>(stream, "Conv2d", options);
}

Tensor Conv2dImpl::forward(const Tensor& input) {
  return conv2d(input,
                weight,
                bias,
                options.stride(),
                options.padding(),
                options.dilation(),
                options.groups());
}

}  // namespace tandem::nn
