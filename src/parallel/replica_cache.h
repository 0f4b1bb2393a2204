// Private to the parallel layer: what a ReplicaCache holds, the replica
// module trees behind replicate(). See Note [Replica cache].
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tandem/core/device.h"
#include "tandem/core/tensor.h"
#include "tandem/nn/module.h"
#include "tandem/parallel/replicate.h"

namespace tandem::parallel::detail {

/// A module tree walked once: its modules (pre-order, itself first) and its
/// parameters then buffers, in registration order.
struct ModuleLayout {
  explicit ModuleLayout(const nn::Module& module);
  std::vector<std::shared_ptr<nn::Module>> modules;
  std::vector<Tensor> tensors;
  /// tensors[0, num_parameters) are the parameters, the rest the buffers.
  size_t num_parameters = 0;
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
  TreeSignature signature;
  /// The devices the replicas were made for, one replica each, in the
  /// order they were first asked for.
  std::vector<Device> devices;
  std::vector<Replica> replicas;
  /// Held while the replicas are refreshed and handed out.
  std::mutex mutex;
};

/// The replicas of `module` for `devices`, one each, reused from
/// `cache` when it holds one for that device and this module as it is,
/// else made with Module::clone(device). The pointers are valid until the
/// next call. The caller holds cache.mutex.
std::vector<Replica*> cached_replicas(CachedReplicas& cache,
                                      const std::shared_ptr<nn::Module>& module,
                                      const ModuleLayout& layout,
                                      const std::vector<Device>& devices);

}  // namespace tandem::parallel::detail
