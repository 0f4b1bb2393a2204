// CPU batch and layer normalisation, forward and backward.
//
// Statistics and every sum behind a gradient are accumulated in double, also
// for float32: a float32 sum over a channel of a large batch would lose
// about 1e-4 relative accuracy. Each sum runs over one channel (batch norm)
// or one row or column (layer norm) in a fixed order inside one task, so no
// result depends on the thread count.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/accumulate.h"
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/loops.h"
#include "tandem/core/cpu_budget.h"

namespace tandem::backend::cpu {
namespace {

// Tasks of at least this many elements are worth a thread.
constexpr int64_t kMinTaskElements = int64_t{1} << 15;

int64_t grain_for(int64_t elements_per_item) {
  return std::max<int64_t>(1, kMinTaskElements / std::max<int64_t>(1, elements_per_item));
}

// input [N, C, L] seen channel by channel: channel c is N runs of L
// elements, `channels * L` apart.
struct ChannelShape {
  int64_t batch, channels, inner;
  explicit ChannelShape(const Tensor& t)
      : batch(t.size(0)), channels(t.size(1)), inner(t.size(2)) {}
  int64_t per_channel() const { return batch * inner; }
  int64_t offset(int64_t n, int64_t c) const { return (n * channels + c) * inner; }
};

// Calls fn(c) for every channel, in parallel.
template <typename Fn>
void for_each_channel(const ChannelShape& s, Fn&& fn) {
  parallel_for(
      0, s.channels, grain_for(s.per_channel()), [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) fn(c);
      });
}

template <typename T>
void channel_moments(const ChannelShape& s, T* mean, T* var, const T* x) {
  for_each_channel(s, [&](int64_t c) {
    double total = 0;
    for (int64_t n = 0; n < s.batch; ++n) {
      const T* run = x + s.offset(n, c);
      total += sum_of(s.inner, [&](int64_t l) { return static_cast<double>(run[l]); });
    }
    const double m = total / static_cast<double>(s.per_channel());
    double squares = 0;  // second pass: no cancellation from E[x^2] - E[x]^2
    for (int64_t n = 0; n < s.batch; ++n) {
      const T* run = x + s.offset(n, c);
      squares += sum_of(s.inner, [&](int64_t l) { return (run[l] - m) * (run[l] - m); });
    }
    mean[c] = static_cast<T>(m);
    var[c] = static_cast<T>(squares / static_cast<double>(s.per_channel()));
  });
}

// out = x * scale[c] + shift[c], with scale = invstd * weight and shift =
// bias - mean * scale computed in T, as PyTorch does.
template <typename T>
void apply_batch_norm(const ChannelShape& s,
                      T* out,
                      const T* x,
                      const T* mean,
                      const T* invstd,
                      const T* weight,
                      const T* bias) {
  std::vector<T> scale(s.channels), shift(s.channels);
  for (int64_t c = 0; c < s.channels; ++c) {
    scale[c] = invstd[c] * (weight != nullptr ? weight[c] : T(1));
    shift[c] = (bias != nullptr ? bias[c] : T(0)) - mean[c] * scale[c];
  }
  const int64_t runs = s.batch * s.channels;
  parallel_for(0, runs, grain_for(s.inner), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t c = r % s.channels;
      const T a = scale[c], b = shift[c];
      const T* in = x + r * s.inner;
      T* o = out + r * s.inner;
      for (int64_t l = 0; l < s.inner; ++l) o[l] = in[l] * a + b;
    }
  });
}

template <typename T>
void batch_norm_gradients(const ChannelShape& s,
                          T* grad_x,
                          T* grad_w,
                          T* grad_b,
                          const T* g,
                          const T* x,
                          const T* mean,
                          const T* invstd,
                          const T* weight,
                          bool training) {
  for_each_channel(s, [&](int64_t c) {
    const double m = mean[c], inv = invstd[c];
    double sum_g = 0, sum_g_centered = 0;
    for (int64_t n = 0; n < s.batch; ++n) {
      const T* gr = g + s.offset(n, c);
      const T* xr = x + s.offset(n, c);
      const auto [run_g, run_g_centered] = sums_of(
          s.inner,
          [&](int64_t l) { return static_cast<double>(gr[l]); },
          [&](int64_t l) { return gr[l] * (xr[l] - m); });
      sum_g += run_g;
      sum_g_centered += run_g_centered;
    }
    if (grad_b != nullptr) grad_b[c] = static_cast<T>(sum_g);
    if (grad_w != nullptr) grad_w[c] = static_cast<T>(sum_g_centered * inv);
    if (grad_x == nullptr) return;
    const double scale = inv * (weight != nullptr ? weight[c] : 1.0);
    // In training, mean and invstd depend on x: their gradients remove the
    // mean of g and g's projection on the centred input. The coefficients
    // come from double sums; the per-element map runs in T, like PyTorch's
    // (not to the same bits: tandem multiplies once by invstd * weight).
    const double count = static_cast<double>(s.per_channel());
    const T mean_g = static_cast<T>(training ? sum_g / count : 0.0);
    const T projection =
        static_cast<T>(training ? sum_g_centered * inv * inv / count : 0.0);
    const T centre = static_cast<T>(m), factor = static_cast<T>(scale);
    for (int64_t n = 0; n < s.batch; ++n) {
      const T* gr = g + s.offset(n, c);
      const T* xr = x + s.offset(n, c);
      T* out = grad_x + s.offset(n, c);
      for (int64_t l = 0; l < s.inner; ++l) {
        out[l] = (gr[l] - mean_g - (xr[l] - centre) * projection) * factor;
      }
    }
  });
}

// Rows of length n: mean and 1 / sqrt(var + eps) of each, then the affine map.
template <typename T>
void layer_norm_rows(int64_t rows,
                     int64_t n,
                     T* out,
                     T* mean,
                     T* rstd,
                     const T* x,
                     const T* weight,
                     const T* bias,
                     double eps) {
  parallel_for(0, rows, grain_for(n), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* in = x + r * n;
      const double m = sum_of(n, [&](int64_t j) { return static_cast<double>(in[j]); }) /
                       static_cast<double>(n);
      const double squares =
          sum_of(n, [&](int64_t j) { return (in[j] - m) * (in[j] - m); });
      const double inv = 1.0 / std::sqrt(squares / static_cast<double>(n) + eps);
      mean[r] = static_cast<T>(m);
      rstd[r] = static_cast<T>(inv);
      T* o = out + r * n;
      for (int64_t j = 0; j < n; ++j) {
        double y = (in[j] - m) * inv;
        if (weight != nullptr) y *= weight[j];
        if (bias != nullptr) y += bias[j];
        o[j] = static_cast<T>(y);
      }
    }
  });
}

template <typename T>
void layer_norm_input_gradient(int64_t rows,
                               int64_t n,
                               T* grad_x,
                               const T* g,
                               const T* x,
                               const T* mean,
                               const T* rstd,
                               const T* weight) {
  parallel_for(0, rows, grain_for(n), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* gr = g + r * n;
      const T* xr = x + r * n;
      const double m = mean[r], inv = rstd[r];
      // With h = g * weight and xhat the normalised input:
      // dx = inv * (h - mean(h) - xhat * mean(h * xhat)).
      auto h = [&](int64_t j) {
        return weight != nullptr ? gr[j] * static_cast<double>(weight[j])
                                 : static_cast<double>(gr[j]);
      };
      const double mean_h = sum_of(n, h) / static_cast<double>(n);
      const double mean_h_xhat =
          sum_of(n, [&](int64_t j) { return h(j) * (xr[j] - m) * inv; }) /
          static_cast<double>(n);
      T* out = grad_x + r * n;
      for (int64_t j = 0; j < n; ++j) {
        out[j] = static_cast<T>(inv * (h(j) - mean_h - (xr[j] - m) * inv * mean_h_xhat));
      }
    }
  });
}

// grad_w[j] = sum over rows of g * xhat, grad_b[j] = sum of g: blocks of
// columns per task, each summing every row in order (row-major reads).
template <typename T>
void layer_norm_affine_gradients(int64_t rows,
                                 int64_t n,
                                 T* grad_w,
                                 T* grad_b,
                                 const T* g,
                                 const T* x,
                                 const T* mean,
                                 const T* rstd) {
  constexpr int64_t kBlock = 64;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  parallel_for(0, blocks, grain_for(rows * kBlock), [&](int64_t begin, int64_t end) {
    std::vector<double> sum_w(kBlock), sum_b(kBlock);
    for (int64_t block = begin; block < end; ++block) {
      const int64_t first = block * kBlock, width = std::min(kBlock, n - first);
      std::fill(sum_w.begin(), sum_w.end(), 0.0);
      std::fill(sum_b.begin(), sum_b.end(), 0.0);
      for (int64_t r = 0; r < rows; ++r) {
        const T* gr = g + r * n + first;
        const T* xr = x + r * n + first;
        const double m = mean[r], inv = rstd[r];
        for (int64_t j = 0; j < width; ++j) {
          sum_w[j] += gr[j] * (xr[j] - m) * inv;
          sum_b[j] += gr[j];
        }
      }
      for (int64_t j = 0; j < width; ++j) {
        if (grad_w != nullptr) grad_w[first + j] = static_cast<T>(sum_w[j]);
        if (grad_b != nullptr) grad_b[first + j] = static_cast<T>(sum_b[j]);
      }
    }
  });
}

template <typename T>
T* mutable_or_null(const Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}

}  // namespace

void batch_norm_stats(const Tensor& mean, const Tensor& var, const Tensor& input) {
  dispatch_floating(input.dtype(), "batch_norm", [&]<typename T>() {
    channel_moments<T>(
        ChannelShape(input), mean.data_ptr<T>(), var.data_ptr<T>(), input.data_ptr<T>());
  });
}

void batch_norm_apply(const Tensor& out,
                      const Tensor& input,
                      const Tensor& mean,
                      const Tensor& invstd,
                      const Tensor& weight,
                      const Tensor& bias) {
  dispatch_floating(input.dtype(), "batch_norm", [&]<typename T>() {
    apply_batch_norm<T>(ChannelShape(input),
                        out.data_ptr<T>(),
                        input.data_ptr<T>(),
                        mean.data_ptr<T>(),
                        invstd.data_ptr<T>(),
                        data_or_null<T>(weight),
                        data_or_null<T>(bias));
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
  dispatch_floating(input.dtype(), "batch_norm_backward", [&]<typename T>() {
    batch_norm_gradients<T>(ChannelShape(input),
                            mutable_or_null<T>(grad_input),
                            mutable_or_null<T>(grad_weight),
                            mutable_or_null<T>(grad_bias),
                            grad_out.data_ptr<T>(),
                            input.data_ptr<T>(),
                            mean.data_ptr<T>(),
                            invstd.data_ptr<T>(),
                            data_or_null<T>(weight),
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
  dispatch_floating(input.dtype(), "layer_norm", [&]<typename T>() {
    layer_norm_rows<T>(input.size(0),
                       input.size(1),
                       out.data_ptr<T>(),
                       mean.data_ptr<T>(),
                       rstd.data_ptr<T>(),
                       input.data_ptr<T>(),
                       data_or_null<T>(weight),
                       data_or_null<T>(bias),
                       eps);
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
  const int64_t rows = input.size(0), n = input.size(1);
  dispatch_floating(input.dtype(), "layer_norm_backward", [&]<typename T>() {
    const T* g = grad_out.data_ptr<T>();
    const T* x = input.data_ptr<T>();
    if (grad_input.defined()) {
      layer_norm_input_gradient<T>(rows,
                                   n,
                                   grad_input.data_ptr<T>(),
                                   g,
                                   x,
                                   mean.data_ptr<T>(),
                                   rstd.data_ptr<T>(),
                                   data_or_null<T>(weight));
    }
    if (grad_weight.defined() || grad_bias.defined()) {
      layer_norm_affine_gradients<T>(rows,
                                     n,
                                     mutable_or_null<T>(grad_weight),
                                     mutable_or_null<T>(grad_bias),
                                     g,
                                     x,
                                     mean.data_ptr<T>(),
                                     rstd.data_ptr<T>());
    }
  });
}

}  // namespace tandem::backend::cpu
