// Private: the elementwise machinery of the CUDA kernels, the device twin of
// backend/cpu/loops.h. API (stable; other kernel files build on it):
//
//   dispatch_dtype(dtype, f), dispatch_floating(dtype, op, f), data_or_null<T>(t)
//       The CPU helpers (the same host-side dtype switch), re-exported here.
//   elementwise<R, Args...>(stream, out, f, in...)
//       out[i] = f(in0[i], in1[i], ...) for every element of out, on `stream`.
//       R is out's C++ type, Args the inputs' (one per input Tensor); every
//       operand has out's shape with any strides (broadcast inputs expanded,
//       stride 0). f is a device functor or a __device__ lambda taking Args
//       and returning something convertible to R. Contiguous, vector-aligned
//       operands run a flat loop with vector loads; others an offset
//       calculator over up to kMaxDims dims after merging (more throws
//       tandem::Error).
//   for_each_flat(stream, name, n, f, p0, p1, ...)
//       For contiguous arrays p0..pk (T* or const T*) of n elements, calls
//       f(x0, x1, ...) with references to element i of each and stores the
//       values of the non-const ones back: fused in-place updates.
//   Vec<T, K>, vector_width<Types...>(), is_aligned(ptr, bytes)
//       The aligned vectors both use, for kernels that do their own loads.
//   grid_index(), grid_stride()
//       A grid-stride loop in 64 bits, launched with blocks_for(n) blocks.
//
// Both launchers return at once (nothing waits) and do nothing for n == 0.
//
// nvcc forbids extended (__device__) lambdas inside generic lambdas, so the
// lambda given to dispatch_dtype calls a named function template that holds
// the __device__ lambdas:
//
//   template <typename T>
//   void neg_typed(cudaStream_t s, const Tensor& out, const Tensor& in) {
//     elementwise<T, T>(s, out, [] __device__(T x) -> T { return -x; }, in);
//   }
//   dispatch_dtype(out.dtype(), [&]<typename T>() { neg_typed<T>(s, out, in); });
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "backend/cpu/loops.h"
#include "backend/cuda/cuda_context.h"
#include "tandem/core/error.h"
#include "tandem/core/tensor.h"

namespace tandem::backend::cuda {

using cpu::data_or_null;
using cpu::dispatch_dtype;
using cpu::dispatch_floating;

/// The most dimensions the strided path handles after merging.
inline constexpr int kMaxDims = 8;

/// K elements loaded or stored as one access.
template <typename T, int K>
struct alignas(sizeof(T) * K) Vec {
  T v[K];
};

/// Elements per vector access for operands of these types: at most 16 bytes
/// for the widest, at most 4 elements.
template <typename... Types>
constexpr int vector_width() {
  constexpr size_t widest = std::max({sizeof(Types)...});
  return static_cast<int>(std::min<size_t>(4, 16 / widest));
}

inline bool is_aligned(const void* p, size_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

/// A grid-stride loop's start and step for the calling thread, in 64 bits:
///   for (int64_t i = grid_index(); i < n; i += grid_stride()) ...
__device__ __forceinline__ int64_t grid_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_stride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

namespace loops_detail {

/// The shape of a loop over N operands after merging dims that are
/// contiguous for all of them. Index 0 is the innermost dim; strides are in
/// bytes.
template <int N>
struct Geometry {
  int ndim = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxDims][N];

  /// Byte offsets of element `linear` (row-major over the original shape).
  __device__ __forceinline__ void offsets(int64_t linear, int64_t (&off)[N]) const {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
#pragma unroll
    for (int d = 0; d < kMaxDims; ++d) {
      if (d == ndim) break;
      int64_t r = linear;  // the outermost dim takes what is left
      if (d + 1 < ndim) {
        const int64_t size = sizes[d];
        int64_t q;
        // 32-bit division is several times faster; most tensors fit.
        if (((linear | size) >> 32) == 0) {
          q = static_cast<uint32_t>(linear) / static_cast<uint32_t>(size);
        } else {
          q = linear / size;
        }
        r = linear - q * size;
        linear = q;
      }
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += r * strides[d][k];
    }
  }
};

/// The merged geometry of `ops` over `shape` (as cpu::LoopGeometry).
template <int N>
Geometry<N> make_geometry(const IntList& shape, const std::array<const Tensor*, N>& ops) {
  cpu::LoopGeometry<N> merged(shape, ops);
  const int ndim = static_cast<int>(merged.sizes.size());
  TANDEM_CHECK(ndim <= kMaxDims,
               "CUDA elementwise kernels handle at most ",
               kMaxDims,
               " non-mergeable dimensions, got ",
               ndim,
               " for shape ",
               shape,
               "; make the operands contiguous first");
  Geometry<N> g;
  g.ndim = ndim;
  for (int d = 0; d < ndim; ++d) {
    g.sizes[d] = merged.sizes[d];
    for (int k = 0; k < N; ++k) g.strides[d][k] = merged.strides[d][k];
  }
  return g;
}

template <int N>
struct Pointers {
  char* p[N];
};

template <int K, typename R, typename F, typename... Args>
__device__ __forceinline__ Vec<R, K> apply_vec(const F& f, const Vec<Args, K>&... in) {
  Vec<R, K> r;
#pragma unroll
  for (int j = 0; j < K; ++j) r.v[j] = static_cast<R>(f(in.v[j]...));
  return r;
}

// Contiguous operands: K elements per access, then the tail one by one.
template <int K, typename R, typename F, typename... Args>
__global__ void flat_kernel(int64_t n, F f, R* out, const Args*... in) {
  const int64_t chunks = n / K;
  for (int64_t c = grid_index(); c < chunks; c += grid_stride()) {
    reinterpret_cast<Vec<R, K>*>(out)[c] =
        apply_vec<K, R>(f, reinterpret_cast<const Vec<Args, K>*>(in)[c]...);
  }
  for (int64_t i = chunks * K + grid_index(); i < n; i += grid_stride()) {
    out[i] = static_cast<R>(f(in[i]...));
  }
}

template <typename R, typename... Args, typename F, size_t... I>
__device__ __forceinline__ void apply_at(const F& f,
                                         const Pointers<sizeof...(Args) + 1>& ptrs,
                                         const int64_t* off,
                                         std::index_sequence<I...>) {
  *reinterpret_cast<R*>(ptrs.p[0] + off[0]) =
      static_cast<R>(f(*reinterpret_cast<const Args*>(ptrs.p[I + 1] + off[I + 1])...));
}

// Any strides: each element's offsets from its linear index.
template <typename R, typename F, typename... Args>
__global__ void strided_kernel(int64_t n,
                               F f,
                               Pointers<sizeof...(Args) + 1> ptrs,
                               Geometry<sizeof...(Args) + 1> g) {
  constexpr int N = sizeof...(Args) + 1;
  for (int64_t i = grid_index(); i < n; i += grid_stride()) {
    int64_t off[N];
    g.offsets(i, off);
    apply_at<R, Args...>(f, ptrs, off, std::index_sequence_for<Args...>{});
  }
}

template <int K, typename T>
__device__ __forceinline__ void store_back(T* p, int64_t c, const Vec<T, K>& v) {
  reinterpret_cast<Vec<T, K>*>(p)[c] = v;
}
template <int K, typename T>
__device__ __forceinline__ void store_back(const T*, int64_t, const Vec<T, K>&) {}

template <int K, typename F, typename... T>
__global__ void flat_inplace_kernel(int64_t n, F f, T*... p) {
  const int64_t chunks = n / K;
  for (int64_t c = grid_index(); c < chunks; c += grid_stride()) {
    // One vector of each array, updated in registers, the writable ones
    // stored back.
    auto run = [&](Vec<std::remove_const_t<T>, K>... v) {
#pragma unroll
      for (int j = 0; j < K; ++j) f(v.v[j]...);
      (store_back<K>(p, c, v), ...);
    };
    run(reinterpret_cast<const Vec<std::remove_const_t<T>, K>*>(p)[c]...);
  }
  for (int64_t i = chunks * K + grid_index(); i < n; i += grid_stride()) {
    f(p[i]...);
  }
}

}  // namespace loops_detail

template <typename R, typename... Args, typename F, typename... Inputs>
void elementwise(cudaStream_t stream,
                 const Tensor& out,
                 const F& f,
                 const Inputs&... in) {
  constexpr int N = 1 + sizeof...(Args);
  static_assert(sizeof...(Args) == sizeof...(in));
  static_assert((std::is_same_v<Inputs, Tensor> && ...));
  const int64_t n = out.numel();
  if (n == 0) return;
  const std::array<const Tensor*, N> ops{&out, &in...};
  const loops_detail::Geometry<N> g = loops_detail::make_geometry<N>(out.sizes(), ops);
  const std::array<int64_t, N> sizes{static_cast<int64_t>(sizeof(R)),
                                     static_cast<int64_t>(sizeof(Args))...};
  bool flat = g.ndim == 1;
  for (int k = 0; k < N; ++k) flat &= g.strides[0][k] == sizes[k];
  constexpr int K = vector_width<R, Args...>();
  for (int k = 0; k < N; ++k) flat &= is_aligned(ops[k]->data_ptr(), sizes[k] * K);
  if (flat) {
    loops_detail::flat_kernel<K, R>
        <<<blocks_for(std::max<int64_t>(n / K, 1)), kThreads, 0, stream>>>(
            n,
            f,
            static_cast<R*>(out.data_ptr()),
            static_cast<const Args*>(in.data_ptr())...);
    TANDEM_CUDA_CHECK_LAUNCH("elementwise (contiguous)");
    return;
  }
  // Strided, broadcast or misaligned operands (a contiguous but misaligned
  // loop has one dim, so it costs no division).
  loops_detail::Pointers<N> ptrs;
  for (int k = 0; k < N; ++k) ptrs.p[k] = static_cast<char*>(ops[k]->data_ptr());
  loops_detail::strided_kernel<R, F, Args...>
      <<<blocks_for(n), kThreads, 0, stream>>>(n, f, ptrs, g);
  TANDEM_CUDA_CHECK_LAUNCH("elementwise (strided)");
}

template <typename F, typename... T>
void for_each_flat(
    cudaStream_t stream, const char* name, int64_t n, const F& f, T*... p) {
  if (n == 0) return;
  constexpr int K = vector_width<std::remove_const_t<T>...>();
  const bool aligned = (is_aligned(p, sizeof(T) * K) && ...);
  if (aligned) {
    loops_detail::flat_inplace_kernel<K>
        <<<blocks_for(std::max<int64_t>(n / K, 1)), kThreads, 0, stream>>>(n, f, p...);
  } else {
    loops_detail::flat_inplace_kernel<1>
        <<<blocks_for(n), kThreads, 0, stream>>>(n, f, p...);
  }
  TANDEM_CUDA_CHECK_LAUNCH(name);
}

}  // namespace tandem::backend::cuda
