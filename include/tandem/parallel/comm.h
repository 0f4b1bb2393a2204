// Device collectives for data parallelism, as torch.cuda.comm: copy tensors
// from one device to several (broadcast_coalesced) and sum tensors from
// several devices onto one (reduce_add_coalesced). Neither records autograd
// history; replicate() and its backward build on them.
//
// Tensors are grouped by dtype into buckets of at most `buffer_size` bytes
// (a larger tensor is a bucket of its own), and each bucket travels as one
// buffer per device: one allocation per bucket instead of one per tensor.
// Bucketing changes speed only, never values, and results come back in the
// order of the inputs.
//
// Between GPUs, in a build with NCCL, a call over two or more distinct GPUs
// moves each bucket in one NCCL collective, where that gives the same bits
// as peer copies and ordered adds: always for a broadcast; for a reduction
// over exactly two GPUs or of an integer dtype. Otherwise, and always with
// TANDEM_COMM_NCCL=0 in the environment, tensors travel by peer copies and
// are summed by add kernels on the destination.
//
//   namespace parallel = tandem::parallel;
//   std::vector<tandem::Device> devices = {"cpu:0", "cpu:1"};
//   auto copies = parallel::broadcast_coalesced(model->parameters(), devices);
//   // copies[1][i] is parameter i on cpu:1; copies[0][i] is parameter i
//   auto sums = parallel::reduce_add_coalesced({grads0, grads1}, "cpu:0");
#pragma once

#include <cstddef>
#include <vector>

#include "tandem/core/device.h"
#include "tandem/core/tensor.h"

namespace tandem::parallel {

/// PyTorch's bucket limit: 10 MiB.
inline constexpr size_t kDefaultBufferSize = 10485760;

/// Copies `tensors` (all on one device) to every device of `devices`.
/// result[j][i] is tensors[i] on devices[j]: for j = 0, if devices[0] is the
/// tensors' own device, the input tensor itself (as PyTorch's); otherwise a
/// contiguous copy with its own storage, so an in-place change of one copy
/// never bumps the version counter of another.
std::vector<std::vector<Tensor>> broadcast_coalesced(
    const std::vector<Tensor>& tensors,
    const std::vector<Device>& devices,
    size_t buffer_size = kDefaultBufferSize);

/// Sums inputs[0][i] + inputs[1][i] + ... for every i on `destination`,
/// with the bits of adding left to right in the order of `inputs` (replica
/// order), so the result is reproducible for a fixed order of inputs, with
/// or without NCCL (TANDEM_COMM_NCCL=0): NCCL sums only where its order
/// cannot change a bit (see above). Every inputs[j] must hold tensors of
/// the same shapes and dtypes as inputs[0]; results are new tensors.
std::vector<Tensor> reduce_add_coalesced(const std::vector<std::vector<Tensor>>& inputs,
                                         Device destination,
                                         size_t buffer_size = kDefaultBufferSize);

}  // namespace tandem::parallel
