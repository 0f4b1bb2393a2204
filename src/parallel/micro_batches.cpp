// Invariant mode's forward: fixed micro-batches over the devices.
//
// Note [Invariant mode]
// ~~~~~~~~~~~~~~~~~~~~~
// nn::DataParallelOptions::invariant promises that training reaches the
// same weights, bit for bit, on any device list, with any shares and under
// Balance::kAuto, at the same global batch, seed and dtype. Floating-point
// sums round differently in another order, so every sum a step computes
// must have an order that does not depend on the devices:
//
// 1. The batch is a fixed sequence of micro-batches of micro_batch() rows
//    (the last one may be shorter), cut from the batch alone. The plan
//    (CutPlan, counting micro-batches) hands whole micro-batches to the
//    devices, in order; a device runs its micro-batches one after another.
//    So every kernel call sees the same rows whatever the devices: a
//    micro-batch's forward and backward are the same computation on any
//    device. They are also the same on any thread count: the CPU kernels
//    fix their own sums by the shape alone (Note [GEMM blocks], Note
//    [Reductions on threads], Note [Convolution as GEMM]).
// 2. Each micro-batch runs on a replica of its own (replicate onto a device
//    list that names a device once per micro-batch it runs), so each
//    micro-batch's weight gradient stays apart until BroadcastBackward adds
//    them in one pairwise tree over the micro-batch index
//    (sum_in_pairwise_tree): its shape depends on the micro-batch count only,
//    and the same tree serves inside a device and across devices. A whole
//    subtree lies on one device wherever the cut keeps it together, which
//    is what a reduction across processes will build on.
// 3. The loss is taken on the gathered output, whole: its reduction over
//    the batch happens in one call on one device, the same in every run,
//    and its gradient reaches each row unchanged by the cut.
// 4. Dropout draws a sample's mask from Philox keyed by a seed drawn once
//    per forward from the default generator, the draw's number within the
//    micro-batch's forward and the sample's index in the batch (Note
//    [Sample-keyed masks]), not from a stream read in order.
// 5. A module that normalises over the batch (BatchNorm while training) is
//    refused with its name: its output for a sample depends on the other
//    samples in its micro-batch, by definition. In eval mode, with running
//    statistics, it is per sample and allowed.
//
// The price is more, smaller calls (a 256-row batch over two devices is
// eight 32-row forwards instead of two of 128 rows), one replica per
// micro-batch instead of per device, and the tree's additions; bench/
// invariant measures it. With one device the module still runs micro-batch
// by micro-batch, which is what makes one device agree with four.
#include <cstdint>
#include <string>
#include <vector>

#include "parallel/parallel_utils.h"
#include "tandem/core/error.h"
#include "tandem/core/generator.h"
#include "tandem/core/micro_batch_products.h"
#include "tandem/core/sample_keys.h"
#include "tandem/nn/batch_statistics.h"
#include "tandem/parallel/cut_plan.h"
#include "tandem/parallel/data_parallel.h"
#include "tandem/parallel/replicate.h"
#include "tandem/parallel/scatter_gather.h"

namespace tandem::parallel::detail {
namespace {

// Walks the modules without their names, which a refusal alone needs.
void check_no_batch_statistics(const nn::Module& module) {
  for (const auto& m : module.modules()) {
    const auto* stats = dynamic_cast<const nn::BatchStatistics*>(m.get());
    if (stats == nullptr || !stats->uses_batch_statistics()) continue;
    std::string where = " (the wrapped module)";
    for (const auto& item : module.named_modules()) {
      if (item.value() == m && !item.key().empty()) where = " at '" + item.key() + "'";
    }
    throw Error(tandem::detail::str(
        "DataParallel: invariant mode cannot run ",
        m->name(),
        where,
        " while it normalises over the batch (training mode, or no running "
        "statistics): a sample's output would depend on which samples share its "
        "micro-batch. Call eval() on it, use a per-sample norm (GroupNorm, "
        "LayerNorm), or turn invariant mode off"));
  }
}

// Cuts `input` into pieces of `sizes` rows and runs piece j (micro-batch
// first + j of the batch) on a replica of its own on on[j], with that
// micro-batch's sample-keyed masks and products against weights packed
// once per device (MicroBatchProducts), and gathers the outputs onto
// `output_device` in order; backward adds the replicas' gradients by `sum`.
TensorTree run_micro_batches(const std::shared_ptr<nn::Module>& module,
                             const Forward& forward,
                             const TensorTree& input,
                             const std::vector<int64_t>& sizes,
                             const std::vector<Device>& on,
                             int64_t first,
                             int64_t micro_batch,
                             uint64_t seed,
                             Device output_device,
                             int64_t dim,
                             ReplicaCache* cache,
                             GradientSum sum) {
  const auto replicas = replicate_module(module, on, cache, std::move(sum));
  const uint64_t step = MicroBatchProducts::next_step();
  const std::vector<TensorTree> outputs = parallel_apply(
      replicas.size(),
      [&](size_t j, const TensorTree& piece) {
        SampleKeys keys(
            seed, (first + static_cast<int64_t>(j)) * micro_batch, sizes[j], dim);
        MicroBatchProducts products(step);
        return forward(*replicas[j], piece);
      },
      scatter(input, on, sizes, dim),
      on);
  return gather(outputs, output_device, dim);
}

// The rows of micro-batches of `micro_batch` rows that cut `rows`, the last
// one shorter when it does not divide.
std::vector<int64_t> micro_batch_sizes(int64_t rows, int64_t micro_batch) {
  std::vector<int64_t> sizes;
  for (int64_t start = 0; start < rows; start += micro_batch)
    sizes.push_back(std::min(micro_batch, rows - start));
  return sizes;
}

}  // namespace

uint64_t draw_mask_seed(const nn::Module& module) {
  if (!module.is_training()) return 0;
  Generator& generator = default_generator();
  auto lock = generator.lock();
  return generator.engine()();
}

TensorTree micro_batch_apply(const std::shared_ptr<nn::Module>& module,
                             const Forward& forward,
                             const TensorTree& input,
                             const std::vector<Device>& devices,
                             CutPlan& plan,
                             int64_t micro_batch,
                             Device output_device,
                             int64_t dim,
                             ReplicaCache* cache) {
  check_no_batch_statistics(*module);
  const int64_t rows = batch_rows(input, devices, dim);
  if (rows == 0) {
    return replicate_apply_gather(module,
                                  forward,
                                  scatter_inputs(input, {devices.front()}, dim),
                                  {devices.front()},
                                  output_device,
                                  dim,
                                  cache);
  }
  const std::vector<int64_t> sizes = micro_batch_sizes(rows, micro_batch);
  const std::vector<int64_t> per_device = plan.next(static_cast<int64_t>(sizes.size()));
  std::vector<Device> on;  // micro-batch j runs on on[j]
  for (size_t d = 0; d < per_device.size(); ++d)
    on.insert(on.end(), per_device[d], devices[d]);
  return run_micro_batches(module,
                           forward,
                           input,
                           sizes,
                           on,
                           /*first=*/0,
                           micro_batch,
                           draw_mask_seed(*module),
                           output_device,
                           dim,
                           cache,
                           sum_in_pairwise_tree);
}

TensorTree micro_batch_part_apply(const std::shared_ptr<nn::Module>& module,
                                  const Forward& forward,
                                  const TensorTree& input,
                                  Device device,
                                  int64_t micro_batch,
                                  int64_t first,
                                  uint64_t seed,
                                  int64_t dim,
                                  ReplicaCache* cache,
                                  GradientSum sum) {
  check_no_batch_statistics(*module);
  const int64_t rows = batch_rows(input, {device}, dim);
  TANDEM_CHECK(rows > 0,
               "micro_batch_part_apply: the part of the batch has no rows; every "
               "process needs at least one micro-batch");
  const std::vector<int64_t> sizes = micro_batch_sizes(rows, micro_batch);
  const std::vector<Device> on(sizes.size(), device);
  return run_micro_batches(module,
                           forward,
                           input,
                           sizes,
                           on,
                           first,
                           micro_batch,
                           seed,
                           device,
                           dim,
                           cache,
                           std::move(sum));
}

}  // namespace tandem::parallel::detail
