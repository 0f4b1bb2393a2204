// Private: warp and block reductions built on register shuffles, shared by
// the CUDA kernels that combine values across threads (reduction.cu,
// softmax.cu, nll_loss.cu, batch_norm.cu, layer_norm.cu).
//
// API (all __device__, namespace tandem::backend::cuda):
//
//   T shfl_xor(T v, int mask)
//     __shfl_xor_sync over the full warp for arithmetic T (bool and uint8_t
//     travel as int). For a struct, declare an overload in the struct's
//     namespace; warp_reduce finds it by argument-dependent lookup. Inside
//     such an overload, shuffle the members with cuda::shfl_xor (an overload
//     declared in a nested namespace hides the arithmetic ones).
//
//   T warp_reduce<Width = 32>(T v, Op op)
//     Butterfly reduction within each group of Width consecutive lanes
//     (Width a power of two <= 32); every lane of a group gets the group's
//     result. All 32 lanes of the warp must call it (full mask).
//   T warp_sum<Width = 32>(T v)      warp_reduce with +.
//
//   T block_reduce(T v, Op op, T* scratch)
//     Reduction over the whole block; every thread gets the result.
//     blockDim.x must be a multiple of 32 (at most 1024), blockDim.y ==
//     blockDim.z == 1, and every thread of the block must call it.
//     `scratch` is __shared__ memory for at least 32 T; it may be reused by
//     the next block_reduce call right away (the function synchronises
//     before writing it).
//   T block_sum(T v, T* scratch)     block_reduce with +.
//
//   ValueIndex<T>, better_of<IsMax>(a, b)
//     A (value, index) pair and the combine for max/min with indices:
//     NaN beats every number, ties (and two NaNs) keep the smaller index,
//     so a tree reduction picks the same element as a left-to-right scan
//     that keeps the first maximum and the first NaN (the CPU kernel).
//
// `op` is any callable (a, b) -> T; it must be associative and
// commutative up to the rounding the caller accepts. The order of the
// combinations is fixed by the block size, so results are deterministic.
//
//   __shared__ float scratch[32];
//   float total = block_sum(partial, scratch);
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace tandem::backend::cuda {

inline constexpr unsigned kFullMask = 0xffffffffu;
inline constexpr int kWarpSize = 32;

template <typename T>
requires std::is_arithmetic_v<T> __device__ __forceinline__ T shfl_xor(T v, int mask) {
  if constexpr (sizeof(T) < sizeof(int)) {
    return static_cast<T>(__shfl_xor_sync(kFullMask, static_cast<int>(v), mask));
  } else {
    return __shfl_xor_sync(kFullMask, v, mask);
  }
}

template <int Width = kWarpSize, typename T, typename Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
  static_assert(Width > 0 && Width <= kWarpSize && (Width & (Width - 1)) == 0,
                "warp_reduce: Width must be a power of two <= 32");
#pragma unroll
  for (int mask = Width / 2; mask > 0; mask /= 2) v = op(v, shfl_xor(v, mask));
  return v;
}

template <int Width = kWarpSize, typename T>
__device__ __forceinline__ T warp_sum(T v) {
  return warp_reduce<Width>(v, [](T a, T b) { return a + b; });
}

template <typename T, typename Op>
__device__ __forceinline__ T block_reduce(T v, Op op, T* scratch) {
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
  const int warps = static_cast<int>(blockDim.x) / kWarpSize;
  v = warp_reduce(v, op);
  if (warps == 1) return v;
  __syncthreads();  // a previous call may still be reading scratch
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  // Every thread combines the per-warp results in the same order
  // (broadcast reads from shared memory), so all agree bit for bit.
  T total = scratch[0];
  for (int w = 1; w < warps; ++w) total = op(total, scratch[w]);
  return total;
}

template <typename T>
__device__ __forceinline__ T block_sum(T v, T* scratch) {
  return block_reduce(
      v, [](T a, T b) { return a + b; }, scratch);
}

/// A candidate for max/min with its index along the reduced dim.
template <typename T>
struct ValueIndex {
  T value;
  int64_t index;
};

template <typename T>
__device__ __forceinline__ ValueIndex<T> shfl_xor(ValueIndex<T> v, int mask) {
  return {shfl_xor(v.value, mask), shfl_xor(v.index, mask)};
}

template <typename T>
__device__ __forceinline__ bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return v != v;
  } else {
    return false;
  }
}

/// The winner of two candidates for max (IsMax) or min: see the API above.
template <bool IsMax, typename T>
__device__ __forceinline__ ValueIndex<T> better_of(ValueIndex<T> a, ValueIndex<T> b) {
  const bool a_nan = is_nan(a.value), b_nan = is_nan(b.value);
  if (a_nan != b_nan) return a_nan ? a : b;
  if (!a_nan && a.value != b.value) {
    return (IsMax ? a.value > b.value : a.value < b.value) ? a : b;
  }
  return a.index <= b.index ? a : b;
}

}  // namespace tandem::backend::cuda
