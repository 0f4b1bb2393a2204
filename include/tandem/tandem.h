// The whole tandem API in one include.
//
//   #include <tandem/tandem.h>
//
//   struct NetImpl : tandem::nn::Module { ... };
//   auto x = tandem::randn({30, 5});
//
// Per-layer headers (tandem/core/..., tandem/ops/..., tandem/nn/...) can be
// included on their own for faster builds.
#pragma once

#include "tandem/core/allocator.h"
#include "tandem/core/blas.h"
#include "tandem/core/cpu_budget.h"
#include "tandem/core/cuda.h"
#include "tandem/core/device.h"
#include "tandem/core/device_guard.h"
#include "tandem/core/device_work_time.h"
#include "tandem/core/dtype.h"
#include "tandem/core/error.h"
#include "tandem/core/executor.h"
#include "tandem/core/generator.h"
#include "tandem/core/optional.h"
#include "tandem/core/profiler.h"
#include "tandem/core/sample_keys.h"
#include "tandem/core/str.h"
#include "tandem/core/tensor.h"
#include "tandem/core/tensor_accessor.h"
#include "tandem/core/tensor_options.h"
#include "tandem/core/warning.h"

#include "tandem/autograd/engine.h"
#include "tandem/autograd/function.h"
#include "tandem/autograd/gradcheck.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/graph/node.h"

#include "tandem/ops/activation.h"
#include "tandem/ops/conv.h"
#include "tandem/ops/conv_transpose.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/indexing.h"
#include "tandem/ops/interpolate.h"
#include "tandem/ops/linalg.h"
#include "tandem/ops/loss.h"
#include "tandem/ops/normalization.h"
#include "tandem/ops/pooling.h"
#include "tandem/ops/reduction.h"
#include "tandem/ops/rnn.h"
#include "tandem/ops/shape.h"

#include "tandem/nn/nn.h"
#include "tandem/optim/optim.h"

#include "tandem/parallel/parallel.h"

#include "tandem/data/data.h"

#include "tandem/io/io.h"

#include "tandem/distributed/distributed.h"
