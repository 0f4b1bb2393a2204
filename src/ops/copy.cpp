// Copies: to(device/dtype), contiguous, clone, copy_. All differentiable;
// a copy to another device sends the gradient back to the source device.
#include "ops/op_utils.h"
#include "ops/write_through_view.h"
#include "tandem/core/profiler.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/graph/node.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/factory.h"

namespace tandem {
namespace {

// A new contiguous tensor on `device` with `dtype` holding `src`'s values.
Tensor copy_to_new(const Tensor& src,
                   Device device,
                   ScalarType dtype,
                   const char* node_name,
                   bool non_blocking = false) {
  Tensor out = detail::make_empty(src.sizes(), dtype, device);
  // A copy to another device is a span on the destination, with an arrow
  // to the first span that reads its result (Note [Profiler spans]).
  profiler::Span span("copy", src.device() == device ? "clone" : "copy", device);
  span.time_on_queue(device.is_cpu() ? src.device() : device);
  if (span.active() && src.device() != device) {
    span.arg("from", src.device().str())
        .arg("to", device.str())
        .arg("bytes", out.nbytes());
    profiler::mark_data(out.data_ptr(), span.start_flow());
  }
  if (src.device() == device || (src.is_cpu() && device.is_cpu())) {
    // Logical CPU devices share the host's memory: a plain copy.
    detail::kernels_for(out).copy(out, src);
  } else {
    // To or from a GPU: convert and lay out on the source device, then move
    // the bytes (backend/cuda_backend.h says when the copy is complete).
    Tensor staged = src;
    if (src.dtype() != dtype || !src.is_contiguous()) {
      staged = detail::make_empty(src.sizes(), dtype, src.device());
      detail::kernels_for(staged).copy(staged, src);
    }
    const Device gpu = device.is_cpu() ? src.device() : device;
    backend::kernels(gpu).services.copy_bytes(out.data_ptr(),
                                              device,
                                              staged.data_ptr(),
                                              staged.device(),
                                              out.nbytes(),
                                              non_blocking);
  }
  if (src.is_floating_point() && is_floating_point(dtype)) {
    const Device src_device = src.device();
    const ScalarType src_dtype = src.dtype();
    autograd::record_function(
        node_name,
        {src},
        {&out},
        [src_device, src_dtype](const autograd::tensor_list& g) {
          return autograd::tensor_list{g[0].to(src_device, src_dtype)};
        });
  }
  return out;
}

}  // namespace

Tensor Tensor::to(Device device, ScalarType dtype, bool non_blocking, bool copy) const {
  if (!copy && device == this->device() && dtype == this->dtype()) return *this;
  return copy_to_new(*this, device, dtype, "ToCopyBackward", non_blocking);
}

Tensor Tensor::to(Device device, bool non_blocking, bool copy) const {
  return to(device, dtype(), non_blocking, copy);
}

Tensor Tensor::to(ScalarType dtype, bool non_blocking, bool copy) const {
  return to(device(), dtype, non_blocking, copy);
}

Tensor Tensor::to(const TensorOptions& options, bool non_blocking, bool copy) const {
  return to(options.has_device() ? options.device() : device(),
            options.has_dtype() ? options.dtype() : dtype(),
            non_blocking,
            copy);
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return copy_to_new(*this, device(), dtype(), "CloneBackward");
}

Tensor Tensor::clone() const {
  return copy_to_new(*this, device(), dtype(), "CloneBackward");
}

Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  detail::check_defined("copy_", src, "src");
  autograd::check_inplace(*this, "copy_", /*reads_self=*/false);
  TANDEM_CHECK(broadcast_shapes(sizes(), src.sizes(), "copy_") == sizes(),
               "copy_: cannot copy a tensor of shape ",
               src.sizes(),
               " into one of shape ",
               sizes());
  const bool record =
      autograd::any_requires_grad({&src}) || detail::write_reaches_graph(*this);
  const Tensor base = record ? detail::written_base(*this, "copy_") : Tensor();
  // Logical CPU devices share the host's memory: the kernel reads the
  // source where it is, with no staging copy.
  const bool same_memory = src.device() == device() || (src.is_cpu() && is_cpu());
  Tensor source = same_memory ? src : src.detach().to(device(), non_blocking);
  Tensor expanded = detail::broadcast_to_raw(source, sizes());
  detail::kernels_for(*this).copy(*this, expanded);
  bump_version();
  if (!record) return *this;
  if (base.defined() && (base.requires_grad() || autograd::any_requires_grad({&src}))) {
    detail::record_write_through_view(*this, base, src);
    return *this;
  }
  const IntList src_sizes = src.sizes();
  const Device src_device = src.device();
  const ScalarType src_dtype = src.dtype();
  bool src_float = src.is_floating_point();
  auto node = autograd::record_function(
      "CopyBackwards",
      {*this, src},
      {},
      [src_sizes, src_device, src_dtype, src_float](const autograd::tensor_list& g) {
        Tensor to_src =
            src_float ? sum_to(g[0], src_sizes).to(src_device, src_dtype) : Tensor();
        return autograd::tensor_list{zeros_like(g[0]), to_src};
      });
  if (node) {
    node->add_output_meta(*this);
    autograd::set_history(*this, node, 0);
  }
  return *this;
}

}  // namespace tandem
