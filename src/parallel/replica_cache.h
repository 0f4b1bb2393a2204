// Private to the parallel layer: what a ReplicaCache holds, the replica
// module trees behind replicate(). See Note [Replica cache].
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tandem/core/device.h"
#include "tandem/core/tensor.h"
#include "tandem/nn/module.h"
#include "tandem/parallel/replicate.h"

namespace tandem::parallel::detail {

/// A module tree walked once: its modules (pre-order, itself first) with
/// their structure versions, and its parameters then buffers, in
/// registration order.
struct ModuleLayout {
  explicit ModuleLayout(const nn::Module& module);
  /// Whether `module` is still the tree walked: the same modules, each at
  /// the structure version it had then (nn::detail::structure_version).
  /// Parents come before their children, so a module that left the tree
  /// is never read: its parent's version has changed first.
  bool still_describes(const nn::Module& module) const;
  std::vector<nn::Module*> modules;
  std::vector<uint64_t> versions;
  std::vector<Tensor> tensors;
  /// tensors[0, num_parameters) are the parameters, the rest the buffers.
  size_t num_parameters = 0;
};

/// A layout's distinct tensors (a tensor registered twice is broadcast
/// once) and, for each slot of the layout, which of them it is.
struct DistinctTensors {
  explicit DistinctTensors(const std::vector<Tensor>& slots);
  std::vector<Tensor> tensors;
  std::vector<size_t> of_slot;
};

/// One clone of the original, with the handles refresh() writes into,
/// aligned with the original's ModuleLayout.
struct Replica {
  std::shared_ptr<nn::Module> module;
  ModuleLayout layout;
};

/// What identifies the original the replicas were cloned from: its
/// modules, their own objects' bytes, and its tensors' identities and
/// geometry.
struct TreeSignature {
  struct TensorKey {
    const TensorImpl* impl;
    IntList sizes;
    ScalarType dtype;
    Device device;
    bool operator==(const TensorKey&) const = default;
  };
  std::vector<const nn::Module*> modules;
  std::vector<std::string> states;
  std::vector<TensorKey> tensors;
  bool operator==(const TreeSignature&) const = default;
};

struct CachedReplicas {
  std::weak_ptr<nn::Module> original;
  /// The original walked, and its distinct tensors, kept while the walk
  /// still describes it.
  std::optional<ModuleLayout> layout;
  std::optional<DistinctTensors> distinct;
  TreeSignature signature;
  /// The devices the replicas were made for, one replica each, in the
  /// order they were first asked for.
  std::vector<Device> devices;
  std::vector<Replica> replicas;
  /// Held while the replicas are refreshed and handed out.
  std::mutex mutex;
};

/// Makes cache.layout and cache.distinct describe `module`: walks it,
/// unless the walk kept there still describes it. The caller holds
/// cache.mutex.
void walk_original(CachedReplicas& cache, const std::shared_ptr<nn::Module>& module);

/// The replicas of `module` for `devices`, one each, reused from
/// `cache` when it holds one for that device and this module as it is,
/// else made with Module::clone(device). walk_original(cache, module)
/// came first. The pointers are valid until the next call. The caller
/// holds cache.mutex.
std::vector<Replica*> cached_replicas(CachedReplicas& cache,
                                      const std::shared_ptr<nn::Module>& module,
                                      const std::vector<Device>& devices);

}  // namespace tandem::parallel::detail
