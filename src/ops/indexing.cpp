// Indexing with int64 index tensors (index_select, gather, index_add,
// scatter_add) and embedding lookup, forward and backward. The backward of
// each read is the matching accumulate into zeros, and the other way round.
#include "tandem/ops/indexing.h"

#include "ops/op_utils.h"
#include "tandem/graph/node.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/reduction.h"
#include "tandem/ops/shape.h"

namespace tandem {
namespace {

using autograd::SavedVariable;
using autograd::tensor_list;

void check_index_dtype(const char* op, const Tensor& index) {
  TANDEM_CHECK(index.dtype() == kInt64,
               op,
               ": expected an int64 index tensor, got ",
               index.dtype(),
               " (shape ",
               index.sizes(),
               ")");
}

// Every index value in [0, size); names the smallest or largest offender.
void check_index_range(const char* op, const Tensor& index, int64_t dim, int64_t size) {
  if (index.numel() == 0) return;
  const int64_t lo = min(index).item<int64_t>();
  const int64_t hi = max(index).item<int64_t>();
  TANDEM_CHECK_INDEX(lo >= 0 && hi < size,
                     op,
                     ": index ",
                     lo < 0 ? lo : hi,
                     " is out of range for dimension ",
                     dim,
                     " with size ",
                     size);
}

// Checks for index_select and index_add: an int64 index of at most 1 dim
// whose values fit `x` along `dim`. Returns the wrapped dim.
int64_t check_index_along(const char* op,
                          const Tensor& x,
                          int64_t dim,
                          const Tensor& index) {
  detail::check_defined(op, x, "self");
  detail::check_defined(op, index, "index");
  detail::check_same_device(op, {&x, &index});
  check_index_dtype(op, index);
  TANDEM_CHECK(
      index.dim() <= 1, op, ": expected a 1-D index tensor, got shape ", index.sizes());
  dim = wrap_dim(dim, x.dim(), op);
  check_index_range(op, index, dim, x.size(dim));
  return dim;
}

// A 0-dim index as the 1-D one the kernels take.
Tensor as_1d(const Tensor& index) {
  return index.dim() == 1 ? index
                          : detail::raw_view(index, {1}, {1}, index.storage_offset());
}

// A fresh copy of `x` (no history) for the out-of-place accumulating ops.
Tensor raw_clone(const Tensor& x) {
  Tensor out = detail::make_empty(x.sizes(), x.dtype(), x.device());
  detail::kernels_for(out).copy(out, x);
  return out;
}

// `t` padded with zeros at the end of each dim up to `sizes`.
Tensor zero_pad_to(Tensor t, const IntList& sizes) {
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) == sizes[d]) continue;
    IntList pad = t.sizes();
    pad[d] = sizes[d] - t.size(d);
    t = cat({t, zeros(pad, t.options())}, d);
  }
  return t;
}

// `out` is a fresh tensor holding x's values (or zeros, with x undefined,
// for a backward); adds src into it and records the gradients of x and src.
Tensor index_add_into(
    Tensor out, const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  detail::kernels_for(out).index_add(out, dim, as_1d(index), src);
  if (autograd::any_requires_grad({&x, &src})) {
    const bool need_src = src.requires_grad();
    SavedVariable saved_index(index);
    autograd::record_function(
        "IndexAddBackward", {x, src}, {&out}, [=](const tensor_list& g) {
          Tensor gsrc;
          if (need_src) {
            gsrc = index_select(g[0], dim, saved_index.unpack("IndexAddBackward"));
          }
          return tensor_list{g[0], gsrc};
        });
  }
  return out;
}

// Like index_add_into, for scatter_add. src may extend past the index; its
// gradient there is zero.
Tensor scatter_add_into(
    Tensor out, const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  detail::kernels_for(out).scatter_add(out, dim, index, src);
  if (autograd::any_requires_grad({&x, &src})) {
    const bool need_src = src.requires_grad();
    const IntList src_sizes = src.sizes();
    SavedVariable saved_index(index);
    autograd::record_function(
        "ScatterAddBackward", {x, src}, {&out}, [=](const tensor_list& g) {
          Tensor gsrc;
          if (need_src) {
            gsrc = zero_pad_to(
                gather(g[0], dim, saved_index.unpack("ScatterAddBackward")), src_sizes);
          }
          return tensor_list{g[0], gsrc};
        });
  }
  return out;
}

// Checks for scatter_add(_): one rank for all three, an index that fits src
// everywhere and self outside `dim`. Returns the wrapped dim.
int64_t check_scatter_add(const char* op,
                          const Tensor& x,
                          int64_t dim,
                          const Tensor& index,
                          const Tensor& src) {
  detail::check_defined(op, x, "self");
  detail::check_defined(op, index, "index");
  detail::check_defined(op, src, "src");
  detail::check_same_device(op, {&x, &index, &src});
  check_index_dtype(op, index);
  TANDEM_CHECK(x.dtype() == src.dtype(),
               op,
               ": expected src of dtype ",
               x.dtype(),
               " (like self), got ",
               src.dtype());
  TANDEM_CHECK(index.dim() == x.dim() && src.dim() == x.dim(),
               op,
               ": expected self, index and src with one number of dimensions, got ",
               "shapes ",
               x.sizes(),
               ", ",
               index.sizes(),
               " and ",
               src.sizes());
  dim = wrap_dim(dim, x.dim(), op);
  for (int64_t d = 0; d < x.dim(); ++d) {
    TANDEM_CHECK(index.size(d) <= src.size(d) && (d == dim || index.size(d) <= x.size(d)),
                 op,
                 ": index of shape ",
                 index.sizes(),
                 " does not fit src of shape ",
                 src.sizes(),
                 " and self of shape ",
                 x.sizes(),
                 " outside dimension ",
                 dim,
                 " (dimension ",
                 d,
                 ")");
  }
  check_index_range(op, index, dim, x.size(dim));
  return dim;
}

}  // namespace

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  dim = check_index_along("index_select", x, dim, index);
  IntList sizes = x.sizes();
  sizes[dim] = index.numel();
  Tensor out = detail::make_empty(sizes, x.dtype(), x.device());
  detail::kernels_for(out).index_select(out, x, dim, as_1d(index));
  if (autograd::any_requires_grad({&x})) {
    const IntList x_sizes = x.sizes();
    SavedVariable saved_index(index);
    autograd::record_function(
        "IndexSelectBackward", {x}, {&out}, [=](const tensor_list& g) {
          return tensor_list{index_add_into(zeros(x_sizes, g[0].options()),
                                            Tensor(),
                                            dim,
                                            saved_index.unpack("IndexSelectBackward"),
                                            g[0])};
        });
  }
  return out;
}

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  dim = check_index_along("index_add", x, dim, index);
  detail::check_defined("index_add", src, "src");
  detail::check_same_device("index_add", {&x, &src});
  TANDEM_CHECK(x.dtype() == src.dtype(),
               "index_add: expected src of dtype ",
               x.dtype(),
               " (like self), got ",
               src.dtype());
  IntList want = x.sizes();
  want[dim] = index.numel();
  TANDEM_CHECK(src.sizes() == want,
               "index_add: expected src of shape ",
               want,
               " (self's shape with dimension ",
               dim,
               " the number of indices), got ",
               src.sizes());
  return index_add_into(raw_clone(x), x, dim, index, src);
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  const char* op = "gather";
  detail::check_defined(op, x, "self");
  detail::check_defined(op, index, "index");
  detail::check_same_device(op, {&x, &index});
  check_index_dtype(op, index);
  TANDEM_CHECK(index.dim() == x.dim(),
               op,
               ": expected index with as many dimensions as self, got shapes ",
               x.sizes(),
               " and ",
               index.sizes());
  dim = wrap_dim(dim, x.dim(), op);
  for (int64_t d = 0; d < x.dim(); ++d) {
    TANDEM_CHECK(d == dim || index.size(d) <= x.size(d),
                 op,
                 ": index of shape ",
                 index.sizes(),
                 " does not fit self of shape ",
                 x.sizes(),
                 " outside dimension ",
                 dim,
                 " (dimension ",
                 d,
                 ")");
  }
  check_index_range(op, index, dim, x.size(dim));
  Tensor out = detail::make_empty(index.sizes(), x.dtype(), x.device());
  detail::kernels_for(out).gather(out, x, dim, index);
  if (autograd::any_requires_grad({&x})) {
    const IntList x_sizes = x.sizes();
    SavedVariable saved_index(index);
    autograd::record_function("GatherBackward", {x}, {&out}, [=](const tensor_list& g) {
      return tensor_list{scatter_add_into(zeros(x_sizes, g[0].options()),
                                          Tensor(),
                                          dim,
                                          saved_index.unpack("GatherBackward"),
                                          g[0])};
    });
  }
  return out;
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  dim = check_scatter_add("scatter_add", x, dim, index, src);
  return scatter_add_into(raw_clone(x), x, dim, index, src);
}

Tensor& scatter_add_(Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  dim = check_scatter_add("scatter_add_", x, dim, index, src);
  autograd::check_inplace(x, "scatter_add_");
  if (autograd::any_requires_grad({&x, &src})) {
    return x.copy_(scatter_add(x, dim, index, src));
  }
  detail::kernels_for(x).scatter_add(x, dim, index, src);
  x.bump_version();
  return x;
}

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx) {
  const char* op = "embedding";
  detail::check_defined(op, weight, "weight");
  detail::check_defined(op, indices, "indices");
  detail::check_same_device(op, {&weight, &indices});
  check_index_dtype(op, indices);
  TANDEM_CHECK(weight.dim() == 2,
               "embedding: expected weight of shape ",
               "[num_embeddings, embedding_dim], got ",
               weight.sizes());
  const int64_t num = weight.size(0), width = weight.size(1);
  TANDEM_CHECK(padding_idx < num,
               "embedding: padding_idx ",
               padding_idx,
               " is out of range for ",
               num,
               " embeddings");
  check_index_range(op, indices, 0, num);
  const int64_t count = indices.numel();
  const Tensor flat = indices.detach().reshape({count});
  IntList sizes = indices.sizes();
  sizes.push_back(width);
  Tensor out = detail::make_empty(sizes, weight.dtype(), weight.device());
  detail::kernels_for(out).index_select(
      detail::raw_view(out, {count, width}, {width, 1}, 0), weight, 0, flat);
  if (autograd::any_requires_grad({&weight})) {
    SavedVariable saved_flat(flat);
    autograd::record_function(
        "EmbeddingBackward", {weight}, {&out}, [=](const tensor_list& g) {
          Tensor idx = saved_flat.unpack("EmbeddingBackward");
          Tensor rows = g[0].reshape({count, width});
          // Rows looked up at padding_idx send no gradient.
          if (padding_idx >= 0) {
            rows = rows * ne(idx, padding_idx).unsqueeze(1).to(rows.dtype());
          }
          return tensor_list{index_add_into(
              zeros({num, width}, rows.options()), Tensor(), 0, idx, rows)};
        });
  }
  return out;
}

}  // namespace tandem
