// CUDA 2-D convolution, forward and backward, through cuDNN.
//
// Note [cuDNN convolution plans]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A plan holds, for one geometry (every size and parameter, the dtype, the
// TF32 switch and the device), the cuDNN descriptors and, for each direction
// (forward, input gradient, weight gradient), an algorithm with its math
// type and workspace size. Plans are made on first use and kept for the
// life of the process, so a training step after the first does no
// algorithm search and no descriptor setup.
//
// The algorithms come from cuDNN's heuristics (the _v7 queries, which run
// nothing on the GPU): the first candidate in cuDNN's ranking that is
// supported for these operands, keeps float32 exact when TF32 is off, and
// needs at most kWorkspaceLimit bytes of workspace. When none qualifies, the
// implicit-GEMM algorithms (algo 0 of each direction), which support
// float64 too, are used. Math types follow PyTorch: float32 without TF32
// asks for CUDNN_FMA_MATH (CUDNN_DEFAULT_MATH lets cuDNN use TF32 tensor
// cores on Ampere and later), everything else for CUDNN_DEFAULT_MATH.
//
// Plans are shared by the threads that run convolutions: each direction has
// its own convolution descriptor (so no math type is ever changed on a
// shared one), a plan is never modified once made, and the map holding the
// plans is guarded by a mutex.
#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_libraries.h"
#include "tandem/core/error.h"

namespace tandem::backend::cuda {
namespace {

// The most workspace one convolution may use (Note [cuDNN convolution plans]).
constexpr size_t kWorkspaceLimit = size_t{1} << 30;

// An owned cuDNN descriptor.
template <typename D, cudnnStatus_t (*Create)(D*), cudnnStatus_t (*Destroy)(D)>
class Descriptor {
 public:
  Descriptor() { TANDEM_CUDNN_CHECK(Create(&desc_)); }
  ~Descriptor() { Destroy(desc_); }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  D get() const { return desc_; }

 private:
  D desc_{};
};

using TensorDescriptor = Descriptor<cudnnTensorDescriptor_t,
                                    &cudnnCreateTensorDescriptor,
                                    &cudnnDestroyTensorDescriptor>;
using FilterDescriptor = Descriptor<cudnnFilterDescriptor_t,
                                    &cudnnCreateFilterDescriptor,
                                    &cudnnDestroyFilterDescriptor>;
using ConvDescriptor = Descriptor<cudnnConvolutionDescriptor_t,
                                  &cudnnCreateConvolutionDescriptor,
                                  &cudnnDestroyConvolutionDescriptor>;

cudnnDataType_t data_type(ScalarType dtype) {
  return dtype == kFloat64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
}

// cuDNN reads alpha and beta as double for double data, else as float.
const void* one(ScalarType dtype) {
  static constexpr float kOneFloat = 1;
  static constexpr double kOneDouble = 1;
  return dtype == kFloat64 ? static_cast<const void*>(&kOneDouble) : &kOneFloat;
}
const void* zero(ScalarType dtype) {
  static constexpr float kZeroFloat = 0;
  static constexpr double kZeroDouble = 0;
  return dtype == kFloat64 ? static_cast<const void*>(&kZeroDouble) : &kZeroFloat;
}

// cuDNN's legacy API counts in int; larger tensors are refused up front.
int to_int(int64_t v) {
  TANDEM_CHECK(v <= INT_MAX,
               "conv2d: CUDA convolutions support tensors of fewer than 2^31 ",
               "elements, got a tensor of ",
               v,
               " elements (use a smaller batch)");
  return static_cast<int>(v);
}

void set_nchw(const TensorDescriptor& desc,
              ScalarType dtype,
              int64_t n,
              int64_t c,
              int64_t h,
              int64_t w) {
  to_int(n * c * h * w);
  TANDEM_CUDNN_CHECK(cudnnSetTensor4dDescriptor(desc.get(),
                                                CUDNN_TENSOR_NCHW,
                                                data_type(dtype),
                                                to_int(n),
                                                to_int(c),
                                                to_int(h),
                                                to_int(w)));
}

// Everything that decides a plan: device index, dtype, TF32, the input's
// and weight's sizes and the parameters.
using PlanKey = std::array<int64_t, 17>;

struct PlanKeyHash {
  size_t operator()(const PlanKey& key) const {
    size_t h = 0;
    for (int64_t v : key) h = h * 1000003 ^ std::hash<int64_t>()(v);
    return h;
  }
};

template <typename Algo>
struct Choice {
  Algo algo;
  size_t workspace;
};

// The first supported candidate of cuDNN's ranking whose math type is
// allowed and whose workspace fits, else `fallback` (Note [cuDNN
// convolution plans]). Leaves the chosen math type on `conv`.
// workspace_of(algo, &bytes) asks cuDNN for an algorithm's workspace.
template <typename Perf, typename Algo, typename WorkspaceOf>
Choice<Algo> first_fit(const Perf* ranked,
                       int count,
                       cudnnMathType_t math,
                       const ConvDescriptor& conv,
                       WorkspaceOf&& workspace_of,
                       Algo fallback) {
  for (int i = 0; i < count; ++i) {
    const Perf& p = ranked[i];
    if (p.status != CUDNN_STATUS_SUCCESS) continue;
    // Strict float32 admits only FMA kernels (PyTorch asserts the same).
    if (math == CUDNN_FMA_MATH && p.mathType != CUDNN_FMA_MATH) continue;
    TANDEM_CUDNN_CHECK(cudnnSetConvolutionMathType(conv.get(), p.mathType));
    size_t bytes = 0;
    if (workspace_of(p.algo, &bytes) == CUDNN_STATUS_SUCCESS &&
        bytes <= kWorkspaceLimit) {
      return {p.algo, bytes};
    }
  }
  TANDEM_CUDNN_CHECK(cudnnSetConvolutionMathType(conv.get(), math));
  size_t bytes = 0;
  TANDEM_CUDNN_CHECK(workspace_of(fallback, &bytes));
  return {fallback, bytes};
}

// Note [cuDNN convolution plans]. x is the input (and input gradient), y
// the output (and output gradient), w the weight (and its gradient), bias
// [1, Cout, 1, 1] the bias (and its gradient).
struct Plan {
  TensorDescriptor x, y, bias;
  FilterDescriptor w;
  ConvDescriptor forward_conv, data_conv, filter_conv;
  Choice<cudnnConvolutionFwdAlgo_t> forward{};
  Choice<cudnnConvolutionBwdDataAlgo_t> data{};
  Choice<cudnnConvolutionBwdFilterAlgo_t> filter{};

  Plan(cudnnHandle_t handle,
       const Tensor& input,
       const Tensor& weight,
       const Conv2dParams& p,
       cudnnMathType_t math) {
    const ScalarType dtype = input.dtype();
    const int64_t n = input.size(0), cin = input.size(1);
    const int64_t cout = weight.size(0), kh = weight.size(2), kw = weight.size(3);
    const int64_t out_h =
        (input.size(2) + 2 * p.padding[0] - p.dilation[0] * (kh - 1) - 1) / p.stride[0] +
        1;
    const int64_t out_w =
        (input.size(3) + 2 * p.padding[1] - p.dilation[1] * (kw - 1) - 1) / p.stride[1] +
        1;
    set_nchw(x, dtype, n, cin, input.size(2), input.size(3));
    set_nchw(y, dtype, n, cout, out_h, out_w);
    set_nchw(bias, dtype, 1, cout, 1, 1);
    to_int(weight.numel());
    TANDEM_CUDNN_CHECK(cudnnSetFilter4dDescriptor(w.get(),
                                                  data_type(dtype),
                                                  CUDNN_TENSOR_NCHW,
                                                  to_int(cout),
                                                  to_int(weight.size(1)),
                                                  to_int(kh),
                                                  to_int(kw)));
    for (const ConvDescriptor* conv : {&forward_conv, &data_conv, &filter_conv}) {
      TANDEM_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv->get(),
                                                         to_int(p.padding[0]),
                                                         to_int(p.padding[1]),
                                                         to_int(p.stride[0]),
                                                         to_int(p.stride[1]),
                                                         to_int(p.dilation[0]),
                                                         to_int(p.dilation[1]),
                                                         CUDNN_CROSS_CORRELATION,
                                                         data_type(dtype)));
      TANDEM_CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv->get(), to_int(p.groups)));
      TANDEM_CUDNN_CHECK(cudnnSetConvolutionMathType(conv->get(), math));
    }
    choose_algorithms(handle, math);
  }

  void choose_algorithms(cudnnHandle_t handle, cudnnMathType_t math) {
    int count = 0;
    cudnnConvolutionFwdAlgoPerf_t fwd[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    TANDEM_CUDNN_CHECK(
        cudnnGetConvolutionForwardAlgorithm_v7(handle,
                                               x.get(),
                                               w.get(),
                                               forward_conv.get(),
                                               y.get(),
                                               CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                               &count,
                                               fwd));
    forward = first_fit(
        fwd,
        count,
        math,
        forward_conv,
        [&](cudnnConvolutionFwdAlgo_t algo, size_t* bytes) {
          return cudnnGetConvolutionForwardWorkspaceSize(
              handle, x.get(), w.get(), forward_conv.get(), y.get(), algo, bytes);
        },
        CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM);

    cudnnConvolutionBwdDataAlgoPerf_t bwd_data[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    TANDEM_CUDNN_CHECK(
        cudnnGetConvolutionBackwardDataAlgorithm_v7(handle,
                                                    w.get(),
                                                    y.get(),
                                                    data_conv.get(),
                                                    x.get(),
                                                    CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                                    &count,
                                                    bwd_data));
    data = first_fit(
        bwd_data,
        count,
        math,
        data_conv,
        [&](cudnnConvolutionBwdDataAlgo_t algo, size_t* bytes) {
          return cudnnGetConvolutionBackwardDataWorkspaceSize(
              handle, w.get(), y.get(), data_conv.get(), x.get(), algo, bytes);
        },
        CUDNN_CONVOLUTION_BWD_DATA_ALGO_0);

    cudnnConvolutionBwdFilterAlgoPerf_t
        bwd_filter[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    TANDEM_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
        handle,
        x.get(),
        y.get(),
        filter_conv.get(),
        w.get(),
        CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
        &count,
        bwd_filter));
    filter = first_fit(
        bwd_filter,
        count,
        math,
        filter_conv,
        [&](cudnnConvolutionBwdFilterAlgo_t algo, size_t* bytes) {
          return cudnnGetConvolutionBackwardFilterWorkspaceSize(
              handle, x.get(), y.get(), filter_conv.get(), w.get(), algo, bytes);
        },
        CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0);
  }
};

// The plan for these operands, made on first use (Note [cuDNN convolution
// plans]).
const Plan& plan_for(cudnnHandle_t handle,
                     const Tensor& input,
                     const Tensor& weight,
                     const Conv2dParams& p) {
  const ScalarType dtype = input.dtype();
  const bool tf32 = dtype == kFloat32 && allow_tf32();
  const cudnnMathType_t math =
      dtype == kFloat32 && !tf32 ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
  const PlanKey key{input.device().index(),
                    static_cast<int64_t>(dtype),
                    tf32,
                    input.size(0),
                    input.size(1),
                    input.size(2),
                    input.size(3),
                    weight.size(0),
                    weight.size(2),
                    weight.size(3),
                    p.stride[0],
                    p.stride[1],
                    p.padding[0],
                    p.padding[1],
                    p.dilation[0],
                    p.dilation[1],
                    p.groups};
  // Never destroyed: plans may be used by threads that outlive static
  // destruction, and cuDNN may be unloaded before it.
  static auto* plans =
      new std::unordered_map<PlanKey, std::unique_ptr<Plan>, PlanKeyHash>;
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<Plan>& plan = (*plans)[key];
  if (plan == nullptr) plan = std::make_unique<Plan>(handle, input, weight, p, math);
  return *plan;
}

void* workspace_or_null(Device device, size_t bytes) {
  return bytes == 0 ? nullptr : workspace(device, bytes);
}

void zero_fill(const Tensor& t, cudaStream_t stream) {
  if (t.defined() && t.numel() > 0) {
    TANDEM_CUDA_CHECK(cudaMemsetAsync(t.data_ptr(), 0, t.nbytes(), stream));
  }
}

// Descriptors of an [N, C, H, W] tensor and of its per-channel bias, for
// the convolutions without a plan (no input channels or an empty image).
struct BiasDescriptors {
  TensorDescriptor y, bias;
  explicit BiasDescriptors(const Tensor& out) {
    set_nchw(y, out.dtype(), out.size(0), out.size(1), out.size(2), out.size(3));
    set_nchw(bias, out.dtype(), 1, out.size(1), 1, 1);
  }
};

}  // namespace

void conv2d(const Tensor& out,
            const Tensor& input,
            const Tensor& weight,
            const Tensor& bias,
            const Conv2dParams& params) {
  const cudaStream_t stream = prepare(out);
  if (out.numel() == 0) return;
  cudnnHandle_t handle = cudnn_handle(out.device());
  const ScalarType dtype = out.dtype();
  if (input.numel() == 0 || weight.numel() == 0) {
    // Every window sees only padding (or no channels): out = bias or 0.
    zero_fill(out, stream);
    if (!bias.defined()) return;
    const BiasDescriptors d(out);
    TANDEM_CUDNN_CHECK(cudnnAddTensor(handle,
                                      one(dtype),
                                      d.bias.get(),
                                      bias.data_ptr(),
                                      one(dtype),
                                      d.y.get(),
                                      out.data_ptr()));
    return;
  }
  const Plan& plan = plan_for(handle, input, weight, params);
  TANDEM_CUDNN_CHECK(
      cudnnConvolutionForward(handle,
                              one(dtype),
                              plan.x.get(),
                              input.data_ptr(),
                              plan.w.get(),
                              weight.data_ptr(),
                              plan.forward_conv.get(),
                              plan.forward.algo,
                              workspace_or_null(out.device(), plan.forward.workspace),
                              plan.forward.workspace,
                              zero(dtype),
                              plan.y.get(),
                              out.data_ptr()));
  if (!bias.defined()) return;
  TANDEM_CUDNN_CHECK(cudnnAddTensor(handle,
                                    one(dtype),
                                    plan.bias.get(),
                                    bias.data_ptr(),
                                    one(dtype),
                                    plan.y.get(),
                                    out.data_ptr()));
}

void conv2d_backward(const Tensor& grad_input,
                     const Tensor& grad_weight,
                     const Tensor& grad_bias,
                     const Tensor& grad_out,
                     const Tensor& input,
                     const Tensor& weight,
                     const Conv2dParams& params) {
  const cudaStream_t stream = prepare(grad_out);
  const ScalarType dtype = grad_out.dtype();
  if (grad_out.numel() == 0 || input.numel() == 0 || weight.numel() == 0) {
    // Nothing flows back to the input or weight; the bias gradient is the
    // sum of grad_out over samples and positions (0 when it is empty).
    zero_fill(grad_input, stream);
    zero_fill(grad_weight, stream);
    zero_fill(grad_bias, stream);
    if (!grad_bias.defined() || grad_out.numel() == 0) return;
    const BiasDescriptors d(grad_out);
    TANDEM_CUDNN_CHECK(cudnnConvolutionBackwardBias(cudnn_handle(grad_out.device()),
                                                    one(dtype),
                                                    d.y.get(),
                                                    grad_out.data_ptr(),
                                                    zero(dtype),
                                                    d.bias.get(),
                                                    grad_bias.data_ptr()));
    return;
  }
  cudnnHandle_t handle = cudnn_handle(grad_out.device());
  const Plan& plan = plan_for(handle, input, weight, params);
  // One workspace serves both products: they run one after the other on
  // the stream.
  size_t bytes = 0;
  if (grad_input.defined()) bytes = plan.data.workspace;
  if (grad_weight.defined()) bytes = std::max(bytes, plan.filter.workspace);
  void* scratch = workspace_or_null(grad_out.device(), bytes);
  if (grad_input.defined()) {
    TANDEM_CUDNN_CHECK(cudnnConvolutionBackwardData(handle,
                                                    one(dtype),
                                                    plan.w.get(),
                                                    weight.data_ptr(),
                                                    plan.y.get(),
                                                    grad_out.data_ptr(),
                                                    plan.data_conv.get(),
                                                    plan.data.algo,
                                                    scratch,
                                                    plan.data.workspace,
                                                    zero(dtype),
                                                    plan.x.get(),
                                                    grad_input.data_ptr()));
  }
  if (grad_weight.defined()) {
    TANDEM_CUDNN_CHECK(cudnnConvolutionBackwardFilter(handle,
                                                      one(dtype),
                                                      plan.x.get(),
                                                      input.data_ptr(),
                                                      plan.y.get(),
                                                      grad_out.data_ptr(),
                                                      plan.filter_conv.get(),
                                                      plan.filter.algo,
                                                      scratch,
                                                      plan.filter.workspace,
                                                      zero(dtype),
                                                      plan.w.get(),
                                                      grad_weight.data_ptr()));
  }
  if (grad_bias.defined()) {
    TANDEM_CUDNN_CHECK(cudnnConvolutionBackwardBias(handle,
                                                    one(dtype),
                                                    plan.y.get(),
                                                    grad_out.data_ptr(),
                                                    zero(dtype),
                                                    plan.bias.get(),
                                                    grad_bias.data_ptr()));
  }
}

}  // namespace tandem::backend::cuda
