// The MLP trained 5 full-batch steps by each optimizer configuration against
// PyTorch: the loss before and every weight after each step. The model is
// built from nn modules and trained the way a user would; the
// hyper-parameters come from the golden file ("hp.<name>").
#include <filesystem>
#include <functional>
#include <memory>

#include "parity/parity.h"

namespace tandem {
namespace {

using parity::Golden;
using parity::golden_at;
using parity::matches;

constexpr int kSteps = 5;

double hp(const Golden& g, const std::string& name, double fallback) {
  auto it = g.find("hp." + name);
  return it == g.end() ? fallback : it->second.item<double>();
}

template <typename Options>
Options adam_options(const Golden& g, double default_weight_decay) {
  return Options(hp(g, "lr", 1e-3))
      .betas({hp(g, "beta1", 0.9), hp(g, "beta2", 0.999)})
      .eps(hp(g, "eps", 1e-8))
      .weight_decay(hp(g, "weight_decay", default_weight_decay))
      .amsgrad(hp(g, "amsgrad", 0) != 0);
}

using MakeOptimizer =
    std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>, const Golden&)>;

std::unique_ptr<optim::Optimizer> make_sgd(std::vector<Tensor> params, const Golden& g) {
  return std::make_unique<optim::SGD>(std::move(params),
                                      optim::SGDOptions(hp(g, "lr", 0))
                                          .momentum(hp(g, "momentum", 0))
                                          .dampening(hp(g, "dampening", 0))
                                          .weight_decay(hp(g, "weight_decay", 0))
                                          .nesterov(hp(g, "nesterov", 0) != 0));
}

std::unique_ptr<optim::Optimizer> make_adam(std::vector<Tensor> params, const Golden& g) {
  return std::make_unique<optim::Adam>(std::move(params),
                                       adam_options<optim::AdamOptions>(g, 0));
}

std::unique_ptr<optim::Optimizer> make_adamw(std::vector<Tensor> params,
                                             const Golden& g) {
  return std::make_unique<optim::AdamW>(std::move(params),
                                        adam_options<optim::AdamWOptions>(g, 1e-2));
}

std::unique_ptr<optim::Optimizer> make_rmsprop(std::vector<Tensor> params,
                                               const Golden& g) {
  return std::make_unique<optim::RMSprop>(std::move(params),
                                          optim::RMSpropOptions(hp(g, "lr", 1e-2))
                                              .alpha(hp(g, "alpha", 0.99))
                                              .eps(hp(g, "eps", 1e-8))
                                              .weight_decay(hp(g, "weight_decay", 0))
                                              .momentum(hp(g, "momentum", 0))
                                              .centered(hp(g, "centered", 0) != 0));
}

std::unique_ptr<optim::Optimizer> make_adagrad(std::vector<Tensor> params,
                                               const Golden& g) {
  return std::make_unique<optim::Adagrad>(
      std::move(params),
      optim::AdagradOptions(hp(g, "lr", 1e-2))
          .lr_decay(hp(g, "lr_decay", 0))
          .weight_decay(hp(g, "weight_decay", 0))
          .initial_accumulator_value(hp(g, "initial_accumulator_value", 0))
          .eps(hp(g, "eps", 1e-10)));
}

// The configurations of tests/reference/mlp.py (OPTIMIZERS).
const std::map<std::string, MakeOptimizer>& configurations() {
  static const std::map<std::string, MakeOptimizer> configs = {
      {"sgd", make_sgd},
      {"sgd_momentum", make_sgd},
      {"sgd_nesterov", make_sgd},
      {"sgd_dampening", make_sgd},
      {"adam", make_adam},
      {"adam_weight_decay", make_adam},
      {"adam_amsgrad", make_adam},
      {"adamw", make_adamw},
      {"adamw_amsgrad", make_adamw},
      {"rmsprop", make_rmsprop},
      {"rmsprop_weight_decay", make_rmsprop},
      {"rmsprop_momentum", make_rmsprop},
      {"rmsprop_centered", make_rmsprop},
      {"adagrad", make_adagrad},
      {"adagrad_lr_decay", make_adagrad},
      {"adagrad_initial_accumulator", make_adagrad},
  };
  return configs;
}

using Param = std::tuple<std::string, std::string>;  // configuration, dtype

class OptimizerParity : public ::testing::TestWithParam<Param> {};

TEST_P(OptimizerParity, FiveStepsOfTheMlp) {
  const auto& [config, dtype] = GetParam();
  Golden g = testing::load_golden("optim_" + config + "_" + dtype + ".txt");
  nn::Sequential net(nn::Linear(6, 8), nn::ReLU(), nn::Linear(8, 3));
  net->to(parity::dtype_named(dtype));
  const std::map<std::string, std::string> torch_names = {{"0.weight", "fc1.weight"},
                                                          {"0.bias", "fc1.bias"},
                                                          {"2.weight", "fc2.weight"},
                                                          {"2.bias", "fc2.bias"}};
  OrderedDict<std::string, Tensor> weights;
  for (const auto& [ours, theirs] : torch_names)
    weights.insert(ours, golden_at(g, theirs));
  net->load_state_dict(weights);

  auto optimizer = configurations().at(config)(net->parameters(), g);
  const Tensor& x = golden_at(g, "x");
  const Tensor& target = golden_at(g, "target");
  auto params = net->named_parameters();
  for (int step = 1; step <= kSteps; ++step) {
    const std::string prefix = "step" + std::to_string(step) + ".";
    optimizer->zero_grad();
    Tensor loss = cross_entropy(net->forward(x), target);
    loss.backward();
    optimizer->step();
    EXPECT_TRUE(matches(loss, golden_at(g, prefix + "loss"))) << prefix << "loss";
    for (const auto& [ours, theirs] : torch_names) {
      EXPECT_TRUE(matches(params[ours], golden_at(g, prefix + theirs)))
          << prefix << theirs;
    }
  }
}

TEST(OptimizerParityCoverage, EveryGoldenConfigurationHasATest) {
  int found = 0;
  for (const auto& entry : std::filesystem::directory_iterator(TANDEM_GOLDEN_DIR)) {
    const std::string file = entry.path().filename().string();
    const std::string head = "optim_", tail = "_float64.txt";
    if (!file.starts_with(head) || !file.ends_with(tail)) continue;
    ++found;
    const std::string config =
        file.substr(head.size(), file.size() - head.size() - tail.size());
    EXPECT_EQ(configurations().count(config), 1u) << file << " has no configuration here";
  }
  EXPECT_EQ(found, static_cast<int>(configurations().size()));
}

std::vector<std::string> configuration_names() {
  std::vector<std::string> names;
  for (const auto& [name, make] : configurations()) names.push_back(name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Configs,
                         OptimizerParity,
                         ::testing::Combine(::testing::ValuesIn(configuration_names()),
                                            ::testing::Values("float32", "float64")),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param);
                         });

}  // namespace
}  // namespace tandem
