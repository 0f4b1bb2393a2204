// Sequential: construction forms, forward, indexing, names and errors.
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace {

namespace nn = tandem::nn;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::throws_with;

struct DoubleImpl : nn::Cloneable<DoubleImpl> {
  void reset() override {}
  Tensor forward(const Tensor& x) { return x * 2; }
};
TANDEM_MODULE(Double);

TEST(Sequential, ForwardChainsModules) {
  nn::Sequential seq(nn::Linear(5, 2), nn::ReLU(), Double());
  ASSERT_EQ(seq->size(), 3u);
  Tensor x = tandem::randn({4, 5});
  auto fc = seq->ptr<nn::LinearImpl>(0);
  Tensor want = tandem::relu(tandem::linear(x, fc->weight, fc->bias)) * 2;
  EXPECT_TRUE(all_close(seq->forward(x), want));
  EXPECT_TRUE(all_close(seq(x), want));
}

TEST(Sequential, ChildrenAreNamedByPosition) {
  nn::Sequential seq(nn::Linear(5, 2), nn::ReLU());
  seq->push_back(nn::Linear(2, 1));
  EXPECT_EQ(seq->named_children().keys(), (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(seq->named_parameters().keys(),
            (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  EXPECT_EQ(seq[1].get(), seq->ptr(1).get());
  EXPECT_EQ(seq[1]->name(), "ReLU");
  EXPECT_EQ(seq->at<nn::LinearImpl>(2).options.out_features(), 1);
}

TEST(Sequential, NamedModules) {
  nn::Sequential seq({{"fc", nn::Linear(3, 4)}, {"act", nn::Tanh()}});
  seq->push_back("out", nn::Linear(4, 1));
  EXPECT_EQ(seq->named_children().keys(), (std::vector<std::string>{"fc", "act", "out"}));
  EXPECT_EQ(seq->forward(tandem::ones({2, 3})).sizes(), (tandem::IntList{2, 1}));
  tandem::OrderedDict<std::string, nn::AnyModule> dict;
  dict.insert("first", nn::AnyModule(nn::Linear(2, 2)));
  dict.insert("second", nn::AnyModule(std::make_shared<nn::SigmoidImpl>()));
  nn::Sequential from_dict(std::make_shared<nn::SequentialImpl>(dict));
  EXPECT_EQ(from_dict->named_children().keys(),
            (std::vector<std::string>{"first", "second"}));
}

TEST(Sequential, AcceptsModuleValuesSharedPtrsAndNestedSequentials) {
  nn::Sequential inner(nn::Linear(3, 3), nn::GELU());
  auto relu = std::make_shared<nn::ReLUImpl>();
  nn::Sequential outer(inner, relu, nn::IdentityImpl());
  EXPECT_EQ(outer->size(), 3u);
  EXPECT_EQ(outer->ptr(0).get(), inner.get());  // shared, not copied
  EXPECT_EQ(outer->ptr(1).get(), relu.get());
  EXPECT_EQ(outer->named_parameters().keys()[0], "0.0.weight");
  for (const auto& module : *outer) EXPECT_FALSE(module.is_empty());
}

TEST(Sequential, Errors) {
  nn::Sequential empty;
  EXPECT_TRUE(throws_with([&] { empty->forward(tandem::ones({1})); },
                          "cannot call forward() on an empty Sequential"));
  nn::Sequential seq{nn::ReLU()};
  EXPECT_THROW(seq->ptr(3), tandem::IndexError);
  EXPECT_TRUE(throws_with([&] { seq->ptr<nn::LinearImpl>(0); }, "the module is a ReLU"));
  EXPECT_TRUE(throws_with([&] { seq->push_back(nn::Linear(nullptr)); },
                          "Sequential::push_back: module '1' is empty"));
  EXPECT_TRUE(
      throws_with([&] { seq->push_back("0", nn::Tanh()); }, "'0' is already registered"));
  // A bad input shape surfaces the op's own message.
  nn::Sequential mlp(nn::Linear(5, 2));
  EXPECT_TRUE(throws_with([&] { mlp->forward(tandem::ones({30, 4})); }, "linear"));
}

TEST(Sequential, CloneKeepsNamesAndCopiesModules) {
  nn::Sequential seq({{"fc", nn::Linear(3, 2)}, {"act", nn::ReLU()}});
  seq->eval();
  auto copy = std::dynamic_pointer_cast<nn::SequentialImpl>(seq->clone());
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->named_children().keys(), (std::vector<std::string>{"fc", "act"}));
  EXPECT_FALSE(copy->is_training());
  auto fc = copy->ptr<nn::LinearImpl>(0);
  EXPECT_NE(fc.get(), seq->ptr(0).get());
  EXPECT_EQ(copy->named_children()["fc"].get(), fc.get());
  EXPECT_TRUE(all_close(fc->weight, seq->ptr<nn::LinearImpl>(0)->weight));
  EXPECT_NE(fc->weight.data_ptr(), seq->ptr<nn::LinearImpl>(0)->weight.data_ptr());
}

}  // namespace
