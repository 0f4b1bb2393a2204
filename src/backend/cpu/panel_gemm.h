// Private: float products for few rows against a matrix packed once and
// used many times (Note [Panel products] in panel_gemm.cpp). Invariant
// mode runs a device's part of the batch as micro-batches of 32 rows, and
// OpenBLAS repacks the weight matrix in every such call; here the weights
// are packed once per step and each micro-batch only streams them.
//
//   PackedPanels w;
//   pack_panels(w, weight_t, k, n, n, 1);           // B = k x n, row-major
//   panel_gemm(m, x, k, 1, w, false, out, n);      // out = x @ B
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace tandem::backend::cpu {

/// Whether this CPU runs panel products (AVX-512F); without it callers use
/// gemm(), and every run on the machine makes the same choice.
bool panel_gemm_available();

/// B (k x n) in panels of kPanelWidth columns, each panel k rows of
/// contiguous floats, the last one padded with zeros.
struct PackedPanels {
  static constexpr int64_t kPanelWidth = 32;
  int64_t k = 0;
  int64_t n = 0;
  int64_t capacity = 0;  // floats in data
  std::unique_ptr<float[], void (*)(float*)> data{nullptr, nullptr};
  int64_t panels() const { return (n + kPanelWidth - 1) / kPanelWidth; }
};

/// Packs b (element (r, c) at b[r * s0 + c * s1]) into `out`, reusing its
/// memory when the size allows.
void pack_panels(
    PackedPanels& out, const float* b, int64_t k, int64_t n, int64_t s0, int64_t s1);

/// c = a @ B (+ c when `accumulate`), for a m x k (element (i, j) at
/// a[i * a0 + j * a1]) and c m x B.n with rows ldc apart. Each element of c
/// is one fused multiply-add chain over j = 0..k-1 from zero, so a row's
/// result does not depend on m or on the other rows (then c's old value is
/// added once). The panels are spread over the calling device's share of
/// the cores. Needs panel_gemm_available().
void panel_gemm(int64_t m,
                const float* a,
                int64_t a0,
                int64_t a1,
                const PackedPanels& b,
                bool accumulate,
                float* c,
                int64_t ldc);

/// Where the pairwise tree over leaves [lo, hi) (hi - lo > 1) splits: the
/// left part is the largest power of two short of the whole, as
/// parallel::tree_split says for invariant mode's gradient tree.
int64_t leaf_tree_split(int64_t lo, int64_t hi);

/// c = the sum of a @ B over B's row ranges of `leaf_rows` (in order, adding
/// up to B.k), in the pairwise tree of parallel/gradient_tree.h over the
/// leaves: each leaf's product is the chain panel_gemm makes of it alone,
/// and the tree adds them tile by tile, so c is written once and has the
/// bits of the leaves' products summed in the tree (invariant mode's
/// weight gradient of several micro-batches). a's columns are B's rows.
void panel_gemm_tree(int64_t m,
                     const float* a,
                     int64_t a0,
                     int64_t a1,
                     const PackedPanels& b,
                     const std::vector<int64_t>& leaf_rows,
                     float* c,
                     int64_t ldc);

}  // namespace tandem::backend::cpu
