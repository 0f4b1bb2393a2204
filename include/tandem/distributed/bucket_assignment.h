// How DistributedDataParallel groups gradients into buckets (PyTorch's
// compute_bucket_assignment_by_size), as a pure function for tests and for
// users who want to see what a cap does.
//
//   // four float32 tensors of 409,600 bytes, one 1 MiB limit:
//   compute_bucket_assignment_by_size(tensors, {1 << 20});  // {{0, 1, 2}, {3}}
#pragma once

#include <cstddef>
#include <vector>

#include "tandem/core/tensor.h"

namespace tandem::distributed {

/// Groups `tensors` (visited in `order`, default 0..n-1) into buckets of
/// one dtype and device each. Each (dtype, device) fills one open bucket at
/// a time; a bucket closes once its bytes reach or pass its limit (so it
/// may overshoot by one tensor), the first bucket of each (dtype, device)
/// taking size_limits[0], the next size_limits[1], and so on, the last limit
/// repeating. Without an explicit order the buckets are sorted by their
/// smallest index; with one, they come in the order they closed (open ones
/// last). Inside a bucket, indices keep visiting order.
std::vector<std::vector<size_t>> compute_bucket_assignment_by_size(
    const std::vector<Tensor>& tensors,
    const std::vector<size_t>& size_limits,
    const std::vector<size_t>& order = {});

}  // namespace tandem::distributed
