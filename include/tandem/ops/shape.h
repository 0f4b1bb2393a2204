// Shape ops. Views share storage with their input (view, narrow, select,
// chunk, split, transpose, permute, unsqueeze, squeeze, flatten of a
// contiguous tensor, expand); reshape and flatten copy only when a view is
// impossible; cat and stack always copy. Negative dims count from the end.
//
//   auto parts = tandem::chunk(x, /*chunks=*/3, /*dim=*/0);
//   auto y = tandem::cat({a, b}, /*dim=*/1);
#pragma once

#include <vector>

#include "tandem/core/tensor.h"
#include "tandem/core/wrap_dim.h"  // wrap_dim, which every dim-taking op uses

namespace tandem {

Tensor view(const Tensor& x, const IntList& sizes);
Tensor reshape(const Tensor& x, const IntList& sizes);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& x, int64_t dim, int64_t index);
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, const IntList& split_sizes, int64_t dim = 0);
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor t(const Tensor& x);
Tensor permute(const Tensor& x, const IntList& dims);
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor squeeze(const Tensor& x);
Tensor squeeze(const Tensor& x, int64_t dim);
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor expand(const Tensor& x, const IntList& sizes);
Tensor contiguous(const Tensor& x);
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
/// The slices x.select(dim, i), i = 0 .. size(dim) - 1.
std::vector<Tensor> unbind(const Tensor& x, int64_t dim = 0);
/// x tiled repeats[d] times along each dim; `repeats` may be longer than
/// x.dim() (x then gains leading dims of size 1 first).
Tensor repeat(const Tensor& x, const IntList& repeats);

}  // namespace tandem
