// functional::interpolate: torch.nn.functional.interpolate's argument rules
// (exactly one of size and scale_factor, align_corners only for linear
// modes), its output size floor(input size * scale_factor), and the scale
// it hands the kernel (the given factor unless recompute_scale_factor).
#include <cmath>
#include <optional>
#include <vector>

#include "tandem/core/error.h"
#include "tandem/nn/functional.h"

namespace tandem::nn::functional {
namespace {

// One value for both spatial dims, or one each.
template <typename T>
std::vector<T> per_spatial_dim(const char* name, const std::vector<T>& values) {
  TANDEM_CHECK(values.size() == 1 || values.size() == 2,
               "interpolate: expected ",
               name,
               " with 1 or 2 values for the 2 spatial dims of a 4-D input, got ",
               values.size());
  return values.size() == 2 ? values : std::vector<T>{values[0], values[0]};
}

}  // namespace

Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options) {
  TANDEM_CHECK(input.defined(), "interpolate: argument 'input' is undefined");
  TANDEM_CHECK(input.dim() == 4,
               "interpolate: modes nearest and bilinear take a 4-D [N, C, H, W] input, ",
               "got shape ",
               input.sizes());
  const bool has_size = options.size().has_value();
  const bool has_scale = options.scale_factor().has_value();
  TANDEM_CHECK(has_size != has_scale,
               has_size
                   ? "interpolate: only one of size or scale_factor should be defined"
                   : "interpolate: either size or scale_factor should be defined");
  const bool bilinear = options.mode() == kBilinear;
  TANDEM_CHECK(bilinear || !options.align_corners().has_value(),
               "interpolate: align_corners option can only be set with the ",
               "interpolating modes: linear | bilinear | bicubic | trilinear");
  TANDEM_CHECK(!(has_size && options.recompute_scale_factor().value_or(false)),
               "interpolate: recompute_scale_factor is not meaningful with an explicit ",
               "size");
  std::vector<int64_t> out_size;
  std::optional<double> scale_h, scale_w;
  if (has_size) {
    out_size = per_spatial_dim("size", *options.size());
  } else {
    const std::vector<double> scales =
        per_spatial_dim("scale_factor", *options.scale_factor());
    for (size_t d = 0; d < 2; ++d) {
      out_size.push_back(static_cast<int64_t>(std::floor(
          static_cast<double>(input.size(static_cast<int64_t>(d) + 2)) * scales[d])));
    }
    if (!options.recompute_scale_factor().value_or(false)) {
      scale_h = scales[0];
      scale_w = scales[1];
    }
  }
  TANDEM_CHECK(out_size[0] > 0 && out_size[1] > 0,
               "interpolate: the output size ",
               IntList(out_size.begin(), out_size.end()),
               " must be positive (input of shape ",
               input.sizes(),
               ")");
  const ExpandingArray<2> size({out_size[0], out_size[1]});
  if (bilinear) {
    return upsample_bilinear2d(
        input, size, options.align_corners().value_or(false), scale_h, scale_w);
  }
  return upsample_nearest2d(input, size, scale_h, scale_w);
}

}  // namespace tandem::nn::functional
