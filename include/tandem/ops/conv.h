// 2-D convolution (cross-correlation, as in PyTorch) with stride, zero
// padding, dilation and groups, over batched [N, C, H, W] or unbatched
// [C, H, W] input, in float32 and float64. Same argument order and defaults
// as torch.conv2d.
//
//   auto y = tandem::conv2d(x, w, b);                                // [N, Cout, Ho, Wo]
//   auto z = tandem::conv2d(x, w, {}, /*stride=*/2, /*padding=*/1);
//   auto d = tandem::conv2d(x, dw, {}, 1, 1, 1, /*groups=*/channels);  // depthwise
//   auto s = tandem::conv1d(seq, w1, b1, /*stride=*/2);               // [N, Cout, Lo]
#pragma once

#include <cstdint>

#include "tandem/core/tensor.h"
#include "tandem/ops/expanding_array.h"

namespace tandem {

/// input [N, Cin, H, W] or [Cin, H, W]; weight [Cout, Cin / groups, kh, kw];
/// bias [Cout] or undefined. The output is [N, Cout, Ho, Wo] (no N for an
/// unbatched input) with Ho = (H + 2 * padding - dilation * (kh - 1) - 1) /
/// stride + 1, and likewise Wo.
Tensor conv2d(const Tensor& input,
              const Tensor& weight,
              const Tensor& bias = {},
              ExpandingArray<2> stride = 1,
              ExpandingArray<2> padding = 0,
              ExpandingArray<2> dilation = 1,
              int64_t groups = 1);

/// 1-D convolution: input [N, Cin, L] or [Cin, L]; weight [Cout, Cin /
/// groups, k]; bias [Cout] or undefined. The output is [N, Cout, Lo] (no N
/// unbatched), Lo = (L + 2 * padding - dilation * (k - 1) - 1) / stride + 1.
/// Computed as conv2d over a height of 1, so its gradients (and second
/// derivatives) are conv2d's.
Tensor conv1d(const Tensor& input,
              const Tensor& weight,
              const Tensor& bias = {},
              ExpandingArray<1> stride = 1,
              ExpandingArray<1> padding = 0,
              ExpandingArray<1> dilation = 1,
              int64_t groups = 1);

}  // namespace tandem
