// GroupNorm: option checks, parameters and the forward to group_norm.
#include "tandem/nn/modules/group_norm.h"

#include "tandem/core/error.h"
#include "tandem/nn/init.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/normalization.h"

namespace tandem::nn {

GroupNormImpl::GroupNormImpl(const GroupNormOptions& options) : options(options) {
  reset();
}

void GroupNormImpl::reset() {
  const int64_t groups = options.num_groups(), c = options.num_channels();
  TANDEM_CHECK(groups > 0 && c > 0,
               "GroupNorm: num_groups and num_channels must be positive, got ",
               groups,
               " and ",
               c);
  TANDEM_CHECK(c % groups == 0,
               "GroupNorm: num_channels (",
               c,
               ") must be divisible by num_groups (",
               groups,
               ")");
  const bool affine = options.affine();
  weight = register_parameter("weight", affine ? empty({c}) : Tensor(), affine);
  bias = register_parameter("bias", affine ? empty({c}) : Tensor(), affine);
  reset_parameters();
}

void GroupNormImpl::reset_parameters() {
  if (!options.affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

void GroupNormImpl::pretty_print(std::ostream& stream) const {
  stream << "GroupNorm(" << options.num_groups() << ", " << options.num_channels()
         << ", eps=" << options.eps()
         << ", affine=" << (options.affine() ? "true" : "false") << ")";
}

Tensor GroupNormImpl::forward(const Tensor& input) {
  TANDEM_CHECK(input.defined(), "GroupNorm: the input is undefined");
  TANDEM_CHECK(input.dim() >= 2 && input.size(1) == options.num_channels(),
               "GroupNorm: expected an input [N, ",
               options.num_channels(),
               ", ...], got shape ",
               input.sizes());
  return group_norm(input, options.num_groups(), weight, bias, options.eps());
}

}  // namespace tandem::nn
