// linear() under MicroBatchProducts (tandem/core/micro_batch_products.h):
// the products of an ordinary linear(), a row's bits whatever rows share
// the call, and a weight packed again whenever it may have changed.
#include <cstring>

#include "backend/cpu/panel_gemm.h"
#include "support/tensor_testing.h"
#include "tandem/core/micro_batch_products.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::all_close;

bool same_bits(const Tensor& a, const Tensor& b) {
  const Tensor ca = a.contiguous(), cb = b.contiguous();
  return ca.sizes() == cb.sizes() &&
         std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.numel() * ca.element_size()) == 0;
}

class MicroBatchProductsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!backend::cpu::panel_gemm_available()) GTEST_SKIP() << "no AVX-512F here";
  }
};

TEST_F(MicroBatchProductsTest, LinearAndItsGradientsMatchTheUsualOnes) {
  manual_seed(11);
  Tensor x = randn({32, 70}).requires_grad_(true);
  Tensor w = randn({45, 70}).requires_grad_(true);
  Tensor b = randn({45}).requires_grad_(true);
  Tensor g = randn({32, 45});
  Tensor y;
  {
    MicroBatchProducts products(MicroBatchProducts::next_step());
    y = linear(x, w, b);
  }
  y.backward(g);
  Tensor x2 = x.detach().clone().requires_grad_(true);
  Tensor w2 = w.detach().clone().requires_grad_(true);
  Tensor b2 = b.detach().clone().requires_grad_(true);
  Tensor y2 = linear(x2, w2, b2);
  y2.backward(g);
  EXPECT_TRUE(all_close(y, y2, 1e-5, 1e-5));
  EXPECT_TRUE(all_close(x.grad(), x2.grad(), 1e-5, 1e-5));
  EXPECT_TRUE(all_close(w.grad(), w2.grad(), 1e-5, 1e-5));
  EXPECT_TRUE(all_close(b.grad(), b2.grad(), 1e-6, 1e-6));
}

TEST_F(MicroBatchProductsTest, ARowHasTheSameBitsInAnyMicroBatch) {
  manual_seed(12);
  Tensor x = randn({40, 64}), w = randn({50, 64}), b = randn({50});
  MicroBatchProducts products(MicroBatchProducts::next_step());
  const Tensor all = linear(x, w, b);
  const Tensor firsts = linear(x.narrow(0, 0, 13), w, b);
  const Tensor rest = linear(x.narrow(0, 13, 27), w, b);
  EXPECT_TRUE(same_bits(cat({firsts, rest}, 0), all));
}

TEST_F(MicroBatchProductsTest, AWeightChangedInPlaceIsPackedAgain) {
  manual_seed(13);
  Tensor x = randn({8, 16}), w = randn({20, 16});
  MicroBatchProducts products(MicroBatchProducts::next_step());
  linear(x, w);
  w.mul_(2);  // same memory, a new version
  EXPECT_TRUE(all_close(linear(x, w), mm(x, w.t()), 1e-5, 1e-5));
}

TEST_F(MicroBatchProductsTest, AnotherWeightInTheSameMemoryIsPackedAgain) {
  manual_seed(14);
  Tensor x = randn({8, 16});
  MicroBatchProducts products(MicroBatchProducts::next_step());
  for (int i = 0; i < 4; ++i) {
    // Freed and allocated again: the allocator may hand out the same block.
    Tensor w = randn({20, 16});
    EXPECT_TRUE(all_close(linear(x, w), mm(x, w.t()), 1e-5, 1e-5)) << i;
  }
}

TEST_F(MicroBatchProductsTest, MicroBatchesRunTogetherGiveTheirOwnGradientsInTheTree) {
  manual_seed(15);
  const std::vector<int64_t> rows = {8, 8, 5};
  Tensor x = randn({21, 12}), g = randn({21, 9});
  Tensor w = randn({9, 12}).requires_grad_(true), b = randn({9}).requires_grad_(true);
  const uint64_t step = MicroBatchProducts::next_step();
  {
    MicroBatchProducts together(step, rows);
    linear(x, w, b).backward(g);
  }
  // One by one: (0 + 1) + 2, the tree over three.
  std::vector<Tensor> gw, gb;
  int64_t first = 0;
  for (int64_t part : rows) {
    Tensor w1 = w.detach().clone().requires_grad_(true);
    Tensor b1 = b.detach().clone().requires_grad_(true);
    {
      MicroBatchProducts alone(step);
      linear(x.narrow(0, first, part), w1, b1).backward(g.narrow(0, first, part));
    }
    gw.push_back(w1.grad());
    gb.push_back(b1.grad());
    first += part;
  }
  EXPECT_TRUE(same_bits(w.grad(), (gw[0] + gw[1]) + gw[2]));
  EXPECT_TRUE(same_bits(b.grad(), (gb[0] + gb[1]) + gb[2]));
}

TEST_F(MicroBatchProductsTest, MicroBatchesThatAreNotTheInputsRowsAreAnError) {
  Tensor x = randn({10, 4}), w = randn({3, 4});
  MicroBatchProducts products(MicroBatchProducts::next_step(), {8, 8});
  EXPECT_TRUE(testing::throws_with([&] { linear(x, w); },
                                   "runs micro-batches of 16 rows in all, but linear's "
                                   "input has 10 rows"));
}

}  // namespace
}  // namespace tandem
