// Private helpers shared by the parallel layer's sources: reading tensors
// across devices, moving pieces to their devices, and gradients that never
// arrived.
#pragma once

#include <vector>

#include "tandem/core/device.h"
#include "tandem/core/tensor.h"
#include "tandem/graph/node.h"

namespace tandem::parallel::detail {

/// `src` as an operand for ops on `device`: `src` itself
/// if it is there; between logical CPU devices, which share the host's
/// memory, an alias of the same memory labelled with `device` (no copy; it
/// shares the version counter, see alias_storage); otherwise a copy.
Tensor readable_on(const Tensor& src, Device device);

/// reduce_add_coalesced for a caller that owns the inputs (BroadcastBackward
/// owns the replicas' gradients): where a tensor of inputs[0] is on the
/// destination and nothing else holds it, the sum is written into it rather
/// than into fresh memory. Same order of additions, so the same values.
std::vector<Tensor> reduce_add_consuming(std::vector<std::vector<Tensor>>&& inputs,
                                         Device destination);

/// parts[i] on devices[i]: the part itself where it already is; between
/// logical CPU devices an alias of its memory (readable_on); else a
/// contiguous copy. A part with a history under grad mode (a DataParallel
/// backward under create_graph) is copied, so the copy is recorded.
std::vector<Tensor> move_to_devices(std::vector<Tensor> parts,
                                    const std::vector<Device>& devices);

/// `grads` with every undefined gradient replaced by zeros shaped by the
/// matching `meta` (gradients of outputs nobody used).
autograd::tensor_list zeros_for_missing(autograd::tensor_list grads,
                                        const std::vector<autograd::TensorMeta>& meta);

}  // namespace tandem::parallel::detail
