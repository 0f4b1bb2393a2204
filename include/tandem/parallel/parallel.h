// tandem::parallel: single-process data parallelism over devices (logical
// CPU devices cpu:0, cpu:1, ... or GPUs), as PyTorch's torch.nn.parallel and
// LibTorch's torch::nn::parallel, which is also its name here
// (tandem::nn::parallel), so LibTorch code ports by renaming torch:: to
// tandem::.
//
// - comm.h: broadcast_coalesced, reduce_add_coalesced
// - scatter_gather.h: scatter, gather (differentiable), over TensorTree
// - replicate.h: replicate (cached replicas, gradients flow to the original)
// - parallel_apply.h: parallel_apply on the devices' executor threads
// - data_parallel.h: data_parallel, the composition of the four
// - data_parallel_module.h: the nn::DataParallel module
//
//   namespace nn = tandem::nn;
//   std::vector<tandem::Device> devices = {"cpu:0", "cpu:1"};
//   auto y = nn::parallel::data_parallel(model, x, devices);
//   nn::DataParallel dp(model, nn::DataParallelOptions().device_ids(devices));
#pragma once

#include "tandem/parallel/comm.h"
#include "tandem/parallel/cut_plan.h"
#include "tandem/parallel/data_parallel.h"
#include "tandem/parallel/data_parallel_module.h"
#include "tandem/parallel/parallel_apply.h"
#include "tandem/parallel/replicate.h"
#include "tandem/parallel/scatter_gather.h"
#include "tandem/parallel/share_balancer.h"
#include "tandem/parallel/shares.h"
#include "tandem/parallel/tensor_tree.h"

namespace tandem::nn {
namespace parallel = tandem::parallel;
}  // namespace tandem::nn
