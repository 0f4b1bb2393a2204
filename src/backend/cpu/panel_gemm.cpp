// Note [Panel products]
// ~~~~~~~~~~~~~~~~~~~~~
// A product of m rows by a k x n matrix B costs OpenBLAS a pass over B to
// pack it, whatever m is. With m = 32 (an invariant-mode micro-batch) the
// packing of a 1024 x 1024 weight matrix takes about a quarter of the call,
// and a step repacks it once per micro-batch, forward and backward.
// Packing B once into panels of 32 columns (k rows of 32 contiguous floats
// each) lets every later product stream it: the kernel keeps a tile of
// 12 rows x 32 columns of c in 24 AVX-512 registers, and for each j
// broadcasts a(i, j) of the 12 rows and multiplies it into the panel's
// row j. Measured on this project's 2-core AMD EPYC VM, one core, m = 32,
// k = n = 1024: OpenBLAS 0.99 ms per product, a panel product 0.82 ms plus
// 0.22 ms to pack once.
//
// Each element of c is one chain of fused multiply-adds over j in order,
// from zero: no tile shape, row count, panel split or thread count changes
// its bits. (c's old value, when accumulating, is added once at the end.)
#include "backend/cpu/panel_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tandem/core/cpu_budget.h"
#include "tandem/core/error.h"

namespace tandem::backend::cpu {
namespace {

constexpr int64_t kWidth = PackedPanels::kPanelWidth;
constexpr int kTileRows = 12;
// Outputs from this size on are written past the caches, with no read for
// ownership: a weight gradient (4 MB for 1024 x 1024 from 32 rows), which
// only the sum after backward reads again. Measured: 0.85 ms instead of
// 1.32 ms with ordinary stores (OpenBLAS: 1.13 ms).
constexpr int64_t kStreamBytes = 1 << 21;
// Multiply-adds below which a range of panels is not worth a thread.
constexpr int64_t kMinRangeWork = 1 << 20;

void free_floats(float* p) { std::free(p); }

// The masks of the panel's two 16-float halves that hold its `width`
// columns.
struct HalfMasks {
  __mmask16 low;
  __mmask16 high;
};

HalfMasks masks_for(int64_t width) {
  const auto bits = [](int64_t count) {
    return count >= 16 ? __mmask16(0xFFFF)
                       : static_cast<__mmask16>((1u << std::max<int64_t>(count, 0)) - 1);
  };
  return {bits(width), bits(width - 16)};
}

// c[rows x width] (+)= a[rows x k] @ panel[k x 32], ROWS rows at a time.
template <int ROWS>
__attribute__((target("avx512f"))) void tile(const float* a,
                                             int64_t a0,
                                             int64_t a1,
                                             const float* panel,
                                             int64_t k,
                                             HalfMasks masks,
                                             bool accumulate,
                                             bool stream,
                                             float* c,
                                             int64_t ldc) {
  __m512 low[ROWS];
  __m512 high[ROWS];
  for (int i = 0; i < ROWS; ++i) low[i] = high[i] = _mm512_setzero_ps();
  for (int64_t j = 0; j < k; ++j) {
    const __m512 b_low = _mm512_load_ps(panel + j * kWidth);
    const __m512 b_high = _mm512_load_ps(panel + j * kWidth + 16);
    const float* aj = a + j * a1;
    for (int i = 0; i < ROWS; ++i) {
      const __m512 x = _mm512_set1_ps(aj[i * a0]);
      low[i] = _mm512_fmadd_ps(x, b_low, low[i]);
      high[i] = _mm512_fmadd_ps(x, b_high, high[i]);
    }
  }
  for (int i = 0; i < ROWS; ++i) {
    float* row = c + i * ldc;
    if (accumulate) {
      low[i] = _mm512_add_ps(low[i], _mm512_maskz_loadu_ps(masks.low, row));
      high[i] = _mm512_add_ps(high[i], _mm512_maskz_loadu_ps(masks.high, row + 16));
    }
    if (stream) {
      _mm512_stream_ps(row, low[i]);
      _mm512_stream_ps(row + 16, high[i]);
    } else {
      _mm512_mask_storeu_ps(row, masks.low, low[i]);
      _mm512_mask_storeu_ps(row + 16, masks.high, high[i]);
    }
  }
}

// Orders the streamed stores before what follows (the range's end).
__attribute__((target("avx512f"))) void store_fence() { _mm_sfence(); }

// Rows [i, i + ROWS) against panel p.
template <int ROWS>
void rows_at(int64_t i,
             const float* a,
             int64_t a0,
             int64_t a1,
             const PackedPanels& b,
             int64_t p,
             bool accumulate,
             bool streaming,
             float* c,
             int64_t ldc) {
  const int64_t width = std::min(kWidth, b.n - p * kWidth);
  float* out = c + i * ldc + p * kWidth;
  // Streamed only in whole, aligned panels.
  const bool stream = streaming && width == kWidth &&
                      reinterpret_cast<uintptr_t>(out) % 64 == 0 && ldc % 16 == 0;
  tile<ROWS>(a + i * a0,
             a0,
             a1,
             b.data.get() + p * b.k * kWidth,
             b.k,
             masks_for(width),
             accumulate,
             stream,
             out,
             ldc);
}

// Calls at.template operator()<ROWS>(i) for rows [0, m) in tiles of
// kTileRows rows, then of 4, then of 1.
template <typename At>
void over_row_tiles(int64_t m, const At& at) {
  int64_t i = 0;
  for (; i + kTileRows <= m; i += kTileRows) at.template operator()<kTileRows>(i);
  for (; i + 4 <= m; i += 4) at.template operator()<4>(i);
  for (; i < m; ++i) at.template operator()<1>(i);
}

constexpr int64_t kTileFloats = kTileRows * kWidth;

// out[ROWS x width] += below[ROWS x 32] (rows kWidth apart).
template <int ROWS>
__attribute__((target("avx512f"))) void add_tile(float* out,
                                                 int64_t out_ld,
                                                 HalfMasks masks,
                                                 const float* below) {
  for (int r = 0; r < ROWS; ++r) {
    float* row = out + r * out_ld;
    const float* add = below + r * kWidth;
    _mm512_mask_storeu_ps(
        row,
        masks.low,
        _mm512_add_ps(_mm512_maskz_loadu_ps(masks.low, row), _mm512_load_ps(add)));
    _mm512_mask_storeu_ps(row + 16,
                          masks.high,
                          _mm512_add_ps(_mm512_maskz_loadu_ps(masks.high, row + 16),
                                        _mm512_load_ps(add + 16)));
  }
}

// out (ROWS x the masks' width, rows out_ld apart) = the tree's sum over
// leaves [lo, hi) of a's rows x panel's rows within each leaf (with
// `accumulate`, added to out's values instead). `below` (64-byte aligned)
// has room for a tile per deeper level. A right child that is one leaf is
// added by its own product (its chain, then plus the left sum, the same
// one addition).
template <int ROWS>
void tree_tile(const float* a,
               int64_t a0,
               int64_t a1,
               const float* panel,
               const int64_t* offsets,
               int64_t lo,
               int64_t hi,
               bool accumulate,
               float* out,
               int64_t out_ld,
               HalfMasks masks,
               float* below) {
  if (hi - lo == 1) {
    const int64_t k0 = offsets[lo];
    tile<ROWS>(a + k0 * a1,
               a0,
               a1,
               panel + k0 * kWidth,
               offsets[hi] - k0,
               masks,
               accumulate,
               /*stream=*/false,
               out,
               out_ld);
    return;
  }
  TANDEM_INTERNAL_ASSERT(!accumulate, "tree_tile: only a leaf adds to its output");
  const int64_t mid = leaf_tree_split(lo, hi);
  tree_tile<ROWS>(a, a0, a1, panel, offsets, lo, mid, false, out, out_ld, masks, below);
  if (hi - mid == 1) {
    tree_tile<ROWS>(a, a0, a1, panel, offsets, mid, hi, true, out, out_ld, masks, below);
    return;
  }
  tree_tile<ROWS>(a,
                  a0,
                  a1,
                  panel,
                  offsets,
                  mid,
                  hi,
                  false,
                  below,
                  kWidth,
                  masks_for(kWidth),
                  below + kTileFloats);
  add_tile<ROWS>(out, out_ld, masks, below);
}

// Rows [i, i + ROWS) of c, panel p, summed over the leaves in the tree.
template <int ROWS>
void tree_rows_at(int64_t i,
                  const float* a,
                  int64_t a0,
                  int64_t a1,
                  const PackedPanels& b,
                  const int64_t* offsets,
                  int64_t leaves,
                  int64_t p,
                  float* scratch,
                  float* c,
                  int64_t ldc) {
  tree_tile<ROWS>(a + i * a0,
                  a0,
                  a1,
                  b.data.get() + p * b.k * kWidth,
                  offsets,
                  0,
                  leaves,
                  false,
                  c + i * ldc + p * kWidth,
                  ldc,
                  masks_for(std::min(kWidth, b.n - p * kWidth)),
                  scratch);
}

}  // namespace

int64_t leaf_tree_split(int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(hi - lo)) >> 1);
}

bool panel_gemm_available() {
  static const bool available = __builtin_cpu_supports("avx512f") != 0;
  return available;
}

void pack_panels(
    PackedPanels& out, const float* b, int64_t k, int64_t n, int64_t s0, int64_t s1) {
  const int64_t panels = (n + kWidth - 1) / kWidth;
  const int64_t floats = std::max<int64_t>(panels * k * kWidth, 16);
  if (out.capacity < floats) {
    const auto bytes = static_cast<size_t>((floats * 4 + 63) / 64 * 64);
    auto* memory = static_cast<float*>(std::aligned_alloc(64, bytes));
    TANDEM_CHECK(memory != nullptr, "pack_panels: out of memory for ", bytes, " bytes");
    out.data = {memory, free_floats};
    out.capacity = floats;
  }
  out.k = k;
  out.n = n;
  float* data = out.data.get();
  parallel_for(0,
               panels,
               std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(k * kWidth, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t p = begin; p < end; ++p) {
                   float* panel = data + p * k * kWidth;
                   const int64_t width = std::min(kWidth, n - p * kWidth);
                   if (width < kWidth) std::memset(panel, 0, sizeof(float) * k * kWidth);
                   const float* first = b + p * kWidth * s1;
                   if (s1 == 1) {  // rows of b are contiguous
                     for (int64_t r = 0; r < k; ++r) {
                       std::memcpy(
                           panel + r * kWidth, first + r * s0, sizeof(float) * width);
                     }
                     continue;
                   }
                   for (int64_t col = 0; col < width; ++col) {
                     const float* source = first + col * s1;
                     for (int64_t r = 0; r < k; ++r)
                       panel[r * kWidth + col] = source[r * s0];
                   }
                 }
               });
}

void panel_gemm(int64_t m,
                const float* a,
                int64_t a0,
                int64_t a1,
                const PackedPanels& b,
                bool accumulate,
                float* c,
                int64_t ldc) {
  TANDEM_INTERNAL_ASSERT(panel_gemm_available(), "panel_gemm: no AVX-512F on this CPU");
  if (m == 0 || b.n == 0) return;
  // A panel at a time, down every row: each panel is read from memory once.
  const int64_t work = std::max<int64_t>(m * b.k * kWidth, 1);
  const bool streaming = !accumulate && m * ldc * 4 >= kStreamBytes;
  parallel_for(0,
               b.panels(),
               std::max<int64_t>(1, kMinRangeWork / work),
               [&](int64_t begin, int64_t end) {
                 for (int64_t p = begin; p < end; ++p) {
                   over_row_tiles(m, [&]<int ROWS>(int64_t i) {
                     rows_at<ROWS>(i, a, a0, a1, b, p, accumulate, streaming, c, ldc);
                   });
                 }
                 if (streaming) store_fence();
               });
}

void panel_gemm_tree(int64_t m,
                     const float* a,
                     int64_t a0,
                     int64_t a1,
                     const PackedPanels& b,
                     const std::vector<int64_t>& leaf_rows,
                     float* c,
                     int64_t ldc) {
  TANDEM_INTERNAL_ASSERT(panel_gemm_available(),
                         "panel_gemm_tree: no AVX-512F on this CPU");
  const auto leaves = static_cast<int64_t>(leaf_rows.size());
  std::vector<int64_t> offsets{0};
  for (int64_t rows : leaf_rows) offsets.push_back(offsets.back() + rows);
  TANDEM_INTERNAL_ASSERT(leaves > 0 && offsets.back() == b.k,
                         "panel_gemm_tree: the leaves' rows do not add up to B's ",
                         b.k);
  if (m == 0 || b.n == 0) return;
  // A tile per level of the tree below the top (the top is written in c).
  const auto levels =
      static_cast<size_t>(std::bit_width(static_cast<uint64_t>(leaves)) + 1);
  const int64_t work = std::max<int64_t>(m * b.k * kWidth, 1);
  parallel_for(0,
               b.panels(),
               std::max<int64_t>(1, kMinRangeWork / work),
               [&](int64_t begin, int64_t end) {
                 // 64-byte aligned tiles, one per level below the top.
                 std::vector<float> memory(levels * kTileFloats + 16);
                 float* scratch =
                     memory.data() +
                     (16 - reinterpret_cast<uintptr_t>(memory.data()) / 4 % 16) % 16;
                 for (int64_t p = begin; p < end; ++p) {
                   over_row_tiles(m, [&]<int ROWS>(int64_t i) {
                     tree_rows_at<ROWS>(
                         i, a, a0, a1, b, offsets.data(), leaves, p, scratch, c, ldc);
                   });
                 }
               });
}

}  // namespace tandem::backend::cpu
