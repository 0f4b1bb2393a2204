// Private: the weights linear() packs once per step for micro-batch
// products (tandem/core/micro_batch_products.h; Note [Panel products] in
// backend/cpu/panel_gemm.cpp), kept per thread.
#pragma once

#include <cstdint>

#include "backend/cpu/panel_gemm.h"
#include "tandem/core/tensor.h"

namespace tandem::detail {

/// Whether products of `a` (at most 48 rows) by `b` run as panel products under the
/// thread's MicroBatchProducts scope: float32 on the CPU, with AVX-512F.
bool panel_products_for(const Tensor& a, const Tensor& b);

/// The 2-D `b` (k x n, any strides) packed under `step`, from this thread's
/// cache; packed again when b's memory, its version, its layout or the
/// step differ. Valid until the thread's next call.
const backend::cpu::PackedPanels& packed_for_step(const Tensor& b, uint64_t step);

/// out = a @ b (+ out when `accumulate`), a and b 2-D float32 views, out
/// contiguous; b packed under `step` (0: packed for this call alone).
void panel_product(
    const Tensor& out, const Tensor& a, const Tensor& b, uint64_t step, bool accumulate);

}  // namespace tandem::detail
