// The 2-layer MLP (Linear(6,8) -> ReLU -> Linear(8,3), cross-entropy) against
// PyTorch: logits, loss and every gradient, built once from functional ops
// and once from nn modules.
#include "parity/parity.h"

namespace tandem {
namespace {

using parity::Golden;
using parity::golden_at;
using parity::matches;

const char* const kParams[] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};

class MlpParity : public ::testing::TestWithParam<std::string> {
 protected:
  Golden golden() const { return testing::load_golden("mlp_" + GetParam() + ".txt"); }
};

TEST_P(MlpParity, FunctionalOps) {
  Golden g = golden();
  Tensor x = golden_at(g, "x").clone().requires_grad_();
  std::map<std::string, Tensor> p;
  for (const char* name : kParams) p[name] = golden_at(g, name).clone().requires_grad_();
  Tensor hidden = relu(linear(x, p["fc1.weight"], p["fc1.bias"]));
  Tensor logits = linear(hidden, p["fc2.weight"], p["fc2.bias"]);
  Tensor loss = cross_entropy(logits, golden_at(g, "target"));
  loss.backward();

  EXPECT_TRUE(matches(logits, golden_at(g, "logits")));
  EXPECT_TRUE(matches(loss, golden_at(g, "loss")));
  EXPECT_TRUE(matches(x.grad(), golden_at(g, "grad.x")));
  for (const char* name : kParams) {
    EXPECT_TRUE(matches(p[name].grad(), golden_at(g, std::string("grad.") + name)))
        << name;
  }
}

TEST_P(MlpParity, NnModules) {
  Golden g = golden();
  nn::Sequential net(nn::Linear(6, 8), nn::ReLU(), nn::Linear(8, 3));
  net->to(parity::dtype_named(GetParam()));
  OrderedDict<std::string, Tensor> weights;
  weights.insert("0.weight", golden_at(g, "fc1.weight"));
  weights.insert("0.bias", golden_at(g, "fc1.bias"));
  weights.insert("2.weight", golden_at(g, "fc2.weight"));
  weights.insert("2.bias", golden_at(g, "fc2.bias"));
  net->load_state_dict(weights);

  Tensor logits = net->forward(golden_at(g, "x"));
  Tensor loss = nn::CrossEntropyLoss()->forward(logits, golden_at(g, "target"));
  loss.backward();

  EXPECT_TRUE(matches(logits, golden_at(g, "logits")));
  EXPECT_TRUE(matches(loss, golden_at(g, "loss")));
  auto params = net->named_parameters();
  EXPECT_TRUE(matches(params["0.weight"].grad(), golden_at(g, "grad.fc1.weight")));
  EXPECT_TRUE(matches(params["0.bias"].grad(), golden_at(g, "grad.fc1.bias")));
  EXPECT_TRUE(matches(params["2.weight"].grad(), golden_at(g, "grad.fc2.weight")));
  EXPECT_TRUE(matches(params["2.bias"].grad(), golden_at(g, "grad.fc2.bias")));
}

INSTANTIATE_TEST_SUITE_P(Dtypes,
                         MlpParity,
                         ::testing::Values("float32", "float64"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tandem
