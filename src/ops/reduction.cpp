// Reductions (sum, mean, max, min, argmax, argmin), forward and backward.
// The kernel reduces one dim of a contiguous tensor; a list of dims is
// reduced run by run after merging adjacent dims, so `x.sum({1, 2})` is
// one pass.
#include "tandem/ops/reduction.h"

#include <algorithm>

#include "ops/op_utils.h"
#include "ops/reduction_dims.h"
#include "tandem/graph/node.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/shape.h"

namespace tandem {
namespace {

using autograd::SavedVariable;
using autograd::tensor_list;
using backend::ReduceOp;
using detail::normalize_dims;
using detail::reduced_count;
using detail::reduced_shape;

// `x` itself when contiguous, else a contiguous copy; no autograd.
Tensor contiguous_raw(const Tensor& x) {
  if (x.is_contiguous()) return x;
  Tensor out = detail::make_empty(x.sizes(), x.dtype(), x.device());
  detail::kernels_for(out).copy(out, x);
  return out;
}

Tensor reshape_raw(const Tensor& contiguous, const IntList& sizes) {
  return detail::raw_view(
      contiguous, sizes, contiguous_strides(sizes), contiguous.storage_offset());
}

// The sum of x over `dims` (normalized), without autograd. Integral and
// bool tensors sum to int64, as in PyTorch.
Tensor sum_raw(const Tensor& x, const IntList& dims_in, bool keepdim) {
  const ScalarType out_dtype = x.is_floating_point() ? x.dtype() : kInt64;
  Tensor cur = contiguous_raw(x);
  IntList sizes = x.sizes();
  IntList dims = dims_in;
  if (sizes.empty()) {  // a scalar: sum over its one element
    cur = reshape_raw(cur, {1});
    sizes = {1};
    dims = {0};
  }
  // Reduce runs of adjacent dims from the last run back, so the indices
  // of runs not yet reduced stay valid.
  size_t end = dims.size();
  while (end > 0) {
    size_t begin = end - 1;
    while (begin > 0 && dims[begin - 1] + 1 == dims[begin]) --begin;
    const int64_t first = dims[begin], last = dims[end - 1];
    IntList merged(sizes.begin(), sizes.begin() + first);
    int64_t run = 1;
    for (int64_t d = first; d <= last; ++d) run *= sizes[d];
    merged.push_back(run);
    merged.insert(merged.end(), sizes.begin() + last + 1, sizes.end());
    IntList result = merged;
    result.erase(result.begin() + first);
    Tensor out = detail::make_empty(result, out_dtype, x.device());
    detail::kernels_for(out).reduce_dim(
        ReduceOp::Sum, out, Tensor(), reshape_raw(cur, merged), first);
    cur = out;
    sizes = result;
    end = begin;
  }
  return reshape_raw(cur, reduced_shape(x.sizes(), dims_in, keepdim));
}

// Spreads a reduction's gradient back over x's shape.
Tensor expand_grad(const Tensor& g, const IntList& sizes, const IntList& dims) {
  return g.reshape(reduced_shape(sizes, dims, /*keepdim=*/true)).expand(sizes);
}

Tensor sum_impl(const Tensor& x, const IntList& dims_in, bool keepdim) {
  const profiler::Span span = detail::op_span("sum", {&x});
  detail::check_defined("sum", x, "self");
  IntList dims = normalize_dims("sum", x, dims_in);
  Tensor out = sum_raw(x, dims, keepdim);
  autograd::record_function(
      "SumBackward", {x}, {&out}, [sizes = x.sizes(), dims](const tensor_list& g) {
        return tensor_list{expand_grad(g[0], sizes, dims)};
      });
  return out;
}

Tensor mean_impl(const Tensor& x, const IntList& dims_in, bool keepdim) {
  const profiler::Span span = detail::op_span("mean", {&x});
  detail::check_defined("mean", x, "self");
  TANDEM_CHECK(x.is_floating_point(),
               "mean: could not infer output dtype; expected "
               "a floating-point input, got ",
               x.dtype(),
               " (shape ",
               x.sizes(),
               "); convert it with .to(kFloat32)");
  IntList dims = normalize_dims("mean", x, dims_in);
  const int64_t count = reduced_count(x, dims);
  Tensor total = sum_raw(x, dims, keepdim);
  Tensor out = detail::make_empty(total.sizes(), x.dtype(), x.device());
  Tensor divisor = scalar_tensor(static_cast<double>(count),
                                 TensorOptions(x.dtype()).device(x.device()));
  detail::kernels_for(out).binary(backend::BinaryOp::Div,
                                  out,
                                  total,
                                  detail::broadcast_to_raw(divisor, out.sizes()),
                                  0);
  autograd::record_function(
      "MeanBackward",
      {x},
      {&out},
      [sizes = x.sizes(), dims, count](const tensor_list& g) {
        return tensor_list{expand_grad(g[0] / static_cast<double>(count), sizes, dims)};
      });
  return out;
}

// Max/min/argmax/argmin over all elements: x flattened, reduced over dim 0.
Tensor reduce_all(const char* op, ReduceOp kind, const Tensor& x) {
  detail::check_defined(op, x, "self");
  TANDEM_CHECK_INDEX(x.numel() > 0,
                     op,
                     ": expected reduction dim to be specified "
                     "for input.numel() == 0 (shape ",
                     x.sizes(),
                     "); pass a dim");
  const bool arg = kind == ReduceOp::ArgMax || kind == ReduceOp::ArgMin;
  Tensor out = detail::make_empty({}, arg ? kInt64 : x.dtype(), x.device());
  detail::kernels_for(out).reduce_dim(
      kind, out, Tensor(), reshape_raw(contiguous_raw(x), {x.numel()}), 0);
  return out;
}

Tensor extremum_all(const char* op, const char* node, ReduceOp kind, const Tensor& x) {
  Tensor out = reduce_all(op, kind, x);
  if (autograd::any_requires_grad({&x})) {
    SavedVariable vx(x), vo(out, /*is_output=*/true);
    autograd::record_function(node, {x}, {&out}, [=](const tensor_list& g) {
      // Ties share the gradient evenly, as in PyTorch.
      Tensor mask = eq(vx.unpack(node), vo.unpack(node));
      return tensor_list{where(mask, g[0] / sum(mask), zeros({}, g[0].options()))};
    });
  }
  return out;
}

// Values and indices of max/min along `dim` (kind Max or Min), or only the
// indices (ArgMax, ArgMin; values undefined).
std::tuple<Tensor, Tensor> reduce_along(
    const char* op, ReduceOp kind, const Tensor& x, int64_t dim, bool keepdim) {
  detail::check_defined(op, x, "self");
  const int64_t d = wrap_dim(dim, x.dim(), op);
  Tensor in = contiguous_raw(x);
  IntList sizes = x.sizes();
  if (sizes.empty()) {
    in = reshape_raw(in, {1});
    sizes = {1};
  }
  TANDEM_CHECK_INDEX(sizes[d] > 0,
                     op,
                     ": expected reduction dim ",
                     d,
                     " to have non-zero size (shape ",
                     x.sizes(),
                     ")");
  IntList result = sizes;
  result.erase(result.begin() + d);
  const bool arg = kind == ReduceOp::ArgMax || kind == ReduceOp::ArgMin;
  Tensor indices = detail::make_empty(result, kInt64, x.device());
  Tensor values = arg ? Tensor() : detail::make_empty(result, x.dtype(), x.device());
  detail::kernels_for(indices).reduce_dim(
      kind, arg ? indices : values, arg ? Tensor() : indices, in, d);
  if (keepdim && x.dim() > 0) {
    result.insert(result.begin() + d, 1);
    indices = reshape_raw(indices, result);
    if (!arg) values = reshape_raw(values, result);
  }
  return {values, indices};
}

std::tuple<Tensor, Tensor> extremum_along(const char* op,
                                          const char* node,
                                          ReduceOp kind,
                                          const Tensor& x,
                                          int64_t dim,
                                          bool keepdim) {
  auto [values, indices] = reduce_along(op, kind, x, dim, keepdim);
  if (autograd::any_requires_grad({&x})) {
    const int64_t d = wrap_dim(dim, x.dim(), op);
    SavedVariable saved_indices(indices);
    autograd::record_function(
        node, {x}, {&values}, [=, sizes = x.sizes()](const tensor_list& g) {
          if (sizes.empty()) return tensor_list{g[0]};
          // The gradient lands only where arange along d equals the index.
          Tensor gk = keepdim ? g[0] : g[0].unsqueeze(d);
          Tensor idx = saved_indices.unpack(node);
          Tensor ik = keepdim ? idx : idx.unsqueeze(d);
          IntList line(sizes.size(), 1);
          line[d] = sizes[d];
          Tensor positions = arange(sizes[d], TensorOptions(kInt64).device(gk.device()));
          Tensor hit = eq(positions.view(line), ik);
          return tensor_list{where(hit, gk, zeros({}, gk.options()))};
        });
  }
  return {values, indices};
}

}  // namespace

Tensor sum(const Tensor& x) { return sum_impl(x, {}, /*keepdim=*/false); }
Tensor sum(const Tensor& x, const IntList& dims, bool keepdim) {
  return sum_impl(x, dims, keepdim);
}

Tensor mean(const Tensor& x) { return mean_impl(x, {}, /*keepdim=*/false); }
Tensor mean(const Tensor& x, const IntList& dims, bool keepdim) {
  return mean_impl(x, dims, keepdim);
}

Tensor max(const Tensor& x) {
  return extremum_all("max", "MaxBackward", ReduceOp::Max, x);
}
Tensor min(const Tensor& x) {
  return extremum_all("min", "MinBackward", ReduceOp::Min, x);
}

std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
  return extremum_along("max", "MaxBackward", ReduceOp::Max, x, dim, keepdim);
}
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) {
  return extremum_along("min", "MinBackward", ReduceOp::Min, x, dim, keepdim);
}

Tensor argmax(const Tensor& x) { return reduce_all("argmax", ReduceOp::ArgMax, x); }
Tensor argmin(const Tensor& x) { return reduce_all("argmin", ReduceOp::ArgMin, x); }

Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) {
  return std::get<1>(reduce_along("argmax", ReduceOp::ArgMax, x, dim, keepdim));
}
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim) {
  return std::get<1>(reduce_along("argmin", ReduceOp::ArgMin, x, dim, keepdim));
}

}  // namespace tandem
