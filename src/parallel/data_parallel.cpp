// DataParallel's forward over several devices: scatter, replicate, apply,
// gather (invariant mode's is in micro_batches.cpp).
//
// Note [Masks keyed by sample]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Replicas on logical CPU devices share one default generator, and their
// threads reach it in whatever order the scheduler gives: masks drawn from
// it (dropout's) would land on other samples in every run, and so would the
// weights. Each replica's forward therefore runs in a SampleKeys scope: one
// seed drawn per forward from the default generator, and each sample's mask
// keyed by that seed, the draw's number and the sample's index in the whole
// batch (Note [Sample-keyed masks] in backend/cpu/random.cpp). A run is
// repeatable from its seed, and a sample keeps its mask whatever the cut
// (even, shares, auto moving it) and whichever device computes it, CPU or
// GPU. One device calls the module directly, which draws from the stream as
// the module alone does.
#include "tandem/parallel/data_parallel.h"

#include <algorithm>
#include <numeric>

#include "tandem/core/device_guard.h"
#include "tandem/core/sample_keys.h"
#include "tandem/core/wrap_dim.h"
#include "tandem/parallel/cut_plan.h"
#include "tandem/parallel/replicate.h"
#include "tandem/parallel/scatter_gather.h"

namespace tandem::parallel::detail {

namespace {

// Whether `inputs` holds a defined tensor; a plain tensor is not walked.
bool holds_tensors(const TensorTree& inputs) {
  if (inputs.is_tensor()) return inputs.tensor().defined();
  return !inputs.tensors().empty();
}

}  // namespace

std::vector<TensorTree> scatter_inputs(const TensorTree& inputs,
                                       const std::vector<Device>& devices,
                                       int64_t dim) {
  if (!holds_tensors(inputs)) return {inputs};
  return scatter(inputs, devices, dim);
}

int64_t batch_rows(const TensorTree& inputs,
                   const std::vector<Device>& devices,
                   int64_t dim) {
  if (inputs.is_tensor() && inputs.tensor().defined() && inputs.tensor().dim() > 0) {
    const Tensor& t = inputs.tensor();
    return t.size(wrap_dim(dim, t.dim(), "scatter"));
  }
  const std::vector<Tensor> leaves = inputs.tensors();
  const auto first = std::find_if(
      leaves.begin(), leaves.end(), [](const Tensor& t) { return t.defined(); });
  // scatter() names a 0-dimensional input.
  if (first != leaves.end() && first->dim() == 0) scatter(inputs, devices, dim);
  return first == leaves.end() ? 0 : first->size(wrap_dim(dim, first->dim(), "scatter"));
}

PlannedScatter scatter_planned(const TensorTree& inputs,
                               const std::vector<Device>& devices,
                               CutPlan& plan,
                               int64_t dim) {
  const int64_t rows = batch_rows(inputs, devices, dim);
  if (rows == 0)
    return {{devices.front()}, scatter_inputs(inputs, {devices.front()}, dim)};
  const std::vector<int64_t> cut = plan.next(rows);
  PlannedScatter planned;
  std::vector<int64_t> sizes;
  for (size_t i = 0; i < cut.size(); ++i) {
    if (cut[i] == 0) continue;
    planned.devices.push_back(devices[i]);
    sizes.push_back(cut[i]);
  }
  planned.inputs = scatter(inputs, planned.devices, sizes, dim);
  return planned;
}

TensorTree replicate_apply_gather(const std::shared_ptr<nn::Module>& module,
                                  const Forward& forward,
                                  const std::vector<TensorTree>& scattered,
                                  const std::vector<Device>& devices,
                                  Device output_device,
                                  int64_t dim,
                                  ReplicaCache* cache) {
  const std::vector<Device> used(devices.begin(), devices.begin() + scattered.size());
  const auto replicas = replicate_module(module, used, cache);
  // Note [Masks keyed by sample]: where each piece's rows start in the batch.
  const uint64_t seed = draw_mask_seed(*module);
  std::vector<int64_t> rows;
  for (size_t i = 0; i < scattered.size(); ++i) {
    rows.push_back(batch_rows(scattered[i], {used[i]}, dim));
  }
  std::vector<int64_t> first_row(rows.size());
  std::exclusive_scan(rows.begin(), rows.end(), first_row.begin(), int64_t{0});
  const std::vector<TensorTree> outputs = parallel_apply(
      replicas.size(),
      [&](size_t i, const TensorTree& input) {
        SampleKeys keys(seed, first_row[i], rows[i], dim);
        return forward(*replicas[i], input);
      },
      scattered,
      used);
  return gather(outputs, output_device, dim);
}

TensorTree data_parallel(const std::shared_ptr<nn::Module>& module,
                         const Forward& forward,
                         const TensorTree& input,
                         const std::optional<std::vector<Device>>& devices,
                         const std::optional<Device>& output_device,
                         int64_t dim) {
  std::vector<Device> ids;
  if (devices) {
    ids = *devices;
    TANDEM_CHECK(!ids.empty(), "data_parallel: the device list is empty");
  } else {
    for (int64_t i = 0; i < device_count(kCUDA); ++i) {
      ids.emplace_back(kCUDA, static_cast<int>(i));
    }
    if (ids.empty()) return forward(*module, input);
  }
  const Device output = output_device.value_or(ids.front());
  if (ids.size() == 1) {
    module->to(ids.front());
    // non_blocking as scatter's copies (see move_to_devices).
    const TensorTree out = forward(*module, input.map([&](const Tensor& t) {
      return t.to(ids.front(), /*non_blocking=*/true);
    }));
    return out.map([&](const Tensor& t) { return t.to(output); });
  }
  // A call of its own: the replicas are cloned afresh (nn::DataParallel
  // keeps them).
  return replicate_apply_gather(
      module, forward, scatter_inputs(input, ids, dim), ids, output, dim, nullptr);
}

}  // namespace tandem::parallel::detail
