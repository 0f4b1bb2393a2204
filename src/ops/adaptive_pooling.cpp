// adaptive_avg_pool2d and adaptive_max_pool2d, composed from differentiable
// ops so that their gradients, and second derivatives, come from those ops:
//   - an output of 1 x 1 (global pooling, as a ResNet's head) is a mean or
//     a max over each plane;
//   - input sizes that the output sizes divide give equal windows that
//     tile the plane: avg_pool2d / max_pool2d with kernel = stride = n / o;
//   - otherwise the windows differ in size. An average is separable (the
//     mean over a rectangle is the mean of the row means), so it is two
//     products with [o, n] averaging matrices; a maximum gathers each
//     window's cells (short windows repeat their last cell, which changes
//     neither the maximum nor which cell is first to reach it) and reduces.
// Window i along a dim of n cells pooled to o is [floor(i * n / o),
// ceil((i + 1) * n / o)), PyTorch's rule.
#include <algorithm>
#include <vector>

#include "ops/op_utils.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/indexing.h"
#include "tandem/ops/linalg.h"
#include "tandem/ops/pooling.h"
#include "tandem/ops/reduction.h"
#include "tandem/ops/shape.h"

namespace tandem {
namespace {

struct Window {
  int64_t start;
  int64_t length;
};

std::vector<Window> windows(int64_t n, int64_t o) {
  std::vector<Window> result;
  result.reserve(static_cast<size_t>(o));
  for (int64_t i = 0; i < o; ++i) {
    const int64_t start = i * n / o;
    const int64_t end = ((i + 1) * n + o - 1) / o;
    result.push_back({start, end - start});
  }
  return result;
}

void check_adaptive(const char* op, const Tensor& input, ExpandingArray<2> output_size) {
  detail::check_defined(op, input, "input");
  detail::check_floating(op, input, "input");
  detail::check_image_input(op, input);
  for (int64_t d = 1; d < input.dim(); ++d) {
    TANDEM_CHECK(input.size(d) > 0,
                 op,
                 ": expected input with non-zero sizes in its non-batch dims, got shape ",
                 input.sizes());
  }
  detail::check_at_least(op, "output_size", output_size.vec(), 1);
}

// The [o, n] matrix whose row i averages window i, in input's dtype and on
// its device.
Tensor averaging_matrix(int64_t n, int64_t o, const Tensor& like) {
  std::vector<double> values(static_cast<size_t>(o * n), 0.0);
  int64_t row = 0;
  for (const Window& w : windows(n, o)) {
    for (int64_t k = 0; k < w.length; ++k) {
      values[static_cast<size_t>(row * n + w.start + k)] = 1.0 / w.length;
    }
    ++row;
  }
  return tensor(values).view({o, n}).to(like.device(), like.dtype());
}

}  // namespace

Tensor adaptive_avg_pool2d(const Tensor& input, ExpandingArray<2> output_size) {
  const profiler::Span span = detail::op_span("adaptive_avg_pool2d", {&input});
  check_adaptive("adaptive_avg_pool2d", input, output_size);
  const int64_t h = input.size(-2), w = input.size(-1);
  const int64_t oh = output_size[0], ow = output_size[1];
  if (oh == 1 && ow == 1) return mean(input, {-2, -1}, /*keepdim=*/true);
  if (h % oh == 0 && w % ow == 0) return avg_pool2d(input, {h / oh, w / ow});
  // rows: [..., H, W] -> [..., H, Wo]; columns: [..., Wo, H] -> [..., Wo, Ho].
  const Tensor by_column = linear(input, averaging_matrix(w, ow, input));
  const Tensor by_row =
      linear(transpose(by_column, -2, -1), averaging_matrix(h, oh, input));
  return transpose(by_row, -2, -1);
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(
    const Tensor& input, ExpandingArray<2> output_size) {
  const char* op = "adaptive_max_pool2d";
  const profiler::Span span = detail::op_span(op, {&input});
  check_adaptive(op, input, output_size);
  const int64_t h = input.size(-2), w = input.size(-1);
  const int64_t oh = output_size[0], ow = output_size[1];
  if (h % oh == 0 && w % ow == 0) {
    return max_pool2d_with_indices(input, {h / oh, w / ow});
  }
  const std::vector<Window> rows = windows(h, oh), cols = windows(w, ow);
  auto longest = [](const std::vector<Window>& ws) {
    int64_t k = 0;
    for (const Window& win : ws) k = std::max(k, win.length);
    return k;
  };
  const int64_t kh = longest(rows), kw = longest(cols);
  const int64_t cells = kh * kw;
  // offsets[i, j, a, b]: the plane offset of window (i, j)'s cell (a, b),
  // rows and columns past a short window's end repeating its last one.
  std::vector<int64_t> offsets;
  offsets.reserve(static_cast<size_t>(oh * ow * cells));
  for (const Window& r : rows) {
    for (const Window& c : cols) {
      for (int64_t a = 0; a < kh; ++a) {
        for (int64_t b = 0; b < kw; ++b) {
          offsets.push_back((r.start + std::min(a, r.length - 1)) * w + c.start +
                            std::min(b, c.length - 1));
        }
      }
    }
  }
  const Tensor table = tensor(offsets, TensorOptions(kInt64).device(input.device()));
  IntList plane_shape(input.sizes().begin(), input.sizes().end() - 2);
  plane_shape.push_back(h * w);
  IntList gathered_shape(input.sizes().begin(), input.sizes().end() - 2);
  gathered_shape.push_back(oh * ow);
  gathered_shape.push_back(cells);
  const Tensor gathered =
      index_select(reshape(input, plane_shape), -1, table).view(gathered_shape);
  auto [values, arg] = max(gathered, -1);
  // Cell `arg` of output window k is table[k * cells + arg].
  const Tensor first_cell =
      arange(0, oh * ow * cells, cells, TensorOptions(kInt64).device(input.device()));
  const Tensor picked = index_select(table, 0, (arg + first_cell).reshape({-1}));
  IntList out_shape(input.sizes().begin(), input.sizes().end() - 2);
  out_shape.push_back(oh);
  out_shape.push_back(ow);
  return {values.view(out_shape), picked.view(out_shape)};
}

Tensor adaptive_max_pool2d(const Tensor& input, ExpandingArray<2> output_size) {
  return std::get<0>(adaptive_max_pool2d_with_indices(input, output_size));
}

}  // namespace tandem
