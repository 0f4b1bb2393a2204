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

}  // namespace
}  // namespace tandem
