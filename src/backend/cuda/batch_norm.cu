// CUDA batch normalisation: statistics, apply and backward.
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
#include "backend/cuda/partial_sums.cuh"

namespace tandem::backend::cuda {
namespace {

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

template <typename T>
__global__ void moments_kernel(ChannelShape s,
                               int64_t parts,
                               const double* partials,
                               MomentTerms<T> terms,
                               T* mean,
                               T* var) {
  for (int64_t c = grid_index(); c < s.channels; c += grid_stride()) {
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
  for (int64_t c = grid_index(); c < s.channels; c += grid_stride()) {
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

}  // namespace tandem::backend::cuda
