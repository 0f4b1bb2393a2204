// Slicing views: narrow, select, split, chunk and unbind, each with its
// backward.
#include <algorithm>
#include <vector>

#include "ops/view_impl.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/shape.h"

namespace tandem {
namespace {

using autograd::tensor_list;
using detail::raw_narrow;

Tensor raw_select(const Tensor& x, int64_t dim, int64_t index) {
  IntList sizes = x.sizes(), strides = x.strides();
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  return detail::raw_view(x,
                          std::move(sizes),
                          std::move(strides),
                          x.storage_offset() + index * x.strides()[dim]);
}

// A zero tensor of `sizes` holding `g` at [start, start + g.size(d)) along
// d. Under create_graph the padding is a recorded cat, so the gradient can
// be differentiated again.
Tensor pad_along(const Tensor& g, const IntList& sizes, int64_t d, int64_t start) {
  const int64_t length = g.sizes()[d];
  const TensorOptions options = TensorOptions(g.dtype()).device(g.device());
  if (GradMode::is_enabled()) {
    auto zeros_along = [&](int64_t n) {
      IntList shape = sizes;
      shape[d] = n;
      return zeros(shape, options);
    };
    return cat({zeros_along(start), g, zeros_along(sizes[d] - start - length)}, d);
  }
  Tensor out = zeros(sizes, options);
  Tensor part = raw_narrow(out, d, start, length);
  detail::kernels_for(out).copy(part, g);
  return out;
}

// The pieces of `x` along `dim` (wrapped) with the given lengths: one node
// whose backward concatenates the pieces' gradients.
std::vector<Tensor> split_views(const Tensor& x, const IntList& lengths, int64_t dim) {
  std::vector<Tensor> out;
  std::vector<Tensor*> ptrs;
  out.reserve(lengths.size());
  int64_t start = 0;
  for (int64_t len : lengths) {
    out.push_back(raw_narrow(x, dim, start, len));
    start += len;
  }
  for (Tensor& t : out) ptrs.push_back(&t);
  detail::record_view("SplitBackward", x, ptrs, [dim](const tensor_list& g) {
    return tensor_list{cat(g, dim)};
  });
  return out;
}

}  // namespace

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  detail::check_defined("narrow", x, "self");
  TANDEM_CHECK(x.dim() > 0, "narrow: cannot be applied to a 0-dim tensor");
  int64_t d = wrap_dim(dim, x.dim(), "narrow");
  const int64_t size = x.sizes()[d];
  TANDEM_CHECK_INDEX(start >= -size && start <= size,
                     "narrow: start ",
                     start,
                     " is out of range for dimension ",
                     d,
                     " with size ",
                     size);
  if (start < 0) start += size;
  TANDEM_CHECK(length >= 0, "narrow: length must be non-negative, got ", length);
  TANDEM_CHECK(start + length <= size,
               "narrow: start (",
               start,
               ") + length (",
               length,
               ") exceeds dimension size (",
               size,
               ") of shape ",
               x.sizes());
  Tensor out = raw_narrow(x, d, start, length);
  detail::record_view(
      "SliceBackward", x, {&out}, [sizes = x.sizes(), d, start](const tensor_list& g) {
        return tensor_list{pad_along(g[0], sizes, d, start)};
      });
  return out;
}

Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  detail::check_defined("select", x, "self");
  TANDEM_CHECK_INDEX(x.dim() > 0, "select: cannot be applied to a 0-dim tensor");
  int64_t d = wrap_dim(dim, x.dim(), "select");
  const int64_t size = x.sizes()[d];
  TANDEM_CHECK_INDEX(index >= -size && index < size,
                     "select: index ",
                     index,
                     " is out of range for dimension ",
                     d,
                     " with size ",
                     size);
  if (index < 0) index += size;
  Tensor out = raw_select(x, d, index);
  detail::record_view(
      "SelectBackward", x, {&out}, [sizes = x.sizes(), d, index](const tensor_list& g) {
        return tensor_list{pad_along(g[0].unsqueeze(d), sizes, d, index)};
      });
  return out;
}

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
  detail::check_defined("split", x, "self");
  TANDEM_CHECK(x.dim() > 0, "split: expected at least a 1-dimensional tensor");
  int64_t d = wrap_dim(dim, x.dim(), "split");
  const int64_t size = x.sizes()[d];
  TANDEM_CHECK(
      split_size >= 0, "split: split_size must be non-negative, got ", split_size);
  TANDEM_CHECK(split_size > 0 || size == 0,
               "split: split_size can only be 0 if ",
               "dimension size is 0, got dimension size ",
               size,
               " (shape ",
               x.sizes(),
               ")");
  const int64_t pieces =
      split_size == 0 ? 1 : std::max<int64_t>((size + split_size - 1) / split_size, 1);
  IntList lengths(pieces, split_size);
  lengths.back() = size - split_size * (pieces - 1);
  return split_views(x, lengths, d);
}

std::vector<Tensor> split(const Tensor& x, const IntList& split_sizes, int64_t dim) {
  detail::check_defined("split", x, "self");
  TANDEM_CHECK(x.dim() > 0, "split: expected at least a 1-dimensional tensor");
  int64_t d = wrap_dim(dim, x.dim(), "split");
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    TANDEM_CHECK(s >= 0, "split: split_sizes must be non-negative, got ", split_sizes);
    total += s;
  }
  TANDEM_CHECK(total == x.sizes()[d],
               "split: expected split_sizes to sum exactly to ",
               x.sizes()[d],
               " (the size of dimension ",
               d,
               " of shape ",
               x.sizes(),
               "), got ",
               split_sizes);
  return split_views(x, split_sizes, d);
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  detail::check_defined("chunk", x, "self");
  TANDEM_CHECK(x.dim() > 0, "chunk: expected at least a 1-dimensional tensor");
  TANDEM_CHECK(chunks > 0, "chunk: expected chunks to be greater than 0, got ", chunks);
  int64_t d = wrap_dim(dim, x.dim(), "chunk");
  const int64_t size = x.sizes()[d];
  // Equal chunks of ceil(size / chunks): there may be fewer than `chunks`.
  if (size == 0) return split_views(x, IntList(chunks, 0), d);
  return split(x, (size + chunks - 1) / chunks, d);
}

std::vector<Tensor> unbind(const Tensor& x, int64_t dim) {
  detail::check_defined("unbind", x, "self");
  TANDEM_CHECK(x.dim() > 0, "unbind: expected at least a 1-dimensional tensor");
  const int64_t d = wrap_dim(dim, x.dim(), "unbind");
  std::vector<Tensor> slices;
  slices.reserve(x.sizes()[d]);
  for (int64_t i = 0; i < x.sizes()[d]; ++i) slices.push_back(select(x, d, i));
  return slices;
}

}  // namespace tandem
