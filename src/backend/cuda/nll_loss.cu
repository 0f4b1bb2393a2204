// CUDA negative log-likelihood loss over log-probabilities [N, C], forward
// and backward (the contract in dispatch.h; the CPU twin is in
// backend/cpu/softmax.cpp).
//
// Forward is two kernels and one wait. Pass 1 gives each sample a warp (the
// lanes share the label-smoothing sum over the classes), writes loss_i when
// wanted, and reduces its block's loss and weight sums (in double, like the
// CPU) to one partial per block; a target outside [0, C) records the
// smallest such sample with atomicMin. Pass 2, one block, adds the partials
// in a fixed order (so the sums do not change from run to run) and looks up
// the bad target. The host copies that small result back, waits for the
// stream, and throws the CPU kernel's IndexError for a bad target.
//
// Backward writes every element of grad_input: a warp's lanes walk the
// classes of a sample, eight samples per block.
#include <algorithm>
#include <cstdint>

#include "backend/cuda/block_reduce.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/loops.cuh"

namespace tandem::backend::cuda {
namespace {

constexpr unsigned long long kNoBadRow = ~0ULL;
constexpr int kRowsPerBlock = kThreads / kWarpSize;
// Pass 1 blocks at most: pass 2 adds this many partials.
constexpr int64_t kMaxPartials = 1024;

// What the forward hands back to the host.
struct NllResult {
  double loss;
  double weight;
  unsigned long long bad_row;  // kNoBadRow, or the first sample with a bad target
  long long bad_target;        // that sample's target
};

// w[k], or 1 without weights.
template <typename T>
__device__ __forceinline__ double weight_at(const T* w, int64_t k) {
  return w ? static_cast<double>(w[k]) : 1.0;
}

template <typename T>
__global__ void nll_forward_kernel(T* losses,  // may be null
                                   const T* input,
                                   const int64_t* target,
                                   const T* w,  // may be null
                                   int64_t rows,
                                   int64_t classes,
                                   double smoothing,
                                   int64_t ignore_index,
                                   double2* partial,
                                   unsigned long long* bad_row) {
  __shared__ double scratch[kWarpSize];
  const int64_t lane = threadIdx.x % kWarpSize;
  double loss_sum = 0, weight_sum = 0;  // lane 0's samples only
  for (int64_t i = blockIdx.x * kRowsPerBlock + threadIdx.x / kWarpSize; i < rows;
       i += static_cast<int64_t>(gridDim.x) * kRowsPerBlock) {
    const int64_t c = target[i];
    double loss = 0;
    if (c != ignore_index) {
      if (c < 0 || c >= classes) {
        if (lane == 0) atomicMin(bad_row, static_cast<unsigned long long>(i));
        continue;
      }
      const T* x = input + i * classes;
      loss = -(1 - smoothing) * weight_at(w, c) * x[c];
      if (smoothing != 0) {
        double smooth = 0;
        for (int64_t k = lane; k < classes; k += kWarpSize)
          smooth += weight_at(w, k) * x[k];
        smooth = warp_sum(smooth);
        loss -= smoothing / static_cast<double>(classes) * smooth;
      }
      weight_sum += lane == 0 ? weight_at(w, c) : 0.0;
    }
    if (lane != 0) continue;
    loss_sum += loss;
    if (losses) losses[i] = static_cast<T>(loss);
  }
  loss_sum = block_sum(loss_sum, scratch);
  weight_sum = block_sum(weight_sum, scratch);
  if (threadIdx.x == 0) partial[blockIdx.x] = make_double2(loss_sum, weight_sum);
}

__global__ void nll_finish_kernel(const double2* partial,
                                  int64_t count,
                                  const int64_t* target,
                                  NllResult* result) {
  __shared__ double scratch[kWarpSize];
  double loss = 0, weight = 0;
  for (int64_t b = threadIdx.x; b < count; b += blockDim.x) {
    loss += partial[b].x;
    weight += partial[b].y;
  }
  loss = block_sum(loss, scratch);
  weight = block_sum(weight, scratch);
  if (threadIdx.x != 0) return;
  result->loss = loss;
  result->weight = weight;
  if (result->bad_row != kNoBadRow) result->bad_target = target[result->bad_row];
}

template <typename T>
NllResult nll_forward_typed(const Tensor& losses,
                            const Tensor& input,
                            const Tensor& target,
                            const Tensor& weight,
                            double smoothing,
                            int64_t ignore_index,
                            cudaStream_t stream) {
  const int64_t rows = input.sizes()[0], classes = input.sizes()[1];
  const int64_t blocks =
      std::clamp<int64_t>((rows + kRowsPerBlock - 1) / kRowsPerBlock, 1, kMaxPartials);
  // The result first, then the partials (16-byte aligned after 32 bytes).
  static_assert(sizeof(NllResult) % alignof(double2) == 0);
  const Storage scratch =
      make_storage(sizeof(NllResult) + sizeof(double2) * blocks, input.device());
  auto* result = static_cast<NllResult*>(scratch->data());
  auto* partial = reinterpret_cast<double2*>(result + 1);
  TANDEM_CUDA_CHECK(cudaMemsetAsync(
      &result->bad_row, 0xff, sizeof(result->bad_row), stream));  // kNoBadRow
  nll_forward_kernel<T>
      <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(data_or_null<T>(losses),
                                                               input.data_ptr<T>(),
                                                               target.data_ptr<int64_t>(),
                                                               data_or_null<T>(weight),
                                                               rows,
                                                               classes,
                                                               smoothing,
                                                               ignore_index,
                                                               partial,
                                                               &result->bad_row);
  TANDEM_CUDA_CHECK_LAUNCH("nll_forward_kernel");
  nll_finish_kernel<<<1, kThreads, 0, stream>>>(
      partial, blocks, target.data_ptr<int64_t>(), result);
  TANDEM_CUDA_CHECK_LAUNCH("nll_finish_kernel");
  NllResult host{};
  TANDEM_CUDA_CHECK(
      cudaMemcpyAsync(&host, result, sizeof(host), cudaMemcpyDeviceToHost, stream));
  TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

template <typename T>
__global__ void nll_backward_kernel(T* grad_input,
                                    const T* grad_output,
                                    int64_t g_stride,
                                    const int64_t* target,
                                    const T* w,  // may be null
                                    int64_t rows,
                                    int64_t classes,
                                    double smoothing,
                                    double scale,
                                    int64_t ignore_index) {
  const double per_class = smoothing / static_cast<double>(classes);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.y) + threadIdx.y; i < rows;
       i += static_cast<int64_t>(gridDim.x) * blockDim.y) {
    T* row = grad_input + i * classes;
    const int64_t c = target[i];
    if (c == ignore_index) {
      for (int64_t k = threadIdx.x; k < classes; k += blockDim.x) row[k] = T(0);
      continue;
    }
    const double g = -scale * static_cast<double>(grad_output[i * g_stride]);
    // The CPU's two expressions: g * per_class * w[k] off the target (adding
    // 0.0 to per_class is exact), g * (per_class + (1 - s)) * w[c] on it.
    for (int64_t k = threadIdx.x; k < classes; k += blockDim.x) {
      const double own = k == c ? 1 - smoothing : 0.0;
      row[k] = static_cast<T>(g * (per_class + own) * weight_at(w, k));
    }
  }
}

template <typename T>
void nll_backward_typed(const Tensor& grad_input,
                        const Tensor& grad_output,
                        const Tensor& target,
                        const Tensor& weight,
                        double smoothing,
                        double scale,
                        int64_t ignore_index,
                        cudaStream_t stream) {
  const int64_t rows = grad_input.sizes()[0], classes = grad_input.sizes()[1];
  if (rows * classes == 0) return;
  // One gradient per sample (reduction none) or one shared by all.
  const int64_t g_stride = grad_output.numel() == 1 ? 0 : 1;
  const dim3 block(kWarpSize, kRowsPerBlock);
  const auto blocks = static_cast<unsigned>(
      std::min<int64_t>((rows + kRowsPerBlock - 1) / kRowsPerBlock, 65535L * 32));
  nll_backward_kernel<T><<<blocks, block, 0, stream>>>(grad_input.data_ptr<T>(),
                                                       grad_output.data_ptr<T>(),
                                                       g_stride,
                                                       target.data_ptr<int64_t>(),
                                                       data_or_null<T>(weight),
                                                       rows,
                                                       classes,
                                                       smoothing,
                                                       scale,
                                                       ignore_index);
  TANDEM_CUDA_CHECK_LAUNCH("nll_backward_kernel");
}

}  // namespace

NllLossSums nll_loss_forward(const Tensor& losses,
                             const Tensor& input,
                             const Tensor& target,
                             const Tensor& weight,
                             double smoothing,
                             int64_t ignore_index) {
  cudaStream_t stream = prepare(input);
  const NllResult r = dispatch_floating(input.dtype(), "nll_loss", [&]<typename T>() {
    return nll_forward_typed<T>(
        losses, input, target, weight, smoothing, ignore_index, stream);
  });
  // Checked where the targets are read, as the CPU kernel (and PyTorch) do.
  TANDEM_CHECK_INDEX(r.bad_row == kNoBadRow,
                     "nll_loss: target ",
                     r.bad_target,
                     " is out of bounds for ",
                     input.sizes()[1],
                     " classes");
  return {r.loss, r.weight};
}

void nll_loss_backward(const Tensor& grad_input,
                       const Tensor& grad_output,
                       const Tensor& target,
                       const Tensor& weight,
                       double smoothing,
                       double scale,
                       int64_t ignore_index) {
  cudaStream_t stream = prepare(grad_input);
  dispatch_floating(grad_input.dtype(), "nll_loss_backward", [&]<typename T>() {
    nll_backward_typed<T>(
        grad_input, grad_output, target, weight, smoothing, scale, ignore_index, stream);
  });
}

}  // namespace tandem::backend::cuda
