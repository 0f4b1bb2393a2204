// LibTorch's everyday names under tandem::, as renaming torch:: gives them:
// the short dtype names, str, optional, TANDEM_WARN, AT_ASSERT, the
// TensorOptions spellings, data()/data<T>(), accessor<T, N>() and type_as.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::throws_with;

TEST(LibTorchNames, ShortDtypeNames) {
  EXPECT_EQ(kF32, kFloat32);
  EXPECT_EQ(kF64, kFloat64);
  EXPECT_EQ(kI64, kInt64);
  EXPECT_EQ(kU8, kUInt8);
  EXPECT_EQ(tandem::zeros({2}, kF64).dtype(), kDouble);
  EXPECT_EQ(TensorOptions().dtype<float>().dtype(), kF32);
  EXPECT_EQ(TensorOptions().dtype<int64_t>().dtype(), kI64);
  EXPECT_EQ(TensorOptions().device(kCPU, 1).device(), Device("cpu:1"));
}

TEST(LibTorchNames, StrConcatenatesStreamables) {
  EXPECT_EQ(tandem::str("shape ", IntList{2, 3}, " on ", Device("cpu:1"), ": ", 1.5),
            "shape [2, 3] on cpu:1: 1.5");
  EXPECT_EQ(tandem::str(), "");
}

TEST(LibTorchNames, OptionalIsStd) {
  tandem::optional<int64_t> dim = tandem::nullopt;
  EXPECT_FALSE(dim.has_value());
  dim = 3;
  std::optional<int64_t> same = dim;  // the same type
  EXPECT_EQ(same.value(), 3);
}

TEST(LibTorchNames, WarnAndAssertMacros) {
  std::vector<std::string> seen;
  auto previous = tandem::set_warning_handler(
      [&](const std::string& message) { seen.push_back(message); });
  TANDEM_WARN("lr ", 10, " is large");
  tandem::set_warning_handler(previous);
  EXPECT_EQ(seen, std::vector<std::string>{"lr 10 is large"});

  EXPECT_NO_THROW(AT_ASSERT(1 + 1 == 2, "arithmetic"));
  EXPECT_THROW(AT_ASSERT(1 + 1 == 3, "arithmetic"), InternalError);
  EXPECT_TRUE(throws_with([] { TANDEM_CHECK(false, "expected ", 2, " dims"); },
                          "expected 2 dims"));
}

TEST(LibTorchNames, DataIsDetachedAndDataTIsThePointer) {
  Tensor w = tandem::ones({3}, TensorOptions(kF32).requires_grad(true));
  Tensor d = w.data();
  EXPECT_FALSE(d.requires_grad());
  d.mul_(2);  // shares storage with w, without history
  EXPECT_EQ(w.sum().item<float>(), 6.0f);
  EXPECT_EQ(w.data<float>(), w.data_ptr<float>());
  EXPECT_TRUE(
      throws_with([&] { w.data<double>(); }, "data_ptr: tensor has dtype float32"));
}

TEST(LibTorchNames, AccessorFollowsStrides) {
  Tensor x = tandem::arange(6, kF32).view({2, 3}).t();  // strides [1, 3]
  auto a = x.accessor<float, 2>();
  EXPECT_EQ(a.size(0), 3);
  EXPECT_EQ(a.size(1), 2);
  EXPECT_EQ(a[2][1], 5.0f);
  EXPECT_EQ(a[1][0], 1.0f);
  a[0][1] = 42;  // writes into x's memory
  EXPECT_EQ(x[0][1].item<float>(), 42.0f);
  EXPECT_TRUE(
      throws_with([&] { x.accessor<float, 3>(); }, "accessor: expected a tensor of 3"));
}

TEST(LibTorchNames, TypeAsAndIsSameSize) {
  Tensor x = tandem::arange(3);
  Tensor like = tandem::zeros({3}, TensorOptions(kF64).device("cpu:1"));
  Tensor y = x.type_as(like);
  EXPECT_EQ(y.dtype(), kF64);
  EXPECT_EQ(y.device(), Device("cpu:1"));
  EXPECT_TRUE(x.is_same_size(like));
  EXPECT_FALSE(x.is_same_size(tandem::zeros({1, 3})));
}

TEST(LibTorchNames, ExpandingArrayPassesAsSizes) {
  ExpandingArray<2> kernel = 3;
  IntList sizes = kernel;
  EXPECT_EQ(sizes, IntList({3, 3}));
  EXPECT_EQ(tandem::zeros(ExpandingArray<2>({2, 4})).sizes(), IntList({2, 4}));
}

}  // namespace
}  // namespace tandem
