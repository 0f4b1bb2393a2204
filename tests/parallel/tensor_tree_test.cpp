// TensorTree: construction, access, tensors() and map().
#include "parallel/parallel_testing.h"

namespace {

using tandem::Tensor;
using tandem::parallel::TensorTree;
using tandem::testing::throws_with;

TEST(TensorTree, TensorsAndNestedLists) {
  const Tensor a = tandem::ones({1}), b = tandem::ones({2}), c = tandem::ones({3});
  const TensorTree leaf(a);
  EXPECT_TRUE(leaf.is_tensor());
  EXPECT_TRUE(leaf.tensor().is_same(a));
  const TensorTree nested{a, {b, c}, Tensor()};
  EXPECT_TRUE(nested.is_list());
  ASSERT_EQ(nested.size(), 3u);
  EXPECT_TRUE(nested[1][1].tensor().is_same(c));
  const std::vector<Tensor> all = nested.tensors();  // the undefined one is skipped
  ASSERT_EQ(all.size(), 3u);
  EXPECT_TRUE(all[1].is_same(b));
  EXPECT_EQ(TensorTree(std::vector<Tensor>{a, b}).size(), 2u);
  EXPECT_EQ(TensorTree().size(), 0u);
  EXPECT_EQ(TensorTree{a}.size(), 1u);  // braces make a list
}

TEST(TensorTree, MapKeepsTheNesting) {
  const TensorTree nested{tandem::ones({1}), {tandem::ones({2}), Tensor()}};
  const TensorTree doubled = nested.map([](const Tensor& t) { return t * 2; });
  ASSERT_EQ(doubled.size(), 2u);
  EXPECT_EQ(doubled[1][0].tensor().sum().item<double>(), 4.0);
  EXPECT_FALSE(doubled[1][1].tensor().defined());
}

TEST(TensorTree, MisuseIsAnError) {
  const TensorTree leaf(tandem::ones({1}));
  EXPECT_TRUE(
      throws_with([&] { leaf.list(); }, "TensorTree: expected a list, got a tensor"));
  const TensorTree list{tandem::ones({1})};
  EXPECT_TRUE(throws_with([&] { list.tensor(); },
                          "TensorTree: expected a tensor, got a list of 1 items"));
  EXPECT_THROW(list[3], tandem::IndexError);
}

}  // namespace
