// Private: what the CUDA kernels that sum in pieces share (batch_norm.cu,
// layer_norm.cu): ceiling division for the piece counts, and double scratch
// for the partial sums.
#pragma once

#include <cstdint>

#include "core/empty_tensor.h"
#include "tandem/core/tensor.h"

namespace tandem::backend::cuda {

__host__ __device__ inline int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// Double scratch in device memory, freed in stream order.
inline Tensor double_scratch(int64_t count, Device device) {
  return detail::make_empty({count}, kFloat64, device);
}

}  // namespace tandem::backend::cuda
