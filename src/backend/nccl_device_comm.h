// Private: NCCL collectives among the GPUs of this one process, for
// parallel/comm.cpp (see Note [comm over NCCL] there). backend/nccl/
// implements it in a build with CUDA and NCCL (which only backend/nccl/ and
// distributed/nccl/ are compiled and linked with); backend/no_nccl/
// otherwise, where nccl_device_comm_built() is false and nothing else is
// ever reached. No CUDA or NCCL header here.
//
// A call takes one flat buffer per GPU: contiguous, of one dtype and one
// size, each on a different GPU. The buffers' order names the clique (its
// ranks), so callers keep the order of their device list.
#pragma once

#include <cstddef>
#include <vector>

#include "tandem/core/dtype.h"
#include "tandem/core/tensor.h"

namespace tandem::backend::nccl {

/// Whether this build has NCCL (and the CUDA backend).
bool nccl_device_comm_built();

/// Whether NCCL sums `dtype` (for nccl_reduce_sum). A broadcast moves bytes,
/// so it takes any dtype.
bool nccl_can_sum(ScalarType dtype);

/// Copies buffers[root] into every other buffer, ordered on each GPU's
/// stream. `what` names the caller in errors.
void nccl_broadcast(const std::vector<Tensor>& buffers, size_t root, const char* what);

/// Writes the sum of all buffers into buffers[root]; the others keep their
/// values. Ordered on each GPU's stream; `what` names the caller in errors.
void nccl_reduce_sum(const std::vector<Tensor>& buffers, size_t root, const char* what);

}  // namespace tandem::backend::nccl
