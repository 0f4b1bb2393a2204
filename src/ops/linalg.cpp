// Matrix products (mm, bmm, matmul, linear), forward and backward. Each
// matrix is one BLAS gemm; transposed views reach the kernel as they are, so
// the a^T and b^T of the backward formulas cost no copies.
#include "tandem/ops/linalg.h"

#include <algorithm>

#include "ops/op_utils.h"
#include "ops/packed_weights.h"
#include "tandem/core/micro_batch_products.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/graph/node.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/reduction.h"
#include "tandem/ops/shape.h"

namespace tandem {
namespace {

using autograd::SavedVariable;
using autograd::tensor_list;

// Defined, one device, one floating dtype: what every product needs.
void check_operands(const char* op,
                    const Tensor& a,
                    const char* name_a,
                    const Tensor& b,
                    const char* name_b) {
  detail::check_defined(op, a, name_a);
  detail::check_defined(op, b, name_b);
  detail::check_same_device(op, {&a, &b});
  TANDEM_CHECK(a.is_floating_point() && b.is_floating_point(),
               op,
               ": expected float32 or float64 tensors, got ",
               a.dtype(),
               " and ",
               b.dtype(),
               " (integer matrix products are not supported)");
  TANDEM_CHECK(a.dtype() == b.dtype(),
               op,
               ": expected tensors of one dtype, got ",
               a.dtype(),
               " and ",
               b.dtype());
}

void check_inner(
    const char* op, const Tensor& a, const Tensor& b, int64_t ka, int64_t kb) {
  TANDEM_CHECK(ka == kb,
               op,
               ": shapes ",
               a.sizes(),
               " and ",
               b.sizes(),
               " cannot be multiplied (",
               ka,
               " != ",
               kb,
               ")");
}

// Whether BLAS reads the matrix in `t`'s last two dims as it is: row-major
// or transposed, with a leading dimension that steps past a whole row
// (column). Size-1 dims may carry any stride. Batch strides do not matter.
bool blas_compatible(const Tensor& t) {
  const int64_t rows = t.size(-2), cols = t.size(-1);
  const int64_t s0 = t.stride(-2), s1 = t.stride(-1);
  const bool row_major =
      (s1 == 1 || cols == 1) && (rows == 1 || s0 >= std::max<int64_t>(cols, 1));
  const bool col_major =
      (s0 == 1 || rows == 1) && (cols == 1 || s1 >= std::max<int64_t>(rows, 1));
  return row_major || col_major;
}

// `t` as BLAS reads it: itself when it can read it in place (kernels never
// record history, so no detached handle is needed), else a contiguous copy
// made without history.
Tensor blas_operand(const Tensor& t) {
  return blas_compatible(t) ? t : t.detach().contiguous();
}

int64_t product_of(IntList::const_iterator begin, IntList::const_iterator end) {
  int64_t n = 1;
  for (auto it = begin; it != end; ++it) n *= *it;
  return n;
}

using Product = Tensor (*)(const Tensor&, const Tensor&);

// The backward of out = a @ b for mm and bmm: ga = g @ b^T, gb = a^T @ g,
// each only when its input needs it.
void record_product(
    const char* node, const Tensor& a, const Tensor& b, Tensor& out, Product product) {
  if (!autograd::any_requires_grad({&a, &b})) return;
  const bool need_a = a.requires_grad(), need_b = b.requires_grad();
  SavedVariable va(need_b ? a : Tensor()), vb(need_a ? b : Tensor());
  autograd::record_function(node, {a, b}, {&out}, [=](const tensor_list& g) {
    Tensor ga = need_a ? product(g[0], vb.unpack(node).transpose(-2, -1)) : Tensor();
    Tensor gb = need_b ? product(va.unpack(node).transpose(-2, -1), g[0]) : Tensor();
    return tensor_list{ga, gb};
  });
}

// matmul with at least one operand of 3+ dims: broadcast the batch dims,
// fold them into one and run bmm. 1-D operands gain (then lose) a dim.
Tensor batched_matmul(const Tensor& a, const Tensor& b) {
  const Tensor a3 = a.dim() == 1 ? a.unsqueeze(0) : a;
  const Tensor b3 = b.dim() == 1 ? b.unsqueeze(-1) : b;
  const int64_t m = a3.size(-2), k = a3.size(-1), n = b3.size(-1);
  const IntList batch_a(a3.sizes().begin(), a3.sizes().end() - 2);
  const IntList batch_b(b3.sizes().begin(), b3.sizes().end() - 2);
  IntList batch = batch_a;
  if (batch_a != batch_b) {
    const std::string op =
        detail::str("matmul: batch dimensions of ", a.sizes(), " and ", b.sizes());
    batch = broadcast_shapes(batch_a, batch_b, op.c_str());
  }
  const int64_t count = product_of(batch.begin(), batch.end());
  auto folded = [&](const Tensor& t, int64_t rows, int64_t cols) {
    IntList full = batch;
    full.insert(full.end(), {rows, cols});
    return t.expand(full).reshape({count, rows, cols});
  };
  Tensor r = bmm(folded(a3, m, k), folded(b3, k, n));
  IntList out_shape = batch;
  if (a.dim() > 1) out_shape.push_back(m);
  if (b.dim() > 1) out_shape.push_back(n);
  return r.view(out_shape);
}

// a @ b: mm, or (panels != 0) a panel product of a float32 pair under
// MicroBatchProducts step `panels`, b packed under `pack_step` (0: for this
// product alone).
Tensor product(const Tensor& a, const Tensor& b, uint64_t panels, uint64_t pack_step) {
  if (panels == 0) return mm(a, b);
  const profiler::Span span = detail::op_span("mm", {&a, &b});
  Tensor out = detail::make_empty({a.size(0), b.size(1)}, a.dtype(), a.device());
  detail::panel_product(out, a, b, pack_step, /*accumulate=*/false);
  return out;
}

// The rows of the micro-batches a MicroBatchProducts scope runs together,
// or one piece of all `rows` when it runs one (or there is no scope).
std::vector<int64_t> micro_batches_of(const MicroBatchProducts* products, int64_t rows) {
  if (products == nullptr || products->leaf_rows().size() < 2) return {rows};
  const std::vector<int64_t>& leaves = products->leaf_rows();
  int64_t total = 0;
  for (int64_t part : leaves) total += part;
  TANDEM_CHECK(total == rows,
               "linear: the MicroBatchProducts scope runs micro-batches of ",
               total,
               " rows in all, but linear's input has ",
               rows,
               " rows; a module that reshapes its batch cannot run several "
               "micro-batches in one forward");
  return leaves;
}

// The tree of leaf_tree_split over `parts` (in order): parts[lo] + ... in
// pairs, as invariant mode adds the micro-batches' gradients; recorded
// when grad mode is on.
Tensor sum_in_tree(const std::vector<Tensor>& parts, size_t lo, size_t hi) {
  if (hi - lo == 1) return parts[lo];
  const auto mid = static_cast<size_t>(
      backend::cpu::leaf_tree_split(static_cast<int64_t>(lo), static_cast<int64_t>(hi)));
  return sum_in_tree(parts, lo, mid) + sum_in_tree(parts, mid, hi);
}

// LinearBackward for micro-batches of `leaves` rows run together: the
// input's gradient row by row, the weight's and the bias's each
// micro-batch's own summed in the tree over them. With a panel `step`,
// the weight's is one tree product (panel_gemm_tree), else (a recorded
// backward) a product per micro-batch.
tensor_list linear_backward_over(const std::vector<int64_t>& leaves,
                                 const Tensor& g2d,
                                 const Tensor& x2d,
                                 const Tensor& weight,
                                 bool need_bias,
                                 uint64_t step,
                                 const IntList& input_sizes) {
  std::vector<Tensor> gis, gws, gbs;
  int64_t first = 0;
  for (int64_t part : leaves) {
    const Tensor g = g2d.narrow(0, first, part);
    if (weight.defined() && step == 0) gis.push_back(mm(g, weight));
    if (x2d.defined() && step == 0) gws.push_back(mm(g.t(), x2d.narrow(0, first, part)));
    if (need_bias) gbs.push_back(sum(g, {0}));
    first += part;
  }
  Tensor gi, gw;
  if (weight.defined()) {
    gi = step != 0 ? product(g2d, weight, step, step) : cat(gis, 0);
    gi = gi.view(input_sizes);
  }
  if (x2d.defined()) {
    if (step != 0) {
      const profiler::Span span = detail::op_span("mm", {&g2d, &x2d});
      gw = detail::make_empty({g2d.size(1), x2d.size(1)}, g2d.dtype(), g2d.device());
      detail::panel_tree_product(gw, g2d.t(), x2d, leaves);
    } else {
      gw = sum_in_tree(gws, 0, gws.size());
    }
  }
  Tensor gb = need_bias ? sum_in_tree(gbs, 0, gbs.size()) : Tensor();
  return tensor_list{gi, gw, gb};
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  const profiler::Span span = detail::op_span("mm", {&a, &b});
  check_operands("mm", a, "self", b, "mat2");
  TANDEM_CHECK(a.dim() == 2 && b.dim() == 2,
               "mm: expected 2-D tensors, got shapes ",
               a.sizes(),
               " and ",
               b.sizes());
  check_inner("mm", a, b, a.size(1), b.size(0));
  Tensor out = detail::make_empty({a.size(0), b.size(1)}, a.dtype(), a.device());
  detail::kernels_for(out).gemm(out, blas_operand(a), blas_operand(b), 1, 0);
  record_product("MmBackward", a, b, out, &mm);
  return out;
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  const profiler::Span span = detail::op_span("bmm", {&a, &b});
  check_operands("bmm", a, "self", b, "mat2");
  TANDEM_CHECK(a.dim() == 3 && b.dim() == 3,
               "bmm: expected 3-D tensors, got shapes ",
               a.sizes(),
               " and ",
               b.sizes());
  TANDEM_CHECK(a.size(0) == b.size(0),
               "bmm: shapes ",
               a.sizes(),
               " and ",
               b.sizes(),
               " have different batch sizes (",
               a.size(0),
               " != ",
               b.size(0),
               ")");
  check_inner("bmm", a, b, a.size(2), b.size(1));
  Tensor out =
      detail::make_empty({a.size(0), a.size(1), b.size(2)}, a.dtype(), a.device());
  detail::kernels_for(out).bmm(out, blas_operand(a), blas_operand(b));
  record_product("BmmBackward", a, b, out, &bmm);
  return out;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  const profiler::Span span = detail::op_span("matmul", {&a, &b});
  check_operands("matmul", a, "self", b, "other");
  TANDEM_CHECK(a.dim() >= 1 && b.dim() >= 1,
               "matmul: expected tensors with at least 1 dimension, got shapes ",
               a.sizes(),
               " and ",
               b.sizes());
  check_inner("matmul", a, b, a.size(-1), b.size(b.dim() == 1 ? 0 : -2));
  if (a.dim() <= 2 && b.dim() <= 2) {
    // dot, vector-matrix, matrix-vector and mm, all as mm.
    Tensor r = mm(a.dim() == 1 ? a.unsqueeze(0) : a, b.dim() == 1 ? b.unsqueeze(1) : b);
    if (a.dim() == 1) r = r.squeeze(0);
    return b.dim() == 1 ? r.squeeze(-1) : r;
  }
  if (b.dim() <= 2) {
    // Batch dims of `a` fold into rows: one large gemm instead of many.
    const int64_t rows = product_of(a.sizes().begin(), a.sizes().end() - 1);
    Tensor r = mm(a.reshape({rows, a.size(-1)}), b.dim() == 1 ? b.unsqueeze(1) : b);
    IntList out_shape(a.sizes().begin(), a.sizes().end() - 1);
    if (b.dim() == 2) out_shape.push_back(b.size(1));
    return r.view(out_shape);
  }
  return batched_matmul(a, b);
}

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  const profiler::Span span = detail::op_span("linear", {&input, &weight, &bias});
  check_operands("linear", input, "input", weight, "weight");
  detail::check_same_device("linear", {&input, &weight, &bias});
  TANDEM_CHECK(weight.dim() == 2,
               "linear: expected weight of shape [out_features, in_features], got ",
               weight.sizes());
  TANDEM_CHECK(input.dim() >= 1,
               "linear: expected input with at least 1 dimension, ",
               "got shape ",
               input.sizes());
  const int64_t out_features = weight.size(0), in_features = weight.size(1);
  TANDEM_CHECK(input.size(-1) == in_features,
               "linear: input has ",
               input.size(-1),
               " features (shape ",
               input.sizes(),
               ") but weight expects ",
               in_features);
  if (bias.defined()) {
    TANDEM_CHECK(bias.dtype() == weight.dtype(),
                 "linear: bias has dtype ",
                 bias.dtype(),
                 " but weight has ",
                 weight.dtype());
    TANDEM_CHECK(bias.dim() == 1 && bias.size(0) == out_features,
                 "linear: expected bias of shape [",
                 out_features,
                 "] (weight has ",
                 out_features,
                 " output features), got ",
                 bias.sizes());
  }
  const IntList input_sizes = input.sizes();
  const int64_t rows = product_of(input_sizes.begin(), input_sizes.end() - 1);
  IntList out_shape = input_sizes;
  out_shape.back() = out_features;
  Tensor out = detail::make_empty(out_shape, input.dtype(), input.device());

  // One gemm with beta = 1 over rows pre-filled with the bias: no extra pass.
  const backend::Kernels& kernels = detail::kernels_for(out);
  Tensor out2d = detail::raw_view(out, {rows, out_features}, {out_features, 1}, 0);
  if (bias.defined()) {
    kernels.copy(out2d, detail::broadcast_to_raw(bias, {rows, out_features}));
  }
  // The kernel reads plain views (it records nothing): a 2-D input as it is,
  // the weight transposed by its strides.
  const Tensor input2d =
      input.dim() == 2 ? input : input.detach().reshape({rows, in_features});
  const Tensor weight_t = detail::raw_view(weight,
                                           {in_features, out_features},
                                           {weight.stride(1), weight.stride(0)},
                                           weight.storage_offset());
  // Under invariant mode's MicroBatchProducts, a weight packed once per step
  // (its rows' bits do not depend on the rows beside them); else BLAS, a
  // call per micro-batch when the scope runs several.
  const MicroBatchProducts* products = MicroBatchProducts::current();
  const std::vector<int64_t> leaves = micro_batches_of(products, rows);
  const uint64_t panel_step =
      detail::panel_products_for(
          input, weight, *std::max_element(leaves.begin(), leaves.end()))
          ? products->step()
          : 0;
  if (panel_step != 0) {
    detail::panel_product(out2d, input2d, weight_t, panel_step, bias.defined());
  } else {
    int64_t first = 0;
    for (int64_t part : leaves) {
      kernels.gemm(out2d.narrow(0, first, part),
                   blas_operand(input2d.narrow(0, first, part)),
                   blas_operand(weight_t),
                   1,
                   bias.defined() ? 1 : 0);
      first += part;
    }
  }

  if (!autograd::any_requires_grad({&input, &weight, &bias})) return out;
  const bool need_input = input.requires_grad(), need_weight = weight.requires_grad();
  const bool need_bias = bias.defined() && bias.requires_grad();
  SavedVariable saved_input(need_weight ? input : Tensor());
  SavedVariable saved_weight(need_input ? weight : Tensor());
  autograd::record_function(
      "LinearBackward", {input, weight, bias}, {&out}, [=](const tensor_list& g) {
        const char* node = "LinearBackward";
        Tensor g2d = g[0].reshape({rows, out_features});
        Tensor gi, gw;
        // The forward's panel products, unless this backward is recorded.
        const uint64_t step = GradMode::is_enabled() ? 0 : panel_step;
        if (leaves.size() > 1) {
          // Several micro-batches: the gradients each would get alone,
          // the weight's and bias's summed in the tree over them.
          const Tensor x2d = need_weight
                                 ? saved_input.unpack(node).reshape({rows, in_features})
                                 : Tensor();
          return linear_backward_over(
              leaves, g2d, x2d, saved_weight.unpack(node), need_bias, step, input_sizes);
        }
        if (need_input) {
          gi = product(g2d, saved_weight.unpack(node), step, step).view(input_sizes);
        }
        if (need_weight) {
          gw = product(g2d.t(),
                       saved_input.unpack(node).reshape({rows, in_features}),
                       step,
                       /*pack_step=*/0);
        }
        Tensor gb = need_bias ? sum(g2d, {0}) : Tensor();
        return tensor_list{gi, gw, gb};
      });
  return out;
}

Tensor dot(const Tensor& a, const Tensor& b) {
  check_operands("dot", a, "self", b, "other");
  TANDEM_CHECK(a.dim() == 1 && b.dim() == 1,
               "dot: expected two 1-D tensors, got shapes ",
               a.sizes(),
               " and ",
               b.sizes());
  TANDEM_CHECK(a.size(0) == b.size(0),
               "dot: expected tensors of one length, got shapes ",
               a.sizes(),
               " and ",
               b.sizes());
  return matmul(a, b);
}

Tensor mv(const Tensor& matrix, const Tensor& vec) {
  check_operands("mv", matrix, "self", vec, "vec");
  TANDEM_CHECK(matrix.dim() == 2 && vec.dim() == 1,
               "mv: expected a 2-D matrix and a 1-D vector, got shapes ",
               matrix.sizes(),
               " and ",
               vec.sizes());
  return matmul(matrix, vec);
}

}  // namespace tandem
