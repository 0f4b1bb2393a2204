// CUDA batch and layer normalisation, forward and backward.
//
// Accumulation: every sum (statistics and the sums behind gradients) is
// accumulated in double, per thread and in the block's tree, also for
// float32, as the CPU kernels do (backend/cpu/normalization.cpp). The
// kernels are bandwidth-bound and H200's fp64 rate keeps the double adds
// off the critical path, while a float32 sum over a channel of a large
// batch would lose about 1e-4 relative accuracy. Sums are cut into pieces
// that depend on the shape alone and combined in a fixed order, so results
// do not vary from run to run.
//
// Note [Channel sums]
// ~~~~~~~~~~~~~~~~~~~
// Batch norm sums over each channel of input [N, C, L]: N runs of L
// elements, C * L apart. Block (c, part) sums one part of channel c into a
// partial (parts are cut by the shape alone, enough to fill the GPU even
// with few channels); a per-channel kernel adds the partials in order and
// finishes. A thread walks its channel with a carried (n, l) position
// rather than dividing per element.
//
// The statistics take one pass over shifted data: with K the channel's
// first element, S1 = sum (x - K) and S2 = sum (x - K)^2, mean = K + S1 / n
// and var = S2 / n - (S1 / n)^2. K lies among the data, so the subtraction
// does not cancel the way E[x^2] - E[x]^2 does for data far from zero.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "backend/cuda/block_reduce.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/loops.cuh"
#include "tandem/ops/factory.h"

namespace tandem::backend::cuda {
namespace {

__host__ __device__ inline int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// Double scratch in device memory, freed in stream order.
Tensor double_scratch(int64_t count, Device device) {
  return empty({count}, TensorOptions(kFloat64).device(device));
}

// ---- batch norm ----

// input [N, C, L] seen channel by channel.
struct ChannelShape {
  int64_t batch, channels, inner;
  explicit ChannelShape(const Tensor& t)
      : batch(t.size(0)), channels(t.size(1)), inner(t.size(2)) {}
  __host__ __device__ int64_t per_channel() const { return batch * inner; }
};

// Parts per channel (Note [Channel sums]): each thread sums at least 8
// elements, and about 2048 blocks in all.
int64_t channel_parts(const ChannelShape& s) {
  const int64_t by_work = ceil_div(s.per_channel(), int64_t{kThreads} * 8);
  const int64_t by_blocks = ceil_div(2048, s.channels);
  return std::max<int64_t>(1, std::min(by_work, by_blocks));
}

struct TermPair {
  double a, b;
};

// The statistics' terms: x - K and its square, K = the channel's first
// element (0 for an empty channel).
template <typename T>
struct MomentTerms {
  const T* x;
  int64_t inner;
  bool empty;
  __device__ double center(int64_t c) const {
    return empty ? 0.0 : static_cast<double>(x[c * inner]);
  }
  __device__ TermPair operator()(int64_t i, double k) const {
    const double d = static_cast<double>(x[i]) - k;
    return {d, d * d};
  }
};

// The backward's terms: g and g * (x - mean).
template <typename T>
struct GradientTerms {
  const T* g;
  const T* x;
  const T* mean;
  __device__ double center(int64_t c) const { return static_cast<double>(mean[c]); }
  __device__ TermPair operator()(int64_t i, double m) const {
    const double gi = static_cast<double>(g[i]);
    return {gi, gi * (static_cast<double>(x[i]) - m)};
  }
};

// partials[2 * block + {0, 1}] = the sums of terms' two values over one
// part of one channel; block = c * parts + part (Note [Channel sums]).
template <typename Terms>
__global__ void channel_partials_kernel(ChannelShape s,
                                        int64_t parts,
                                        Terms terms,
                                        double* partials) {
  __shared__ double scratch[kWarpSize];
  const int64_t c = blockIdx.x / parts, part = blockIdx.x % parts;
  const int64_t count = s.per_channel(), chunk = ceil_div(count, parts);
  const int64_t begin = std::min(part * chunk, count),
                end = std::min(begin + chunk, count);
  const double k = terms.center(c);
  double a = 0, b = 0;
  int64_t e = begin + threadIdx.x;
  if (e < end) {
    int64_t n = e / s.inner, l = e % s.inner;
    const int64_t dn = blockDim.x / s.inner, dl = blockDim.x % s.inner;
    for (; e < end; e += blockDim.x) {
      const TermPair t = terms((n * s.channels + c) * s.inner + l, k);
      a += t.a;
      b += t.b;
      n += dn;
      l += dl;
      if (l >= s.inner) {
        l -= s.inner;
        ++n;
      }
    }
  }
  a = block_sum(a, scratch);
  b = block_sum(b, scratch);
  if (threadIdx.x == 0) {
    partials[2 * blockIdx.x] = a;
    partials[2 * blockIdx.x + 1] = b;
  }
}

// The two sums of channel c, its parts added in order.
__device__ TermPair channel_total(const double* partials, int64_t parts, int64_t c) {
  TermPair total{0, 0};
  for (int64_t p = 0; p < parts; ++p) {
    total.a += partials[2 * (c * parts + p)];
    total.b += partials[2 * (c * parts + p) + 1];
  }
  return total;
}

__device__ __forceinline__ int64_t global_thread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t global_threads() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

template <typename T>
__global__ void moments_kernel(ChannelShape s,
                               int64_t parts,
                               const double* partials,
                               MomentTerms<T> terms,
                               T* mean,
                               T* var) {
  for (int64_t c = global_thread(); c < s.channels; c += global_threads()) {
    const TermPair sums = channel_total(partials, parts, c);
    const double count = static_cast<double>(s.per_channel());
    const double shift = sums.a / count;  // NaN for an empty channel, as the CPU
    const double v = sums.b / count - shift * shift;
    mean[c] = static_cast<T>(terms.center(c) + shift);
    var[c] = static_cast<T>(v < 0 ? 0.0 : v);  // rounding can dip below 0
  }
}

// Sums terms over every channel: one double pair per (channel, part).
template <typename Terms>
Tensor channel_partials(cudaStream_t stream,
                        const ChannelShape& s,
                        int64_t parts,
                        const Terms& terms,
                        Device device) {
  Tensor partials = double_scratch(2 * s.channels * parts, device);
  channel_partials_kernel<<<static_cast<unsigned>(s.channels * parts),
                            kThreads,
                            0,
                            stream>>>(s, parts, terms, partials.data_ptr<double>());
  TANDEM_CUDA_CHECK_LAUNCH("batch_norm channel sums");
  return partials;
}

template <typename T>
void channel_moments(cudaStream_t stream,
                     const ChannelShape& s,
                     const Tensor& mean,
                     const Tensor& var,
                     const Tensor& input) {
  const MomentTerms<T> terms{input.data_ptr<T>(), s.inner, s.per_channel() == 0};
  const int64_t parts = channel_parts(s);
  const Tensor partials = channel_partials(stream, s, parts, terms, input.device());
  moments_kernel<T>
      <<<blocks_for(s.channels), kThreads, 0, stream>>>(s,
                                                        parts,
                                                        partials.data_ptr<double>(),
                                                        terms,
                                                        mean.data_ptr<T>(),
                                                        var.data_ptr<T>());
  TANDEM_CUDA_CHECK_LAUNCH("batch_norm_stats");
}

// Threads over rows of `inner` elements: x along a row (a power of two up
// to kThreads), y across rows, so short rows still fill whole warps.
struct RowLaunch {
  dim3 block;
  unsigned grid;
};

RowLaunch row_launch(int64_t rows, int64_t inner) {
  unsigned x = 1;
  while (x < inner && x < static_cast<unsigned>(kThreads)) x *= 2;
  const unsigned y = kThreads / x;
  return {dim3(x, y), blocks_for(rows, static_cast<int>(y))};
}

// Calls f(r, c) for each row r = n * C + c of the calling thread (row-launch
// geometry); f then covers the row's elements from threadIdx.x by blockDim.x.
template <typename F>
__device__ __forceinline__ void for_each_row(const ChannelShape& s, F&& f) {
  const int64_t rows = s.batch * s.channels;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.y;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y; r < rows;
       r += step) {
    f(r, r % s.channels);
  }
}

// out = x * scale[c] + shift[c], scale = invstd * weight and shift = bias -
// mean * scale in T, as the CPU.
template <typename T>
__global__ void batch_norm_apply_kernel(ChannelShape s,
                                        T* out,
                                        const T* __restrict__ x,
                                        const T* __restrict__ mean,
                                        const T* __restrict__ invstd,
                                        const T* __restrict__ weight,
                                        const T* __restrict__ bias) {
  for_each_row(s, [&](int64_t r, int64_t c) {
    const T scale = invstd[c] * (weight != nullptr ? weight[c] : T(1));
    const T shift = (bias != nullptr ? bias[c] : T(0)) - mean[c] * scale;
    for (int64_t l = threadIdx.x; l < s.inner; l += blockDim.x) {
      out[r * s.inner + l] = x[r * s.inner + l] * scale + shift;
    }
  });
}

// Per channel: the bias and weight gradients, and the input gradient's
// coefficients {mean_g, projection, scale} (when `coefficients` is
// non-null), from the channel sums {sum g, sum g (x - mean)} (zero when
// `partials` is null: eval mode needs none for the input gradient).
template <typename T>
__global__ void batch_norm_backward_finish_kernel(ChannelShape s,
                                                  int64_t parts,
                                                  const double* partials,
                                                  const T* invstd,
                                                  const T* weight,
                                                  bool training,
                                                  T* grad_w,
                                                  T* grad_b,
                                                  double* coefficients) {
  for (int64_t c = global_thread(); c < s.channels; c += global_threads()) {
    const TermPair sums =
        partials != nullptr ? channel_total(partials, parts, c) : TermPair{0, 0};
    const double inv = invstd[c];
    if (grad_b != nullptr) grad_b[c] = static_cast<T>(sums.a);
    if (grad_w != nullptr) grad_w[c] = static_cast<T>(sums.b * inv);
    if (coefficients == nullptr) continue;
    // In training, mean and invstd depend on x: their gradients remove the
    // mean of g and g's projection on the centred input.
    const double count = static_cast<double>(s.per_channel());
    coefficients[3 * c] = training ? sums.a / count : 0.0;
    coefficients[3 * c + 1] = training ? sums.b * inv * inv / count : 0.0;
    coefficients[3 * c + 2] =
        inv * (weight != nullptr ? static_cast<double>(weight[c]) : 1.0);
  }
}

template <typename T>
__global__ void batch_norm_input_gradient_kernel(
    ChannelShape s,
    T* grad_x,
    const T* __restrict__ g,
    const T* __restrict__ x,
    const T* __restrict__ mean,
    const double* __restrict__ coefficients) {
  for_each_row(s, [&](int64_t r, int64_t c) {
    const double m = mean[c], mean_g = coefficients[3 * c];
    const double projection = coefficients[3 * c + 1], scale = coefficients[3 * c + 2];
    for (int64_t l = threadIdx.x; l < s.inner; l += blockDim.x) {
      const int64_t i = r * s.inner + l;
      grad_x[i] = static_cast<T>((g[i] - mean_g - (x[i] - m) * projection) * scale);
    }
  });
}

template <typename T>
void apply_batch_norm(cudaStream_t stream,
                      const ChannelShape& s,
                      const Tensor& out,
                      const Tensor& input,
                      const Tensor& mean,
                      const Tensor& invstd,
                      const Tensor& weight,
                      const Tensor& bias) {
  const RowLaunch launch = row_launch(s.batch * s.channels, s.inner);
  batch_norm_apply_kernel<T>
      <<<launch.grid, launch.block, 0, stream>>>(s,
                                                 out.data_ptr<T>(),
                                                 input.data_ptr<T>(),
                                                 mean.data_ptr<T>(),
                                                 invstd.data_ptr<T>(),
                                                 data_or_null<T>(weight),
                                                 data_or_null<T>(bias));
  TANDEM_CUDA_CHECK_LAUNCH("batch_norm_apply");
}

template <typename T>
void batch_norm_gradients(cudaStream_t stream,
                          const ChannelShape& s,
                          const Tensor& grad_input,
                          const Tensor& grad_weight,
                          const Tensor& grad_bias,
                          const Tensor& grad_out,
                          const Tensor& input,
                          const Tensor& mean,
                          const Tensor& invstd,
                          const Tensor& weight,
                          bool training) {
  const Device device = grad_out.device();
  const bool need_sums = training || grad_weight.defined() || grad_bias.defined();
  const int64_t parts = channel_parts(s);
  Tensor partials;
  if (need_sums) {
    const GradientTerms<T> terms{
        grad_out.data_ptr<T>(), input.data_ptr<T>(), mean.data_ptr<T>()};
    partials = channel_partials(stream, s, parts, terms, device);
  }
  Tensor coefficients;
  if (grad_input.defined()) coefficients = double_scratch(3 * s.channels, device);
  batch_norm_backward_finish_kernel<T><<<blocks_for(s.channels), kThreads, 0, stream>>>(
      s,
      parts,
      data_or_null<double>(partials),
      invstd.data_ptr<T>(),
      data_or_null<T>(weight),
      training,
      data_or_null<T>(grad_weight),
      data_or_null<T>(grad_bias),
      data_or_null<double>(coefficients));
  TANDEM_CUDA_CHECK_LAUNCH("batch_norm_backward");
  if (!grad_input.defined()) return;
  const RowLaunch launch = row_launch(s.batch * s.channels, s.inner);
  batch_norm_input_gradient_kernel<T>
      <<<launch.grid, launch.block, 0, stream>>>(s,
                                                 grad_input.data_ptr<T>(),
                                                 grad_out.data_ptr<T>(),
                                                 input.data_ptr<T>(),
                                                 mean.data_ptr<T>(),
                                                 coefficients.data_ptr<double>());
  TANDEM_CUDA_CHECK_LAUNCH("batch_norm_backward");
}

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
  for (int64_t col = global_thread(); col < n; col += global_threads()) {
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

void batch_norm_stats(const Tensor& mean, const Tensor& var, const Tensor& input) {
  const cudaStream_t stream = prepare(mean);
  const ChannelShape s(input);
  if (s.channels == 0) return;
  dispatch_floating(input.dtype(), "batch_norm", [&]<typename T>() {
    channel_moments<T>(stream, s, mean, var, input);
  });
}

void batch_norm_apply(const Tensor& out,
                      const Tensor& input,
                      const Tensor& mean,
                      const Tensor& invstd,
                      const Tensor& weight,
                      const Tensor& bias) {
  const cudaStream_t stream = prepare(out);
  const ChannelShape s(input);
  if (input.numel() == 0) return;
  dispatch_floating(input.dtype(), "batch_norm", [&]<typename T>() {
    apply_batch_norm<T>(stream, s, out, input, mean, invstd, weight, bias);
  });
}

void batch_norm_backward(const Tensor& grad_input,
                         const Tensor& grad_weight,
                         const Tensor& grad_bias,
                         const Tensor& grad_out,
                         const Tensor& input,
                         const Tensor& mean,
                         const Tensor& invstd,
                         const Tensor& weight,
                         bool training) {
  const cudaStream_t stream = prepare(grad_out);
  const ChannelShape s(input);
  if (s.channels == 0) return;
  dispatch_floating(input.dtype(), "batch_norm_backward", [&]<typename T>() {
    batch_norm_gradients<T>(stream,
                            s,
                            grad_input,
                            grad_weight,
                            grad_bias,
                            grad_out,
                            input,
                            mean,
                            invstd,
                            weight,
                            training);
  });
}

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
