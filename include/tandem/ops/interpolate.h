// Resampling of image batches [N, C, H, W] to a new height and width:
// nearest-neighbour and bilinear, as ATen's upsample_nearest2d and
// upsample_bilinear2d (torch.nn.functional.interpolate picks between them
// and computes output_size; nn::functional::interpolate does the same).
//
//   auto big = tandem::upsample_nearest2d(x, {56, 56});
//   auto smooth = tandem::upsample_bilinear2d(x, {56, 56}, /*align_corners=*/false);
#pragma once

#include <optional>

#include "tandem/core/tensor.h"
#include "tandem/ops/expanding_array.h"

namespace tandem {

/// The interpolation modes of interpolate and Upsample (LibTorch's
/// torch::kNearest and torch::kBilinear).
enum class InterpolateMode { Nearest, Bilinear };
inline constexpr InterpolateMode kNearest = InterpolateMode::Nearest;
inline constexpr InterpolateMode kBilinear = InterpolateMode::Bilinear;

/// Output cell o along a dim of n input cells copies input cell
/// min(floor(o * s), n - 1), s = 1 / scale when a scale factor is given
/// (as interpolate passes it), else n / output_size; computed in float, as
/// PyTorch.
Tensor upsample_nearest2d(const Tensor& input,
                          ExpandingArray<2> output_size,
                          std::optional<double> scale_h = std::nullopt,
                          std::optional<double> scale_w = std::nullopt);

/// Each output cell interpolates linearly, along each dim, between the two
/// input cells around its source position: o * (n - 1) / (output_size - 1)
/// with align_corners, else (o + 0.5) * s - 0.5 clamped at 0 (s as above).
Tensor upsample_bilinear2d(const Tensor& input,
                           ExpandingArray<2> output_size,
                           bool align_corners,
                           std::optional<double> scale_h = std::nullopt,
                           std::optional<double> scale_w = std::nullopt);

}  // namespace tandem
