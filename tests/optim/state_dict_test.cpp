// Optimizer::state_dict / load_state_dict: the flat layout, exact resumption
// (N steps straight == N/2 steps, save, fresh optimizer, load, N/2 steps),
// and errors that say what differs.
#include <functional>
#include <memory>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::throws_with;
using MakeOptimizer = std::function<std::unique_ptr<optim::Optimizer>(
    std::vector<optim::OptimizerParamGroup>)>;

// Two groups of float32/float64 parameters; the second group's last param
// never gets a gradient.
std::vector<Tensor> make_params() {
  manual_seed(42);
  return {randn({3, 2}).requires_grad_(),
          randn({2}, kFloat64).requires_grad_(),
          randn({4}).requires_grad_(),
          randn({1}).requires_grad_()};
}

std::vector<optim::OptimizerParamGroup> groups_of(const std::vector<Tensor>& p,
                                                  const optim::OptimizerOptions& second) {
  std::vector<optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{p[0], p[1]});
  groups.emplace_back(std::vector<Tensor>{p[2], p[3]}, second.clone());
  return groups;
}

// A made-up gradient that depends on the parameter and the step, so a
// resumed run that lost any state would drift.
void run_steps(optim::Optimizer& opt, std::vector<Tensor>& params, int first, int count) {
  for (int s = first; s < first + count; ++s) {
    for (size_t i = 0; i + 1 < params.size(); ++i) {
      NoGradGuard no_grad;
      params[i].set_grad(params[i] * 0.5 + std::sin(s + static_cast<double>(i)));
    }
    opt.step();
  }
}

void expect_exact_resume(const MakeOptimizer& make,
                         const optim::OptimizerOptions& second) {
  auto straight_params = make_params();
  auto straight = make(groups_of(straight_params, second));
  run_steps(*straight, straight_params, 0, 6);

  auto params = make_params();
  optim::StateDict saved;
  {
    auto first_half = make(groups_of(params, second));
    run_steps(*first_half, params, 0, 3);
    saved = first_half->state_dict();
  }
  auto fresh = make(groups_of(params, second));
  fresh->load_state_dict(saved);
  run_steps(*fresh, params, 3, 3);
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_TRUE(equal(params[i], straight_params[i])) << "parameter " << i;
  }
  // And the optimizer states agree key by key.
  optim::StateDict a = straight->state_dict(), b = fresh->state_dict();
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [key, value] : a) {
    ASSERT_EQ(b.count(key), 1u) << key;
    EXPECT_TRUE(equal(value, b.at(key))) << key;
  }
}

TEST(OptimizerStateDict, SGDResumesExactly) {
  expect_exact_resume(
      [](auto groups) {
        return std::make_unique<optim::SGD>(
            std::move(groups), optim::SGDOptions(0.1).momentum(0.9).weight_decay(0.01));
      },
      optim::SGDOptions(0.05).momentum(0.5).nesterov(true));
}

TEST(OptimizerStateDict, AdamResumesExactly) {
  expect_exact_resume(
      [](auto groups) {
        return std::make_unique<optim::Adam>(std::move(groups), optim::AdamOptions(0.01));
      },
      optim::AdamOptions(0.02).amsgrad(true).weight_decay(0.1));
}

TEST(OptimizerStateDict, AdamWResumesExactly) {
  expect_exact_resume(
      [](auto groups) {
        return std::make_unique<optim::AdamW>(std::move(groups),
                                              optim::AdamWOptions(0.01).amsgrad(true));
      },
      optim::AdamWOptions(0.03).betas({0.8, 0.9}));
}

TEST(OptimizerStateDict, RMSpropResumesExactly) {
  expect_exact_resume(
      [](auto groups) {
        return std::make_unique<optim::RMSprop>(
            std::move(groups), optim::RMSpropOptions(0.01).momentum(0.9).centered(true));
      },
      optim::RMSpropOptions(0.02).alpha(0.9).weight_decay(0.1));
}

TEST(OptimizerStateDict, AdagradResumesExactly) {
  expect_exact_resume(
      [](auto groups) {
        return std::make_unique<optim::Adagrad>(std::move(groups),
                                                optim::AdagradOptions(0.1).lr_decay(0.1));
      },
      optim::AdagradOptions(0.05).initial_accumulator_value(0.5).weight_decay(0.1));
}

TEST(OptimizerStateDict, RMSpropAndAdagradKeys) {
  Tensor a = tensor({1.0f, 2.0f}).requires_grad_();
  optim::RMSprop rmsprop({a}, optim::RMSpropOptions(0.5).momentum(0.5).centered(true));
  a.set_grad(tensor({1.0f, -1.0f}));
  rmsprop.step();
  std::vector<std::string> keys;
  for (const auto& [key, value] : rmsprop.state_dict()) keys.push_back(key);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"param_groups.0.alpha",
                                      "param_groups.0.centered",
                                      "param_groups.0.eps",
                                      "param_groups.0.lr",
                                      "param_groups.0.momentum",
                                      "param_groups.0.params",
                                      "param_groups.0.weight_decay",
                                      "state.0.grad_avg",
                                      "state.0.momentum_buffer",
                                      "state.0.square_avg",
                                      "state.0.step"}));
  optim::Adagrad adagrad({a}, optim::AdagradOptions(0.5));
  adagrad.step();
  keys.clear();
  for (const auto& [key, value] : adagrad.state_dict()) keys.push_back(key);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"param_groups.0.eps",
                                      "param_groups.0.initial_accumulator_value",
                                      "param_groups.0.lr",
                                      "param_groups.0.lr_decay",
                                      "param_groups.0.params",
                                      "param_groups.0.weight_decay",
                                      "state.0.step",
                                      "state.0.sum"}));
}

TEST(OptimizerStateDict, FlatLayout) {
  Tensor a = tensor({1.0f, 2.0f}).requires_grad_();
  Tensor b = tensor({3.0f}).requires_grad_();
  optim::Adam opt({a, b}, optim::AdamOptions(0.5).betas({0.8, 0.7}).amsgrad(true));
  b.set_grad(tensor({1.0f}));
  opt.step();
  optim::StateDict d = opt.state_dict();
  std::vector<std::string> keys;
  for (const auto& [key, value] : d) keys.push_back(key);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"param_groups.0.amsgrad",
                                      "param_groups.0.beta1",
                                      "param_groups.0.beta2",
                                      "param_groups.0.eps",
                                      "param_groups.0.lr",
                                      "param_groups.0.params",
                                      "param_groups.0.weight_decay",
                                      "state.1.exp_avg",
                                      "state.1.exp_avg_sq",
                                      "state.1.max_exp_avg_sq",
                                      "state.1.step"}));
  EXPECT_EQ(d.at("param_groups.0.lr").dim(), 0);
  EXPECT_EQ(d.at("param_groups.0.lr").dtype(), kFloat64);
  EXPECT_EQ(d.at("param_groups.0.beta2").item<double>(), 0.7);
  EXPECT_EQ(d.at("param_groups.0.amsgrad").item<double>(), 1.0);
  EXPECT_TRUE(equal(d.at("param_groups.0.params"), tensor(std::vector<int64_t>{0, 1})));
  EXPECT_EQ(d.at("state.1.step").dtype(), kInt64);
  EXPECT_EQ(d.at("state.1.step").item<int64_t>(), 1);
  EXPECT_EQ(d.at("state.1.exp_avg").dtype(), kFloat32);
}

TEST(OptimizerStateDict, LoadRestoresHyperParameters) {
  Tensor a = tensor({1.0}).requires_grad_();
  optim::SGD source({a}, optim::SGDOptions(0.3).momentum(0.7).nesterov(true));
  optim::SGD target({a}, 0.01);
  target.load_state_dict(source.state_dict());
  const auto& o =
      static_cast<const optim::SGDOptions&>(target.param_groups()[0].options());
  EXPECT_EQ(o.lr(), 0.3);
  EXPECT_EQ(o.momentum(), 0.7);
  EXPECT_TRUE(o.nesterov());
}

TEST(OptimizerStateDict, MismatchesAreNamedAndChangeNothing) {
  Tensor a = tensor({1.0, 2.0}).requires_grad_();
  Tensor b = tensor({3.0}).requires_grad_();
  optim::SGD opt({a, b}, optim::SGDOptions(0.1).momentum(0.9));
  a.set_grad(tensor({1.0, 1.0}));
  b.set_grad(tensor({1.0}));
  opt.step();
  const optim::StateDict good = opt.state_dict();

  Tensor c = tensor({1.0, 2.0}).requires_grad_();
  optim::SGD one_param({c}, 0.1);
  EXPECT_TRUE(throws_with([&] { one_param.load_state_dict(good); },
                          "parameter group 0 has 2 parameters in the state dict but 1"));

  Tensor d = tensor({1.0, 2.0, 3.0}).requires_grad_();
  optim::SGD wrong_shape({c, d}, 0.25);
  EXPECT_TRUE(
      throws_with([&] { wrong_shape.load_state_dict(good); },
                  "state.1.momentum_buffer has shape [1] but parameter 1 has shape [3]"));
  EXPECT_EQ(wrong_shape.param_groups()[0].options().get_lr(), 0.25);
  EXPECT_TRUE(wrong_shape.state().empty());

  optim::SGD two_groups({c}, 0.1);
  two_groups.add_param_group({{d}});
  EXPECT_TRUE(
      throws_with([&] { two_groups.load_state_dict(good); },
                  "the state dict has 1 parameter groups but the optimizer has 2"));

  optim::StateDict missing = good;
  missing.erase("param_groups.0.momentum");
  EXPECT_TRUE(throws_with([&] { opt.load_state_dict(missing); },
                          "missing key param_groups.0.momentum"));

  optim::StateDict extra = good;
  extra["state.5.momentum_buffer"] = zeros({1});
  EXPECT_TRUE(
      throws_with([&] { opt.load_state_dict(extra); },
                  "unexpected keys in the state dict of SGD: state.5.momentum_buffer"));

  optim::StateDict bad_lr = good;
  bad_lr["param_groups.0.lr"] = scalar_tensor(-1.0, kFloat64);
  EXPECT_TRUE(
      throws_with([&] { opt.load_state_dict(bad_lr); }, "invalid learning rate -1"));
}

TEST(OptimizerStateDict, StateIsCopiedBothWays) {
  Tensor a = tensor({1.0}).requires_grad_();
  optim::SGD opt({a}, optim::SGDOptions(0.1).momentum(0.9));
  a.set_grad(tensor({2.0}));
  opt.step();
  optim::StateDict saved = opt.state_dict();
  opt.step();
  EXPECT_EQ(saved.at("state.0.momentum_buffer").item<double>(), 2.0);
  opt.load_state_dict(saved);
  opt.step();
  EXPECT_EQ(saved.at("state.0.momentum_buffer").item<double>(), 2.0);
}

TEST(OptimizerStateDict, StateTakesTheParameterDtype) {
  Tensor a = tensor({1.0f}).requires_grad_();
  optim::SGD opt({a}, optim::SGDOptions(0.1).momentum(0.9));
  optim::StateDict d = opt.state_dict();
  d["state.0.momentum_buffer"] = tensor({0.5}, kFloat64);
  opt.load_state_dict(d);
  auto& s = static_cast<optim::SGDParamState&>(*opt.state().at(a.unsafe_impl()));
  EXPECT_EQ(s.momentum_buffer().dtype(), kFloat32);
  a.set_grad(tensor({1.0f}));
  opt.step();  // buf = 0.9 * 0.5 + 1
  EXPECT_FLOAT_EQ(a.item<float>(), 1.0f - 0.1f * 1.45f);
}

}  // namespace
}  // namespace tandem
