// Linear: parameters, PyTorch's initialisation and forward.
#include "tandem/nn/modules/linear.h"

#include <cmath>

#include "tandem/core/error.h"
#include "tandem/nn/init.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/linalg.h"

namespace tandem::nn {

LinearImpl::LinearImpl(const LinearOptions& options) : options(options) { reset(); }

void LinearImpl::reset() {
  TANDEM_CHECK(options.in_features() >= 0 && options.out_features() >= 0,
               "Linear: in_features and out_features must be non-negative, got ",
               options.in_features(),
               " and ",
               options.out_features());
  weight = register_parameter("weight",
                              empty({options.out_features(), options.in_features()}));
  bias = register_parameter("bias",
                            options.bias() ? empty({options.out_features()}) : Tensor(),
                            /*requires_grad=*/options.bias());
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  init::kaiming_uniform_(weight, /*a=*/std::sqrt(5.0));
  if (!bias.defined()) return;
  const int64_t fan_in = std::get<0>(init::calculate_fan_in_and_fan_out(weight));
  const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
  init::uniform_(bias, -bound, bound);
}

void LinearImpl::pretty_print(std::ostream& stream) const {
  stream << "Linear(in_features=" << options.in_features()
         << ", out_features=" << options.out_features()
         << ", bias=" << (options.bias() ? "true" : "false") << ")";
}

Tensor LinearImpl::forward(const Tensor& input) { return linear(input, weight, bias); }

}  // namespace tandem::nn
