// CPU 2-D max and average pooling, forward and backward, with PyTorch's
// window rules (CPU kernels of ATen 1.13): windows clipped to the image,
// padding never wins a max, and the average's divisor set by
// count_include_pad or divisor_override.
//
// Every plane (one channel of one sample) is independent, so planes are
// handed to parallel_for; each output depends only on its own window, and
// the backward passes add into a plane of their own, so the results do not
// depend on the thread count.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <type_traits>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/loops.h"
#include "tandem/core/cpu_budget.h"

namespace tandem::backend::cpu {
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

  int64_t in_plane() const { return height * width; }
  int64_t out_plane() const { return out_h * out_w; }
};

// Enough elements per task to be worth a thread (about 10 us of work).
int64_t plane_grain(const PoolShape& s, int64_t window) {
  const int64_t per_plane = std::max<int64_t>(1, s.out_plane() * window);
  return std::max<int64_t>(1, (int64_t{1} << 15) / per_plane);
}

template <typename Fn>
void for_each_plane(const PoolShape& s, int64_t window, Fn&& fn) {
  parallel_for(0, s.planes, plane_grain(s, window), [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) fn(plane);
  });
}

// A cell beats the best so far when it is larger or NaN (PyTorch's rule:
// NaN propagates, and the last NaN's index is kept); ties keep the first.
template <typename T>
bool beats(T v, T best) {
  return (v > best) | (v != v);
}

// `wins ? a : b` through masks: the compiler keeps a ?: on loaded values as
// a branch, and whether a cell wins is as good as random on real data.
template <typename T>
T select(bool wins, T a, T b) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const Bits mask = Bits(0) - Bits(wins);
  return std::bit_cast<T>((std::bit_cast<Bits>(a) & mask) |
                          (std::bit_cast<Bits>(b) & ~mask));
}

// Whether every window lies inside the image with unit dilation, so that
// max_pool_rows can sweep whole output rows without clipping.
bool windows_inside(const PoolShape& s, const Pool2dParams& p) {
  return p.padding[0] == 0 && p.padding[1] == 0 && p.dilation[0] == 1 &&
         p.dilation[1] == 1 && (s.out_h - 1) * p.stride[0] + p.kernel[0] <= s.height &&
         (s.out_w - 1) * p.stride[1] + p.kernel[1] <= s.width;
}

// One plane whose windows all lie inside it: the windows of an output row
// are swept together, cell by cell of the window in row-major order (the
// order of max_pool_clipped, so the same cell wins). The windows do not
// depend on each other, so the loop over them runs several at a time where
// one window alone is a chain of dependent comparisons.
template <typename T>
void max_pool_rows(const PoolShape& s,
                   const Pool2dParams& p,
                   T* out_plane,
                   int64_t* index_plane,
                   const T* image) {
  // Locals, and restrict: the stores to the output would otherwise make
  // the compiler reload the shape after every one.
  const int64_t out_h = s.out_h, out_w = s.out_w, width = s.width;
  const int64_t sh = p.stride[0], sw = p.stride[1], kernel_h = p.kernel[0],
                kernel_w = p.kernel[1];
  for (int64_t oh = 0; oh < out_h; ++oh) {
    T* __restrict best_value = out_plane + oh * out_w;
    int64_t* __restrict best = index_plane + oh * out_w;
    const int64_t top = oh * sh * width;
    for (int64_t ow = 0; ow < out_w; ++ow) {
      best[ow] = top + ow * sw;
      best_value[ow] = image[top + ow * sw];
    }
    for (int64_t kh = 0; kh < kernel_h; ++kh) {
      for (int64_t kw = kh == 0 ? 1 : 0; kw < kernel_w; ++kw) {
        const int64_t first = top + kh * width + kw;
        const T* __restrict cells = image + first;
        for (int64_t ow = 0; ow < out_w; ++ow) {
          const T v = cells[ow * sw];
          const bool wins = beats(v, best_value[ow]);
          best_value[ow] = select(wins, v, best_value[ow]);
          best[ow] = select(wins, first + ow * sw, best[ow]);
        }
      }
    }
  }
}

// One plane in general: each window clipped to the image, with dilation.
template <typename T>
void max_pool_clipped(const PoolShape& s,
                      const Pool2dParams& p,
                      T* out_plane,
                      int64_t* index_plane,
                      const T* image) {
  for (int64_t oh = 0; oh < s.out_h; ++oh) {
    int64_t h_begin = oh * p.stride[0] - p.padding[0];
    const int64_t h_end =
        std::min(h_begin + (p.kernel[0] - 1) * p.dilation[0] + 1, s.height);
    while (h_begin < 0) h_begin += p.dilation[0];
    for (int64_t ow = 0; ow < s.out_w; ++ow) {
      int64_t w_begin = ow * p.stride[1] - p.padding[1];
      const int64_t w_end =
          std::min(w_begin + (p.kernel[1] - 1) * p.dilation[1] + 1, s.width);
      while (w_begin < 0) w_begin += p.dilation[1];
      // -1 (and -inf) for a window that no input cell falls in, which
      // padding with dilation allows; backward skips it.
      int64_t best = -1;
      T best_value = -std::numeric_limits<T>::infinity();
      for (int64_t h = h_begin; h < h_end; h += p.dilation[0]) {
        for (int64_t w = w_begin; w < w_end; w += p.dilation[1]) {
          const T v = image[h * s.width + w];
          if (best < 0 || beats(v, best_value)) {
            best_value = v;
            best = h * s.width + w;
          }
        }
      }
      out_plane[oh * s.out_w + ow] = best_value;
      index_plane[oh * s.out_w + ow] = best;
    }
  }
}

template <typename T>
void max_pool_forward(
    const PoolShape& s, const Pool2dParams& p, T* out, int64_t* indices, const T* in) {
  const bool inside = windows_inside(s, p);
  for_each_plane(s, p.kernel[0] * p.kernel[1], [&](int64_t plane) {
    const T* image = in + plane * s.in_plane();
    T* out_plane = out + plane * s.out_plane();
    int64_t* index_plane = indices + plane * s.out_plane();
    if (inside) {
      max_pool_rows(s, p, out_plane, index_plane, image);
    } else {
      max_pool_clipped(s, p, out_plane, index_plane, image);
    }
  });
}

template <typename T>
void max_pool_backward(const PoolShape& s,
                       T* grad_in,
                       const T* grad_out,
                       const int64_t* indices) {
  for_each_plane(s, 1, [&](int64_t plane) {
    T* image = grad_in + plane * s.in_plane();
    std::fill(image, image + s.in_plane(), T(0));
    const T* g = grad_out + plane * s.out_plane();
    const int64_t* index = indices + plane * s.out_plane();
    for (int64_t i = 0; i < s.out_plane(); ++i) {
      if (index[i] >= 0) image[index[i]] += g[i];
    }
  });
}

// One average-pooling window: the input cells [h_begin, h_end) x
// [w_begin, w_end) and what their sum is divided by.
struct AvgWindow {
  int64_t h_begin, h_end, w_begin, w_end;
  double divisor;
  bool empty() const { return h_begin >= h_end || w_begin >= w_end; }
};

AvgWindow avg_window(
    const PoolShape& s, const Pool2dParams& p, AvgPoolDivisor d, int64_t oh, int64_t ow) {
  int64_t h_begin = oh * p.stride[0] - p.padding[0];
  int64_t w_begin = ow * p.stride[1] - p.padding[1];
  // Clipped first to the padded image (what count_include_pad counts),
  // then to the image itself.
  int64_t h_end = std::min(h_begin + p.kernel[0], s.height + p.padding[0]);
  int64_t w_end = std::min(w_begin + p.kernel[1], s.width + p.padding[1]);
  const int64_t padded_size = (h_end - h_begin) * (w_end - w_begin);
  h_begin = std::max<int64_t>(h_begin, 0);
  w_begin = std::max<int64_t>(w_begin, 0);
  h_end = std::min(h_end, s.height);
  w_end = std::min(w_end, s.width);
  int64_t divisor = (h_end - h_begin) * (w_end - w_begin);
  if (d.divisor_override != 0) {
    divisor = d.divisor_override;
  } else if (d.count_include_pad) {
    divisor = padded_size;
  }
  return {h_begin, h_end, w_begin, w_end, static_cast<double>(divisor)};
}

template <typename T>
void avg_pool_forward(
    const PoolShape& s, const Pool2dParams& p, AvgPoolDivisor d, T* out, const T* in) {
  for_each_plane(s, p.kernel[0] * p.kernel[1], [&](int64_t plane) {
    const T* image = in + plane * s.in_plane();
    T* out_plane = out + plane * s.out_plane();
    for (int64_t oh = 0; oh < s.out_h; ++oh) {
      for (int64_t ow = 0; ow < s.out_w; ++ow) {
        const AvgWindow win = avg_window(s, p, d, oh, ow);
        double total = 0;
        for (int64_t h = win.h_begin; h < win.h_end; ++h) {
          for (int64_t w = win.w_begin; w < win.w_end; ++w)
            total += image[h * s.width + w];
        }
        out_plane[oh * s.out_w + ow] =
            win.empty() ? T(0) : static_cast<T>(total / win.divisor);
      }
    }
  });
}

template <typename T>
void avg_pool_backward(const PoolShape& s,
                       const Pool2dParams& p,
                       AvgPoolDivisor d,
                       T* grad_in,
                       const T* grad_out) {
  for_each_plane(s, p.kernel[0] * p.kernel[1], [&](int64_t plane) {
    T* image = grad_in + plane * s.in_plane();
    std::fill(image, image + s.in_plane(), T(0));
    const T* g = grad_out + plane * s.out_plane();
    for (int64_t oh = 0; oh < s.out_h; ++oh) {
      for (int64_t ow = 0; ow < s.out_w; ++ow) {
        const AvgWindow win = avg_window(s, p, d, oh, ow);
        if (win.empty()) continue;
        const T share = static_cast<T>(g[oh * s.out_w + ow] / win.divisor);
        for (int64_t h = win.h_begin; h < win.h_end; ++h) {
          for (int64_t w = win.w_begin; w < win.w_end; ++w)
            image[h * s.width + w] += share;
        }
      }
    }
  });
}

}  // namespace

void max_pool2d(const Tensor& out,
                const Tensor& indices,
                const Tensor& input,
                const Pool2dParams& params) {
  const PoolShape s(input, out);
  dispatch_floating(out.dtype(), "max_pool2d", [&]<typename T>() {
    max_pool_forward<T>(
        s, params, out.data_ptr<T>(), indices.data_ptr<int64_t>(), input.data_ptr<T>());
  });
}

void max_pool2d_backward(const Tensor& grad_input,
                         const Tensor& grad_out,
                         const Tensor& indices) {
  const PoolShape s(grad_input, grad_out);
  dispatch_floating(grad_out.dtype(), "max_pool2d_backward", [&]<typename T>() {
    max_pool_backward<T>(
        s, grad_input.data_ptr<T>(), grad_out.data_ptr<T>(), indices.data_ptr<int64_t>());
  });
}

void avg_pool2d(const Tensor& out,
                const Tensor& input,
                const Pool2dParams& params,
                AvgPoolDivisor divisor) {
  const PoolShape s(input, out);
  dispatch_floating(out.dtype(), "avg_pool2d", [&]<typename T>() {
    avg_pool_forward<T>(s, params, divisor, out.data_ptr<T>(), input.data_ptr<T>());
  });
}

void avg_pool2d_backward(const Tensor& grad_input,
                         const Tensor& grad_out,
                         const Pool2dParams& params,
                         AvgPoolDivisor divisor) {
  const PoolShape s(grad_input, grad_out);
  dispatch_floating(grad_out.dtype(), "avg_pool2d_backward", [&]<typename T>() {
    avg_pool_backward<T>(
        s, params, divisor, grad_input.data_ptr<T>(), grad_out.data_ptr<T>());
  });
}

}  // namespace tandem::backend::cpu
