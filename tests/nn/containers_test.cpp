// ModuleList, ModuleDict, ParameterList, ParameterDict and Functional:
// registration (parameters and state_dict keys as LibTorch names them),
// indexing, insertion, clone independence and printing.
#include <sstream>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace {

namespace nn = tandem::nn;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::throws_with;

std::string printed(const nn::Module& module) {
  std::ostringstream out;
  out << module;
  return out.str();
}

// A model whose layers live in containers, as a LibTorch user writes one.
struct StackImpl : nn::Cloneable<StackImpl> {
  StackImpl() { reset(); }
  void reset() override {
    layers =
        register_module("layers", nn::ModuleList(nn::Linear(3, 4), nn::Linear(4, 2)));
    heads = register_module(
        "heads",
        nn::ModuleDict(std::vector<std::pair<std::string, std::shared_ptr<nn::Module>>>{
            {"out", nn::Linear(2, 1).ptr()}}));
    scales = register_module("scales", nn::ParameterList(tandem::ones({2})));
    extra = register_module("extra", nn::ParameterDict());
    extra->insert("shift", tandem::zeros({1}));
  }
  Tensor forward(const Tensor& x) {
    Tensor h = x;
    for (const auto& layer : *layers) h = layer->as<nn::Linear>()->forward(h).tanh();
    h = h * scales[0];
    return heads->at<nn::LinearImpl>("out").forward(h) + extra["shift"];
  }
  nn::ModuleList layers{nullptr};
  nn::ModuleDict heads{nullptr};
  nn::ParameterList scales{nullptr};
  nn::ParameterDict extra{nullptr};
};
TANDEM_MODULE(Stack);

TEST(ModuleList, RegistersModulesUnderTheirIndex) {
  nn::ModuleList list(nn::Linear(3, 4), nn::ReLU());
  list->push_back(nn::Linear(4, 2));
  list->append(std::make_shared<nn::TanhImpl>());
  ASSERT_EQ(list->size(), 4u);
  EXPECT_EQ(list->named_parameters().keys(),
            (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  EXPECT_EQ(list->state_dict().keys(), list->named_parameters().keys());
  EXPECT_EQ(list[1]->name(), "ReLU");
  EXPECT_EQ(list->at<nn::LinearImpl>(2).options.out_features(), 2);
  EXPECT_EQ(list->ptr<nn::Linear>(0)->options.in_features(), 3);
  EXPECT_TRUE(throws_with([&] { list->ptr<nn::LinearImpl>(1); },
                          "ModuleList: the module at index 1 is a ReLU"));
  EXPECT_TRUE(throws_with([&] { list->ptr(4); },
                          "ModuleList: index 4 is out of range for a ModuleList of 4"));
  int count = 0;
  for (const auto& module : *list) count += module != nullptr;
  EXPECT_EQ(count, 4);
}

TEST(ModuleList, InsertAndExtendRenumber) {
  nn::ModuleList list(nn::Linear(1, 1), nn::Linear(2, 2));
  list->insert(1, nn::ReLU());
  EXPECT_EQ(list->named_children().keys(), (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(list[1]->name(), "ReLU");
  EXPECT_EQ(list->at<nn::LinearImpl>(2).options.in_features(), 2);
  EXPECT_EQ(list->named_parameters().keys(),
            (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  nn::ModuleList more(nn::Sigmoid{});
  list->extend(*more);
  EXPECT_EQ(list->size(), 4u);
  EXPECT_EQ(list[3].get(), more[0].get());  // shared, as LibTorch's extend
  EXPECT_TRUE(throws_with([&] { list->insert(9, nn::ReLU()); },
                          "ModuleList::insert: index 9 is out of range"));
  EXPECT_TRUE(throws_with([&] { list->push_back(nn::Linear(nullptr)); },
                          "ModuleList::push_back: the module is empty"));
}

TEST(ModuleDict, KeepsKeysInOrderAndReplacesInPlace) {
  nn::ModuleDict dict(std::vector<std::pair<std::string, std::shared_ptr<nn::Module>>>{
      {"encoder", nn::Linear(3, 2).ptr()}, {"act", nn::ReLU().ptr()}});
  dict->insert("decoder", nn::Linear(2, 3));
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"encoder", "act", "decoder"}));
  EXPECT_EQ(dict->named_parameters().keys(),
            (std::vector<std::string>{
                "encoder.weight", "encoder.bias", "decoder.weight", "decoder.bias"}));
  EXPECT_TRUE(dict->contains("act"));
  EXPECT_EQ(dict["act"]->name(), "ReLU");
  dict->insert("act", nn::Tanh());
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"encoder", "act", "decoder"}));
  EXPECT_EQ(dict["act"]->name(), "Tanh");
  EXPECT_EQ(dict->named_children()["act"].get(), dict["act"].get());
  EXPECT_EQ(dict->items().size(), 3u);
  EXPECT_EQ(dict->values()[2].get(), dict["decoder"].get());
  EXPECT_TRUE(throws_with([&] { dict["missing"]; },
                          "ModuleDict: no module under the key 'missing'"));
  EXPECT_TRUE(throws_with([&] { dict->ptr<nn::LinearImpl>("act"); },
                          "the module under 'act' is a Tanh"));
}

TEST(ParameterList, RegistersTensorsKeepingRequiresGrad) {
  Tensor frozen = tandem::zeros({3});
  nn::ParameterList list(tandem::ones({2, 2}).requires_grad_(), frozen);
  list->append(tandem::randn({4}).requires_grad_());
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ(list->named_parameters().keys(), (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_TRUE(list[0].requires_grad());
  EXPECT_FALSE(list[1].requires_grad());
  EXPECT_EQ(list[1].unsafe_impl(), frozen.unsafe_impl());
  std::vector<std::string> keys;
  for (const auto& item : *list) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"0", "1", "2"}));
  nn::ParameterList more;
  more->extend(std::vector<Tensor>{tandem::ones({1})});
  more->extend(*list);
  EXPECT_EQ(more->size(), 4u);
  EXPECT_TRUE(
      throws_with([&] { list->at(3); }, "ParameterList: index 3 is out of range"));
}

TEST(ParameterDict, InsertsAndUpdatesInPlace) {
  nn::ParameterDict dict(std::vector<std::pair<std::string, Tensor>>{
      {"scale", tandem::ones({3}).requires_grad_()}, {"shift", tandem::zeros({3})}});
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"scale", "shift"}));
  EXPECT_EQ(dict->named_parameters().keys(), dict->keys());
  Tensor scale = dict["scale"];
  tandem::OrderedDict<std::string, Tensor> update;
  update.insert("scale", tandem::full({3}, 2.0).requires_grad_());
  update.insert("gain", tandem::ones({1}));
  dict->update(update);
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"scale", "shift", "gain"}));
  EXPECT_EQ(dict["scale"].unsafe_impl(), scale.unsafe_impl());  // the same parameter
  EXPECT_EQ(scale[0].item<float>(), 2.0f);
  EXPECT_TRUE(throws_with([&] { dict->insert("gain", tandem::ones({1})); },
                          "'gain' is already registered"));
  EXPECT_TRUE(throws_with([&] { dict["nope"]; },
                          "ParameterDict: no parameter under the key 'nope'"));
}

TEST(Containers, StateDictKeysNestAsInLibTorch) {
  Stack net;
  EXPECT_EQ(net->state_dict().keys(),
            (std::vector<std::string>{"layers.0.weight",
                                      "layers.0.bias",
                                      "layers.1.weight",
                                      "layers.1.bias",
                                      "heads.out.weight",
                                      "heads.out.bias",
                                      "scales.0",
                                      "extra.shift"}));
  EXPECT_EQ(net->parameters().size(), 8u);
  EXPECT_EQ(net->forward(tandem::randn({5, 3})).sizes(), (tandem::IntList{5, 1}));
}

TEST(Containers, CloneSharesNothing) {
  Stack net;
  auto copy = std::dynamic_pointer_cast<StackImpl>(net->clone());
  ASSERT_NE(copy, nullptr);
  const auto mine = net->named_parameters();
  const auto theirs = copy->named_parameters();
  ASSERT_EQ(mine.keys(), theirs.keys());
  for (const auto& item : mine) {
    EXPECT_NE(item->unsafe_impl(), theirs[item.key()].unsafe_impl()) << item.key();
    EXPECT_TRUE(tandem::equal(*item, theirs[item.key()])) << item.key();
    EXPECT_EQ(item->requires_grad(), theirs[item.key()].requires_grad()) << item.key();
  }
  // The clone's handles are its own registered parameters.
  EXPECT_EQ(copy->scales[0].unsafe_impl(), theirs["scales.0"].unsafe_impl());
  EXPECT_EQ(copy->extra["shift"].unsafe_impl(), theirs["extra.shift"].unsafe_impl());
  EXPECT_EQ(copy->layers[0].get(), copy->named_modules()["layers.0"].get());
  // Changing the clone leaves the original alone.
  {
    tandem::NoGradGuard no_grad;
    copy->scales[0].fill_(5.0);
  }
  EXPECT_EQ(net->scales[0][0].item<float>(), 1.0f);
  const Tensor x = tandem::randn({2, 3});
  EXPECT_FALSE(tandem::equal(copy->forward(x), net->forward(x)));
}

TEST(Containers, ModuleListCloneIsDeep) {
  nn::ModuleList list(nn::Linear(2, 2));
  auto copy = std::dynamic_pointer_cast<nn::ModuleListImpl>(list->clone());
  ASSERT_NE(copy, nullptr);
  EXPECT_NE(copy->ptr(0).get(), list->ptr(0).get());
  EXPECT_EQ(copy->ptr(0).get(), copy->named_children()["0"].get());
  EXPECT_TRUE(tandem::equal(copy->at<nn::LinearImpl>(0).weight,
                            list->at<nn::LinearImpl>(0).weight));
}

TEST(Functional, WrapsAFunctionWithBoundArguments) {
  nn::Functional relu([](Tensor x) { return x.relu(); });
  nn::Functional scaled([](Tensor x, double s) { return x * s; }, 0.5);
  const Tensor x = tandem::tensor({-1.0f, 2.0f});
  EXPECT_TRUE(tandem::equal(relu(x), tandem::tensor({0.0f, 2.0f})));
  EXPECT_TRUE(tandem::equal(scaled->forward(x), tandem::tensor({-0.5f, 1.0f})));
  nn::Sequential net(nn::Linear(2, 2), relu, scaled);
  EXPECT_EQ(net->forward(x.view({1, 2})).sizes(), (tandem::IntList{1, 2}));
  EXPECT_TRUE(net->parameters().size() == 2u);
  auto copy = net->clone();
  EXPECT_EQ(printed(*copy),
            "Sequential(\n"
            "  (0): Linear(in_features=2, out_features=2, bias=true)\n"
            "  (1): Functional()\n"
            "  (2): Functional()\n"
            ")");
}

TEST(Containers, PrintLikePyTorch) {
  nn::ModuleList list(nn::Linear(3, 4), nn::ReLU());
  EXPECT_EQ(printed(*list),
            "ModuleList(\n"
            "  (0): Linear(in_features=3, out_features=4, bias=true)\n"
            "  (1): ReLU()\n"
            ")");
  EXPECT_EQ(printed(*nn::ModuleList()), "ModuleList()");
  nn::ParameterList params(tandem::zeros({3, 4}), tandem::zeros({2}, tandem::kFloat64));
  EXPECT_EQ(printed(*params),
            "ParameterList(\n"
            "  (0): Parameter containing: [float32 of size [3, 4]]\n"
            "  (1): Parameter containing: [float64 of size [2]]\n"
            ")");
  nn::ParameterDict dict;
  dict->insert("w", tandem::zeros({1}));
  EXPECT_EQ(printed(*dict),
            "ParameterDict(\n"
            "  (w): Parameter containing: [float32 of size [1]]\n"
            ")");
}

TEST(Containers, ToMovesAndConvertsInPlace) {
  Stack net;
  Tensor scale = net->scales[0];
  net->to(tandem::kFloat64);
  EXPECT_EQ(net->scales[0].dtype(), tandem::kFloat64);
  EXPECT_EQ(net->scales[0].unsafe_impl(), scale.unsafe_impl());
  EXPECT_EQ(net->forward(tandem::randn({2, 3}, tandem::kFloat64)).dtype(),
            tandem::kFloat64);
}

}  // namespace
