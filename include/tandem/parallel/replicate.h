// replicate: copies of a module on several devices, as LibTorch's
// torch::nn::parallel::replicate, whose parameters send their gradients
// back to the original.
//
// Each call records one backward node (PyTorch's Broadcast) whose inputs are
// the original parameters (and buffers) that require grad and whose outputs
// are the replicas' copies; its backward sums the replicas' gradients in
// replica order onto the original's device (reduce_add_coalesced), so after
// backward each original .grad holds the sum over replicas, and a parameter
// no replica used gets zeros. With grad mode off the replicas carry no
// history.
//
// The replica on the original's own device shares its storage: its
// parameters alias the original data (but are not leaves), its buffers are
// the original buffers' memory, so in-place buffer updates made by that
// replica persist and those of the others do not.
//
// Each call clones the module anew (Module::clone(device)), as LibTorch's
// replicate does, unless it is given a ReplicaCache: then the replicas'
// module trees are built once and later calls only refresh their tensors
// (and training flags). nn::DataParallel keeps one per instance. A changed
// parameter or buffer set (count, shapes, dtypes, devices, or a replaced
// submodule) rebuilds them, and so does a change to any module's own
// members (its options, a Dropout's p, a field of a user's module): the
// next call's replicas are copies of the module as it is then, as in
// PyTorch, which copies the modules on every call. Only what a member
// points to (a std::vector member's elements) is not seen: call the cache's
// clear() after changing that.
//
//   std::vector<tandem::Device> devices = {"cpu:0", "cpu:1"};
//   tandem::parallel::ReplicaCache cache;
//   auto replicas = tandem::parallel::replicate(model, devices, &cache);
//   auto y1 = replicas[1]->forward(x.to("cpu:1"));
//   y1.sum().backward();   // model's parameters get the gradients
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "tandem/core/device.h"
#include "tandem/core/error.h"
#include "tandem/nn/module.h"
#include "tandem/nn/module_holder.h"
#include "tandem/parallel/gradient_tree.h"

namespace tandem::parallel {

class ReplicaCache;

namespace detail {
struct CachedReplicas;
/// How backward adds the replicas' gradients onto the originals:
/// per_replica[j][i] is replica j's gradient of original i (zeros where it
/// had none); returns each original's sum, on `destination`. Called on
/// the autograd thread each time backward runs through the replicas.
using GradientSum = std::function<std::vector<Tensor>(
    std::vector<std::vector<Tensor>>&& per_replica, Device destination)>;
/// In replica order, ((g0 + g1) + g2) + ... (PyTorch's; the default),
/// recorded under create_graph.
std::vector<Tensor> sum_in_replica_order(std::vector<std::vector<Tensor>>&& per_replica,
                                         Device destination);
/// In one fixed pairwise tree over the replica index (invariant mode, Note
/// [Invariant mode] in parallel/micro_batches.cpp; gradient_tree.h): level
/// by level, (0 + 1), (2 + 3), ..., an odd last one carried up as it is.
/// The tree's shape depends on the replica count only, so the sum has the
/// same bits whichever devices the replicas ran on. Block by block (Note
/// [Blocked sums] in comm.cpp); recorded when grad mode is on
/// (create_graph), so the sum can be differentiated again.
std::vector<Tensor> sum_in_pairwise_tree(std::vector<std::vector<Tensor>>&& per_replica,
                                         Device destination);
/// The same tree when replica j holds the sum of the leaves of subtrees[j]
/// (whole subtrees of the tree, in leaf order, together its leaves
/// [subtrees.front().lo, subtrees.back().hi)): what invariant mode adds
/// when a replica runs a subtree of micro-batches in one forward.
std::vector<Tensor> sum_subtrees_in_pairwise_tree(
    std::vector<std::vector<Tensor>>&& per_replica,
    const std::vector<TreeNode>& subtrees,
    Device destination);
/// replicate() for any module type: the replicas (the module's dynamic
/// type), from `cache` when one is given; backward adds their gradients
/// by `sum`.
std::vector<std::shared_ptr<nn::Module>> replicate_module(
    const std::shared_ptr<nn::Module>& module,
    const std::vector<Device>& devices,
    ReplicaCache* cache,
    GradientSum sum = sum_in_replica_order);
}  // namespace detail

/// The replicas of one module, kept between replicate() calls (see above).
/// One cache serves one module at a time (another module rebuilds it);
/// calls with one cache must not overlap.
class ReplicaCache {
 public:
  ReplicaCache();
  ~ReplicaCache();
  ReplicaCache(const ReplicaCache&) = delete;
  ReplicaCache& operator=(const ReplicaCache&) = delete;

  /// Drops the replicas: the next replicate() builds them afresh.
  void clear();

 private:
  friend std::vector<std::shared_ptr<nn::Module>> detail::replicate_module(
      const std::shared_ptr<nn::Module>&,
      const std::vector<Device>&,
      ReplicaCache*,
      detail::GradientSum);
  std::unique_ptr<detail::CachedReplicas> replicas_;
};

/// One replica of `module` per device of `devices` (none for an empty list),
/// from `cache` when one is given. The module must be Cloneable and have
/// all its parameters and buffers on one device; a replica's parameters()
/// are its own copies.
template <typename ModuleType>
std::vector<std::shared_ptr<ModuleType>> replicate(
    const std::shared_ptr<ModuleType>& module,
    const std::vector<Device>& devices,
    ReplicaCache* cache = nullptr) {
  TANDEM_CHECK(module != nullptr, "replicate: the module is null");
  std::vector<std::shared_ptr<ModuleType>> replicas;
  for (const auto& replica : detail::replicate_module(module, devices, cache)) {
    auto typed = std::dynamic_pointer_cast<ModuleType>(replica);
    TANDEM_CHECK(typed != nullptr,
                 "replicate: clone() of ",
                 module->name(),
                 " returned a ",
                 replica->name(),
                 "; the module must be Cloneable as its own type");
    replicas.push_back(std::move(typed));
  }
  return replicas;
}

template <typename ModuleType>
std::vector<nn::ModuleHolder<ModuleType>> replicate(
    const nn::ModuleHolder<ModuleType>& module,
    const std::vector<Device>& devices,
    ReplicaCache* cache = nullptr) {
  std::vector<nn::ModuleHolder<ModuleType>> holders;
  for (auto& replica : replicate(module.ptr(), devices, cache))
    holders.emplace_back(replica);
  return holders;
}

}  // namespace tandem::parallel
