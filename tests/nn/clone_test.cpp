// Deep clone(): the clone has equal values, its own storage and no grads.
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace {

namespace nn = tandem::nn;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::throws_with;

struct NetImpl : nn::Cloneable<NetImpl> {
  NetImpl() { reset(); }
  void reset() override {
    fc = register_module("fc", nn::Linear(4, 3));
    head = register_module("head", nn::Sequential(nn::ReLU(), nn::Linear(3, 2)));
    frozen = register_parameter("frozen", tandem::ones({3}), /*requires_grad=*/false);
    count = register_buffer("count", tandem::zeros({1}, tandem::kInt64));
  }
  Tensor forward(const Tensor& x) { return head->forward(fc->forward(x) * frozen); }
  nn::Linear fc{nullptr};
  nn::Sequential head{nullptr};
  Tensor frozen, count;
};
TANDEM_MODULE(Net);

TEST(Clone, DeepCopyWithEqualValuesAndOwnStorage) {
  Net net;
  net->count.fill_(7);
  net->forward(tandem::ones({2, 4})).sum().backward();
  net->eval();
  auto copy = std::dynamic_pointer_cast<NetImpl>(net->clone());
  ASSERT_NE(copy, nullptr);
  const auto original = net->named_parameters();
  const auto cloned = copy->named_parameters();
  ASSERT_EQ(cloned.keys(), original.keys());
  for (const auto& item : original) {
    const Tensor& c = cloned[item.key()];
    EXPECT_TRUE(all_close(c, item.value())) << item.key();
    EXPECT_NE(c.data_ptr(), item->data_ptr()) << item.key();
    EXPECT_EQ(c.requires_grad(), item->requires_grad()) << item.key();
    EXPECT_FALSE(c.grad().defined()) << item.key();
  }
  EXPECT_EQ(copy->count.item<int64_t>(), 7);
  EXPECT_NE(copy->count.data_ptr(), net->count.data_ptr());
  EXPECT_FALSE(copy->is_training());
  EXPECT_FALSE(copy->head->is_training());
  // The clone's members are its registered tensors and modules.
  EXPECT_TRUE(copy->fc->weight.is_same(cloned["fc.weight"]));
  EXPECT_EQ(copy->named_children()["head"].get(), copy->head.get());
  EXPECT_EQ(copy->head->ptr(1).get(), copy->head->named_children()["1"].get());
  EXPECT_NE(copy->head->ptr(1).get(), net->head->ptr(1).get());
}

TEST(Clone, CloneIsIndependent) {
  Net net;
  auto copy = std::dynamic_pointer_cast<NetImpl>(net->clone());
  Tensor x = tandem::randn({5, 4});
  EXPECT_TRUE(all_close(copy->forward(x), net->forward(x)));
  {
    tandem::NoGradGuard no_grad;
    copy->fc->weight.add_(1.0);
    copy->head->ptr<nn::LinearImpl>(1)->bias.fill_(3.0);
  }
  EXPECT_FALSE(all_close(copy->fc->weight, net->fc->weight));
  EXPECT_FALSE(all_close(copy->head->ptr<nn::LinearImpl>(1)->bias,
                         net->head->ptr<nn::LinearImpl>(1)->bias));
  copy->forward(x).sum().backward();
  EXPECT_TRUE(copy->fc->weight.grad().defined());
  EXPECT_FALSE(net->fc->weight.grad().defined());
}

TEST(Clone, ToDeviceAndDtypeAreKept) {
  Net net;
  net->to(tandem::kFloat64);
  auto copy = std::dynamic_pointer_cast<NetImpl>(net->clone(tandem::Device("cpu:1")));
  EXPECT_EQ(copy->fc->weight.dtype(), tandem::kFloat64);
  EXPECT_EQ(copy->fc->weight.device(), tandem::Device("cpu:1"));
  EXPECT_EQ(copy->count.device(), tandem::Device("cpu:1"));
  EXPECT_EQ(net->fc->weight.device(), tandem::Device("cpu:0"));
}

TEST(Clone, BuiltinLayersClone) {
  nn::Linear fc(3, 2);
  auto copy = std::dynamic_pointer_cast<nn::LinearImpl>(fc->clone());
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->options.in_features(), 3);
  EXPECT_TRUE(all_close(copy->weight, fc->weight));
  EXPECT_NE(copy->weight.data_ptr(), fc->weight.data_ptr());
  nn::Linear no_bias(nn::LinearOptions(3, 2).bias(false));
  auto copy2 = std::dynamic_pointer_cast<nn::LinearImpl>(no_bias->clone());
  EXPECT_FALSE(copy2->bias.defined());
  EXPECT_EQ(copy2->parameters().size(), 1u);
}

struct PlainImpl : nn::Module {
  Tensor forward(const Tensor& x) { return x; }
};

TEST(Clone, PlainModuleSaysHowToGetClone) {
  PlainImpl plain;
  EXPECT_TRUE(
      throws_with([&] { plain.clone(); }, "derive it from tandem::nn::Cloneable"));
}

struct ForgetfulImpl : nn::Cloneable<ForgetfulImpl> {
  ForgetfulImpl() { register_parameter("w", tandem::ones({1})); }  // not in reset()
  void reset() override {}
};

TEST(Clone, ResetMustRecreateParameters) {
  auto forgetful = std::make_shared<ForgetfulImpl>();
  EXPECT_TRUE(
      throws_with([&] { forgetful->clone(); }, "register all of them in reset()"));
}

TEST(Clone, LeavesTheDefaultGeneratorsStreamAlone) {
  tandem::manual_seed(5);
  nn::Sequential net(nn::Linear(8, 4), nn::ReLU(), nn::Linear(4, 2));
  const std::string state = tandem::default_generator().get_state();
  const Tensor expected = tandem::randn({3});
  tandem::default_generator().set_state(state);
  auto copy = net->clone();
  // The copy's fresh values came from a scratch generator, and the stream
  // goes on as if no clone had happened.
  EXPECT_TRUE(all_close(tandem::randn({3}), expected, 0, 0));
  EXPECT_TRUE(all_close(copy->parameters()[0], net->parameters()[0], 0, 0));
}

}  // namespace
