// CUDA layer normalisation, forward and backward.
//
// Accumulation: every sum (statistics and the sums behind gradients) is
// accumulated in double, per thread and in the block's tree, also for
// float32, as the CPU kernels do (backend/cpu/normalization.cpp). The
// kernels are bandwidth-bound and H200's fp64 rate keeps the double adds
// off the critical path, while a float32 sum over a channel of a large
// batch would lose about 1e-4 relative accuracy. Sums are cut into pieces
// that depend on the shape alone and combined in a fixed order, so results
// do not vary from run to run.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "backend/cuda/block_reduce.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/loops.cuh"
#include "backend/cuda/partial_sums.cuh"

namespace tandem::backend::cuda {
namespace {

// ---- layer norm ----

// Threads per row of n elements: at least 4 elements each, 32 to 512.
int row_threads(int64_t n) {
  int threads = kWarpSize;
  while (threads < 512 && threads * int64_t{4} < n) threads *= 2;
  return threads;
}

// One block per row (grid-stride): mean, then the centred squares (two
// passes, as the CPU), then the affine map.
template <typename T>
__global__ void layer_norm_kernel(int64_t rows,
                                  int64_t n,
                                  T* out,
                                  T* mean,
                                  T* rstd,
                                  const T* __restrict__ x,
                                  const T* __restrict__ weight,
                                  const T* __restrict__ bias,
                                  double eps) {
  __shared__ double scratch[kWarpSize];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* in = x + r * n;
    double sum = 0;
#pragma unroll 4
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      sum += static_cast<double>(in[j]);
    const double m = block_sum(sum, scratch) / static_cast<double>(n);
    double squares = 0;
#pragma unroll 4
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const double d = in[j] - m;
      squares += d * d;
    }
    const double inv =
        1.0 / sqrt(block_sum(squares, scratch) / static_cast<double>(n) + eps);
    if (threadIdx.x == 0) {
      mean[r] = static_cast<T>(m);
      rstd[r] = static_cast<T>(inv);
    }
    T* o = out + r * n;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      double y = (in[j] - m) * inv;
      if (weight != nullptr) y *= weight[j];
      if (bias != nullptr) y += bias[j];
      o[j] = static_cast<T>(y);
    }
  }
}

// With h = g * weight and xhat the normalised input:
// dx = rstd * (h - mean(h) - xhat * mean(h * xhat)), one block per row.
template <typename T>
__global__ void layer_norm_input_gradient_kernel(int64_t rows,
                                                 int64_t n,
                                                 T* grad_x,
                                                 const T* __restrict__ g,
                                                 const T* __restrict__ x,
                                                 const T* __restrict__ mean,
                                                 const T* __restrict__ rstd,
                                                 const T* __restrict__ weight) {
  __shared__ double scratch[kWarpSize];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* gr = g + r * n;
    const T* xr = x + r * n;
    const double m = mean[r], inv = rstd[r];
    const auto h = [&](int64_t j) {
      return weight != nullptr ? gr[j] * static_cast<double>(weight[j])
                               : static_cast<double>(gr[j]);
    };
    double sum_h = 0, sum_h_xhat = 0;
#pragma unroll 4
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const double hj = h(j);
      sum_h += hj;
      sum_h_xhat += hj * (xr[j] - m) * inv;
    }
    const double mean_h = block_sum(sum_h, scratch) / static_cast<double>(n);
    const double mean_h_xhat = block_sum(sum_h_xhat, scratch) / static_cast<double>(n);
    T* out = grad_x + r * n;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      out[j] = static_cast<T>(inv * (h(j) - mean_h - (xr[j] - m) * inv * mean_h_xhat));
    }
  }
}

// Affine gradients, column sums over rows: block (column tile, part) sums
// its part of the rows for 32 columns with 8 row lanes, then the lanes are
// added in order; partials [2, parts, n] (weight, then bias).
constexpr int kTileColumns = kWarpSize;
constexpr int kRowLanes = 8;

template <typename T>
__global__ void layer_norm_affine_partials_kernel(int64_t rows,
                                                  int64_t n,
                                                  const T* __restrict__ g,
                                                  const T* __restrict__ x,
                                                  const T* __restrict__ mean,
                                                  const T* __restrict__ rstd,
                                                  double* partials) {
  __shared__ double lanes_w[kRowLanes][kTileColumns];
  __shared__ double lanes_b[kRowLanes][kTileColumns];
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kTileColumns + threadIdx.x;
  const int64_t parts = gridDim.y, part = blockIdx.y;
  const int64_t chunk = ceil_div(rows, parts);
  const int64_t end = std::min((part + 1) * chunk, rows);
  double sum_w = 0, sum_b = 0;
  if (col < n) {
    for (int64_t r = part * chunk + threadIdx.y; r < end; r += kRowLanes) {
      const double gr = g[r * n + col];
      sum_w += gr * (x[r * n + col] - static_cast<double>(mean[r])) * rstd[r];
      sum_b += gr;
    }
  }
  lanes_w[threadIdx.y][threadIdx.x] = sum_w;
  lanes_b[threadIdx.y][threadIdx.x] = sum_b;
  __syncthreads();
  if (threadIdx.y != 0 || col >= n) return;
  for (int lane = 1; lane < kRowLanes; ++lane) {
    sum_w += lanes_w[lane][threadIdx.x];
    sum_b += lanes_b[lane][threadIdx.x];
  }
  partials[part * n + col] = sum_w;
  partials[(parts + part) * n + col] = sum_b;
}

template <typename T>
__global__ void layer_norm_affine_finish_kernel(
    int64_t n, int64_t parts, const double* partials, T* grad_w, T* grad_b) {
  for (int64_t col = grid_index(); col < n; col += grid_stride()) {
    double sum_w = 0, sum_b = 0;
    for (int64_t p = 0; p < parts; ++p) {
      sum_w += partials[p * n + col];
      sum_b += partials[(parts + p) * n + col];
    }
    if (grad_w != nullptr) grad_w[col] = static_cast<T>(sum_w);
    if (grad_b != nullptr) grad_b[col] = static_cast<T>(sum_b);
  }
}

template <typename T>
void layer_norm_rows(cudaStream_t stream,
                     const Tensor& out,
                     const Tensor& mean,
                     const Tensor& rstd,
                     const Tensor& input,
                     const Tensor& weight,
                     const Tensor& bias,
                     double eps) {
  const int64_t rows = input.size(0), n = input.size(1);
  layer_norm_kernel<T>
      <<<blocks_for(rows, 1), row_threads(n), 0, stream>>>(rows,
                                                           n,
                                                           out.data_ptr<T>(),
                                                           mean.data_ptr<T>(),
                                                           rstd.data_ptr<T>(),
                                                           input.data_ptr<T>(),
                                                           data_or_null<T>(weight),
                                                           data_or_null<T>(bias),
                                                           eps);
  TANDEM_CUDA_CHECK_LAUNCH("layer_norm");
}

template <typename T>
void layer_norm_gradients(cudaStream_t stream,
                          const Tensor& grad_input,
                          const Tensor& grad_weight,
                          const Tensor& grad_bias,
                          const Tensor& grad_out,
                          const Tensor& input,
                          const Tensor& mean,
                          const Tensor& rstd,
                          const Tensor& weight) {
  const int64_t rows = input.size(0), n = input.size(1);
  if (grad_input.defined() && rows > 0) {
    layer_norm_input_gradient_kernel<T>
        <<<blocks_for(rows, 1), row_threads(n), 0, stream>>>(rows,
                                                             n,
                                                             grad_input.data_ptr<T>(),
                                                             grad_out.data_ptr<T>(),
                                                             input.data_ptr<T>(),
                                                             mean.data_ptr<T>(),
                                                             rstd.data_ptr<T>(),
                                                             data_or_null<T>(weight));
    TANDEM_CUDA_CHECK_LAUNCH("layer_norm_backward");
  }
  if ((!grad_weight.defined() && !grad_bias.defined()) || n == 0) return;
  // Parts: at least 64 rows each, and about 2048 blocks in all.
  const int64_t tiles = ceil_div(n, kTileColumns);
  const int64_t parts =
      std::max<int64_t>(1, std::min(ceil_div(rows, 64), ceil_div(2048, tiles)));
  const Tensor partials = double_scratch(2 * parts * n, grad_out.device());
  layer_norm_affine_partials_kernel<T>
      <<<dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(parts)),
         dim3(kTileColumns, kRowLanes),
         0,
         stream>>>(rows,
                   n,
                   grad_out.data_ptr<T>(),
                   input.data_ptr<T>(),
                   mean.data_ptr<T>(),
                   rstd.data_ptr<T>(),
                   partials.data_ptr<double>());
  TANDEM_CUDA_CHECK_LAUNCH("layer_norm_backward");
  layer_norm_affine_finish_kernel<T>
      <<<blocks_for(n), kThreads, 0, stream>>>(n,
                                               parts,
                                               partials.data_ptr<double>(),
                                               data_or_null<T>(grad_weight),
                                               data_or_null<T>(grad_bias));
  TANDEM_CUDA_CHECK_LAUNCH("layer_norm_backward");
}

}  // namespace

void layer_norm(const Tensor& out,
                const Tensor& mean,
                const Tensor& rstd,
                const Tensor& input,
                const Tensor& weight,
                const Tensor& bias,
                double eps) {
  const cudaStream_t stream = prepare(out);
  if (input.size(0) == 0) return;
  dispatch_floating(input.dtype(), "layer_norm", [&]<typename T>() {
    layer_norm_rows<T>(stream, out, mean, rstd, input, weight, bias, eps);
  });
}

void layer_norm_backward(const Tensor& grad_input,
                         const Tensor& grad_weight,
                         const Tensor& grad_bias,
                         const Tensor& grad_out,
                         const Tensor& input,
                         const Tensor& mean,
                         const Tensor& rstd,
                         const Tensor& weight) {
  const cudaStream_t stream = prepare(grad_out);
  dispatch_floating(input.dtype(), "layer_norm_backward", [&]<typename T>() {
    layer_norm_gradients<T>(
        stream, grad_input, grad_weight, grad_bias, grad_out, input, mean, rstd, weight);
  });
}

}  // namespace tandem::backend::cuda
