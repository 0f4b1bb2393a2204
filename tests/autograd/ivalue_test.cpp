// IValue, what ctx->saved_data holds: each kind kept as given, and reading
// it as another kind refused naming both (as LibTorch's).
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::throws_with;

TEST(IValue, KeepsEachKindAsGiven) {
  EXPECT_TRUE(IValue().isNone());
  EXPECT_TRUE(IValue(true).isBool());
  EXPECT_EQ(IValue(int64_t{1} << 40).toInt(), int64_t{1} << 40);
  EXPECT_TRUE(IValue(2.5F).isDouble());
  EXPECT_EQ(IValue("text").toStringView(), "text");
  EXPECT_EQ(IValue(IntList{2, 3}).toIntVector(), (std::vector<int64_t>{2, 3}));
  const Tensor t = zeros({2});
  EXPECT_TRUE(IValue(t).toTensor().is_same(t));
  EXPECT_EQ(IValue(std::vector<Tensor>{t, t}).toTensorVector().size(), 2U);
  EXPECT_EQ(IValue(std::vector<double>{0.5}).tagKind(), "DoubleList");
}

TEST(IValue, ReadingAnotherKindNamesBoth) {
  const IValue n = 5;
  EXPECT_TRUE(n.isInt());
  EXPECT_TRUE(throws_with([&] { n.toDouble(); },
                          "IValue::toDouble: expected Double but got Int"));
  EXPECT_TRUE(throws_with([] { IValue(true).toInt(); },
                          "IValue::toInt: expected Int but got Bool"));
  EXPECT_TRUE(
      throws_with([] { IValue().toTensor(); },
                  "IValue::toTensor: expected Tensor but got None (a saved_data key "
                  "that was never set reads as None)"));
}

}  // namespace
}  // namespace tandem
