// Private: the weights linear() packs once per step for micro-batch
// products (tandem/core/micro_batch_products.h; Note [Panel products] in
// backend/cpu/panel_gemm.cpp), kept per thread.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/cpu/panel_gemm.h"
#include "tandem/core/tensor.h"

namespace tandem::detail {

/// Micro-batches of more rows go to BLAS, which packs its operands well
/// enough for them (at 64 rows OpenBLAS's products are the faster).
constexpr int64_t kMaxPanelRows = 48;

/// Whether products of `a` by `b` run as panel products under the thread's
/// MicroBatchProducts scope: micro-batches of at most 48 rows (`rows`, the
/// largest), float32 on the CPU, with AVX-512F.
bool panel_products_for(const Tensor& a, const Tensor& b, int64_t rows);

/// The 2-D `b` (k x n, any strides) packed under `step`, from this thread's
/// cache; packed again when b's memory, its version, its layout or the
/// step differ. Valid until the thread's next call.
const backend::cpu::PackedPanels& packed_for_step(const Tensor& b, uint64_t step);

/// out = a @ b (+ out when `accumulate`), a and b 2-D float32 views, out
/// contiguous; b packed under `step` (0: packed for this call alone).
void panel_product(
    const Tensor& out, const Tensor& a, const Tensor& b, uint64_t step, bool accumulate);

/// out = the sum over a's columns and b's rows in ranges of `leaf_rows` of
/// their products, in invariant mode's tree (panel_gemm_tree); out
/// contiguous.
void panel_tree_product(const Tensor& out,
                        const Tensor& a,
                        const Tensor& b,
                        const std::vector<int64_t>& leaf_rows);

}  // namespace tandem::detail
