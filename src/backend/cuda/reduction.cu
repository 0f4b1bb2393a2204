// CUDA reduction kernel: sum, max/min (with indices) and argmax/argmin over
// one dim of a contiguous tensor, seen as [outer, R, inner] (the CPU
// kernel's contract and results; see backend/cpu/reduction.cpp).
//
// Two kernels cover the geometries:
//   - inner == 1 (rows of R contiguous elements): a warp per row for short
//     rows, a block per row for long ones;
//   - inner > 1: a block tile of bx columns (consecutive, so loads coalesce)
//     by `by` threads that split R, combined through shared memory.
// When [outer, inner] alone cannot fill the GPU (the full reduction of a
// large tensor is R = numel, outer = inner = 1), R is split into chunks:
// pass 1 writes one partial per (outer, chunk, inner) to scratch memory,
// pass 2 reduces the partials with the same kernels. No atomics, so results
// are deterministic.
//
// Accumulation: float32 sums accumulate in double, like the CPU kernel (the
// kernels are bound by memory bandwidth, and the H200's fp64 rate leaves the
// adds free); integral and bool sums in int64. Max/min carry (value, index)
// pairs combined by better_of (block_reduce.cuh): NaN wins, ties keep the
// first index, which is exactly the CPU kernel's left-to-right choice.
#include <algorithm>
#include <limits>
#include <type_traits>

#include "backend/cuda/block_reduce.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/loops.cuh"
#include "backend/reduction_shape.h"

namespace tandem::backend::cuda {
namespace {

// ---- what is reduced: an accumulator type with identity, lift, combine ----

template <typename T>
struct SumOp {
  using Acc = sum_acc_t<T>;
  __device__ static Acc identity() { return Acc(0); }
  __device__ static Acc lift(T v, int64_t) { return static_cast<Acc>(v); }
  __device__ static Acc combine(Acc a, Acc b) { return a + b; }
};

template <typename T, bool IsMax>
struct ExtremumOp {
  using Acc = ValueIndex<T>;
  // The worst value at an index past every real one: any element beats it
  // or ties with it and wins on the index.
  __device__ static Acc identity() {
    using L = std::numeric_limits<T>;
    constexpr int64_t kPastEnd = std::numeric_limits<int64_t>::max();
    if constexpr (std::is_floating_point_v<T>) {
      return {IsMax ? -L::infinity() : L::infinity(), kPastEnd};
    } else {
      return {IsMax ? L::lowest() : L::max(), kPastEnd};
    }
  }
  __device__ static Acc lift(T v, int64_t r) { return {v, r}; }
  __device__ static Acc combine(Acc a, Acc b) { return better_of<IsMax>(a, b); }
};

// ---- where values come from and go to ----
// A Source maps (element offset, index along R) to an accumulator; a Sink
// takes the result for (outer o, chunk s, inner i).

template <typename Op, typename T>
struct InputSource {
  const T* in;
  __device__ typename Op::Acc operator()(int64_t offset, int64_t r) const {
    return Op::lift(in[offset], r);
  }
};

template <typename Acc>
struct PartialSource {
  const Acc* partial;
  __device__ Acc operator()(int64_t offset, int64_t) const { return partial[offset]; }
};

template <typename Acc>
struct PartialSink {
  Acc* partial;
  int64_t chunks;
  __device__ void operator()(
      int64_t o, int64_t s, int64_t i, int64_t inner, Acc a) const {
    partial[(o * chunks + s) * inner + i] = a;
  }
};

template <typename O, typename Acc>
struct SumSink {
  O* out;
  __device__ void operator()(int64_t o, int64_t, int64_t i, int64_t inner, Acc a) const {
    out[o * inner + i] = static_cast<O>(a);
  }
};

template <typename T>
struct ExtremumSink {
  T* values;         // null: not wanted
  int64_t* indices;  // null: not wanted
  __device__ void operator()(
      int64_t o, int64_t, int64_t i, int64_t inner, ValueIndex<T> a) const {
    if (values) values[o * inner + i] = a.value;
    if (indices) indices[o * inner + i] = a.index;
  }
};

// ---- kernels ----

// Combines src(base + r * inner, r) for r in [r, end) stepping by `step`.
// kUnroll accumulators keep kUnroll loads in flight per thread; they are
// combined in a fixed tree.
constexpr int kUnroll = 8;

template <typename Op, typename Source>
__device__ __forceinline__ typename Op::Acc accumulate(const Source& src,
                                                       int64_t base,
                                                       int64_t inner,
                                                       int64_t r,
                                                       int64_t end,
                                                       int64_t step) {
  using Acc = typename Op::Acc;
  Acc acc[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) acc[u] = Op::identity();
  for (; r + (kUnroll - 1) * step < end; r += kUnroll * step) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t at = r + u * step;
      acc[u] = Op::combine(acc[u], src(base + at * inner, at));
    }
  }
  for (; r < end; r += step) acc[0] = Op::combine(acc[0], src(base + r * inner, r));
#pragma unroll
  for (int width = kUnroll / 2; width > 0; width /= 2) {
#pragma unroll
    for (int u = 0; u < width; ++u) acc[u] = Op::combine(acc[u], acc[u + width]);
  }
  return acc[0];
}

// inner == 1. Work item = (row, chunk); a block (BlockPerRow) or a warp
// reduces each item. Grid-stride over items, uniform per block / warp.
template <typename Op, bool BlockPerRow, typename Source, typename Sink>
__global__ void reduce_rows_kernel(
    Source src, Sink sink, int64_t rows, int64_t R, int64_t chunks, int64_t chunk) {
  using Acc = typename Op::Acc;
  __shared__ Acc scratch[kWarpSize];
  const int64_t groups_per_block = BlockPerRow ? 1 : blockDim.x / kWarpSize;
  const int64_t group = BlockPerRow ? 0 : threadIdx.x / kWarpSize;
  const int64_t lane = BlockPerRow ? threadIdx.x : threadIdx.x % kWarpSize;
  const int64_t step = BlockPerRow ? blockDim.x : kWarpSize;
  const int64_t items = rows * chunks;
  for (int64_t item = blockIdx.x * groups_per_block + group; item < items;
       item += static_cast<int64_t>(gridDim.x) * groups_per_block) {
    const int64_t row = item / chunks, s = item % chunks;
    const int64_t begin = s * chunk, end = min(R, begin + chunk);
    Acc acc = accumulate<Op>(src, row * R, 1, begin + lane, end, step);
    const auto combine = [](Acc a, Acc b) { return Op::combine(a, b); };
    if constexpr (BlockPerRow) {
      acc = block_reduce(acc, combine, scratch);
    } else {
      acc = warp_reduce(acc, combine);
    }
    if (lane == 0) sink(row, s, 0, 1, acc);
  }
}

// inner > 1. Block (bx, by), by a power of two: column i = tile * bx + x,
// rows r = begin + y stepping by `by`, then a tree over y; blockIdx.y is
// the chunk of R.
template <typename Op, typename Source, typename Sink>
__global__ void reduce_inner_kernel(
    Source src, Sink sink, int64_t outer, int64_t R, int64_t inner, int64_t chunk) {
  using Acc = typename Op::Acc;
  extern __shared__ __align__(16) unsigned char inner_scratch[];  // by * bx Acc
  Acc* scratch = reinterpret_cast<Acc*>(inner_scratch);
  const int64_t bx = blockDim.x, by = blockDim.y, x = threadIdx.x, y = threadIdx.y;
  const int64_t tiles_per_outer = (inner + bx - 1) / bx;
  const int64_t tiles = outer * tiles_per_outer;
  const int64_t s = blockIdx.y;
  const int64_t begin = s * chunk, end = min(R, begin + chunk);
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t o = tile / tiles_per_outer;
    const int64_t i = (tile % tiles_per_outer) * bx + x;
    Acc acc = Op::identity();
    if (i < inner)
      acc = accumulate<Op>(src, o * R * inner + i, inner, begin + y, end, by);
    scratch[y * bx + x] = acc;
    __syncthreads();
    for (int64_t half = by / 2; half > 0; half /= 2) {
      if (y < half) {
        scratch[y * bx + x] =
            Op::combine(scratch[y * bx + x], scratch[(y + half) * bx + x]);
      }
      __syncthreads();
    }
    if (y == 0 && i < inner) sink(o, s, i, inner, scratch[x]);
    __syncthreads();  // the next tile overwrites scratch
  }
}

// ---- launch planning ----

// Rows at least this long get a block each; shorter ones a warp.
constexpr int64_t kBlockRowMin = 512;
// Splitting R stops at chunks of about this many elements per block.
constexpr int64_t kMinChunkElements = 4096;
constexpr int kMaxGrid = 65535 * 32;

int multiprocessors(Device device) {
  int count = 0;
  TANDEM_CUDA_CHECK(
      cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device.index()));
  return count;
}

// Block shape of the inner kernel: up to 32 consecutive columns, the rest
// of 256 threads along R (a power of two for the tree).
dim3 inner_block(int64_t inner) {
  const int64_t bx = std::min<int64_t>(inner, kWarpSize);
  int64_t by = 1;
  while (by * 2 * bx <= kThreads) by *= 2;
  return dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by));
}

// Blocks the pass launches without splitting R.
int64_t unsplit_blocks(const ReductionShape& g) {
  if (g.inner == 1) {
    return g.reduced >= kBlockRowMin ? g.outer
                                     : (g.outer * kWarpSize + kThreads - 1) / kThreads;
  }
  const int64_t bx = inner_block(g.inner).x;
  return g.outer * ((g.inner + bx - 1) / bx);
}

// How many chunks to split R into: enough blocks for every multiprocessor
// to hold several, with chunks no smaller than kMinChunkElements per block.
int64_t chunk_count(const ReductionShape& g, Device device) {
  const int64_t target = 8LL * multiprocessors(device);
  const int64_t blocks = unsplit_blocks(g);
  if (blocks >= target) return 1;
  const int64_t columns = g.inner == 1 ? 1 : inner_block(g.inner).x;
  const int64_t min_rows = std::max<int64_t>(1, kMinChunkElements / columns);
  const int64_t by_size = g.reduced / min_rows;
  return std::clamp<int64_t>(std::min((target + blocks - 1) / blocks, by_size), 1, 65535);
}

// One pass: reduce R in `chunks` chunks of `chunk` (chunks == 1: all of R).
template <typename Op, typename Source, typename Sink>
void launch_pass(Source src,
                 Sink sink,
                 const ReductionShape& g,
                 int64_t chunks,
                 int64_t chunk,
                 cudaStream_t stream) {
  using Acc = typename Op::Acc;
  if (g.inner == 1) {
    const int64_t items = g.outer * chunks;
    if (chunk >= kBlockRowMin) {
      const auto blocks = static_cast<unsigned>(std::min<int64_t>(items, kMaxGrid));
      reduce_rows_kernel<Op, true>
          <<<blocks, kThreads, 0, stream>>>(src, sink, g.outer, g.reduced, chunks, chunk);
    } else {
      reduce_rows_kernel<Op, false>
          <<<blocks_for(items * kWarpSize), kThreads, 0, stream>>>(
              src, sink, g.outer, g.reduced, chunks, chunk);
    }
    TANDEM_CUDA_CHECK_LAUNCH("reduce_rows_kernel");
    return;
  }
  const dim3 block = inner_block(g.inner);
  const int64_t tiles = g.outer * ((g.inner + block.x - 1) / block.x);
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(tiles, kMaxGrid)),
                  static_cast<unsigned>(chunks));
  const size_t smem = sizeof(Acc) * block.x * block.y;
  reduce_inner_kernel<Op>
      <<<grid, block, smem, stream>>>(src, sink, g.outer, g.reduced, g.inner, chunk);
  TANDEM_CUDA_CHECK_LAUNCH("reduce_inner_kernel");
}

// Reduces `in` with Op into `sink`, in one pass or two (see the top).
template <typename Op, typename T, typename Sink>
void run(
    const T* in, Sink sink, const ReductionShape& g, Device device, cudaStream_t stream) {
  using Acc = typename Op::Acc;
  const InputSource<Op, T> src{in};
  int64_t chunks = chunk_count(g, device);
  if (chunks == 1) {
    launch_pass<Op>(src, sink, g, 1, g.reduced, stream);
    return;
  }
  const int64_t chunk = (g.reduced + chunks - 1) / chunks;
  chunks = (g.reduced + chunk - 1) / chunk;
  // Freed in stream order when this function returns, after pass 2 is queued.
  const Storage scratch = make_storage(sizeof(Acc) * g.outer * chunks * g.inner, device);
  Acc* partial = static_cast<Acc*>(scratch->data());
  launch_pass<Op>(src, PartialSink<Acc>{partial, chunks}, g, chunks, chunk, stream);
  const ReductionShape partials{g.outer, chunks, g.inner};
  launch_pass<Op>(PartialSource<Acc>{partial}, sink, partials, 1, chunks, stream);
}

template <typename T>
void sum_typed(const Tensor& out,
               const Tensor& in,
               const ReductionShape& g,
               cudaStream_t stream) {
  using O = sum_out_t<T>;
  run<SumOp<T>>(in.data_ptr<T>(),
                SumSink<O, sum_acc_t<T>>{out.data_ptr<O>()},
                g,
                in.device(),
                stream);
}

template <typename T, bool IsMax>
void extremum_typed(const Tensor& values,
                    const Tensor& indices,
                    const Tensor& in,
                    const ReductionShape& g,
                    cudaStream_t stream) {
  run<ExtremumOp<T, IsMax>>(
      in.data_ptr<T>(),
      ExtremumSink<T>{data_or_null<T>(values), data_or_null<int64_t>(indices)},
      g,
      in.device(),
      stream);
}

}  // namespace

void reduce_dim(ReduceOp op,
                const Tensor& out,
                const Tensor& indices,
                const Tensor& in,
                int64_t dim) {
  cudaStream_t stream = prepare(out);
  TANDEM_INTERNAL_ASSERT_DEBUG_ONLY(in.is_contiguous() && out.is_contiguous(),
                                    "reduce_dim: expected contiguous operands");
  const ReductionShape g = reduction_shape(in, dim);
  if (g.outer * g.inner == 0) return;
  if (op == ReduceOp::Sum) {
    dispatch_dtype(in.dtype(), [&]<typename T>() { sum_typed<T>(out, in, g, stream); });
    return;
  }
  TANDEM_INTERNAL_ASSERT(g.reduced > 0, "reduce_dim: max/min over an empty dim");
  const bool arg = op == ReduceOp::ArgMax || op == ReduceOp::ArgMin;
  const Tensor values = arg ? Tensor() : out;
  const Tensor where = arg ? out : indices;
  dispatch_dtype(in.dtype(), [&]<typename T>() {
    if (op == ReduceOp::Max || op == ReduceOp::ArgMax) {
      extremum_typed<T, true>(values, where, in, g, stream);
    } else {
      extremum_typed<T, false>(values, where, in, g, stream);
    }
  });
}

}  // namespace tandem::backend::cuda
