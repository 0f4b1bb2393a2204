#include "parallel/replica_cache.h"

#include <algorithm>
#include <string>
#include <utility>

#include "tandem/core/error.h"

namespace tandem::parallel::detail {
namespace {

// Note [Replica cache]
// ~~~~~~~~~~~~~~~~~~~~
// Rebuilding replicas' module trees on every forward is what makes
// PyTorch's DataParallel slow for small models (its pain point 3). tandem
// clones the tree once per (module, device list) and afterwards only points
// the replicas' tensors at fresh data (replicate.cpp). An entry is found by
// the module's identity and a signature of its tree: the modules, every
// parameter and buffer's identity, shape, dtype and device, and each
// module's own object as bytes (nn::detail::object_state). PyTorch's
// proposals to cache replicas stalled on users who change dp.module between
// calls; the bytes catch those changes: a Dropout's p, a BatchNorm's
// momentum, a member of a user's module, a tensor or submodule member put
// in place of another. Any of them rebuilds the replicas, so the next
// forward runs them as the original now is. What a member points to (the
// elements of a std::vector member, a long string) is not compared;
// clear_replica_cache() forces a rebuild after such a change. The
// training flag is left out: replicate copies it on every call. Entries
// hold the module weakly and are dropped once it is gone. A
// request for a prefix of a cached device list (DataParallel's last, short
// batch) uses the first replicas; a longer list extends the entry.

struct TensorKey {
  const TensorImpl* impl;
  IntList sizes;
  ScalarType dtype;
  Device device;
  bool operator==(const TensorKey&) const = default;
};

struct Signature {
  std::vector<const nn::Module*> modules;
  std::vector<std::string> states;
  std::vector<TensorKey> tensors;
  bool operator==(const Signature&) const = default;
};

Signature signature_of(const ModuleLayout& layout) {
  Signature s;
  for (const auto& m : layout.modules) {
    s.modules.push_back(m.get());
    s.states.push_back(nn::detail::object_state(*m));
  }
  for (const Tensor& t : layout.tensors) {
    s.tensors.push_back({t.unsafe_impl(), t.sizes(), t.dtype(), t.device()});
  }
  return s;
}

struct Entry {
  std::weak_ptr<nn::Module> original;
  Signature signature;
  std::shared_ptr<ReplicaSet> set;
};

struct Registry {
  std::mutex mutex;
  std::vector<Entry> entries;
};

Registry& registry() {
  static Registry r;
  return r;
}

bool is_prefix(const std::vector<Device>& shorter, const std::vector<Device>& longer) {
  return shorter.size() <= longer.size() &&
         std::equal(shorter.begin(), shorter.end(), longer.begin());
}

// Clones `original` for every device of `devices` not yet in `set`.
void extend(ReplicaSet& set,
            const nn::Module& original,
            const ModuleLayout& layout,
            const std::vector<Device>& devices) {
  for (size_t j = set.replicas.size(); j < devices.size(); ++j) {
    std::shared_ptr<nn::Module> copy = original.clone(devices[j]);
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
    set.replicas.push_back(Replica{std::move(copy), std::move(copy_layout)});
  }
  set.devices = devices;
}

}  // namespace

ModuleLayout::ModuleLayout(const nn::Module& module) {
  modules.push_back(std::const_pointer_cast<nn::Module>(module.shared_from_this()));
  for (const auto& m : module.modules(/*include_self=*/false)) modules.push_back(m);
  tensors = module.parameters();
  num_parameters = tensors.size();
  for (const Tensor& b : module.buffers()) tensors.push_back(b);
}

std::shared_ptr<ReplicaSet> cached_replicas(const std::shared_ptr<nn::Module>& module,
                                            const ModuleLayout& layout,
                                            const std::vector<Device>& devices) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  Signature signature = signature_of(layout);
  std::erase_if(r.entries, [&](const Entry& e) {
    std::shared_ptr<nn::Module> original = e.original.lock();
    return original == nullptr || (original == module && e.signature != signature);
  });
  for (Entry& e : r.entries) {
    if (e.original.lock() != module) continue;
    std::lock_guard<std::mutex> set_lock(e.set->mutex);
    if (is_prefix(devices, e.set->devices)) return e.set;
    if (is_prefix(e.set->devices, devices)) {
      extend(*e.set, *module, layout, devices);
      return e.set;
    }
  }
  auto set = std::make_shared<ReplicaSet>();
  extend(*set, *module, layout, devices);
  r.entries.push_back(Entry{module, std::move(signature), set});
  return set;
}

void forget_replicas(const nn::Module& module) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::erase_if(r.entries, [&](const Entry& e) {
    std::shared_ptr<nn::Module> original = e.original.lock();
    return original == nullptr || original.get() == &module;
  });
}

}  // namespace tandem::parallel::detail
