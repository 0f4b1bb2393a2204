#include "parallel/parallel_utils.h"

#include <memory>
#include <utility>

#include "tandem/core/error.h"
#include "tandem/core/profiler.h"
#include "tandem/core/storage.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/ops/factory.h"

namespace tandem::parallel::detail {

Tensor readable_on(const Tensor& src, Device device) {
  if (src.device() == device) return src;
  if (!src.is_cpu() || !device.is_cpu()) return src.detach().to(device);
  return Tensor(
      std::make_shared<TensorImpl>(alias_storage(src.unsafe_impl()->storage(), device),
                                   src.dtype(),
                                   src.sizes(),
                                   src.strides(),
                                   src.storage_offset()));
}

namespace {

// `part` handed to another logical CPU device without a copy: an alias of
// its memory (readable_on). As a copy would, the hand-off is a span on the
// receiving device ("share", its bytes), with an arrow to the first span
// that reads the part (Note [Profiler spans]).
Tensor shared_with(const Tensor& part, Device device) {
  profiler::Span span("copy", "share", device);
  Tensor alias = readable_on(part, device);
  if (span.active()) {
    span.arg("from", part.device().str())
        .arg("to", device.str())
        .arg("bytes", alias.nbytes());
    profiler::mark_data(alias.data_ptr(), span.start_flow());
  }
  return alias;
}

}  // namespace

std::vector<Tensor> move_to_devices(std::vector<Tensor> parts,
                                    const std::vector<Device>& devices) {
  TANDEM_INTERNAL_ASSERT(parts.size() <= devices.size(),
                         parts.size(),
                         " parts for ",
                         devices.size(),
                         " devices");
  // non_blocking, as PyTorch's scatter (also its Gather.backward's): a copy
  // from the host to a GPU is left running when the source is pinned (its
  // block outlives the copy) and is done with a pageable source on return
  // either way (Note [Copies from the host] in backend/cuda/cuda_copy.cpp);
  // the part's later uses are queued after it on its GPU. Other copies do
  // not look at it: to the host they wait, and between GPUs they are
  // ordered on both streams. Between logical CPU devices nothing is copied:
  // the part is an alias of the same memory (readable_on), unless it is to
  // be differentiated again (create_graph), where the recorded copy is.
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].device() == devices[i]) continue;
    const bool recorded = GradMode::is_enabled() && parts[i].requires_grad();
    if (parts[i].is_cpu() && devices[i].is_cpu() && !recorded) {
      parts[i] = shared_with(parts[i], devices[i]);
    } else {
      parts[i] = parts[i].to(devices[i], /*non_blocking=*/true);
    }
  }
  return parts;
}

autograd::tensor_list zeros_for_missing(autograd::tensor_list grads,
                                        const std::vector<autograd::TensorMeta>& meta) {
  TANDEM_INTERNAL_ASSERT(grads.size() == meta.size(),
                         grads.size(),
                         " gradients for ",
                         meta.size(),
                         " outputs");
  for (size_t i = 0; i < grads.size(); ++i) {
    if (grads[i].defined()) continue;
    grads[i] = zeros(meta[i].sizes, TensorOptions(meta[i].dtype).device(meta[i].device));
  }
  return grads;
}

}  // namespace tandem::parallel::detail
