// CPU softmax / log_softmax, forward and backward, and the negative
// log-likelihood loss that consumes log_softmax's result.
//
// The softmax kernels take contiguous tensors of shape [rows, n] (the
// contract in dispatch.h) or, more generally, [outer, n, inner]: softmax
// runs over the middle dim, so ops/ never has to permute a dim to the end.
// The common case, inner == 1, is rows of contiguous elements; otherwise a
// row's elements are `inner` apart and neighbouring rows share cache lines.
//
// Accumulation: row maxima stay in T, but row sums (of exp, of g*y, of g)
// are accumulated in double for float32 too. A float32 sum over a row of
// thousands of elements would otherwise lose ~1e-4 relative accuracy, and
// the cost is small next to the exp per element (measured: ~5%).
#include <algorithm>
#include <cmath>
#include <limits>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/loops.h"

namespace tandem::backend::cpu {
namespace {

// [outer, n, inner] geometry of a 2-D or 3-D contiguous kernel operand.
struct RowGeometry {
  int64_t outer, n, inner;
  explicit RowGeometry(const Tensor& t)
      : outer(t.sizes()[0]), n(t.sizes()[1]), inner(t.dim() == 3 ? t.sizes()[2] : 1) {
    TANDEM_INTERNAL_ASSERT(t.dim() == 2 || t.dim() == 3,
                           "softmax kernel: expected a 2-D or 3-D operand, got ",
                           t.sizes());
  }
};

// A softmax row costs at least kExpCost cheap elementwise operations per
// element (an exp, a max and a sum): log_softmax over [256, 1000] takes
// ~3.4 ns per element, an add 0.1-0.4 ns (bench/elementwise_bench.cpp), so
// rows are split only where that surely pays.
constexpr int64_t kExpCost = 8;

// Calls row(offset) with the offset of the first element of every row
// (rows are n elements `inner` apart), the rows spread over threads: each
// is computed by one task, so no result depends on the thread count.
template <typename Row>
void for_each_row(const RowGeometry& g, Row&& row) {
  parallel_over(g.outer * g.inner, g.n * kExpCost, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) row(r / g.inner * g.n * g.inner + r % g.inner);
  });
}

template <typename T>
void softmax_row(T* out, const T* in, int64_t n, int64_t stride, bool log) {
  T max = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < n; ++j) max = std::max(max, in[j * stride]);
  double sum = 0;
  if (log) {
    for (int64_t j = 0; j < n; ++j) sum += std::exp(in[j * stride] - max);
    // log_softmax = x - logsumexp(x), with logsumexp = max + log(sum).
    const double shift = static_cast<double>(max) + std::log(sum);
    for (int64_t j = 0; j < n; ++j) {
      out[j * stride] = static_cast<T>(in[j * stride] - shift);
    }
    return;
  }
  for (int64_t j = 0; j < n; ++j) {
    T e = std::exp(in[j * stride] - max);
    out[j * stride] = e;
    sum += e;
  }
  const T scale = static_cast<T>(1.0 / sum);
  for (int64_t j = 0; j < n; ++j) out[j * stride] *= scale;
}

template <typename T>
void softmax_backward_row(
    T* grad_in, const T* grad_out, const T* y, int64_t n, int64_t stride, bool log) {
  double sum = 0;
  if (log) {
    // d/dx of log_softmax: g - softmax(x) * sum(g), softmax(x) = exp(y).
    for (int64_t j = 0; j < n; ++j) sum += grad_out[j * stride];
    for (int64_t j = 0; j < n; ++j) {
      const int64_t k = j * stride;
      grad_in[k] = static_cast<T>(grad_out[k] - std::exp(y[k]) * sum);
    }
    return;
  }
  // d/dx of softmax: y * (g - sum(g * y)).
  for (int64_t j = 0; j < n; ++j) {
    sum += static_cast<double>(grad_out[j * stride]) * y[j * stride];
  }
  for (int64_t j = 0; j < n; ++j) {
    const int64_t k = j * stride;
    grad_in[k] = static_cast<T>(y[k] * (grad_out[k] - sum));
  }
}

}  // namespace

void softmax(const Tensor& out, const Tensor& in, bool log) {
  const RowGeometry g(in);
  dispatch_floating(in.dtype(), "softmax", [&]<typename T>() {
    T* o = out.data_ptr<T>();
    const T* x = in.data_ptr<T>();
    for_each_row(g, [&](int64_t at) { softmax_row(o + at, x + at, g.n, g.inner, log); });
  });
}

void softmax_backward(const Tensor& grad_in,
                      const Tensor& grad_out,
                      const Tensor& result,
                      bool log) {
  const RowGeometry g(result);
  dispatch_floating(result.dtype(), "softmax_backward", [&]<typename T>() {
    T* gi = grad_in.data_ptr<T>();
    const T* go = grad_out.data_ptr<T>();
    const T* y = result.data_ptr<T>();
    for_each_row(g, [&](int64_t at) {
      softmax_backward_row(gi + at, go + at, y + at, g.n, g.inner, log);
    });
  });
}

// ---- negative log-likelihood ----

NllLossSums nll_loss_forward(const Tensor& losses,
                             const Tensor& input,
                             const Tensor& target,
                             const Tensor& weight,
                             double smoothing,
                             int64_t ignore_index) {
  const int64_t rows = input.sizes()[0], classes = input.sizes()[1];
  const int64_t* t = target.data_ptr<int64_t>();
  NllLossSums sums;
  dispatch_floating(input.dtype(), "nll_loss", [&]<typename T>() {
    const T* x = input.data_ptr<T>();
    const T* w = weight.defined() ? weight.data_ptr<T>() : nullptr;
    auto wt = [w](int64_t k) { return w ? static_cast<double>(w[k]) : 1.0; };
    T* l = losses.defined() ? losses.data_ptr<T>() : nullptr;
    for (int64_t i = 0; i < rows; ++i) {
      double loss = 0;
      const int64_t c = t[i];
      if (c != ignore_index) {
        // Checked here, where the targets are read, as PyTorch does.
        TANDEM_CHECK_INDEX(c >= 0 && c < classes,
                           "nll_loss: target ",
                           c,
                           " is out of bounds for ",
                           classes,
                           " classes");
        const T* row = x + i * classes;
        loss = -(1 - smoothing) * wt(c) * row[c];
        if (smoothing != 0) {
          double smooth = 0;
          for (int64_t k = 0; k < classes; ++k) smooth += wt(k) * row[k];
          loss -= smoothing / static_cast<double>(classes) * smooth;
        }
        sums.weight += wt(c);
      }
      sums.loss += loss;
      if (l) l[i] = static_cast<T>(loss);
    }
  });
  return sums;
}

void nll_loss_backward(const Tensor& grad_input,
                       const Tensor& grad_output,
                       const Tensor& target,
                       const Tensor& weight,
                       double smoothing,
                       double scale,
                       int64_t ignore_index) {
  const int64_t rows = grad_input.sizes()[0], classes = grad_input.sizes()[1];
  const int64_t* t = target.data_ptr<int64_t>();
  // One gradient per sample (reduction none) or one shared by all.
  const int64_t g_stride = grad_output.numel() == 1 ? 0 : 1;
  dispatch_floating(grad_input.dtype(), "nll_loss_backward", [&]<typename T>() {
    T* gi = grad_input.data_ptr<T>();
    const T* go = grad_output.data_ptr<T>();
    const T* w = weight.defined() ? weight.data_ptr<T>() : nullptr;
    auto wt = [w](int64_t k) { return w ? static_cast<double>(w[k]) : 1.0; };
    const double per_class = smoothing / static_cast<double>(classes);
    parallel_over(rows, classes, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        T* row = gi + i * classes;
        const int64_t c = t[i];
        if (c == ignore_index) {
          std::fill(row, row + classes, T(0));
          continue;
        }
        const double g = -scale * static_cast<double>(go[i * g_stride]);
        for (int64_t k = 0; k < classes; ++k)
          row[k] = static_cast<T>(g * per_class * wt(k));
        row[c] = static_cast<T>(g * (per_class + (1 - smoothing)) * wt(c));
      }
    });
  });
}

}  // namespace tandem::backend::cpu
