// data_parallel: one forward of a module over several devices, as
// LibTorch's torch::nn::parallel::data_parallel: scatter the input along
// `dim`, replicate the module onto the first k devices (k = number of
// pieces), parallel_apply, gather onto `output_device` (default: the first
// device). Backward through the result leaves in the module's parameters the
// gradients of the whole batch.
//
// As in LibTorch, the module may live on any one device (gradients land
// there) and a single device runs the module itself there: the module and
// input are moved to it and the output to `output_device`. Without a device
// list, every CUDA device is used; with neither a list nor CUDA the module
// is simply called (tandem's CPU fallback, as DataParallel's).
//
//   std::vector<tandem::Device> devices = {"cpu:0", "cpu:1"};
//   auto y = tandem::nn::parallel::data_parallel(model, x, devices);
//   tandem::mse_loss(y, target).backward();
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "tandem/core/device.h"
#include "tandem/core/error.h"
#include "tandem/core/tensor.h"
#include "tandem/nn/module.h"
#include "tandem/nn/module_holder.h"
#include "tandem/parallel/parallel_apply.h"
#include "tandem/parallel/replicate.h"
#include "tandem/parallel/tensor_tree.h"

namespace tandem::parallel {

class CutPlan;       // cut_plan.h
class ReplicaCache;  // replicate.h

namespace detail {

/// A module's forward, type-erased over the module's type.
using Forward = std::function<TensorTree(nn::Module&, const TensorTree&)>;

/// The module type behind a holder (Linear -> LinearImpl) or a shared_ptr;
/// no `type` for anything else.
template <typename ModuleType>
struct module_type_of {};
template <typename M>
struct module_type_of<std::shared_ptr<M>> {
  using type = M;
};
template <nn::module_holder ModuleType>
struct module_type_of<ModuleType> {
  using type = typename ModuleType::ContainedType;
};
template <typename ModuleType>
using module_type_of_t = typename module_type_of<ModuleType>::type;

/// A module type data parallelism can run: a Module with a forward taking
/// a Tensor or a TensorTree.
template <typename M>
concept replicable_module = std::derived_from<M, nn::Module> &&
    (tree_forward<M> || tensor_forward<M>);

template <typename ModuleType>
std::shared_ptr<module_type_of_t<ModuleType>> module_pointer(const ModuleType& module) {
  if constexpr (nn::module_holder<ModuleType>) {
    return module.ptr();
  } else {
    TANDEM_CHECK(module != nullptr, "data_parallel: the module is null");
    return module;
  }
}

/// Forward for modules of type M (replicas are clones, so of type M too).
template <replicable_module M>
Forward forward_of() {
  return [](nn::Module& module, const TensorTree& input) {
    auto* typed = dynamic_cast<M*>(&module);
    TANDEM_INTERNAL_ASSERT(typed != nullptr, "a replica of another module type");
    return call_forward(*typed, input);
  };
}

/// The per-device inputs: scatter(inputs), or, when `inputs` holds no
/// tensor, `inputs` once (the module then runs once, on devices[0]).
std::vector<TensorTree> scatter_inputs(const TensorTree& inputs,
                                       const std::vector<Device>& devices,
                                       int64_t dim);

/// The size along `dim` of the first defined tensor of `inputs` (0 when
/// there is none); scatter's error for a 0-dimensional one.
int64_t batch_rows(const TensorTree& inputs,
                   const std::vector<Device>& devices,
                   int64_t dim);

/// The input cut by `plan` (cut_plan.h): the devices that got rows and
/// their pieces; a tree without tensors, or an empty batch, goes whole to
/// devices[0].
struct PlannedScatter {
  std::vector<Device> devices;
  std::vector<TensorTree> inputs;
};
PlannedScatter scatter_planned(const TensorTree& inputs,
                               const std::vector<Device>& devices,
                               CutPlan& plan,
                               int64_t dim);

/// replicate onto the first scattered.size() devices (from `cache` when
/// given), parallel_apply with masks keyed by sample (the pieces are the
/// batch's rows in order), gather onto `output_device`.
TensorTree replicate_apply_gather(const std::shared_ptr<nn::Module>& module,
                                  const Forward& forward,
                                  const std::vector<TensorTree>& scattered,
                                  const std::vector<Device>& devices,
                                  Device output_device,
                                  int64_t dim,
                                  ReplicaCache* cache);

/// Invariant mode's forward (Note [Invariant mode] in micro_batches.cpp):
/// `input` cut along `dim` into micro-batches of `micro_batch` rows, which
/// `plan` hands out whole to `devices` (it counts micro-batches), one
/// replica each (from `cache`), run with sample-keyed masks and gathered
/// onto `output_device` in micro-batch order. Refuses a module that
/// normalises over the batch.
TensorTree micro_batch_apply(const std::shared_ptr<nn::Module>& module,
                             const Forward& forward,
                             const TensorTree& input,
                             const std::vector<Device>& devices,
                             CutPlan& plan,
                             int64_t micro_batch,
                             Device output_device,
                             int64_t dim,
                             ReplicaCache* cache);

/// One process's part of invariant mode's forward (DistributedDataParallel
/// in invariant mode): `input` holds micro-batches first, first + 1, ...
/// of the whole batch, cut along `dim` (micro_batch rows each, the last one
/// possibly fewer), at least one. Each runs on a replica of its own on
/// `device` (from `cache`) with the sample-keyed masks of its place in the
/// whole batch, from `seed` (draw_mask_seed, the same in every process);
/// the outputs are gathered on `device` in order. Backward hands the
/// replicas' gradients (replica j: micro-batch first + j) to `sum`, which
/// completes the tree across the processes. Refuses a module that
/// normalises over the batch.
TensorTree micro_batch_part_apply(const std::shared_ptr<nn::Module>& module,
                                  const Forward& forward,
                                  const TensorTree& input,
                                  Device device,
                                  int64_t micro_batch,
                                  int64_t first,
                                  uint64_t seed,
                                  int64_t dim,
                                  ReplicaCache* cache,
                                  GradientSum sum);

/// The seed of a forward's sample-keyed masks (Note [Masks keyed by sample]
/// in data_parallel.cpp): a draw from the default generator while `module`
/// trains, 0 in eval mode.
uint64_t draw_mask_seed(const nn::Module& module);

TensorTree data_parallel(const std::shared_ptr<nn::Module>& module,
                         const Forward& forward,
                         const TensorTree& input,
                         const std::optional<std::vector<Device>>& devices,
                         const std::optional<Device>& output_device,
                         int64_t dim);

}  // namespace detail

/// Runs `module` (a holder or shared_ptr) on `input` over `devices`.
template <typename ModuleType>
requires detail::replicable_module<detail::module_type_of_t<ModuleType>> TensorTree
data_parallel(const ModuleType& module,
              const TensorTree& input,
              const std::optional<std::vector<Device>>& devices = std::nullopt,
              const std::optional<Device>& output_device = std::nullopt,
              int64_t dim = 0) {
  using M = detail::module_type_of_t<ModuleType>;
  return detail::data_parallel(detail::module_pointer(module),
                               detail::forward_of<M>(),
                               input,
                               devices,
                               output_device,
                               dim);
}

/// One tensor in, one tensor out (LibTorch's signature).
template <typename ModuleType>
requires detail::replicable_module<detail::module_type_of_t<ModuleType>> Tensor
data_parallel(const ModuleType& module,
              const Tensor& input,
              const std::optional<std::vector<Device>>& devices = std::nullopt,
              const std::optional<Device>& output_device = std::nullopt,
              int64_t dim = 0) {
  const TensorTree out =
      data_parallel(module, TensorTree(input), devices, output_device, dim);
  TANDEM_CHECK(out.is_tensor(),
               "data_parallel: the module returned a list of ",
               out.size(),
               " items; pass the input as a TensorTree to get it");
  return out.tensor();
}

}  // namespace tandem::parallel
