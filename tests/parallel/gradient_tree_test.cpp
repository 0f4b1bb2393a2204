// The pairwise tree of invariant mode (tandem/parallel/gradient_tree.h):
// where it splits, and which whole subtrees a run of leaves holds.
#include <gtest/gtest.h>

#include "support/tensor_testing.h"
#include "tandem/parallel/gradient_tree.h"

namespace {

using tandem::parallel::subtrees_within;
using tandem::parallel::tree_split;
using tandem::parallel::TreeNode;
using Nodes = std::vector<TreeNode>;

TEST(GradientTree, TheLeftSubtreeIsTheLargestPowerOfTwoShortOfTheWhole) {
  EXPECT_EQ(tree_split(0, 2), 1);
  EXPECT_EQ(tree_split(0, 3), 2);
  EXPECT_EQ(tree_split(0, 4), 2);
  EXPECT_EQ(tree_split(0, 5), 4);
  EXPECT_EQ(tree_split(0, 8), 4);
  EXPECT_EQ(tree_split(4, 7), 6);  // by the size alone, from the node's start
  EXPECT_TRUE(tandem::testing::throws_with([] { tree_split(3, 4); }, "is a leaf"));
}

TEST(GradientTree, ARunOfLeavesHoldsItsLargestWholeSubtrees) {
  EXPECT_EQ(subtrees_within(0, 8, 8), (Nodes{{0, 8}}));
  EXPECT_EQ(subtrees_within(3, 8, 8), (Nodes{{3, 4}, {4, 8}}));
  EXPECT_EQ(subtrees_within(0, 3, 8), (Nodes{{0, 2}, {2, 3}}));
  EXPECT_EQ(subtrees_within(1, 7, 8), (Nodes{{1, 2}, {2, 4}, {4, 6}, {6, 7}}));
  // 7 leaves: [0, 4) and [4, 7) = [4, 6) + [6, 7).
  EXPECT_EQ(subtrees_within(3, 5, 7), (Nodes{{3, 4}, {4, 5}}));
  EXPECT_EQ(subtrees_within(4, 7, 7), (Nodes{{4, 7}}));
  EXPECT_EQ(subtrees_within(2, 2, 7), Nodes{});
  EXPECT_TRUE(tandem::testing::throws_with([] { subtrees_within(2, 9, 8); },
                                           "are not within [0, 8)"));
}

TEST(GradientTree, AnyCutIntoRunsCoversEveryLeafOnce) {
  for (int64_t leaves = 1; leaves <= 13; ++leaves) {
    for (int64_t a = 0; a <= leaves; ++a) {
      for (int64_t b = a; b <= leaves; ++b) {
        std::vector<int> covered(static_cast<size_t>(leaves), 0);
        for (const auto& [first, end] : {std::pair{int64_t{0}, a}, {a, b}, {b, leaves}}) {
          for (const TreeNode& node : subtrees_within(first, end, leaves)) {
            for (int64_t leaf = node.lo; leaf < node.hi; ++leaf)
              ++covered[static_cast<size_t>(leaf)];
          }
        }
        for (int64_t leaf = 0; leaf < leaves; ++leaf) {
          EXPECT_EQ(covered[static_cast<size_t>(leaf)], 1)
              << "leaf " << leaf << " of " << leaves << ", runs cut at " << a << ", "
              << b;
        }
      }
    }
  }
}

}  // namespace
