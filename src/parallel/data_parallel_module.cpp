#include "tandem/parallel/data_parallel_module.h"

#include "tandem/core/device_guard.h"
#include "tandem/core/error.h"

namespace tandem::nn {

DataParallelImpl::DataParallelImpl(std::shared_ptr<Module> module,
                                   parallel::detail::Forward forward,
                                   const DataParallelOptions& options)
    : module_(std::move(module)), forward_(std::move(forward)), dim_(options.dim()) {
  register_module("module", module_);
  if (options.device_ids()) {
    device_ids_ = *options.device_ids();
    TANDEM_CHECK(!device_ids_.empty(),
                 "DataParallel: device_ids is empty; leave it unset to use every CUDA "
                 "device (or, without CUDA, to call the module directly)");
  } else {
    for (int64_t i = 0; i < device_count(kCUDA); ++i) {
      device_ids_.emplace_back(kCUDA, static_cast<int>(i));
    }
  }
  TANDEM_CHECK(
      !options.invariant() || !device_ids_.empty(),
      "DataParallel: invariant mode needs device_ids (there is no CUDA device to "
      "default to)");
  TANDEM_CHECK(
      options.micro_batch() > 0,
      "DataParallelOptions::micro_batch: expected a positive number of rows, got ",
      options.micro_batch());
  if (device_ids_.empty()) return;
  output_device_ = options.output_device().value_or(device_ids_.front());
  if (device_ids_.size() == 1) module_->to(device_ids_.front());
  if (device_ids_.size() > 1 || options.invariant()) {
    cut_plan_.emplace(device_ids_, options.balance(), options.shares());
  }
  if (options.invariant()) micro_batch_ = options.micro_batch();
}

std::vector<double> DataParallelImpl::shares() const {
  if (cut_plan_) return cut_plan_->shares();
  return std::vector<double>(device_ids_.size(), 1.0);
}

void DataParallelImpl::check_placement() const {
  const Device source = device_ids_.front();
  auto check = [&](const std::vector<Tensor>& tensors) {
    for (const Tensor& t : tensors) {
      TANDEM_CHECK(t.device() == source,
                   "DataParallel: module must have its parameters and buffers on device ",
                   source,
                   " (device_ids[0]) but found one of them on device: ",
                   t.device());
    }
  };
  check(module_->parameters());
  check(module_->buffers());
}

parallel::TensorTree DataParallelImpl::forward(const parallel::TensorTree& input) {
  if (device_ids_.empty()) return forward_(*module_, input);
  check_placement();
  if (micro_batch_) {
    return parallel::detail::micro_batch_apply(module_,
                                               forward_,
                                               input,
                                               device_ids_,
                                               *cut_plan_,
                                               *micro_batch_,
                                               *output_device_,
                                               dim_,
                                               &replicas_);
  }
  if (device_ids_.size() == 1) {
    return forward_(*module_,
                    parallel::detail::scatter_inputs(input, device_ids_, dim_).front());
  }
  const parallel::detail::PlannedScatter planned =
      parallel::detail::scatter_planned(input, device_ids_, *cut_plan_, dim_);
  return parallel::detail::replicate_apply_gather(module_,
                                                  forward_,
                                                  planned.inputs,
                                                  planned.devices,
                                                  *output_device_,
                                                  dim_,
                                                  &replicas_);
}

Tensor DataParallelImpl::forward(const Tensor& input) {
  const parallel::TensorTree out = forward(parallel::TensorTree(input));
  TANDEM_CHECK(out.is_tensor(),
               "DataParallel: the module returned a list of ",
               out.size(),
               " items; pass the input as a TensorTree to get it");
  return out.tensor();
}

}  // namespace tandem::nn
