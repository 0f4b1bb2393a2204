// CUDA 2-D max and average pooling, forward and backward, with the CPU
// kernels' window rules (backend/cpu/pooling.cpp, PyTorch's): windows
// clipped to the image, padding never wins a max, and the average's divisor
// set by count_include_pad or divisor_override.
//
// One thread per output element, except the average's backward, which runs
// one thread per input element and gathers the shares of every window that
// covers it in the CPU's order: no atomics, and the same sums bit for bit.
// Max pooling's backward scatters through the saved indices with atomicAdd
// (the kernel gets no window geometry to gather with); where windows
// overlap, the order of the additions into one input cell, and so its last
// bits, may vary from run to run.
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/loops.cuh"

namespace tandem::backend::cuda {
namespace {

// Plane geometry of input [P, H, W] and output [P, Ho, Wo].
struct PoolShape {
  int64_t planes, height, width, out_h, out_w;

  PoolShape(const Tensor& input, const Tensor& output)
      : planes(input.size(0)),
        height(input.size(1)),
        width(input.size(2)),
        out_h(output.size(1)),
        out_w(output.size(2)) {}

  __host__ __device__ int64_t in_plane() const { return height * width; }
  __host__ __device__ int64_t out_plane() const { return out_h * out_w; }
};

// Pool2dParams as plain fields for device code (height first).
struct Window {
  int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;

  explicit Window(const Pool2dParams& p)
      : kernel_h(p.kernel[0]),
        kernel_w(p.kernel[1]),
        stride_h(p.stride[0]),
        stride_w(p.stride[1]),
        pad_h(p.padding[0]),
        pad_w(p.padding[1]),
        dilation_h(p.dilation[0]),
        dilation_w(p.dilation[1]) {}
};

__device__ __forceinline__ int64_t global_thread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t global_threads() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

template <typename T>
__global__ void max_pool_forward_kernel(
    PoolShape s, Window win, T* out, int64_t* indices, const T* __restrict__ in) {
  const int64_t total = s.planes * s.out_plane();
  for (int64_t i = global_thread(); i < total; i += global_threads()) {
    const int64_t plane = i / s.out_plane();
    const int64_t oh = i % s.out_plane() / s.out_w, ow = i % s.out_w;
    const T* image = in + plane * s.in_plane();
    int64_t h_begin = oh * win.stride_h - win.pad_h;
    const int64_t h_end =
        min(h_begin + (win.kernel_h - 1) * win.dilation_h + 1, s.height);
    while (h_begin < 0) h_begin += win.dilation_h;
    int64_t w_begin = ow * win.stride_w - win.pad_w;
    const int64_t w_end = min(w_begin + (win.kernel_w - 1) * win.dilation_w + 1, s.width);
    while (w_begin < 0) w_begin += win.dilation_w;
    // -1 (and -inf) for a window that no input cell falls in, which padding
    // with dilation allows; backward skips it. Among equal values the first
    // wins, and a NaN beats everything, the last NaN winning (as the CPU).
    int64_t best = -1;
    T best_value = -INFINITY;
    for (int64_t h = h_begin; h < h_end; h += win.dilation_h) {
      for (int64_t w = w_begin; w < w_end; w += win.dilation_w) {
        const T v = image[h * s.width + w];
        if (best < 0 || v > best_value || isnan(v)) {
          best_value = v;
          best = h * s.width + w;
        }
      }
    }
    out[i] = best_value;
    indices[i] = best;
  }
}

// grad_in (zeroed) += grad_out at each output's argmax.
template <typename T>
__global__ void max_pool_backward_kernel(PoolShape s,
                                         T* grad_in,
                                         const T* __restrict__ grad_out,
                                         const int64_t* __restrict__ indices) {
  const int64_t total = s.planes * s.out_plane();
  for (int64_t i = global_thread(); i < total; i += global_threads()) {
    const int64_t index = indices[i];
    if (index >= 0)
      atomicAdd(grad_in + i / s.out_plane() * s.in_plane() + index, grad_out[i]);
  }
}

// One average-pooling window: the input cells [h_begin, h_end) x
// [w_begin, w_end) and what their sum is divided by (the CPU's avg_window).
struct AvgWindow {
  int64_t h_begin, h_end, w_begin, w_end;
  double divisor;
};

__device__ AvgWindow avg_window(
    const PoolShape& s, const Window& win, AvgPoolDivisor d, int64_t oh, int64_t ow) {
  int64_t h_begin = oh * win.stride_h - win.pad_h;
  int64_t w_begin = ow * win.stride_w - win.pad_w;
  // Clipped first to the padded image (what count_include_pad counts),
  // then to the image itself.
  int64_t h_end = min(h_begin + win.kernel_h, s.height + win.pad_h);
  int64_t w_end = min(w_begin + win.kernel_w, s.width + win.pad_w);
  const int64_t padded_size = (h_end - h_begin) * (w_end - w_begin);
  h_begin = max(h_begin, int64_t{0});
  w_begin = max(w_begin, int64_t{0});
  h_end = min(h_end, s.height);
  w_end = min(w_end, s.width);
  int64_t divisor = (h_end - h_begin) * (w_end - w_begin);
  if (d.divisor_override != 0) {
    divisor = d.divisor_override;
  } else if (d.count_include_pad) {
    divisor = padded_size;
  }
  return {h_begin, h_end, w_begin, w_end, static_cast<double>(divisor)};
}

// Sums in double and divides in double, in the CPU's order: the same result.
template <typename T>
__global__ void avg_pool_forward_kernel(
    PoolShape s, Window win, AvgPoolDivisor d, T* out, const T* __restrict__ in) {
  const int64_t total = s.planes * s.out_plane();
  for (int64_t i = global_thread(); i < total; i += global_threads()) {
    const int64_t plane = i / s.out_plane();
    const int64_t oh = i % s.out_plane() / s.out_w, ow = i % s.out_w;
    const T* image = in + plane * s.in_plane();
    const AvgWindow w = avg_window(s, win, d, oh, ow);
    if (w.h_begin >= w.h_end || w.w_begin >= w.w_end) {
      out[i] = T(0);
      continue;
    }
    double total_in_window = 0;
    for (int64_t h = w.h_begin; h < w.h_end; ++h) {
      for (int64_t x = w.w_begin; x < w.w_end; ++x)
        total_in_window += image[h * s.width + x];
    }
    out[i] = static_cast<T>(total_in_window / w.divisor);
  }
}

// The outputs o in [first, last] whose window [o * stride - pad, o * stride
// - pad + kernel) covers input position `pos` (last < first when none).
struct CoveringRange {
  int64_t first, last;
};

__device__ CoveringRange
covering(int64_t pos, int64_t kernel, int64_t stride, int64_t pad, int64_t outputs) {
  const int64_t shifted = pos + pad;  // >= 0
  const int64_t first = shifted < kernel ? 0 : (shifted - kernel) / stride + 1;
  return {first, min(shifted / stride, outputs - 1)};
}

// grad_in[h, w] = the sum over the windows covering (h, w), in (oh, ow)
// order, of T(grad_out / divisor): the CPU's additions, in its order.
template <typename T>
__global__ void avg_pool_backward_kernel(PoolShape s,
                                         Window win,
                                         AvgPoolDivisor d,
                                         T* grad_in,
                                         const T* __restrict__ grad_out) {
  const int64_t total = s.planes * s.in_plane();
  for (int64_t i = global_thread(); i < total; i += global_threads()) {
    const int64_t plane = i / s.in_plane();
    const int64_t h = i % s.in_plane() / s.width, w = i % s.width;
    const T* g = grad_out + plane * s.out_plane();
    const CoveringRange rows =
        covering(h, win.kernel_h, win.stride_h, win.pad_h, s.out_h);
    const CoveringRange cols =
        covering(w, win.kernel_w, win.stride_w, win.pad_w, s.out_w);
    T sum = 0;
    for (int64_t oh = rows.first; oh <= rows.last; ++oh) {
      for (int64_t ow = cols.first; ow <= cols.last; ++ow) {
        const double divisor = avg_window(s, win, d, oh, ow).divisor;
        sum += static_cast<T>(g[oh * s.out_w + ow] / divisor);
      }
    }
    grad_in[i] = sum;
  }
}

template <typename T>
void max_pool_forward(cudaStream_t stream,
                      const PoolShape& s,
                      const Window& win,
                      const Tensor& out,
                      const Tensor& indices,
                      const Tensor& input) {
  const int64_t n = s.planes * s.out_plane();
  max_pool_forward_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(
      s, win, out.data_ptr<T>(), indices.data_ptr<int64_t>(), input.data_ptr<T>());
  TANDEM_CUDA_CHECK_LAUNCH("max_pool2d");
}

template <typename T>
void max_pool_backward(cudaStream_t stream,
                       const PoolShape& s,
                       const Tensor& grad_input,
                       const Tensor& grad_out,
                       const Tensor& indices) {
  TANDEM_CUDA_CHECK(
      cudaMemsetAsync(grad_input.data_ptr(), 0, grad_input.nbytes(), stream));
  const int64_t n = s.planes * s.out_plane();
  max_pool_backward_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(
      s, grad_input.data_ptr<T>(), grad_out.data_ptr<T>(), indices.data_ptr<int64_t>());
  TANDEM_CUDA_CHECK_LAUNCH("max_pool2d_backward");
}

template <typename T>
void avg_pool_forward(cudaStream_t stream,
                      const PoolShape& s,
                      const Window& win,
                      AvgPoolDivisor d,
                      const Tensor& out,
                      const Tensor& input) {
  const int64_t n = s.planes * s.out_plane();
  avg_pool_forward_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(
      s, win, d, out.data_ptr<T>(), input.data_ptr<T>());
  TANDEM_CUDA_CHECK_LAUNCH("avg_pool2d");
}

template <typename T>
void avg_pool_backward(cudaStream_t stream,
                       const PoolShape& s,
                       const Window& win,
                       AvgPoolDivisor d,
                       const Tensor& grad_input,
                       const Tensor& grad_out) {
  const int64_t n = s.planes * s.in_plane();
  avg_pool_backward_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(
      s, win, d, grad_input.data_ptr<T>(), grad_out.data_ptr<T>());
  TANDEM_CUDA_CHECK_LAUNCH("avg_pool2d_backward");
}

}  // namespace

void max_pool2d(const Tensor& out,
                const Tensor& indices,
                const Tensor& input,
                const Pool2dParams& params) {
  const cudaStream_t stream = prepare(out);
  const PoolShape s(input, out);
  if (s.planes * s.out_plane() == 0) return;
  dispatch_floating(out.dtype(), "max_pool2d", [&]<typename T>() {
    max_pool_forward<T>(stream, s, Window(params), out, indices, input);
  });
}

void max_pool2d_backward(const Tensor& grad_input,
                         const Tensor& grad_out,
                         const Tensor& indices) {
  const cudaStream_t stream = prepare(grad_input);
  const PoolShape s(grad_input, grad_out);
  if (s.planes * s.in_plane() == 0) return;
  dispatch_floating(grad_out.dtype(), "max_pool2d_backward", [&]<typename T>() {
    max_pool_backward<T>(stream, s, grad_input, grad_out, indices);
  });
}

void avg_pool2d(const Tensor& out,
                const Tensor& input,
                const Pool2dParams& params,
                AvgPoolDivisor divisor) {
  const cudaStream_t stream = prepare(out);
  const PoolShape s(input, out);
  if (s.planes * s.out_plane() == 0) return;
  dispatch_floating(out.dtype(), "avg_pool2d", [&]<typename T>() {
    avg_pool_forward<T>(stream, s, Window(params), divisor, out, input);
  });
}

void avg_pool2d_backward(const Tensor& grad_input,
                         const Tensor& grad_out,
                         const Pool2dParams& params,
                         AvgPoolDivisor divisor) {
  const cudaStream_t stream = prepare(grad_input);
  const PoolShape s(grad_input, grad_out);
  if (s.planes * s.in_plane() == 0) return;
  dispatch_floating(grad_out.dtype(), "avg_pool2d_backward", [&]<typename T>() {
    avg_pool_backward<T>(stream, s, Window(params), divisor, grad_input, grad_out);
  });
}

}  // namespace tandem::backend::cuda
