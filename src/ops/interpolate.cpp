// upsample_nearest2d and upsample_bilinear2d, composed from differentiable
// ops: nearest is an index_select along H and along W (its gradient an
// index_add), bilinear is separable, so it is two products with [out, in]
// interpolation matrices of two non-zeros a row. Both are differentiable
// twice through those ops. The source positions follow ATen's
// UpSample.h (area_pixel_compute_scale, nearest_idx).
#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/op_utils.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/indexing.h"
#include "tandem/ops/interpolate.h"
#include "tandem/ops/linalg.h"
#include "tandem/ops/shape.h"

namespace tandem {
namespace {

void check_input(const char* op, const Tensor& input, ExpandingArray<2> output_size) {
  detail::check_defined(op, input, "input");
  detail::check_floating(op, input, "input");
  TANDEM_CHECK(input.dim() == 4,
               op,
               ": expected a 4-D [N, C, H, W] input, got shape ",
               input.sizes());
  TANDEM_CHECK(input.size(2) > 0 && input.size(3) > 0,
               op,
               ": expected an input with non-empty spatial dims, got shape ",
               input.sizes());
  detail::check_at_least(op, "output_size", output_size.vec(), 1);
}

// The input cell that each of `out` output cells copies.
Tensor nearest_indices(int64_t in,
                       int64_t out,
                       std::optional<double> scale,
                       const Tensor& like) {
  std::vector<int64_t> index(static_cast<size_t>(out));
  const float s = (scale && *scale > 0)
                      ? static_cast<float>(1.0 / *scale)
                      : static_cast<float>(in) / static_cast<float>(out);
  for (int64_t o = 0; o < out; ++o) {
    int64_t src = 0;
    if (out == in) {
      src = o;
    } else if (out == 2 * in) {
      src = o >> 1;
    } else {
      src = std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * s)), in - 1);
    }
    index[static_cast<size_t>(o)] = src;
  }
  return tensor(index, TensorOptions(kInt64).device(like.device()));
}

// The [out, in] matrix of linear interpolation weights along one dim.
Tensor linear_weights(int64_t in,
                      int64_t out,
                      bool align_corners,
                      std::optional<double> scale,
                      const Tensor& like) {
  double s = 0;
  if (align_corners) {
    s = out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  } else {
    s = (scale && *scale > 0) ? 1.0 / *scale
                              : static_cast<double>(in) / static_cast<double>(out);
  }
  std::vector<double> weights(static_cast<size_t>(out * in), 0.0);
  for (int64_t o = 0; o < out; ++o) {
    double src = align_corners ? s * static_cast<double>(o)
                               : s * (static_cast<double>(o) + 0.5) - 0.5;
    if (!align_corners && src < 0) src = 0;
    const int64_t i0 = std::min(static_cast<int64_t>(std::floor(src)), in - 1);
    const double lambda1 = std::clamp(src - static_cast<double>(i0), 0.0, 1.0);
    const int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
    weights[static_cast<size_t>(o * in + i0)] += 1.0 - lambda1;
    weights[static_cast<size_t>(o * in + i1)] += lambda1;
  }
  return tensor(weights).view({out, in}).to(like.device(), like.dtype());
}

}  // namespace

Tensor upsample_nearest2d(const Tensor& input,
                          ExpandingArray<2> output_size,
                          std::optional<double> scale_h,
                          std::optional<double> scale_w) {
  const profiler::Span span = detail::op_span("upsample_nearest2d", {&input});
  check_input("upsample_nearest2d", input, output_size);
  const Tensor rows = index_select(
      input, 2, nearest_indices(input.size(2), output_size[0], scale_h, input));
  return index_select(
      rows, 3, nearest_indices(input.size(3), output_size[1], scale_w, input));
}

Tensor upsample_bilinear2d(const Tensor& input,
                           ExpandingArray<2> output_size,
                           bool align_corners,
                           std::optional<double> scale_h,
                           std::optional<double> scale_w) {
  const profiler::Span span = detail::op_span("upsample_bilinear2d", {&input});
  check_input("upsample_bilinear2d", input, output_size);
  const Tensor by_column = linear(
      input,
      linear_weights(input.size(3), output_size[1], align_corners, scale_w, input));
  const Tensor by_row = linear(
      transpose(by_column, 2, 3),
      linear_weights(input.size(2), output_size[0], align_corners, scale_h, input));
  return transpose(by_row, 2, 3);
}

}  // namespace tandem
