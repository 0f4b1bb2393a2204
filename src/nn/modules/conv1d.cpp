// Conv1d: option checks, parameters, PyTorch's initialisation and forward.
#include "tandem/nn/modules/conv1d.h"

#include "nn/modules/conv_nd_impl.h"
#include "tandem/core/error.h"
#include "tandem/ops/conv.h"
#include "tandem/ops/factory.h"

namespace tandem::nn {

Conv1dImpl::Conv1dImpl(const Conv1dOptions& options) : options(options) { reset(); }

void Conv1dImpl::reset() {
  const int64_t in = options.in_channels(), out = options.out_channels();
  const int64_t groups = options.groups();
  detail::check_conv_channels("Conv1d", in, out, groups);
  const int64_t k = options.kernel_size()[0];
  TANDEM_CHECK(k > 0, "Conv1d: kernel_size must be positive, got ", k);
  weight = register_parameter("weight", empty({out, in / groups, k}));
  bias = register_parameter("bias",
                            options.bias() ? empty({out}) : Tensor(),
                            /*requires_grad=*/options.bias());
  reset_parameters();
}

void Conv1dImpl::reset_parameters() { detail::reset_conv_parameters(weight, bias); }

void Conv1dImpl::pretty_print(std::ostream& stream) const {
  detail::print_conv<1>(stream, "Conv1d", options);
}

Tensor Conv1dImpl::forward(const Tensor& input) {
  TANDEM_CHECK(input.dim() == 2 || input.dim() == 3,
               "Conv1d: expected a 2-D [C, L] (unbatched) or 3-D [N, C, L] (batched) ",
               "input, got shape ",
               input.sizes());
  return conv1d(input,
                weight,
                bias,
                options.stride(),
                options.padding(),
                options.dilation(),
                options.groups());
}

}  // namespace tandem::nn
