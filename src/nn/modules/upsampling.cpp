// Upsample: printing and the forward through functional::interpolate.
#include "tandem/nn/modules/upsampling.h"

#include "tandem/core/error.h"
#include "tandem/nn/functional.h"

namespace tandem::nn {
namespace {

// [a, b], as sizes print.
template <typename T>
void print_list(std::ostream& stream, const std::vector<T>& values) {
  stream << "[";
  for (size_t i = 0; i < values.size(); ++i) stream << (i ? ", " : "") << values[i];
  stream << "]";
}

}  // namespace

UpsampleImpl::UpsampleImpl(const UpsampleOptions& options) : options(options) {}

void UpsampleImpl::pretty_print(std::ostream& stream) const {
  stream << "Upsample(";
  if (options.scale_factor()) {
    stream << "scale_factor=";
    print_list(stream, *options.scale_factor());
  } else if (options.size()) {
    stream << "size=";
    print_list(stream, *options.size());
  }
  stream << ", mode=" << (options.mode() == kBilinear ? "kBilinear" : "kNearest") << ")";
}

Tensor UpsampleImpl::forward(const Tensor& input) {
  TANDEM_CHECK(input.defined(), "Upsample: the input is undefined");
  TANDEM_CHECK(input.dim() == 4,
               "Upsample: expected a 4-D [N, C, H, W] input, got shape ",
               input.sizes());
  return functional::interpolate(input,
                                 functional::InterpolateFuncOptions()
                                     .size(options.size())
                                     .scale_factor(options.scale_factor())
                                     .mode(options.mode())
                                     .align_corners(options.align_corners()));
}

}  // namespace tandem::nn
