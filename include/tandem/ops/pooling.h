// 2-D max and average pooling over batched [N, C, H, W] or unbatched
// [C, H, W] input, in float32 and float64, with torch.nn.functional's
// argument order and defaults (stride defaults to the kernel size).
//
//   auto p = tandem::max_pool2d(x, /*kernel_size=*/2);              // halves H and W
//   auto [values, indices] = tandem::max_pool2d_with_indices(x, 3, 2, 1);
//   auto a = tandem::avg_pool2d(x, 3, /*stride=*/1, /*padding=*/1);
//   auto c = tandem::avg_pool2d(x, 2, {}, 0, /*ceil_mode=*/true);
//   auto m = tandem::max_pool1d(seq, 3, /*stride=*/2);              // [N, C, L]
//   auto g = tandem::adaptive_avg_pool2d(x, 1);                     // [N, C, 1, 1]
//   auto [v, i] = tandem::adaptive_max_pool2d_with_indices(x, {5, 7});
#pragma once

#include <cstdint>
#include <optional>
#include <tuple>

#include "tandem/core/tensor.h"
#include "tandem/ops/expanding_array.h"

namespace tandem {

/// The maximum of each window (padding never wins) and its int64 index
/// within the input plane (h * W + w), as PyTorch. Output size per dim:
/// (H + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1, rounded up
/// with ceil_mode (dropping a last window that would start in the padding).
std::tuple<Tensor, Tensor> max_pool2d_with_indices(
    const Tensor& input,
    ExpandingArray<2> kernel_size,
    std::optional<ExpandingArray<2>> stride = std::nullopt,
    ExpandingArray<2> padding = 0,
    ExpandingArray<2> dilation = 1,
    bool ceil_mode = false);

Tensor max_pool2d(const Tensor& input,
                  ExpandingArray<2> kernel_size,
                  std::optional<ExpandingArray<2>> stride = std::nullopt,
                  ExpandingArray<2> padding = 0,
                  ExpandingArray<2> dilation = 1,
                  bool ceil_mode = false);

/// The mean of each window. The divisor is divisor_override when given,
/// else the window's size counting padding (count_include_pad) or only the
/// input cells it covers.
Tensor avg_pool2d(const Tensor& input,
                  ExpandingArray<2> kernel_size,
                  std::optional<ExpandingArray<2>> stride = std::nullopt,
                  ExpandingArray<2> padding = 0,
                  bool ceil_mode = false,
                  bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);

/// 1-D pooling over [N, C, L] or [C, L] input, as torch.nn.functional's:
/// max_pool2d / avg_pool2d over a height of 1, with the indices counting
/// along L.
std::tuple<Tensor, Tensor> max_pool1d_with_indices(
    const Tensor& input,
    ExpandingArray<1> kernel_size,
    std::optional<ExpandingArray<1>> stride = std::nullopt,
    ExpandingArray<1> padding = 0,
    ExpandingArray<1> dilation = 1,
    bool ceil_mode = false);

Tensor max_pool1d(const Tensor& input,
                  ExpandingArray<1> kernel_size,
                  std::optional<ExpandingArray<1>> stride = std::nullopt,
                  ExpandingArray<1> padding = 0,
                  ExpandingArray<1> dilation = 1,
                  bool ceil_mode = false);

Tensor avg_pool1d(const Tensor& input,
                  ExpandingArray<1> kernel_size,
                  std::optional<ExpandingArray<1>> stride = std::nullopt,
                  ExpandingArray<1> padding = 0,
                  bool ceil_mode = false,
                  bool count_include_pad = true);

/// Adaptive pooling of [N, C, H, W] or [C, H, W] input to output_size
/// (Ho, Wo): output cell i along a dim of size n pools input cells
/// [floor(i * n / o), ceil((i + 1) * n / o)), as PyTorch.
Tensor adaptive_avg_pool2d(const Tensor& input, ExpandingArray<2> output_size);

/// The maximum of each adaptive window and its int64 index within the input
/// plane (h * W + w): the first maximum in row-major order. (A window
/// holding several NaNs gives PyTorch's last NaN where the output size
/// divides the input's, the first one otherwise; the value is NaN either
/// way.)
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(
    const Tensor& input, ExpandingArray<2> output_size);

Tensor adaptive_max_pool2d(const Tensor& input, ExpandingArray<2> output_size);

}  // namespace tandem
