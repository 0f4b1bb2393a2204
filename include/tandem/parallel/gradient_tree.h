// The pairwise tree in which invariant mode adds the micro-batches'
// gradients (Note [Invariant mode] in src/parallel/micro_batches.cpp): over
// leaves [0, n), one per micro-batch, the left subtree of leaves [lo, hi) is
// the largest power of two of leaves short of the whole, which is pairing
// level by level, (0 + 1), (2 + 3), ..., an odd last node carried up. Its
// shape depends on n alone, so its sums have the same bits wherever its
// nodes are computed: in one process, or in several that each sum the
// whole subtrees they hold and exchange those.
//
//   parallel::subtrees_within(3, 8, 8);   // {[3, 4), [4, 8)}
#pragma once

#include <cstdint>
#include <vector>

namespace tandem::parallel {

/// A node of the tree: its leaves [lo, hi).
struct TreeNode {
  int64_t lo = 0;
  int64_t hi = 0;
  bool operator==(const TreeNode&) const = default;
};

/// Where the tree splits leaves [lo, hi) (hi - lo > 1): the first leaf of
/// its right subtree.
int64_t tree_split(int64_t lo, int64_t hi);

/// The largest whole subtrees of the tree over [0, leaves) whose leaves
/// all lie in [first, end), in leaf order: what a process holding those
/// leaves can sum alone. Empty when first == end.
std::vector<TreeNode> subtrees_within(int64_t first, int64_t end, int64_t leaves);

}  // namespace tandem::parallel
