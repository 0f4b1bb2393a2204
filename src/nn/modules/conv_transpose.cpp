// ConvTranspose1d and ConvTranspose2d: option checks, parameters, PyTorch's
// initialisation, forward with an optional output size, printing.
#include "tandem/nn/modules/conv_transpose.h"

#include <array>
#include <string>

#include "nn/modules/conv_nd_impl.h"
#include "tandem/core/error.h"
#include "tandem/ops/conv_transpose.h"
#include "tandem/ops/factory.h"

namespace tandem::nn {
namespace {

template <size_t D>
std::string layer_name() {
  return "ConvTranspose" + std::to_string(D) + "d";
}

template <size_t D>
Tensor conv_transpose(const Tensor& input,
                      const Tensor& weight,
                      const Tensor& bias,
                      const ConvTransposeOptions<D>& o,
                      const ExpandingArray<D>& output_padding) {
  if constexpr (D == 1) {
    return conv_transpose1d(input,
                            weight,
                            bias,
                            o.stride(),
                            o.padding(),
                            output_padding,
                            o.groups(),
                            o.dilation());
  } else {
    return conv_transpose2d(input,
                            weight,
                            bias,
                            o.stride(),
                            o.padding(),
                            output_padding,
                            o.groups(),
                            o.dilation());
  }
}

}  // namespace

template <size_t D, typename Derived>
ConvTransposeNdImpl<D, Derived>::ConvTransposeNdImpl(
    const ConvTransposeOptions<D>& options)
    : options(options) {
  reset();
}

template <size_t D, typename Derived>
void ConvTransposeNdImpl<D, Derived>::reset() {
  const std::string name = layer_name<D>();
  const int64_t in = options.in_channels(), out = options.out_channels();
  const int64_t groups = options.groups();
  detail::check_conv_channels(name.c_str(), in, out, groups);
  // The other per-dimension options are checked by the op when it runs.
  const ExpandingArray<D>& k = options.kernel_size();
  IntList shape{in, out / groups};
  for (size_t d = 0; d < D; ++d) {
    TANDEM_CHECK(k[d] > 0, name, ": kernel_size must be positive, got ", k);
    shape.push_back(k[d]);
  }
  weight = this->register_parameter("weight", empty(shape));
  bias = this->register_parameter("bias",
                                  options.bias() ? empty({out}) : Tensor(),
                                  /*requires_grad=*/options.bias());
  reset_parameters();
}

template <size_t D, typename Derived>
void ConvTransposeNdImpl<D, Derived>::reset_parameters() {
  detail::reset_conv_parameters(weight, bias);
}

template <size_t D, typename Derived>
void ConvTransposeNdImpl<D, Derived>::pretty_print(std::ostream& stream) const {
  detail::print_conv<D>(stream, layer_name<D>(), options);
}

// PyTorch's _output_padding: the output_padding that makes each output dim
// as requested, within the sizes one input size can give.
template <size_t D, typename Derived>
ExpandingArray<D> ConvTransposeNdImpl<D, Derived>::output_padding_for(
    const Tensor& input, const std::optional<IntList>& output_size) const {
  if (!output_size.has_value()) return options.output_padding();
  const std::string name = layer_name<D>();
  const size_t n = output_size->size();
  TANDEM_CHECK(n == D || n == D + 2,
               name,
               ": output_size must have ",
               D,
               " or ",
               D + 2,
               " elements, got ",
               *output_size);
  TANDEM_CHECK(input.dim() >= static_cast<int64_t>(D),
               name,
               ": input of shape ",
               input.sizes(),
               " has fewer than ",
               D,
               " dims");
  const IntList wanted(output_size->end() - D, output_size->end());
  IntList in_size, min_size, max_size;
  std::array<int64_t, D> padding{};
  for (size_t d = 0; d < D; ++d) {
    const int64_t stride = options.stride()[d];
    in_size.push_back(input.size(input.dim() - static_cast<int64_t>(D) + d));
    min_size.push_back((in_size[d] - 1) * stride - 2 * options.padding()[d] +
                       options.dilation()[d] * (options.kernel_size()[d] - 1) + 1);
    max_size.push_back(min_size[d] + stride - 1);
  }
  for (size_t d = 0; d < D; ++d) {
    TANDEM_CHECK(wanted[d] >= min_size[d] && wanted[d] <= max_size[d],
                 name,
                 ": requested an output size of ",
                 wanted,
                 ", but valid sizes range from ",
                 min_size,
                 " to ",
                 max_size,
                 " (for an input of ",
                 in_size,
                 ")");
    padding[d] = wanted[d] - min_size[d];
  }
  return padding;
}

template <size_t D, typename Derived>
Tensor ConvTransposeNdImpl<D, Derived>::forward(
    const Tensor& input, const std::optional<IntList>& output_size) {
  return conv_transpose<D>(
      input, weight, bias, options, output_padding_for(input, output_size));
}

template class ConvTransposeNdImpl<1, ConvTranspose1dImpl>;
template class ConvTransposeNdImpl<2, ConvTranspose2dImpl>;

}  // namespace tandem::nn
