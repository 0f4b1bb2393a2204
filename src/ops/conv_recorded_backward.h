// Private: conv2d's backward written with differentiable ops (conv2d
// itself, index_select, cat, narrow), for create_graph; conv_transpose.cpp
// uses its weight gradient and pad_end too. The fast path is
// the backend's kernel; this one is recorded, so the gradients of a
// convolution can be differentiated again (a gradient penalty through a
// CNN). See Note [Convolution backward as convolutions] in the .cpp.
#pragma once

#include "backend/dispatch.h"
#include "tandem/graph/node.h"

namespace tandem::detail {

/// `t` with `count` zeros appended along `dim` (a recorded op; `t` itself
/// when count <= 0).
Tensor pad_end(const Tensor& t, int64_t dim, int64_t count);

/// Gradients of conv2d(x, w, bias) for the output gradient g (all 4-D,
/// batched): {input, weight, bias}, each only where its flag asks.
autograd::tensor_list recorded_conv2d_backward(const Tensor& g,
                                               const Tensor& x,
                                               const Tensor& w,
                                               const backend::Conv2dParams& params,
                                               bool need_input,
                                               bool need_weight,
                                               bool need_bias);

}  // namespace tandem::detail
