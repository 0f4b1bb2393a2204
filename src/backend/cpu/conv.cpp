// CPU 2-D convolution, forward and backward, as im2col plus the blocked GEMM.
//
// Note [Convolution as GEMM]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// For one sample and one group, the output [Cout_g, L] (L = Ho * Wo output
// positions) is the weight W_g [Cout_g, K] times a column matrix [K, L],
// K = Cin_g * kh * kw, whose column l holds the input patch that output
// position l sees (im2col; zeros where the patch covers padding). Backward
// runs the same products the other way round: the columns' gradient is
// W_g^T @ grad_out, added back onto the input by col2im, and the weight's
// gradient is the sum over samples of grad_out @ columns^T.
//
// Memory: a thread builds the columns of one sample at a time (K * L
// elements), never those of the whole batch. A 1x1 convolution with stride 1
// and no padding needs no columns at all: the input is its own column matrix.
//
// Threads: samples are independent in the forward pass and for the input
// gradient, so parallel_for hands them out, each sample's products running
// on its thread. With fewer samples than threads (batch 1) the samples run
// one after another and each product spreads over the threads instead; the
// products are cut into the same blocks either way (Note [GEMM blocks]), so
// the choice does not change a bit of the result. Never both at once:
// nested parallel_for calls would run more threads than the device's share.
// The weight and bias gradients sum over samples: the batch is cut into
// max_parallel_blocks() parts, a fixed number per machine, each part sums
// its samples in order into its own partial gradient, and the partials are
// added in part order. The rounding therefore depends on the shape and the
// machine, never on how many threads a device happens to get.
#include <algorithm>
#include <memory>
#include <vector>

#include "backend/cpu/accumulate.h"
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/loops.h"
#include "tandem/core/cpu_budget.h"

namespace tandem::backend::cpu {
namespace {

// Sizes of one convolution, taken from its operands.
struct ConvShape {
  int64_t batch, in_channels, height, width;
  int64_t out_channels, kernel_h, kernel_w, out_h, out_w;
  int64_t groups;
  Conv2dParams p;

  ConvShape(const Tensor& input, const Tensor& weight, const Conv2dParams& params)
      : batch(input.size(0)),
        in_channels(input.size(1)),
        height(input.size(2)),
        width(input.size(3)),
        out_channels(weight.size(0)),
        kernel_h(weight.size(2)),
        kernel_w(weight.size(3)),
        out_h((height + 2 * params.padding[0] - params.dilation[0] * (kernel_h - 1) - 1) /
                  params.stride[0] +
              1),
        out_w((width + 2 * params.padding[1] - params.dilation[1] * (kernel_w - 1) - 1) /
                  params.stride[1] +
              1),
        groups(params.groups),
        p(params) {}

  int64_t in_per_group() const { return in_channels / groups; }
  int64_t out_per_group() const { return out_channels / groups; }
  int64_t plane() const { return height * width; }
  // K and L of Note [Convolution as GEMM].
  int64_t column_rows() const { return in_per_group() * kernel_h * kernel_w; }
  int64_t column_cols() const { return out_h * out_w; }
  int64_t weight_per_group() const { return out_per_group() * column_rows(); }
  bool is_pointwise() const {
    return kernel_h == 1 && kernel_w == 1 && p.stride[0] == 1 && p.stride[1] == 1 &&
           p.padding[0] == 0 && p.padding[1] == 0;
  }
};

// The output positions o in [0, out) whose input position o * stride +
// offset lies in [0, size).
struct ValidRange {
  int64_t begin, end;
};

ValidRange valid_range(int64_t offset, int64_t stride, int64_t size, int64_t out) {
  const int64_t begin = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  const int64_t end = size - 1 - offset < 0 ? 0 : (size - 1 - offset) / stride + 1;
  const int64_t clamped_end = std::min(end, out);
  return {std::min(begin, clamped_end), clamped_end};
}

// One row of the column matrix: input channel `channel` (within the group)
// seen through kernel cell (ki, kj). Output position (oh, ow) reads input
// (oh * stride_h + h_offset, ow * stride_w + w_offset), which lies inside
// the image for oh in `rows` and ow in `cols` (elsewhere: padding).
struct ColumnRow {
  int64_t channel, row;
  int64_t h_offset, w_offset;
  ValidRange rows, cols;
};

template <typename Visit>
void for_each_column_row(const ConvShape& s, Visit&& visit) {
  int64_t row = 0;
  for (int64_t c = 0; c < s.in_per_group(); ++c) {
    for (int64_t ki = 0; ki < s.kernel_h; ++ki) {
      const int64_t h_offset = ki * s.p.dilation[0] - s.p.padding[0];
      const ValidRange rows = valid_range(h_offset, s.p.stride[0], s.height, s.out_h);
      for (int64_t kj = 0; kj < s.kernel_w; ++kj, ++row) {
        const int64_t w_offset = kj * s.p.dilation[1] - s.p.padding[1];
        const ValidRange cols = valid_range(w_offset, s.p.stride[1], s.width, s.out_w);
        visit(ColumnRow{c, row, h_offset, w_offset, rows, cols});
      }
    }
  }
}

// columns [K, L] <- the patches of image [Cin_g, H, W]. The output rows are
// short (often a dozen elements): plain loops, with the padding's rows
// zeroed in one block, beat a library call per run.
template <typename T>
void im2col(const ConvShape& s, const T* image, T* columns) {
  const int64_t L = s.column_cols(), out_w = s.out_w;
  const int64_t stride_h = s.p.stride[0], stride_w = s.p.stride[1];
  for_each_column_row(s, [&](const ColumnRow& r) {
    T* dst = columns + r.row * L;
    const T* plane = image + r.channel * s.plane();
    std::fill(dst, dst + r.rows.begin * out_w, T(0));
    for (int64_t oh = r.rows.begin; oh < r.rows.end; ++oh) {
      const T* src = plane + (oh * stride_h + r.h_offset) * s.width;
      T* d = dst + oh * out_w;
      for (int64_t ow = 0; ow < r.cols.begin; ++ow) d[ow] = T(0);
      if (stride_w == 1) {
        for (int64_t ow = r.cols.begin; ow < r.cols.end; ++ow)
          d[ow] = src[ow + r.w_offset];
      } else {
        for (int64_t ow = r.cols.begin; ow < r.cols.end; ++ow) {
          d[ow] = src[ow * stride_w + r.w_offset];
        }
      }
      for (int64_t ow = r.cols.end; ow < out_w; ++ow) d[ow] = T(0);
    }
    std::fill(dst + r.rows.end * out_w, dst + L, T(0));
  });
}

// image [Cin_g, H, W] += the columns [K, L] added back onto their patches
// (im2col's adjoint); padding cells are dropped.
template <typename T>
void col2im(const ConvShape& s, const T* columns, T* image) {
  const int64_t L = s.column_cols(), out_w = s.out_w;
  const int64_t stride_h = s.p.stride[0], stride_w = s.p.stride[1];
  for_each_column_row(s, [&](const ColumnRow& r) {
    const T* src = columns + r.row * L;
    T* plane = image + r.channel * s.plane();
    for (int64_t oh = r.rows.begin; oh < r.rows.end; ++oh) {
      T* dst = plane + (oh * stride_h + r.h_offset) * s.width;
      const T* c = src + oh * out_w;
      if (stride_w == 1) {
        for (int64_t ow = r.cols.begin; ow < r.cols.end; ++ow)
          dst[ow + r.w_offset] += c[ow];
      } else {
        for (int64_t ow = r.cols.begin; ow < r.cols.end; ++ow) {
          dst[ow * stride_w + r.w_offset] += c[ow];
        }
      }
    }
  });
}

// Scratch for one sample's columns, or nothing for pointwise convolutions.
template <typename T>
std::unique_ptr<T[]> column_scratch(const ConvShape& s) {
  if (s.is_pointwise()) return nullptr;
  return std::make_unique_for_overwrite<T[]>(
      static_cast<size_t>(s.column_rows() * s.column_cols()));
}

// The column matrix of group g of one sample: the input itself when
// pointwise, else im2col into `scratch`.
template <typename T>
const T* columns_of(const ConvShape& s, const T* sample, int64_t g, T* scratch) {
  const T* image = sample + g * s.in_per_group() * s.plane();
  if (scratch == nullptr) return image;
  im2col(s, image, scratch);
  return scratch;
}

// Runs body(begin, end) over [0, count) items (samples or parts): in
// parallel when every thread can get one, the products inside then running
// serially; else serially, with parallel products. body gets the products'
// `parallel` flag. See Note [Convolution as GEMM].
template <typename Body>
void split_work(int64_t count, Body&& body) {
  if (count >= intra_op_threads()) {
    parallel_for(0, count, /*grain=*/1, [&](int64_t begin, int64_t end) {
      body(begin, end, /*parallel_gemm=*/false);
    });
    return;
  }
  body(0, count, /*parallel_gemm=*/true);
}

template <typename T>
void conv2d_forward(const ConvShape& s, T* out, const T* x, const T* w, const T* bias) {
  const int64_t K = s.column_rows(), L = s.column_cols(), cout_g = s.out_per_group();
  split_work(s.batch, [&](int64_t begin, int64_t end, bool parallel_gemm) {
    std::unique_ptr<T[]> scratch = column_scratch<T>(s);
    for (int64_t n = begin; n < end; ++n) {
      const T* sample = x + n * s.in_channels * s.plane();
      T* out_n = out + n * s.out_channels * L;
      if (bias != nullptr) {
        for (int64_t c = 0; c < s.out_channels; ++c) {
          std::fill(out_n + c * L, out_n + (c + 1) * L, bias[c]);
        }
      }
      for (int64_t g = 0; g < s.groups; ++g) {
        const T* columns = columns_of(s, sample, g, scratch.get());
        blocked_gemm<T>(1,
                        cout_g,
                        L,
                        K,
                        T(1),
                        {w + g * s.weight_per_group(), 0, K, 1},
                        {columns, 0, L, 1},
                        bias != nullptr ? T(1) : T(0),
                        out_n + g * cout_g * L,
                        parallel_gemm);
      }
    }
  });
}

// grad_input of one sample: per group, grad columns = W_g^T @ grad_out_g,
// added back onto the (zeroed) image.
template <typename T>
void input_gradient(const ConvShape& s,
                    T* grad_x,
                    const T* grad_out_n,
                    const T* w,
                    T* scratch,
                    bool parallel_gemm) {
  const int64_t K = s.column_rows(), L = s.column_cols(), cout_g = s.out_per_group();
  const int64_t image_size = s.in_per_group() * s.plane();
  for (int64_t g = 0; g < s.groups; ++g) {
    T* image = grad_x + g * image_size;
    // Pointwise: the columns' gradient is the image's gradient.
    T* columns = scratch != nullptr ? scratch : image;
    blocked_gemm<T>(1,
                    K,
                    L,
                    cout_g,
                    T(1),
                    {w + g * s.weight_per_group(), 0, 1, K},
                    {grad_out_n + g * cout_g * L, 0, L, 1},
                    T(0),
                    columns,
                    parallel_gemm);
    if (scratch == nullptr) continue;
    std::fill(image, image + image_size, T(0));
    col2im(s, columns, image);
  }
}

// grad_w (+)= grad_out_g @ columns_g^T for every group of one sample; the
// first sample of a part overwrites (beta 0), later ones add.
template <typename T>
void accumulate_weight_gradient(const ConvShape& s,
                                T* grad_w,
                                const T* grad_out_n,
                                const T* sample,
                                T* scratch,
                                bool first,
                                bool parallel_gemm) {
  const int64_t K = s.column_rows(), L = s.column_cols(), cout_g = s.out_per_group();
  for (int64_t g = 0; g < s.groups; ++g) {
    const T* columns = columns_of(s, sample, g, scratch);
    blocked_gemm<T>(1,
                    cout_g,
                    K,
                    L,
                    T(1),
                    {grad_out_n + g * cout_g * L, 0, L, 1},
                    {columns, 0, 1, L},
                    first ? T(0) : T(1),
                    grad_w + g * s.weight_per_group(),
                    parallel_gemm);
  }
}

template <typename T>
void conv2d_backward_impl(const ConvShape& s,
                          T* grad_x,
                          T* grad_w,
                          T* grad_b,
                          const T* grad_out,
                          const T* x,
                          const T* w) {
  const int64_t L = s.column_cols();
  const int64_t weight_size = s.out_channels * s.column_rows();
  // See Note [Convolution as GEMM] for the parts.
  const int64_t parts = std::max<int64_t>(1, std::min(s.batch, max_parallel_blocks()));
  const int64_t per_part = (s.batch + parts - 1) / parts;
  // Part 0 writes into grad_w itself, the others into their partials.
  std::vector<T> partials(grad_w != nullptr ? (parts - 1) * weight_size : 0);
  if (grad_w != nullptr) std::fill(grad_w, grad_w + weight_size, T(0));
  split_work(parts, [&](int64_t begin, int64_t end, bool parallel_gemm) {
    std::unique_ptr<T[]> scratch = column_scratch<T>(s);
    for (int64_t part = begin; part < end; ++part) {
      T* part_w = part == 0 ? grad_w : partials.data() + (part - 1) * weight_size;
      const int64_t first = part * per_part, last = std::min(s.batch, first + per_part);
      for (int64_t n = first; n < last; ++n) {
        const T* grad_out_n = grad_out + n * s.out_channels * L;
        if (grad_w != nullptr) {
          accumulate_weight_gradient(s,
                                     part_w,
                                     grad_out_n,
                                     x + n * s.in_channels * s.plane(),
                                     scratch.get(),
                                     n == first,
                                     parallel_gemm);
        }
        if (grad_x != nullptr) {
          input_gradient(s,
                         grad_x + n * s.in_channels * s.plane(),
                         grad_out_n,
                         w,
                         scratch.get(),
                         parallel_gemm);
        }
      }
    }
  });
  if (grad_w != nullptr) {
    for (int64_t part = 1; part < parts; ++part) {
      if (part * per_part >= s.batch) break;  // an empty part left no partial
      const T* partial = partials.data() + (part - 1) * weight_size;
      for (int64_t i = 0; i < weight_size; ++i) grad_w[i] += partial[i];
    }
  }
  if (grad_b != nullptr) {
    // One channel per task, its samples summed in order: no partials needed.
    parallel_for(0, s.out_channels, /*grain=*/1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        double total = 0;
        for (int64_t n = 0; n < s.batch; ++n) {
          const T* row = grad_out + (n * s.out_channels + c) * L;
          total += sum_of(L, [&](int64_t l) { return static_cast<double>(row[l]); });
        }
        grad_b[c] = static_cast<T>(total);
      }
    });
  }
}

}  // namespace

void conv2d(const Tensor& out,
            const Tensor& input,
            const Tensor& weight,
            const Tensor& bias,
            const Conv2dParams& params) {
  const ConvShape s(input, weight, params);
  dispatch_floating(out.dtype(), "conv2d", [&]<typename T>() {
    conv2d_forward<T>(s,
                      out.data_ptr<T>(),
                      input.data_ptr<T>(),
                      weight.data_ptr<T>(),
                      data_or_null<T>(bias));
  });
}

void conv2d_backward(const Tensor& grad_input,
                     const Tensor& grad_weight,
                     const Tensor& grad_bias,
                     const Tensor& grad_out,
                     const Tensor& input,
                     const Tensor& weight,
                     const Conv2dParams& params) {
  const ConvShape s(input, weight, params);
  dispatch_floating(grad_out.dtype(), "conv2d_backward", [&]<typename T>() {
    conv2d_backward_impl<T>(s,
                            data_or_null<T>(grad_input),
                            data_or_null<T>(grad_weight),
                            data_or_null<T>(grad_bias),
                            grad_out.data_ptr<T>(),
                            input.data_ptr<T>(),
                            weight.data_ptr<T>());
  });
}

}  // namespace tandem::backend::cpu
