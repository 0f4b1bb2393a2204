// ModuleHolder and TANDEM_MODULE: construction, sharing, empty holders.
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace {

namespace nn = tandem::nn;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::throws_with;

struct AffineImpl : nn::Module {
  AffineImpl(int64_t n, double shift) : shift(shift) {
    scale = register_parameter("scale", tandem::full({n}, 2.0));
  }
  Tensor forward(const Tensor& x) { return x * scale + shift; }
  Tensor scale;
  double shift;
};
TANDEM_MODULE(Affine);

TEST(ModuleHolder, ForwardsConstructorArgumentsAndCalls) {
  Affine affine(3, 1.0);
  EXPECT_FALSE(affine.is_empty());
  EXPECT_TRUE(static_cast<bool>(affine));
  Tensor x = tandem::ones({3});
  EXPECT_TRUE(all_close(affine(x), tandem::full({3}, 3.0)));  // operator() is forward
  EXPECT_TRUE(all_close(affine->forward(x), tandem::full({3}, 3.0)));
  EXPECT_EQ((*affine).shift, 1.0);
  EXPECT_EQ(affine.get(), affine.ptr().get());
}

TEST(ModuleHolder, CopiesShareTheModule) {
  Affine a(2, 0.0);
  Affine b = a;
  b->shift = 5.0;
  EXPECT_EQ(a->shift, 5.0);
  EXPECT_EQ(a.get(), b.get());
  // From a shared_ptr, as register_module's result is assigned.
  Affine c(std::make_shared<AffineImpl>(2, 4.0));
  EXPECT_EQ(c->shift, 4.0);
}

TEST(ModuleHolder, EmptyHolderGivesClearError) {
  nn::Linear fc{nullptr};
  EXPECT_TRUE(fc.is_empty());
  EXPECT_FALSE(static_cast<bool>(fc));
  EXPECT_TRUE(throws_with(
      [&] {
        fc->forward(tandem::ones({1, 2}));
      },
      "accessing an empty holder of tandem::nn::LinearImpl"));
  EXPECT_TRUE(throws_with([&] { fc.ptr(); }, "empty holder"));
  fc = nn::Linear(2, 1);
  EXPECT_FALSE(fc.is_empty());
  EXPECT_EQ(fc->weight.sizes(), (tandem::IntList{1, 2}));
}

TEST(ModuleHolder, DefaultConstructsWhenPossible) {
  nn::ReLU relu;  // ReLUImpl has a default constructor
  EXPECT_FALSE(relu.is_empty());
  static_assert(std::is_default_constructible_v<nn::ReLU>);
  static_assert(!std::is_default_constructible_v<nn::Linear>,
                "Linear needs its sizes (or nullptr)");
}

TEST(ModuleHolder, RegisterModuleReturnsWhatItGot) {
  nn::Module parent("Parent");
  nn::Linear fc = parent.register_module("fc", nn::Linear(2, 2));
  std::shared_ptr<nn::ReLUImpl> relu =
      parent.register_module("relu", std::make_shared<nn::ReLUImpl>());
  EXPECT_EQ(parent.named_children()["fc"].get(), fc.get());
  EXPECT_EQ(parent.named_children()["relu"].get(), relu.get());
}

TEST(ModuleHolder, PrintsTheModule) {
  std::ostringstream out;
  out << nn::Linear(3, 1);
  EXPECT_EQ(out.str(), "Linear(in_features=3, out_features=1, bias=true)");
}

}  // namespace
