// Private to the parallel layer: the cache of replica module trees behind
// replicate(). See Note [Replica cache].
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "tandem/core/device.h"
#include "tandem/core/tensor.h"
#include "tandem/nn/module.h"

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

/// The replicas of one module on one device list. `mutex` is held while
/// they are refreshed and handed out.
struct ReplicaSet {
  std::vector<Device> devices;
  std::vector<Replica> replicas;
  std::mutex mutex;
};

/// The cached replicas of `module` for `devices` (or for a longer device
/// list starting with them: use the first devices.size()), built or
/// extended with Module::clone(device) where needed.
std::shared_ptr<ReplicaSet> cached_replicas(const std::shared_ptr<nn::Module>& module,
                                            const ModuleLayout& layout,
                                            const std::vector<Device>& devices);

/// Drops every cached replica set of `module`.
void forget_replicas(const nn::Module& module);

}  // namespace tandem::parallel::detail
