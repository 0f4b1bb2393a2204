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
//    list that names a device once per micro-batch it runs; a model of
//    known row-wise modules runs whole subtrees of them instead, Note
//    [Subtrees in one forward]), so each micro-batch's weight gradient
//    stays apart until BroadcastBackward adds them in one pairwise tree
//    over the micro-batch index
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
#include <numeric>
#include <string>
#include <typeinfo>
#include <vector>

#include "backend/cpu/panel_gemm.h"
#include "ops/packed_weights.h"
#include "parallel/parallel_utils.h"
#include "tandem/core/error.h"
#include "tandem/core/generator.h"
#include "tandem/core/micro_batch_products.h"
#include "tandem/core/sample_keys.h"
#include "tandem/nn/batch_statistics.h"
#include "tandem/nn/modules/activation.h"
#include "tandem/nn/modules/dropout.h"
#include "tandem/nn/modules/flatten.h"
#include "tandem/nn/modules/linear.h"
#include "tandem/nn/modules/sequential.h"
#include "tandem/parallel/cut_plan.h"
#include "tandem/parallel/data_parallel.h"
#include "tandem/parallel/gradient_tree.h"
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

// Runs each of `pieces` (micro-batches [lo, hi) of the batch, in order,
// together the part of it `input` holds; `sizes` are the rows of that
// part's micro-batches, the first of them micro-batch `first`) on a replica
// of its own on on[k], in one forward with its samples' keyed masks and
// products against weights packed once per device (MicroBatchProducts,
// told the piece's micro-batches), and gathers the outputs onto
// `output_device` in order; backward adds the replicas' gradients by `sum`.
TensorTree run_pieces(const std::shared_ptr<nn::Module>& module,
                      const Forward& forward,
                      const TensorTree& input,
                      const std::vector<int64_t>& sizes,
                      const std::vector<TreeNode>& pieces,
                      const std::vector<Device>& on,
                      int64_t first,
                      int64_t micro_batch,
                      uint64_t seed,
                      Device output_device,
                      int64_t dim,
                      ReplicaCache* cache,
                      GradientSum sum) {
  std::vector<std::vector<int64_t>> leaf_rows;  // of piece k's micro-batches
  std::vector<int64_t> rows;                    // of piece k
  for (const TreeNode& piece : pieces) {
    leaf_rows.emplace_back(sizes.begin() + (piece.lo - first),
                           sizes.begin() + (piece.hi - first));
    rows.push_back(
        std::accumulate(leaf_rows.back().begin(), leaf_rows.back().end(), int64_t{0}));
  }
  const auto replicas = replicate_module(module, on, cache, std::move(sum));
  const uint64_t step = MicroBatchProducts::next_step();
  const std::vector<TensorTree> outputs = parallel_apply(
      replicas.size(),
      [&](size_t k, const TensorTree& piece) {
        SampleKeys keys(seed, pieces[k].lo * micro_batch, rows[k], dim);
        MicroBatchProducts products(step, leaf_rows[k]);
        return forward(*replicas[k], piece);
      },
      scatter(input, on, rows, dim),
      on);
  return gather(outputs, output_device, dim);
}

// Note [Subtrees in one forward]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A replica per micro-batch makes a device multiply each weight once per
// micro-batch, forward and backward, and write a whole weight gradient per
// micro-batch for the tree to read back: for the MLP of bench/invariant,
// eight 7.4 MB gradients per step (59 MB, beyond the caches) where the
// normal step writes two. When every module is one whose forward works
// row by row with linear() as its only product (Sequential, Linear, ReLU,
// Dropout, Flatten, Identity) and linear() runs panel products here, a
// device instead runs each of the largest whole subtrees of the tree that
// its micro-batches make (subtrees_within) as one replica, in one forward:
//   - a row's output has the same bits in any number of rows: the panel
//     products are chains per element, ReLU and the masks are per element,
//     and the masks are keyed by the sample (SampleKeys over the subtree's
//     rows gives each sample the key its micro-batch's scope would);
//   - linear()'s backward (told the micro-batches by MicroBatchProducts)
//     computes the input's gradient row by row, and the weight's as one
//     panel_gemm_tree: per output tile, each micro-batch's chain, added in
//     the tree in registers and L1, written once; the bias's as each
//     micro-batch's sum added in the tree;
//   - sum_subtrees_in_pairwise_tree adds the subtrees' gradients in the
//     same tree.
// So every number is the one the replica per micro-batch makes (a test
// trains both ways and compares the bytes), and DistributedDataParallel,
// which still runs a replica per micro-batch, agrees with it. Any other
// module keeps the replica per micro-batch: its ops may sum over the batch
// in an order of their own.

// Whether `module` can run a whole subtree of micro-batches in one forward
// with the bits of running them one by one (Note [Subtrees in one
// forward]): every module in it is one of those whose forward works row by
// row with linear() as its only product, every parameter is float32 on
// the CPU, and linear() runs panel products for micro-batches of this
// size here.
bool runs_whole_subtrees(const nn::Module& module,
                         const std::vector<Device>& devices,
                         int64_t micro_batch,
                         int64_t dim) {
  if (dim != 0 || micro_batch > tandem::detail::kMaxPanelRows ||
      !backend::cpu::panel_gemm_available()) {
    return false;
  }
  for (const Device& device : devices) {
    if (!device.is_cpu()) return false;
  }
  for (const Tensor& p : module.parameters()) {
    if (!p.is_cpu() || p.dtype() != kFloat32) return false;
  }
  for (const auto& m : module.modules()) {
    const std::type_info& type = typeid(*m);
    if (type != typeid(nn::SequentialImpl) && type != typeid(nn::LinearImpl) &&
        type != typeid(nn::ReLUImpl) && type != typeid(nn::DropoutImpl) &&
        type != typeid(nn::FlattenImpl) && type != typeid(nn::IdentityImpl)) {
      return false;
    }
  }
  return true;
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
  // A replica per micro-batch, or per largest subtree of them on a device
  // when the module runs whole subtrees in one forward.
  const bool whole_subtrees = runs_whole_subtrees(*module, devices, micro_batch, dim);
  const auto leaves = static_cast<int64_t>(sizes.size());
  std::vector<TreeNode> pieces;
  std::vector<Device> on;  // piece k runs on on[k]
  int64_t start = 0;
  for (size_t d = 0; d < per_device.size(); ++d) {
    const int64_t end = start + per_device[d];
    if (whole_subtrees) {
      for (const TreeNode& node : subtrees_within(start, end, leaves)) {
        pieces.push_back(node);
        on.push_back(devices[d]);
      }
    } else {
      for (int64_t j = start; j < end; ++j) {
        pieces.push_back({j, j + 1});
        on.push_back(devices[d]);
      }
    }
    start = end;
  }
  return run_pieces(
      module,
      forward,
      input,
      sizes,
      pieces,
      on,
      /*first=*/0,
      micro_batch,
      draw_mask_seed(*module),
      output_device,
      dim,
      cache,
      [pieces](std::vector<std::vector<Tensor>>&& per_replica, Device destination) {
        return sum_subtrees_in_pairwise_tree(std::move(per_replica), pieces, destination);
      });
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
  std::vector<TreeNode> pieces;  // a replica per micro-batch
  for (int64_t j = first; j < first + static_cast<int64_t>(sizes.size()); ++j) {
    pieces.push_back({j, j + 1});
  }
  return run_pieces(module,
                    forward,
                    input,
                    sizes,
                    pieces,
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
