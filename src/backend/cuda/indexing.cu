// CUDA indexing kernels: gather and scatter_add along one dim, and
// index_select / index_add as their special case of a 1-D index repeated
// across the other dims. Operands may have any strides. The CPU twin is
// backend/cpu/indexing.cpp; ops/ has checked every index is in range.
//
// Both run the same loop over the index's shape with three operands, as on
// the CPU (see Note [Pinned views] in backend/cpu/indexing.cpp): the
// written tensor, the index, and the read one, where the operand addressed
// by the index is viewed with the index's sizes and stride 0 along `dim`,
// and the kernel adds index * stride(dim) to its offset. The offsets come
// from loops.cuh's merged geometry (loops_detail).
//
// scatter_add accumulates with atomics, so float sums of duplicate indices
// may differ from run to run in the last bits (as in PyTorch). int64 adds
// as unsigned 64-bit (the same two's complement bits); uint8 by a
// compare-and-swap on its aligned 32-bit word; bool as "or" (a store of
// true, which racing stores agree on).
#include <array>
#include <cstdint>
#include <type_traits>

#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/loops.cuh"
#include "backend/pinned_views.h"

namespace tandem::backend::cuda {
namespace {

template <typename T>
__device__ __forceinline__ void atomic_add(T* to, T v) {
  if constexpr (std::is_same_v<T, bool>) {
    if (v) *to = true;
  } else if constexpr (std::is_same_v<T, uint8_t>) {
    const auto address = reinterpret_cast<uintptr_t>(to);
    auto* word = reinterpret_cast<unsigned int*>(address & ~uintptr_t{3});
    const unsigned shift = static_cast<unsigned>(address & 3) * 8;
    unsigned old = *word, assumed = 0;
    do {
      assumed = old;
      const auto sum = static_cast<uint8_t>((assumed >> shift) + v);
      const unsigned updated = (assumed & ~(0xffu << shift)) | (unsigned{sum} << shift);
      old = atomicCAS(word, assumed, updated);
    } while (old != assumed);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(to),
              static_cast<unsigned long long>(v));
  } else {
    atomicAdd(to, v);  // float, double
  }
}

// Operand 0 is written, 1 is the index, 2 is read; `step` is the bytes
// between neighbours along `dim` of the pinned operand (2 for gather, 0 for
// scatter_add).
template <typename T, bool Scatter>
__global__ void index_kernel(int64_t n,
                             loops_detail::Pointers<3> p,
                             loops_detail::Geometry<3> g,
                             int64_t step) {
  for (int64_t i = grid_index(); i < n; i += grid_stride()) {
    int64_t off[3];
    g.offsets(i, off);
    const int64_t shift = *reinterpret_cast<const int64_t*>(p.p[1] + off[1]) * step;
    if constexpr (Scatter) {
      atomic_add(reinterpret_cast<T*>(p.p[0] + off[0] + shift),
                 *reinterpret_cast<const T*>(p.p[2] + off[2]));
    } else {
      *reinterpret_cast<T*>(p.p[0] + off[0]) =
          *reinterpret_cast<const T*>(p.p[2] + off[2] + shift);
    }
  }
}

// Runs index_kernel over the index's shape. One of `written` and `read` is
// the pinned view of `target`, the tensor the index addresses.
template <bool Scatter>
void launch(const Tensor& written,
            const Tensor& index,
            const Tensor& read,
            const Tensor& target,
            int64_t dim,
            cudaStream_t stream) {
  const int64_t n = index.numel();
  if (n == 0) return;
  const std::array<const Tensor*, 3> ops{&written, &index, &read};
  const loops_detail::Geometry<3> g = loops_detail::make_geometry<3>(index.sizes(), ops);
  loops_detail::Pointers<3> ptrs;
  for (int k = 0; k < 3; ++k) ptrs.p[k] = static_cast<char*>(ops[k]->data_ptr());
  const auto step = target.stride(dim) * static_cast<int64_t>(target.element_size());
  dispatch_dtype(target.dtype(), [&]<typename T>() {
    index_kernel<T, Scatter><<<blocks_for(n), kThreads, 0, stream>>>(n, ptrs, g, step);
  });
  TANDEM_CUDA_CHECK_LAUNCH(Scatter ? "scatter_add" : "gather");
}

}  // namespace

void gather(const Tensor& out, const Tensor& in, int64_t dim, const Tensor& index) {
  cudaStream_t stream = prepare(out);
  launch<false>(out, index, pinned(in, index.sizes(), dim), in, dim, stream);
}

void scatter_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  cudaStream_t stream = prepare(out);
  launch<true>(pinned(out, index.sizes(), dim), index, src, out, dim, stream);
}

void index_select(const Tensor& out, const Tensor& in, int64_t dim, const Tensor& index) {
  gather(out, in, dim, repeated_index(index, out.sizes(), dim));
}

void index_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  scatter_add(out, dim, repeated_index(index, src.sizes(), dim), src);
}

}  // namespace tandem::backend::cuda
