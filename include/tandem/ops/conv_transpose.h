// Transposed convolutions (the gradient of a convolution with respect to its
// input, used as a learnable upsampling) over batched [N, C, ...] or
// unbatched [C, ...] input, in float32 and float64, with stride, zero
// padding, output_padding, groups and dilation. Same argument order and
// defaults as torch.conv_transpose1d / torch.conv_transpose2d; the weight is
// laid out as PyTorch's, [in_channels, out_channels / groups, kernel...].
//
//   auto y = tandem::conv_transpose2d(z, w, b);   // [N, 100, 1, 1] -> [N, 256, 4, 4]
//   auto u = tandem::conv_transpose2d(y, w2, {}, /*stride=*/2, /*padding=*/1);
//   auto v = tandem::conv_transpose1d(s, w1, {}, 2, 1, /*output_padding=*/1);
#pragma once

#include <cstdint>

#include "tandem/core/tensor.h"
#include "tandem/ops/expanding_array.h"

namespace tandem {

/// input [N, Cin, H, W] or [Cin, H, W]; weight [Cin, Cout / groups, kh, kw];
/// bias [Cout] or undefined. The output is [N, Cout, Ho, Wo] (no N for an
/// unbatched input) with Ho = (H - 1) * stride - 2 * padding + dilation *
/// (kh - 1) + output_padding + 1, and likewise Wo. output_padding must be
/// smaller than stride or dilation.
Tensor conv_transpose2d(const Tensor& input,
                        const Tensor& weight,
                        const Tensor& bias = {},
                        ExpandingArray<2> stride = 1,
                        ExpandingArray<2> padding = 0,
                        ExpandingArray<2> output_padding = 0,
                        int64_t groups = 1,
                        ExpandingArray<2> dilation = 1);

/// input [N, Cin, L] or [Cin, L]; weight [Cin, Cout / groups, k]; bias
/// [Cout] or undefined. The output is [N, Cout, Lo] with Lo as Ho above.
Tensor conv_transpose1d(const Tensor& input,
                        const Tensor& weight,
                        const Tensor& bias = {},
                        ExpandingArray<1> stride = 1,
                        ExpandingArray<1> padding = 0,
                        ExpandingArray<1> output_padding = 0,
                        int64_t groups = 1,
                        ExpandingArray<1> dilation = 1);

}  // namespace tandem
