#include "tandem/parallel/replicate.h"

#include <iterator>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "parallel/parallel_utils.h"
#include "parallel/replica_cache.h"
#include "tandem/core/device_work_time.h"
#include "tandem/core/profiler.h"
#include "tandem/core/storage.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/graph/node.h"
#include "tandem/parallel/comm.h"

namespace tandem::parallel {
namespace {

using autograd::tensor_list;

void check_one_device(const nn::Module& module, const std::vector<Tensor>& tensors) {
  for (const Tensor& t : tensors) {
    TANDEM_CHECK(t.device() == tensors.front().device(),
                 "replicate: all parameters and buffers of ",
                 module.name(),
                 " must be on one device, but found ",
                 tensors.front().device(),
                 " and ",
                 t.device());
  }
}

// Sets each replica module's training flag to its original's. train() is
// recursive, so walking in pre-order lets descendants override ancestors.
void copy_training_flags(const detail::ModuleLayout& original,
                         const detail::ModuleLayout& replica) {
  for (size_t i = 0; i < original.modules.size(); ++i) {
    const bool training = original.modules[i]->is_training();
    if (replica.modules[i]->is_training() != training) {
      replica.modules[i]->train(training);
    }
  }
}

// Whether nothing but these replica tensors holds their memory: then new
// values can be written into it. See Note [Refreshing replicas].
bool owns_its_storage(const std::vector<Tensor>& slots) {
  std::unordered_set<const TensorImpl*> seen;
  std::unordered_map<const StorageImpl*, long> holders;
  for (const Tensor& t : slots) {
    if (seen.insert(t.unsafe_impl()).second) ++holders[t.unsafe_impl()->storage().get()];
  }
  for (const Tensor& t : slots) {
    const Storage& storage = t.unsafe_impl()->storage();
    if (storage.use_count() != holders[storage.get()]) return false;
  }
  return true;
}

// Note [Refreshing replicas]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// Every call points the replicas' tensors at the original's current values.
// Most of them share the original's memory: replica 0, when it is on the
// original's device (set_data), and the parameters of replicas on other
// logical CPU devices, through an alias of the same host memory
// (alias_storage: no copy, and one version counter, so an in-place update
// of the original between forward and backward is still caught). Sharing
// parameters is safe because a forward only reads them and backward sends
// the replicas' gradients to the replica tensors, not into the memory.
// Buffers are not shared past replica 0, since a forward may update them
// (BatchNorm's running statistics) and, as in PyTorch, only replica 0's
// updates reach the original. What is not shared is copied: into the
// replica's own memory when nothing else holds it (the graph of the last
// call is gone), so nothing is allocated; otherwise, as when a graph of an
// earlier call still saves it for backward, into fresh memory from
// broadcast_coalesced, leaving the old memory to that graph. Either way the
// tensors lose the history of the last call (record_broadcast adds this
// one's).
bool shares_original(const Tensor& original,
                     Device device,
                     size_t replica,
                     bool is_parameter) {
  if (replica == 0 && device == original.device()) return true;
  return is_parameter && device.is_cpu() && original.is_cpu();
}

void refresh_tensors(const detail::DistinctTensors& originals,
                     size_t num_parameters,
                     std::vector<detail::Replica*>& replicas,
                     const std::vector<Device>& devices) {
  if (originals.tensors.empty()) return;
  NoGradGuard no_grad;
  auto shares = [&](size_t j, size_t s) {
    return shares_original(
        originals.tensors[originals.of_slot[s]], devices[j], j, s < num_parameters);
  };
  // The slots that take copies, and the originals they copy (numbered).
  std::vector<Tensor> copied_slots;
  std::vector<Tensor> copied_originals;
  std::vector<size_t> copy_index(originals.tensors.size(), SIZE_MAX);
  for (size_t j = 0; j < replicas.size(); ++j) {
    const std::vector<Tensor>& slots = replicas[j]->layout.tensors;
    for (size_t s = 0; s < slots.size(); ++s) {
      if (shares(j, s)) continue;
      copied_slots.push_back(slots[s]);
      const size_t u = originals.of_slot[s];
      if (copy_index[u] == SIZE_MAX) {
        copy_index[u] = copied_originals.size();
        copied_originals.push_back(originals.tensors[u]);
      }
    }
  }
  const bool in_place = owns_its_storage(copied_slots);
  std::vector<std::vector<Tensor>> copies;
  if (!in_place) copies = broadcast_coalesced(copied_originals, devices);
  for (size_t j = 0; j < replicas.size(); ++j) {
    std::vector<Tensor>& slots = replicas[j]->layout.tensors;
    for (size_t s = 0; s < slots.size(); ++s) {
      const Tensor& original = originals.tensors[originals.of_slot[s]];
      slots[s].detach_();
      if (shares(j, s)) {
        slots[s].set_data(detail::readable_on(original, devices[j]));
      } else if (in_place) {
        slots[s].copy_(original);
      } else {
        slots[s].set_data(copies[j][copy_index[originals.of_slot[s]]]);
      }
    }
  }
}

// The replicas' gradients summed onto `destination` in replica order with
// recorded ops, for create_graph: the sum can be differentiated again.
tensor_list recorded_sum(const std::vector<std::vector<Tensor>>& per_replica,
                         Device destination) {
  tensor_list sums;
  for (size_t i = 0; i < per_replica.front().size(); ++i) {
    Tensor sum = per_replica.front()[i].to(destination);
    for (size_t j = 1; j < per_replica.size(); ++j) {
      sum = sum + per_replica[j][i].to(destination);
    }
    sums.push_back(sum);
  }
  return sums;
}

// Records the backward node of one replicate call (PyTorch's Broadcast):
// inputs are the distinct originals that require grad, outputs their
// copies on each replica, device-major; backward sums each original's
// gradients over the replicas onto the original's device.
void record_broadcast(const detail::DistinctTensors& originals,
                      std::vector<detail::Replica*>& replicas,
                      detail::GradientSum sum) {
  std::vector<Tensor> inputs;
  std::vector<size_t> input_of(originals.tensors.size(), SIZE_MAX);
  for (size_t u = 0; u < originals.tensors.size(); ++u) {
    if (!originals.tensors[u].requires_grad()) continue;
    input_of[u] = inputs.size();
    inputs.push_back(originals.tensors[u]);
  }
  if (!GradMode::is_enabled() || inputs.empty()) return;
  const size_t m = inputs.size();
  std::vector<Tensor*> outputs(replicas.size() * m, nullptr);
  // A tensor registered twice has one output; its second slot shares it.
  std::vector<std::pair<Tensor*, uint32_t>> shared_slots;
  std::vector<autograd::TensorMeta> meta(outputs.size());
  for (size_t j = 0; j < replicas.size(); ++j) {
    std::vector<Tensor>& slots = replicas[j]->layout.tensors;
    for (size_t s = 0; s < slots.size(); ++s) {
      const size_t input = input_of[originals.of_slot[s]];
      if (input == SIZE_MAX) continue;
      const size_t o = j * m + input;
      if (outputs[o] == nullptr) {
        outputs[o] = &slots[s];
        meta[o] = {slots[s].sizes(), slots[s].dtype(), slots[s].device()};
      } else {
        shared_slots.emplace_back(&slots[s], static_cast<uint32_t>(o));
      }
    }
  }
  const size_t n = replicas.size();
  const Device destination = inputs.front().device();
  auto node = autograd::record_function(
      "BroadcastBackward",
      inputs,
      outputs,
      [n, m, destination, sum = std::move(sum), meta = std::move(meta)](
          tensor_list& grads) {
        tensor_list all = detail::zeros_for_missing(std::move(grads), meta);
        std::vector<std::vector<Tensor>> per_replica(n);
        for (size_t j = 0; j < n; ++j) {
          per_replica[j].assign(std::make_move_iterator(all.begin() + j * m),
                                std::make_move_iterator(all.begin() + (j + 1) * m));
        }
        all.clear();
        // The sum runs once a step, whatever the destination's rows.
        const tandem::detail::StepWorkScope step_work;
        return sum(std::move(per_replica), destination);
      });
  for (auto [slot, output_nr] : shared_slots)
    autograd::set_history(*slot, node, output_nr);
}

}  // namespace

namespace detail {

std::vector<Tensor> sum_in_replica_order(std::vector<std::vector<Tensor>>&& per_replica,
                                         Device destination) {
  if (GradMode::is_enabled()) return recorded_sum(per_replica, destination);
  return reduce_add_consuming(std::move(per_replica), destination);
}

std::vector<std::shared_ptr<nn::Module>> replicate_module(
    const std::shared_ptr<nn::Module>& module,
    const std::vector<Device>& devices,
    ReplicaCache* cache,
    GradientSum sum) {
  TANDEM_CHECK(module != nullptr, "replicate: the module is null");
  TANDEM_CHECK(sum != nullptr, "replicate: no gradient sum was given");
  if (devices.empty()) return {};
  const profiler::Span span("parallel", "replicate", devices.front());
  // Without a cache, one that lives for this call: fresh clones. (Made
  // only then: DataParallel's forward passes its own and allocates none.)
  std::optional<ReplicaCache> this_call;
  if (cache == nullptr) cache = &this_call.emplace();
  CachedReplicas& cached = *cache->replicas_;
  std::lock_guard<std::mutex> lock(cached.mutex);
  walk_original(cached, module);
  const ModuleLayout& layout = *cached.layout;
  check_one_device(*module, layout.tensors);
  std::vector<Replica*> replicas = cached_replicas(cached, module, devices);

  const DistinctTensors& originals = *cached.distinct;
  refresh_tensors(originals, layout.num_parameters, replicas, devices);
  for (Replica* r : replicas) copy_training_flags(layout, r->layout);
  record_broadcast(originals, replicas, std::move(sum));

  std::vector<std::shared_ptr<nn::Module>> result;
  for (Replica* r : replicas) result.push_back(r->module);
  return result;
}

}  // namespace detail

}  // namespace tandem::parallel
