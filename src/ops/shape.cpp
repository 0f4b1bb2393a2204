// View ops that regroup or reorder dims: view, reshape, flatten, squeeze,
// unsqueeze, expand, transpose, t, permute, each with its backward. The
// slicing views (narrow, select, split, chunk) live in slice.cpp; cat and
// stack, which copy, in cat.cpp.
#include "tandem/ops/shape.h"

#include <algorithm>
#include <optional>

#include "ops/view_impl.h"
#include "tandem/graph/node.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/factory.h"

namespace tandem {
namespace {

using autograd::tensor_list;

// A view of `x` whose gradient is reshaped back to x's shape.
Tensor reshaping_view(const char* node, const Tensor& x, IntList sizes, IntList strides) {
  Tensor out =
      detail::raw_view(x, std::move(sizes), std::move(strides), x.storage_offset());
  detail::record_view(node, x, {&out}, [in_sizes = x.sizes()](const tensor_list& g) {
    return tensor_list{g[0].reshape(in_sizes)};
  });
  return out;
}

// Replaces one -1 in `shape` by the size that makes numel match.
IntList infer_size(const char* op, const IntList& shape, int64_t numel) {
  IntList out = shape;
  std::optional<size_t> infer;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      TANDEM_CHECK(!infer, op, ": only one dimension can be inferred, got ", shape);
      infer = i;
    } else {
      TANDEM_CHECK(
          shape[i] >= 0, op, ": invalid shape dimension ", shape[i], " in ", shape);
      known *= shape[i];
    }
  }
  if (infer) {
    TANDEM_CHECK(known != 0,
                 op,
                 ": cannot reshape a tensor of 0 elements into shape ",
                 shape,
                 " because the unspecified dimension size -1 can be any value");
    TANDEM_CHECK(numel % known == 0,
                 op,
                 ": shape ",
                 shape,
                 " is invalid for input of size ",
                 numel);
    out[*infer] = numel / known;
  } else {
    TANDEM_CHECK(
        known == numel, op, ": shape ", shape, " is invalid for input of size ", numel);
  }
  return out;
}

// Strides that let a tensor of `old_sizes`/`old_strides` be viewed with
// `sizes`, or nothing when some new dim would span two non-mergeable runs.
// This is PyTorch's rule (computeStride), so view works on exactly the
// non-contiguous tensors that PyTorch's does.
std::optional<IntList> view_strides(const IntList& old_sizes,
                                    const IntList& old_strides,
                                    const IntList& sizes) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  if (old_sizes.empty()) return IntList(nd, 1);
  IntList strides(nd);
  if (numel_of(old_sizes) == 0) {
    if (old_sizes == sizes) return old_strides;
    // Row-major, with empty dims counted as size 1 (as PyTorch does).
    for (int64_t d = nd - 1; d >= 0; --d) {
      strides[d] = d == nd - 1 ? 1 : std::max<int64_t>(sizes[d + 1], 1) * strides[d + 1];
    }
    return strides;
  }
  int64_t view_d = nd - 1;
  int64_t chunk_base = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_sizes[d];
    // A run of dims that are contiguous with each other ends here.
    if (d == 0 ||
        (old_sizes[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base)) {
      while (view_d >= 0 && (view_numel < tensor_numel || sizes[view_d] == 1)) {
        strides[view_d] = view_numel * chunk_base;
        view_numel *= sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base = old_strides[d - 1];
        tensor_numel = view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return strides;
}

Tensor swap_dims(
    const char* op, const char* node, const Tensor& x, int64_t dim0, int64_t dim1) {
  detail::check_defined(op, x, "self");
  if (x.dim() == 0) {  // dims 0 and -1 of a scalar name the scalar itself
    wrap_dim(dim0, 0, op);
    wrap_dim(dim1, 0, op);
    return reshaping_view(node, x, {}, {});
  }
  int64_t d0 = wrap_dim(dim0, x.dim(), op), d1 = wrap_dim(dim1, x.dim(), op);
  IntList sizes = x.sizes(), strides = x.strides();
  std::swap(sizes[d0], sizes[d1]);
  std::swap(strides[d0], strides[d1]);
  Tensor out =
      detail::raw_view(x, std::move(sizes), std::move(strides), x.storage_offset());
  detail::record_view(node, x, {&out}, [d0, d1](const tensor_list& g) {
    return tensor_list{g[0].transpose(d0, d1)};
  });
  return out;
}

}  // namespace

Tensor view(const Tensor& x, const IntList& sizes) {
  detail::check_defined("view", x, "self");
  IntList shape = infer_size("view", sizes, x.numel());
  std::optional<IntList> strides = view_strides(x.sizes(), x.strides(), shape);
  TANDEM_CHECK(strides,
               "view: view size is not compatible with input tensor's size "
               "and stride (at least one dimension spans across two contiguous "
               "subspaces); input shape ",
               x.sizes(),
               ", strides ",
               x.strides(),
               ", requested ",
               shape,
               ". Use .reshape(...) instead");
  return reshaping_view("ViewBackward", x, std::move(shape), std::move(*strides));
}

Tensor reshape(const Tensor& x, const IntList& sizes) {
  detail::check_defined("reshape", x, "self");
  IntList shape = infer_size("reshape", sizes, x.numel());
  if (auto strides = view_strides(x.sizes(), x.strides(), shape)) {
    return reshaping_view("ViewBackward", x, std::move(shape), std::move(*strides));
  }
  // A copy: the result is not a view, so in-place ops on it stay allowed.
  Tensor copy = x.contiguous();
  IntList strides = contiguous_strides(shape);
  Tensor out = detail::raw_view(copy, std::move(shape), std::move(strides), 0);
  autograd::record_function(
      "UnsafeViewBackward", {copy}, {&out}, [sizes = x.sizes()](const tensor_list& g) {
        return tensor_list{g[0].reshape(sizes)};
      });
  return out;
}

Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  detail::check_defined("flatten", x, "self");
  if (x.dim() == 0) return reshape(x, {1});
  int64_t start = wrap_dim(start_dim, x.dim(), "flatten");
  int64_t end = wrap_dim(end_dim, x.dim(), "flatten");
  TANDEM_CHECK(start <= end,
               "flatten: start_dim cannot come after end_dim, got ",
               "start_dim=",
               start_dim,
               " and end_dim=",
               end_dim,
               " for shape ",
               x.sizes());
  if (start == end) return x;
  IntList shape(x.sizes().begin(), x.sizes().begin() + start);
  int64_t merged = 1;
  for (int64_t d = start; d <= end; ++d) merged *= x.sizes()[d];
  shape.push_back(merged);
  shape.insert(shape.end(), x.sizes().begin() + end + 1, x.sizes().end());
  return reshape(x, shape);
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  detail::check_defined("unsqueeze", x, "self");
  int64_t d = wrap_dim(dim, x.dim() + 1, "unsqueeze");
  IntList sizes = x.sizes(), strides = x.strides();
  int64_t stride = d >= x.dim() ? 1 : sizes[d] * strides[d];
  sizes.insert(sizes.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  return reshaping_view("UnsqueezeBackward", x, std::move(sizes), std::move(strides));
}

Tensor squeeze(const Tensor& x) {
  detail::check_defined("squeeze", x, "self");
  IntList sizes, strides;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (x.sizes()[d] == 1) continue;
    sizes.push_back(x.sizes()[d]);
    strides.push_back(x.strides()[d]);
  }
  return reshaping_view("SqueezeBackward", x, std::move(sizes), std::move(strides));
}

Tensor squeeze(const Tensor& x, int64_t dim) {
  detail::check_defined("squeeze", x, "self");
  int64_t d = wrap_dim(dim, x.dim(), "squeeze");
  IntList sizes = x.sizes(), strides = x.strides();
  if (x.dim() > 0 && sizes[d] == 1) {
    sizes.erase(sizes.begin() + d);
    strides.erase(strides.begin() + d);
  }
  return reshaping_view("SqueezeBackward", x, std::move(sizes), std::move(strides));
}

Tensor expand(const Tensor& x, const IntList& sizes) {
  detail::check_defined("expand", x, "self");
  const int64_t nd = static_cast<int64_t>(sizes.size());
  TANDEM_CHECK(nd >= x.dim(),
               "expand: the number of sizes provided (",
               nd,
               ") must be greater or equal to the number of dimensions in the "
               "tensor (",
               x.dim(),
               "), got ",
               sizes,
               " for shape ",
               x.sizes());
  const int64_t lead = nd - x.dim();
  IntList shape(nd), strides(nd, 0);
  for (int64_t d = 0; d < nd; ++d) {
    int64_t want = sizes[d];
    if (d < lead) {
      TANDEM_CHECK(want >= 0,
                   "expand: the expanded size of the tensor (",
                   want,
                   ") isn't allowed in a leading, non-existing dimension ",
                   d);
      shape[d] = want;
      continue;
    }
    int64_t have = x.sizes()[d - lead];
    if (want == -1) want = have;
    TANDEM_CHECK(want == have || (have == 1 && want >= 0),
                 "expand: the expanded size of the tensor (",
                 want,
                 ") must match the existing size (",
                 have,
                 ") at non-singleton dimension ",
                 d,
                 "; target sizes: ",
                 sizes,
                 ", tensor sizes: ",
                 x.sizes());
    shape[d] = want;
    strides[d] = want == have ? x.strides()[d - lead] : 0;
  }
  Tensor out =
      detail::raw_view(x, std::move(shape), std::move(strides), x.storage_offset());
  detail::record_view(
      "ExpandBackward", x, {&out}, [sizes = x.sizes()](const tensor_list& g) {
        return tensor_list{sum_to(g[0], sizes)};
      });
  return out;
}

Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  return swap_dims("transpose", "TransposeBackward", x, dim0, dim1);
}

Tensor t(const Tensor& x) {
  detail::check_defined("t", x, "self");
  TANDEM_CHECK(x.dim() <= 2,
               "t: expected a tensor with <= 2 dimensions, got shape ",
               x.sizes(),
               " (",
               x.dim(),
               "-D); use transpose(dim0, dim1)");
  return swap_dims("t", "TBackward", x, 0, x.dim() == 2 ? 1 : 0);
}

Tensor permute(const Tensor& x, const IntList& dims) {
  detail::check_defined("permute", x, "self");
  const int64_t nd = x.dim();
  TANDEM_CHECK(static_cast<int64_t>(dims.size()) == nd,
               "permute: expected ",
               nd,
               " dims (one per dimension of the input ",
               "of shape ",
               x.sizes(),
               "), got ",
               dims);
  IntList perm(nd), sizes(nd), strides(nd), inverse(nd);
  std::vector<bool> seen(nd, false);
  for (int64_t i = 0; i < nd; ++i) {
    int64_t d = wrap_dim(dims[i], nd, "permute");
    TANDEM_CHECK(!seen[d], "permute: duplicate dims are not allowed, got ", dims);
    seen[d] = true;
    sizes[i] = x.sizes()[d];
    strides[i] = x.strides()[d];
    inverse[d] = i;
  }
  Tensor out =
      detail::raw_view(x, std::move(sizes), std::move(strides), x.storage_offset());
  detail::record_view("PermuteBackward", x, {&out}, [inverse](const tensor_list& g) {
    return tensor_list{g[0].permute(inverse)};
  });
  return out;
}

Tensor contiguous(const Tensor& x) {
  detail::check_defined("contiguous", x, "self");
  return x.contiguous();
}

Tensor repeat(const Tensor& x, const IntList& repeats) {
  detail::check_defined("repeat", x, "self");
  TANDEM_CHECK(static_cast<int64_t>(repeats.size()) >= x.dim(),
               "repeat: expected at least as many repeats as dims, got repeats ",
               repeats,
               " for shape ",
               x.sizes());
  const size_t lead = repeats.size() - static_cast<size_t>(x.dim());
  // x as [1, s0, 1, s1, ...], expanded to [r0, s0, r1, s1, ...] and merged
  // pairwise: each block is a whole copy of x.
  IntList spread, tiled, merged;
  for (size_t d = 0; d < repeats.size(); ++d) {
    TANDEM_CHECK(repeats[d] >= 0, "repeat: expected non-negative repeats, got ", repeats);
    const int64_t size = d < lead ? 1 : x.sizes()[d - lead];
    spread.insert(spread.end(), {1, size});
    tiled.insert(tiled.end(), {repeats[d], size});
    merged.push_back(repeats[d] * size);
  }
  return x.reshape(spread).expand(tiled).reshape(merged);
}

}  // namespace tandem
