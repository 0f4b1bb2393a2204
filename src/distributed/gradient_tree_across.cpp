// Note [Invariant mode across processes]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// In one process, invariant mode adds the micro-batches' weight gradients
// in one pairwise tree over the micro-batch index (Note [Invariant mode] in
// src/parallel/micro_batches.cpp). Across processes the same tree is
// summed in three steps, so that every addition is one the single process
// makes, on the same operands:
//
// 1. Each rank holds a run of consecutive micro-batches (the plan hands
//    out whole micro-batches, DistributedDataParallel::cut). It sums the
//    largest whole subtrees of the global tree that lie inside its run
//    (parallel::subtrees_within; at most two per level), each in the
//    subtree's own shape: the tree's shape depends on the leaf count
//    alone, so a subtree summed alone is the subtree summed inside the
//    whole.
// 2. One allgather hands every rank every rank's subtree sums: a [world,
//    F, P] tensor, F the most subtrees any rank has and P the elements of
//    all the gradients, flat.
// 3. Every rank completes the tree from the top: a node that some rank
//    summed is read from the gathered tensor, any other is its left
//    child's sum plus its right child's, as in the single process.
//
// Elementwise addition rounds the same on every rank and device, so the
// result is bitwise the single process's, and the same on every rank.
// The cost beside plain DDP: an allgather of F * P elements per rank
// instead of an allreduce of P, and the adds above the subtrees.
#include "distributed/gradient_tree_across.h"

#include <algorithm>
#include <climits>
#include <map>
#include <utility>
#include <vector>

#include "tandem/core/error.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/ops/factory.h"
#include "tandem/parallel/gradient_tree.h"
#include "tandem/parallel/replicate.h"

namespace tandem::distributed::detail {
namespace {

using parallel::TreeNode;

struct NodeLess {
  bool operator()(const TreeNode& a, const TreeNode& b) const {
    return a.lo != b.lo ? a.lo < b.lo : a.hi < b.hi;
  }
};

// The tree's sum of `node` for one gradient, `slice` taking it out of a
// node's flat sums: read where a rank summed the node, else added from its
// children.
template <typename Slice>
Tensor complete(const TreeNode& node,
                const std::map<TreeNode, Tensor, NodeLess>& summed,
                const Slice& slice) {
  if (auto it = summed.find(node); it != summed.end()) return slice(it->second);
  TANDEM_CHECK(node.hi - node.lo > 1,
               "sum_tree_across_ranks: micro-batch ",
               node.lo,
               " was summed by no rank");
  const int64_t mid = parallel::tree_split(node.lo, node.hi);
  return complete({node.lo, mid}, summed, slice) +
         complete({mid, node.hi}, summed, slice);
}

}  // namespace

std::vector<Tensor> sum_tree_across_ranks(ProcessGroup& group,
                                          const std::vector<int64_t>& bounds,
                                          std::vector<std::vector<Tensor>>&& per_replica,
                                          Device destination) {
  const int world = group.size();
  const auto rank = static_cast<size_t>(group.rank());
  TANDEM_CHECK(bounds.size() == static_cast<size_t>(world) + 1,
               "sum_tree_across_ranks: expected ",
               world + 1,
               " bounds, got ",
               bounds.size());
  const int64_t first = bounds[rank];
  TANDEM_CHECK(static_cast<int64_t>(per_replica.size()) == bounds[rank + 1] - first,
               "sum_tree_across_ranks: rank ",
               rank,
               " holds micro-batches [",
               first,
               ", ",
               bounds[rank + 1],
               ") but ",
               per_replica.size(),
               " replicas' gradients");
  TANDEM_CHECK(!GradMode::is_enabled(),
               "DistributedDataParallel: invariant mode cannot record its gradient sum "
               "for a second derivative (backward with create_graph)");
  if (world == 1) {
    // One process holds the whole tree: its sum, with nothing to exchange.
    return parallel::detail::sum_in_pairwise_tree(std::move(per_replica), destination);
  }
  // One dtype (DistributedDataParallel's constructor checks its parameters).
  const ScalarType dtype = per_replica.front().front().dtype();
  std::vector<IntList> shapes;
  std::vector<int64_t> offsets;  // of each gradient in a flat node
  int64_t elements = 0;
  for (const Tensor& g : per_replica.front()) {
    shapes.push_back(g.sizes());
    offsets.push_back(elements);
    elements += g.numel();
  }

  // 1. This rank's whole subtrees, and every rank's, known from the bounds.
  const int64_t leaves = bounds.back();
  std::vector<std::vector<TreeNode>> subtrees(static_cast<size_t>(world));
  size_t most = 0;
  for (size_t r = 0; r < subtrees.size(); ++r) {
    subtrees[r] = parallel::subtrees_within(bounds[r], bounds[r + 1], leaves);
    most = std::max(most, subtrees[r].size());
  }
  const auto width = static_cast<int64_t>(most) * elements;
  TANDEM_CHECK(width <= INT_MAX,
               "DistributedDataParallel: invariant mode would exchange ",
               most,
               " subtree sums of ",
               elements,
               " elements per rank, more than one message holds (",
               INT_MAX,
               "); use fewer micro-batches per rank (a larger micro_batch)");
  Tensor gathered =
      empty({world * width}, TensorOptions().dtype(dtype).device(destination));
  Tensor mine = gathered.narrow(0, static_cast<int64_t>(rank) * width, width);
  const auto filled = static_cast<int64_t>(subtrees[rank].size()) * elements;
  mine.narrow(0, filled, width - filled).zero_();  // the padding
  for (size_t f = 0; f < subtrees[rank].size(); ++f) {
    const TreeNode& node = subtrees[rank][f];
    std::vector<std::vector<Tensor>> leaves_of_node(
        std::make_move_iterator(per_replica.begin() + (node.lo - first)),
        std::make_move_iterator(per_replica.begin() + (node.hi - first)));
    const std::vector<Tensor> sums =
        parallel::detail::sum_in_pairwise_tree(std::move(leaves_of_node), destination);
    for (size_t i = 0; i < sums.size(); ++i) {
      mine.narrow(0, static_cast<int64_t>(f) * elements + offsets[i], sums[i].numel())
          .copy_(sums[i].reshape({-1}));
    }
  }
  per_replica.clear();

  // 2. Everyone's subtrees everywhere.
  group.allgather_into_tensor(gathered, mine).wait();

  // 3. The rest of the tree, from the top.
  std::map<TreeNode, Tensor, NodeLess> summed;
  for (size_t r = 0; r < subtrees.size(); ++r) {
    for (size_t f = 0; f < subtrees[r].size(); ++f) {
      summed.emplace(subtrees[r][f],
                     gathered.narrow(0,
                                     static_cast<int64_t>(r) * width +
                                         static_cast<int64_t>(f) * elements,
                                     elements));
    }
  }
  // Each rank holds a micro-batch, so no rank's node is the root: every
  // sum here is a fresh tensor, not a view of the gathered buffer.
  std::vector<Tensor> result;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const int64_t numel =
        i + 1 < shapes.size() ? offsets[i + 1] - offsets[i] : elements - offsets[i];
    result.push_back(complete({0, leaves}, summed, [&](const Tensor& flat) {
      return flat.narrow(0, offsets[i], numel).view(shapes[i]);
    }));
  }
  return result;
}

}  // namespace tandem::distributed::detail
