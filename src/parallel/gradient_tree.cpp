#include "tandem/parallel/gradient_tree.h"

#include <bit>
#include <cstdint>

#include "tandem/core/error.h"

namespace tandem::parallel {
namespace {

void collect(TreeNode node, int64_t first, int64_t end, std::vector<TreeNode>& out) {
  if (node.hi <= first || node.lo >= end) return;
  if (node.lo >= first && node.hi <= end) {
    out.push_back(node);
    return;
  }
  const int64_t mid = tree_split(node.lo, node.hi);
  collect({node.lo, mid}, first, end, out);
  collect({mid, node.hi}, first, end, out);
}

}  // namespace

int64_t tree_split(int64_t lo, int64_t hi) {
  TANDEM_CHECK(hi - lo > 1, "tree_split: [", lo, ", ", hi, ") is a leaf");
  return lo + static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(hi - lo)) >> 1);
}

std::vector<TreeNode> subtrees_within(int64_t first, int64_t end, int64_t leaves) {
  TANDEM_CHECK(0 <= first && first <= end && end <= leaves,
               "subtrees_within: leaves [",
               first,
               ", ",
               end,
               ") are not within [0, ",
               leaves,
               ")");
  std::vector<TreeNode> nodes;
  if (first < end) collect({0, leaves}, first, end, nodes);
  return nodes;
}

}  // namespace tandem::parallel
