// state_dict / load_state_dict: keys, round trip, PyTorch's error text, and
// that a failed load changes nothing.
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace {

namespace nn = tandem::nn;
using tandem::OrderedDict;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::throws_with;

struct NetImpl : nn::Module {
  NetImpl() : nn::Module("Net") {
    fc = register_module("fc", nn::Linear(5, 3));
    fc2 = register_module("fc2", nn::Linear(3, 2));
    mean = register_buffer("mean", tandem::zeros({2}));
  }
  nn::Linear fc{nullptr}, fc2{nullptr};
  Tensor mean;
};
TANDEM_MODULE(Net);

TEST(StateDict, KeysValuesAndSharing) {
  Net net;
  auto sd = net->state_dict();
  // PyTorch's order: a module's parameters, its buffers, then its children.
  EXPECT_EQ(sd.keys(),
            (std::vector<std::string>{
                "mean", "fc.weight", "fc.bias", "fc2.weight", "fc2.bias"}));
  EXPECT_FALSE(sd["fc.weight"].requires_grad());                      // detached
  EXPECT_EQ(sd["fc.weight"].data_ptr(), net->fc->weight.data_ptr());  // not copied
}

TEST(StateDict, RoundTripCopiesValuesInPlace) {
  tandem::manual_seed(1);
  Net a;
  Net b;
  ASSERT_FALSE(all_close(a->fc->weight, b->fc->weight));
  Tensor b_weight = b->fc->weight;
  a->mean.fill_(0.25);
  b->load_state_dict(a->state_dict());
  EXPECT_TRUE(b_weight.is_same(b->fc->weight));  // same tensors, new values
  for (const auto& item : a->state_dict()) {
    EXPECT_TRUE(all_close(b->state_dict()[item.key()], item.value())) << item.key();
  }
  EXPECT_NE(b->fc->weight.data_ptr(), a->fc->weight.data_ptr());  // copies
  EXPECT_TRUE(b->fc->weight.requires_grad());
  // Values convert to the model's dtype.
  auto sd64 = a->state_dict();
  for (auto& item : sd64) item.value() = item->to(tandem::kFloat64).mul(2.0);
  b->load_state_dict(sd64);
  EXPECT_EQ(b->fc->weight.dtype(), tandem::kFloat32);
  EXPECT_TRUE(all_close(b->fc->weight, a->fc->weight * 2.0));
}

TEST(StateDict, ErrorListsEveryProblemInPyTorchsWords) {
  Net net;
  auto sd = net->state_dict();
  sd.erase("fc.bias");
  sd.insert("zzz", tandem::zeros({1}));
  sd.insert("fc.extra", tandem::zeros({1}));
  sd["fc.weight"] = tandem::zeros({3, 4});
  sd["fc2.bias"] = tandem::zeros({7});
  const std::string expected =
      "Error(s) in loading state_dict for Net:\n"
      "\tMissing key(s) in state_dict: \"fc.bias\".\n"
      "\tUnexpected key(s) in state_dict: \"zzz\", \"fc.extra\".\n"
      "\tsize mismatch for fc.weight: copying a param with shape [3, 4] from checkpoint, "
      "the shape in current model is [3, 5].\n"
      "\tsize mismatch for fc2.bias: copying a param with shape [7] from checkpoint, the "
      "shape in current model is [2].";
  try {
    net->load_state_dict(sd);
    FAIL() << "load_state_dict did not throw";
  } catch (const tandem::Error& e) {
    EXPECT_EQ(std::string(e.what()), expected);
  }
  // Not strict: missing and unexpected keys are fine, shapes still are not.
  EXPECT_TRUE(throws_with([&] { net->load_state_dict(sd, /*strict=*/false); },
                          "Error(s) in loading state_dict for Net:\n\tsize mismatch for "
                          "fc.weight"));
}

TEST(StateDict, AnUndefinedTensorIsNamedByItsKey) {
  Net net;
  auto sd = net->state_dict();
  sd["fc2.bias"] = Tensor();
  EXPECT_TRUE(
      throws_with([&] { net->load_state_dict(sd); },
                  "Error(s) in loading state_dict for Net:\n\tundefined tensor for "
                  "fc2.bias: a state_dict entry must hold a value."));
}

TEST(StateDict, FailedLoadChangesNothing) {
  Net net;
  const auto before = net->state_dict();
  std::vector<Tensor> copies;
  for (const auto& item : before) copies.push_back(item->clone());
  auto sd = net->state_dict();
  for (auto& item : sd) item.value() = tandem::full(item->sizes(), 9.0);
  sd["fc2.bias"] = tandem::zeros({7});  // the last entry is the bad one
  EXPECT_THROW(net->load_state_dict(sd), tandem::Error);
  size_t i = 0;
  for (const auto& item : net->state_dict()) {
    EXPECT_TRUE(all_close(item.value(), copies[i++])) << item.key();
  }
}

TEST(StateDict, NonStrictLoadsTheKeysThatMatch) {
  Net net;
  OrderedDict<std::string, Tensor> partial;
  partial.insert("fc2.bias", tandem::full({2}, 3.0));
  partial.insert("unknown", tandem::zeros({1}));
  net->load_state_dict(partial, /*strict=*/false);
  EXPECT_TRUE(all_close(net->fc2->bias, tandem::full({2}, 3.0)));
}

}  // namespace
