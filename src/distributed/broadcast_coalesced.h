// Private: broadcasts many tensors as a few flat ones (PyTorch's
// broadcast_coalesced), for DistributedDataParallel's parameters and
// buffers.
#pragma once

#include <vector>

#include "tandem/core/tensor.h"
#include "tandem/distributed/process_group.h"

namespace tandem::distributed::detail {

/// Copies `root`'s values of `tensors` into every rank's `tensors` (same
/// count, shapes and dtypes on every rank; CPU). Tensors are grouped by
/// dtype into flat buffers of at most 250 MiB, one broadcast each; dtypes
/// the group cannot send (anything but float32, float64, int64) travel as
/// float64, which holds them exactly. Waits for completion.
void broadcast_coalesced(ProcessGroup& group,
                         const std::vector<Tensor>& tensors,
                         int root);

}  // namespace tandem::distributed::detail
