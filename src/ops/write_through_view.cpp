// Autograd for writes into a view: the base's CopySlices node, and the
// strided gather/scatter pair its backward is made of (each recorded, with
// the other as its backward, so create_graph works through a write).
#include "ops/write_through_view.h"

#include "ops/op_utils.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/graph/node.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/factory.h"

namespace tandem::detail {
namespace {

// Note [Writing through a view]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A view shares its base's memory, so writing into it (x[1] = y, which is
// x.select(0, 1).copy_(y)) changes the base too, and the base's history
// must say so: otherwise a loss computed from x would send no gradient to
// y. As in PyTorch, the base gets a new grad_fn, CopySlices, whose
// backward sends the gradient's elements under the view to the written
// values and the rest to the base's previous history; the view gets a
// history that reads it from the base (AsStridedBackward). Every view knows
// its base (TensorImpl::view_base, set by record_view) and where in the
// base's memory it lies, so this works for any chain of views of a
// contiguous base; a view of a non-contiguous tensor that requires grad
// cannot be written into (check_inplace says so).
//
// A view made before its base changed history (by a write through another
// view, or under NoGradGuard) still has the older history. PyTorch then
// regenerates the view's grad_fn; tandem refuses in-place ops that read
// such a view (check_inplace), while copy_ and fill_, which do not read it,
// are recorded into the base as above. Reading such a view out of place
// still follows its older history.

// Where a view lies in its (contiguous) base: its geometry, counted from
// the base's first element.
struct Region {
  IntList base_sizes;
  IntList sizes;
  IntList strides;
  int64_t offset = 0;

  Tensor in(const Tensor& contiguous_like_base) const {
    return raw_view(contiguous_like_base,
                    sizes,
                    strides,
                    contiguous_like_base.storage_offset() + offset);
  }
};

Tensor pad_region(const Tensor& g, const Region& r);

// The elements of `g` (shaped like the base) that the view covers.
Tensor region_of(const Tensor& g, const Region& r) {
  Tensor c = g.contiguous();
  Tensor out = r.in(c);
  autograd::record_function(
      "AsStridedBackward", {c}, {&out}, [r](const autograd::tensor_list& grads) {
        return autograd::tensor_list{pad_region(grads[0], r)};
      });
  return out;
}

// Zeros shaped like the base, holding `g` where the view lies.
Tensor pad_region(const Tensor& g, const Region& r) {
  Tensor out = zeros(r.base_sizes, g.options());
  kernels_for(out).copy(r.in(out), g);
  autograd::record_function(
      "AsStridedScatterBackward", {g}, {&out}, [r](const autograd::tensor_list& grads) {
        return autograd::tensor_list{region_of(grads[0], r)};
      });
  return out;
}

// `g` with zeros where the view lies: the base's old values there were
// overwritten, so no gradient reaches them.
Tensor zero_region(const Tensor& g, const Region& r) {
  Tensor out = make_empty(g.sizes(), g.dtype(), g.device());
  kernels_for(out).copy(out, g);
  kernels_for(out).fill(r.in(out), 0);
  autograd::record_function(
      "CopySlicesMaskBackward", {g}, {&out}, [r](const autograd::tensor_list& grads) {
        return autograd::tensor_list{zero_region(grads[0], r)};
      });
  return out;
}

}  // namespace

bool write_reaches_graph(const Tensor& t) {
  if (!GradMode::is_enabled()) return false;
  return t.requires_grad() || (t.is_view() && t._base().requires_grad());
}

Tensor written_base(const Tensor& t, const char* op) {
  if (!t.is_view()) return Tensor();
  Tensor base = t._base();
  TANDEM_CHECK(base.is_contiguous(),
               op,
               ": writing into a view (shape ",
               t.sizes(),
               ") of a non-contiguous tensor (shape ",
               base.sizes(),
               ", strides ",
               base.strides(),
               ") is not supported when autograd must record it; clone the view first");
  for (int64_t d = 0; d < t.dim(); ++d) {
    TANDEM_CHECK(t.strides()[d] != 0 || t.sizes()[d] <= 1,
                 op,
                 ": unsupported operation: more than one element of the written-to "
                 "tensor (shape ",
                 t.sizes(),
                 ", strides ",
                 t.strides(),
                 ") refers to a single memory location; clone it first");
  }
  return base;
}

void record_write_through_view(const Tensor& view,
                               const Tensor& base,
                               const Tensor& src) {
  const Region region{base.sizes(),
                      view.sizes(),
                      view.strides(),
                      view.storage_offset() - base.storage_offset()};
  const IntList src_sizes = src.sizes();
  const Device src_device = src.device();
  const ScalarType src_dtype = src.dtype();
  const bool src_float = src.is_floating_point();
  Tensor new_base = base;
  autograd::record_function(
      "CopySlices",
      {base, src},
      {&new_base},
      [region, src_sizes, src_device, src_dtype, src_float](
          const autograd::tensor_list& g) {
        Tensor to_src =
            src_float
                ? sum_to(region_of(g[0], region), src_sizes).to(src_device, src_dtype)
                : Tensor();
        return autograd::tensor_list{zero_region(g[0], region), to_src};
      });
  Tensor new_view = view;
  autograd::record_function(
      "AsStridedBackward", {base}, {&new_view}, [region](const autograd::tensor_list& g) {
        return autograd::tensor_list{pad_region(g[0], region)};
      });
  view.unsafe_impl()->set_view_version(view._version());
}

}  // namespace tandem::detail
