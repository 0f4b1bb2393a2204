// Module: registration, names, tree walks, train/eval, zero_grad and to().
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace {

namespace nn = tandem::nn;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::throws_with;

// A scale parameter and a buffer of its own, two Linear children and a
// nested block: the shape of a real model.
struct BlockImpl : nn::Module {
  BlockImpl() { fc = register_module("fc", nn::Linear(3, 3)); }
  Tensor forward(const Tensor& x) { return fc->forward(x); }
  nn::Linear fc{nullptr};
};
TANDEM_MODULE(Block);

struct NetImpl : nn::Module {
  NetImpl() {
    fc1 = register_module("fc1", nn::Linear(4, 3));
    scale = register_parameter("scale", tandem::ones({2}));
    block = register_module("block", Block());
    fc2 = register_module("fc2", nn::Linear(3, 2));
    steps = register_buffer("steps", tandem::zeros({1}, tandem::kInt64));
    running = register_buffer("running", tandem::zeros({2}));
    drop = register_module("drop", nn::Dropout(0.5));
  }
  nn::Linear fc1{nullptr};
  nn::Linear fc2{nullptr};
  Block block{nullptr};
  nn::Dropout drop{nullptr};
  Tensor scale, steps, running;
};
TANDEM_MODULE(Net);

std::vector<std::string> keys(const tandem::OrderedDict<std::string, Tensor>& dict) {
  return dict.keys();
}

TEST(Module, NamedParametersAreDottedAndInOrder) {
  Net net;
  EXPECT_EQ(keys(net->named_parameters()),
            (std::vector<std::string>{"scale",
                                      "fc1.weight",
                                      "fc1.bias",
                                      "block.fc.weight",
                                      "block.fc.bias",
                                      "fc2.weight",
                                      "fc2.bias"}));
  EXPECT_EQ(keys(net->named_parameters(/*recurse=*/false)),
            (std::vector<std::string>{"scale"}));
  const auto params = net->parameters();
  ASSERT_EQ(params.size(), 7u);
  EXPECT_TRUE(params[1].is_same(net->fc1->weight));  // handles, not copies
  for (const Tensor& p : params) EXPECT_TRUE(p.requires_grad());
  EXPECT_EQ(keys(net->named_buffers()), (std::vector<std::string>{"steps", "running"}));
  EXPECT_EQ(net->buffers().size(), 2u);
  EXPECT_FALSE(net->buffers()[1].requires_grad());
}

TEST(Module, ChildrenAndModules) {
  Net net;
  const auto children = net->named_children();
  EXPECT_EQ(children.keys(), (std::vector<std::string>{"fc1", "block", "fc2", "drop"}));
  EXPECT_EQ(net->children().size(), 4u);
  EXPECT_EQ(children["fc1"].get(), net->fc1.get());
  const auto modules = net->named_modules();
  EXPECT_EQ(modules.keys(),
            (std::vector<std::string>{"", "fc1", "block", "block.fc", "fc2", "drop"}));
  EXPECT_EQ(modules[""].get(), net.get());
  EXPECT_EQ(net->modules(/*include_self=*/false).size(), 5u);
  EXPECT_EQ(net->named_modules("net").keys()[3], "net.block.fc");
}

TEST(Module, ModulesNeedsSharedOwnershipForSelf) {
  NetImpl on_stack;
  EXPECT_TRUE(throws_with([&] { on_stack.modules(); }, "std::make_shared"));
  EXPECT_EQ(on_stack.modules(/*include_self=*/false).size(), 5u);
}

TEST(Module, Names) {
  EXPECT_EQ(nn::Linear(2, 3)->name(), "Linear");
  EXPECT_EQ(nn::Sequential()->name(), "Sequential");
  EXPECT_NE(Net()->name().find("NetImpl"), std::string::npos);
  EXPECT_EQ(nn::Module("Custom").name(), "Custom");
}

TEST(Module, RegistrationErrors) {
  nn::Module m("M");
  m.register_parameter("w", tandem::ones({2}));
  EXPECT_TRUE(throws_with([&] { m.register_parameter("", tandem::ones({2})); },
                          "register_parameter: name must not be empty"));
  EXPECT_TRUE(throws_with([&] { m.register_parameter("a.b", tandem::ones({2})); },
                          "register_parameter: name must not contain a dot (got 'a.b')"));
  EXPECT_TRUE(
      throws_with([&] { m.register_parameter("w", tandem::ones({2})); },
                  "register_parameter: 'w' is already registered as a parameter of M"));
  EXPECT_TRUE(throws_with([&] { m.register_buffer("w", tandem::ones({2})); },
                          "'w' is already registered as a parameter"));
  m.register_module("child", nn::Linear(2, 2));
  EXPECT_TRUE(
      throws_with([&] { m.register_module("child", nn::ReLU()); },
                  "register_module: 'child' is already registered as a submodule"));
  EXPECT_TRUE(throws_with([&] { m.register_module("empty", nn::Linear(nullptr)); },
                          "register_module: submodule 'empty' is empty"));
  Tensor w = tandem::ones({2}, tandem::requires_grad());
  EXPECT_TRUE(throws_with([&] { m.register_parameter("computed", w * 2); }, "grad_fn"));
}

TEST(Module, RegisterParameterSetsRequiresGrad) {
  nn::Module m;
  Tensor frozen =
      m.register_parameter("frozen", tandem::ones({2}), /*requires_grad=*/false);
  Tensor absent = m.register_parameter("absent", Tensor());
  EXPECT_FALSE(frozen.requires_grad());
  EXPECT_FALSE(absent.defined());
  // Undefined parameters (Linear without bias) are skipped by the walks.
  EXPECT_EQ(keys(m.named_parameters()), (std::vector<std::string>{"frozen"}));
}

TEST(Module, ReplaceModuleKeepsPosition) {
  Net net;
  auto fresh = net->replace_module("fc1", nn::Linear(4, 3));
  EXPECT_EQ(net->named_children()["fc1"].get(), fresh.get());
  EXPECT_EQ(net->named_children().keys()[0], "fc1");
  EXPECT_TRUE(throws_with([&] { net->replace_module("nope", nn::ReLU()); },
                          "has no submodule named 'nope'"));
}

TEST(Module, TrainEvalPropagates) {
  Net net;
  EXPECT_TRUE(net->is_training());
  net->eval();
  EXPECT_FALSE(net->is_training());
  EXPECT_FALSE(net->block->fc->is_training());
  EXPECT_FALSE(net->drop->is_training());
  // Dropout follows the mode: the identity in eval, a random mask in train.
  Tensor x = tandem::ones({1000});
  EXPECT_TRUE(all_close(net->drop->forward(x), x));
  net->train();
  EXPECT_TRUE(net->drop->is_training());
  Tensor y = net->drop->forward(x);
  const double zeros = (y == 0).to(tandem::kFloat64).sum().item<double>();
  EXPECT_GT(zeros, 400);
  EXPECT_LT(zeros, 600);
  EXPECT_TRUE(all_close(y.max(), tandem::scalar_tensor(2.0)));
}

TEST(Module, ApplyVisitsEveryModule) {
  Net net;
  std::vector<std::string> names;
  net->apply([&](nn::Module& m) { names.push_back(m.name()); });
  ASSERT_EQ(names.size(), 6u);
  EXPECT_EQ(names[1], "Linear");
  EXPECT_EQ(names[5], "Dropout");
}

TEST(Module, ZeroGrad) {
  nn::Linear fc(3, 2);
  fc->forward(tandem::ones({4, 3})).sum().backward();
  ASSERT_TRUE(fc->weight.grad().defined());
  fc->zero_grad(/*set_to_none=*/false);
  ASSERT_TRUE(fc->weight.grad().defined());
  EXPECT_TRUE(all_close(fc->weight.grad(), tandem::zeros({2, 3})));
  fc->zero_grad();
  EXPECT_FALSE(fc->weight.grad().defined());
  EXPECT_FALSE(fc->bias.grad().defined());
}

TEST(Module, ToDtypeKeepsHandles) {
  Net net;
  Tensor weight = net->fc1->weight;  // as an optimizer would hold it
  Tensor before = weight.detach().clone();
  net->fc1->forward(tandem::ones({2, 4})).sum().backward();
  net->to(tandem::kFloat64);
  EXPECT_EQ(weight.dtype(), tandem::kFloat64);
  EXPECT_TRUE(weight.is_same(net->fc1->weight));
  EXPECT_TRUE(weight.is_same(net->named_parameters()["fc1.weight"]));
  EXPECT_TRUE(weight.requires_grad());
  EXPECT_TRUE(all_close(weight, before.to(tandem::kFloat64)));
  EXPECT_EQ(weight.grad().dtype(), tandem::kFloat64);  // gradients move too
  EXPECT_EQ(net->running.dtype(), tandem::kFloat64);
  EXPECT_EQ(net->steps.dtype(), tandem::kInt64);  // only floating tensors convert
  // The converted model computes in float64.
  EXPECT_EQ(net->fc2->forward(tandem::ones({1, 3}, tandem::kFloat64)).dtype(),
            tandem::kFloat64);
  EXPECT_TRUE(throws_with([&] { net->to(tandem::kInt64); }, "floating-point"));
}

TEST(Module, ToDeviceMovesParametersBuffersAndGrads) {
  Net net;
  Tensor weight = net->fc2->weight;
  net->fc2->forward(tandem::ones({2, 3})).sum().backward();
  net->to(tandem::Device("cpu:1"));
  EXPECT_EQ(weight.device(), tandem::Device("cpu:1"));
  EXPECT_EQ(weight.grad().device(), tandem::Device("cpu:1"));
  EXPECT_EQ(net->steps.device(), tandem::Device("cpu:1"));
  for (const Tensor& p : net->parameters())
    EXPECT_EQ(p.device(), tandem::Device("cpu:1"));
  net->to(tandem::Device(tandem::kCPU), tandem::kFloat64);
  EXPECT_EQ(weight.device(), tandem::Device("cpu:0"));
  EXPECT_EQ(weight.dtype(), tandem::kFloat64);
}

}  // namespace
