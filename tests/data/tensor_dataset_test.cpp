// TensorDataset: gather() gives the rows get() gives, collated; shapes are
// checked when it is made.
#include "tandem/data/tensor_dataset.h"

#include <gtest/gtest.h>

#include "data/test_datasets.h"
#include "support/tensor_testing.h"

namespace tandem::data {
namespace {

using data_testing::counting_tensors;
using tandem::testing::all_close;
using tandem::testing::throws_with;

TEST(TensorDatasetTest, GatherMatchesGetAndChecksShapes) {
  TensorDataset dataset = counting_tensors(6);
  const std::vector<size_t> indices = {5, 0, 3};
  const Example<> batch = dataset.gather(indices);
  EXPECT_TRUE(all_close(batch.data[1], dataset.get(0).data, 0, 0));
  EXPECT_EQ(batch.target[2].item<int64_t>(), 3);
  EXPECT_THROW(dataset.get(6), IndexError);
  EXPECT_TRUE(throws_with(
      [] {
        TensorDataset(zeros({3, 2}), zeros({4}));
      },
      "data has 3 rows (shape [3, 2]) but targets have shape [4]"));
  EXPECT_FALSE(TensorDataset(zeros({3, 2})).get(1).target.defined());
}

}  // namespace
}  // namespace tandem::data
