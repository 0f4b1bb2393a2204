#include "parallel/replica_cache.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>

#include "tandem/core/error.h"

namespace tandem::parallel::detail {
namespace {

// Note [Replica cache]
// ~~~~~~~~~~~~~~~~~~~~
// Rebuilding replicas' module trees on every forward is what makes
// PyTorch's DataParallel slow for small models (its pain point 3). A
// ReplicaCache, which each nn::DataParallel owns, clones the tree once per
// device and afterwards only points the replicas' tensors at fresh
// data (replicate.cpp). Nothing is shared between caches or kept
// process-wide: the replicas live and die with their DataParallel. The
// cache keeps its replicas while the module is the same one with the same
// signature: the modules, every parameter and buffer's identity, shape,
// dtype and device, and each module's own object as bytes
// (nn::detail::object_state). PyTorch's proposals to cache replicas
// stalled on users who change dp.module between calls; the bytes catch
// those changes: a Dropout's p, a BatchNorm's momentum, a member of a
// user's module, a tensor or submodule member put in place of another. Any
// of them rebuilds the replicas, so the next forward runs them as the
// original now is. What a member points to (the elements of a std::vector
// member, a long string) is not compared; ReplicaCache::clear() forces a
// rebuild after such a change. The training flag is left out: replicate
// copies it on every call. The module's walk (its modules, tensors and
// distinct tensors: ModuleLayout, DistinctTensors) is kept as well, while
// every module in it has the structure version it had when walked
// (nn::detail::structure_version, new at each registration, replacement
// or assignment), so a forward walks the tree, building no names and
// hashing nothing, only after the tree changed; the signature is then
// read off the kept walk. The cache holds the module weakly (the walk
// points at its modules without owning them, and is read only while the
// module is alive and unchanged). It keeps one
// replica per device it was asked for, so a request for some of its
// devices (DataParallel's last, short batch, or a cut by shares that gives
// a device no rows) uses theirs, and a new device adds one.

TreeSignature signature_of(const ModuleLayout& layout) {
  TreeSignature s;
  for (const nn::Module* m : layout.modules) {
    s.modules.push_back(m);
    s.states.push_back(nn::detail::object_state(*m));
  }
  for (const Tensor& t : layout.tensors) {
    s.tensors.push_back({t.unsafe_impl(), t.sizes(), t.dtype(), t.device()});
  }
  return s;
}

// A replica of `original` on `device`, cloned.
Replica clone_replica(const nn::Module& original,
                      const ModuleLayout& layout,
                      Device device) {
  std::shared_ptr<nn::Module> copy = original.clone(device);
  ModuleLayout copy_layout(*copy);
  TANDEM_CHECK(copy_layout.modules.size() == layout.modules.size() &&
                   copy_layout.tensors.size() == layout.tensors.size(),
               "replicate: the clone of ",
               original.name(),
               " has ",
               copy_layout.modules.size(),
               " modules and ",
               copy_layout.tensors.size(),
               " parameters and buffers, but the original has ",
               layout.modules.size(),
               " and ",
               layout.tensors.size());
  for (const auto& m : copy_layout.modules) nn::detail::mark_as_replica(*m);
  return Replica{std::move(copy), std::move(copy_layout)};
}

}  // namespace

ModuleLayout::ModuleLayout(const nn::Module& module) {
  modules.push_back(const_cast<nn::Module*>(&module));
  for (const auto& m : module.modules(/*include_self=*/false)) modules.push_back(m.get());
  for (const nn::Module* m : modules)
    versions.push_back(nn::detail::structure_version(*m));
  tensors = module.parameters();
  num_parameters = tensors.size();
  for (const Tensor& b : module.buffers()) tensors.push_back(b);
}

bool ModuleLayout::still_describes(const nn::Module& module) const {
  if (modules.front() != &module) return false;
  for (size_t i = 0; i < modules.size(); ++i) {
    if (nn::detail::structure_version(*modules[i]) != versions[i]) return false;
  }
  return true;
}

DistinctTensors::DistinctTensors(const std::vector<Tensor>& slots) {
  std::unordered_map<const TensorImpl*, size_t> index;
  for (const Tensor& t : slots) {
    auto [it, inserted] = index.try_emplace(t.unsafe_impl(), tensors.size());
    if (inserted) tensors.push_back(t);
    of_slot.push_back(it->second);
  }
}

void walk_original(CachedReplicas& cache, const std::shared_ptr<nn::Module>& module) {
  // Another original (or none yet): its walk may point at freed modules.
  const bool same_original = cache.original.lock() == module;
  if (same_original && cache.layout && cache.layout->still_describes(*module)) return;
  cache.layout.emplace(*module);
  cache.distinct.emplace(cache.layout->tensors);
}

std::vector<Replica*> cached_replicas(CachedReplicas& cache,
                                      const std::shared_ptr<nn::Module>& module,
                                      const std::vector<Device>& devices) {
  const ModuleLayout& layout = *cache.layout;
  TreeSignature signature = signature_of(layout);
  if (cache.original.lock() != module || cache.signature != signature) {
    cache.original = module;
    cache.signature = std::move(signature);
    cache.devices.clear();
    cache.replicas.clear();
  }
  // The k-th request for a device takes that device's k-th replica (a list
  // may name a device twice: two replicas there).
  std::vector<size_t> slots;
  for (size_t j = 0; j < devices.size(); ++j) {
    const auto earlier = std::count(devices.begin(), devices.begin() + j, devices[j]);
    size_t slot = 0;
    for (ptrdiff_t seen = -1; slot < cache.devices.size(); ++slot) {
      if (cache.devices[slot] == devices[j] && ++seen == earlier) break;
    }
    if (slot == cache.devices.size()) {
      cache.replicas.push_back(clone_replica(*module, layout, devices[j]));
      cache.devices.push_back(devices[j]);
    }
    slots.push_back(slot);
  }
  std::vector<Replica*> replicas;
  for (size_t slot : slots) replicas.push_back(&cache.replicas[slot]);
  return replicas;
}

}  // namespace tandem::parallel::detail

namespace tandem::parallel {

ReplicaCache::ReplicaCache() : replicas_(std::make_unique<detail::CachedReplicas>()) {}
ReplicaCache::~ReplicaCache() = default;

void ReplicaCache::clear() {
  std::lock_guard<std::mutex> lock(replicas_->mutex);
  replicas_->original.reset();
  replicas_->layout.reset();
  replicas_->distinct.reset();
  replicas_->devices.clear();
  replicas_->replicas.clear();
}

}  // namespace tandem::parallel
