// The learning-rate schedules against PyTorch's: every group's rate (and
// OneCycleLR's momentum) after construction and after each step, for the
// cases of tests/reference/schedulers.py.
#include <cmath>
#include <functional>
#include <memory>

#include "parity/parity.h"

namespace tandem {
namespace {

using parity::Golden;
using parity::golden_at;

// Two one-element parameters, one per group, at the given rates.
template <typename Optimizer, typename Options>
std::unique_ptr<optim::Optimizer> make_groups(const std::vector<double>& lrs,
                                              Options options) {
  std::vector<optim::OptimizerParamGroup> groups;
  for (double lr : lrs) {
    Options o = options;
    o.lr(lr);
    groups.emplace_back(std::vector<Tensor>{zeros({1}).requires_grad_()}, o.clone());
  }
  return std::make_unique<Optimizer>(std::move(groups), options);
}

std::unique_ptr<optim::Optimizer> sgd(const std::vector<double>& lrs,
                                      double momentum = 0) {
  return make_groups<optim::SGD>(lrs, optim::SGDOptions(lrs[0]).momentum(momentum));
}

double momentum_of(const optim::OptimizerOptions& options) {
  if (auto* s = dynamic_cast<const optim::SGDOptions*>(&options)) return s->momentum();
  if (auto* a = dynamic_cast<const optim::AdamOptions*>(&options))
    return std::get<0>(a->betas());
  return NAN;
}

// A case: the optimizer, and a scheduler whose step() takes the metric of
// that step (ignored by all but ReduceLROnPlateau).
struct Case {
  std::function<std::unique_ptr<optim::Optimizer>()> make_optimizer;
  std::function<std::function<void(double)>(optim::Optimizer&)> make_scheduler;
};

template <typename Scheduler, typename... Args>
std::function<void(double)> stepper(optim::Optimizer& opt, Args... args) {
  auto scheduler = std::make_shared<Scheduler>(opt, args...);
  return [scheduler](double) { scheduler->step(); };
}

// The cases of tests/reference/schedulers.py, by name.
const std::map<std::string, Case>& cases() {
  using optim::OneCycleLROptions;
  static const std::map<std::string, Case> all = {
      {"lambda",
       {[] {
          return sgd({0.1, 0.05});
        },
        [](optim::Optimizer& o) {
          return stepper<optim::LambdaLR>(o, optim::LambdaLR::LrLambda([](int64_t e) {
                                            return std::pow(0.9, static_cast<double>(e));
                                          }));
        }}},
      {"lambda_per_group",
       {[] {
          return sgd({0.1, 0.05});
        },
        [](optim::Optimizer& o) {
          std::vector<optim::LambdaLR::LrLambda> lambdas = {
              [](int64_t e) { return std::pow(0.9, static_cast<double>(e)); },
              [](int64_t e) { return 1.0 / static_cast<double>(1 + e); }};
          return stepper<optim::LambdaLR>(o, lambdas);
        }}},
      {"multistep",
       {[] {
          return sgd({0.1, 0.3});
        },
        [](optim::Optimizer& o) {
          return stepper<optim::MultiStepLR>(o, std::vector<int64_t>{2, 5, 5, 8}, 0.5);
        }}},
      {"exponential",
       {[] { return make_groups<optim::Adam>({0.01}, optim::AdamOptions(0.01)); },
        [](optim::Optimizer& o) { return stepper<optim::ExponentialLR>(o, 0.9); }}},
      {"cosine",
       {[] {
          return sgd({0.1, 0.02});
        },
        [](optim::Optimizer& o) {
          return stepper<optim::CosineAnnealingLR>(o, int64_t{4}, 0.001);
        }}},
      {"cosine_eta0",
       {[] { return sgd({0.5}); },
        [](optim::Optimizer& o) {
          return stepper<optim::CosineAnnealingLR>(o, int64_t{3});
        }}},
      {"plateau_min_rel",
       {[] { return sgd({0.1}); },
        [](optim::Optimizer& o) -> std::function<void(double)> {
          auto s =
              std::make_shared<optim::ReduceLROnPlateau>(o,
                                                         optim::ReduceLROnPlateauOptions()
                                                             .factor(0.5)
                                                             .patience(2)
                                                             .cooldown(1)
                                                             .min_lr(0.01));
          return [s](double metric) { s->step(metric); };
        }}},
      {"plateau_max_abs",
       {[] {
          return sgd({0.1, 0.05});
        },
        [](optim::Optimizer& o) -> std::function<void(double)> {
          // LibTorch's constructor, positional.
          auto s = std::make_shared<optim::ReduceLROnPlateauScheduler>(
              o,
              optim::ReduceLROnPlateauScheduler::max,
              /*factor=*/0.3,
              /*patience=*/1,
              /*threshold=*/0.1,
              optim::ReduceLROnPlateauScheduler::abs,
              /*cooldown=*/0,
              std::vector<double>{0.001, 0.02});
          return [s](double metric) { s->step(metric); };
        }}},
      {"onecycle_cos_sgd",
       {[] { return sgd({0.1}, /*momentum=*/0.9); },
        [](optim::Optimizer& o) {
          return stepper<optim::OneCycleLR>(o, OneCycleLROptions(0.1).total_steps(10));
        }}},
      {"onecycle_linear_three_phase_adam",
       {[] {
          return make_groups<optim::Adam>({0.01, 0.01}, optim::AdamOptions(0.01));
        },
        [](optim::Optimizer& o) {
          return stepper<optim::OneCycleLR>(
              o,
              OneCycleLROptions(std::vector<double>{0.01, 0.02})
                  .epochs(3)
                  .steps_per_epoch(4)
                  .pct_start(0.25)
                  .anneal_strategy(OneCycleLROptions::AnnealStrategy::kLinear)
                  .three_phase(true)
                  .div_factor(10)
                  .final_div_factor(100)
                  .base_momentum(0.8)
                  .max_momentum(0.9));
        }}},
      {"onecycle_no_momentum_adagrad",
       {[] { return make_groups<optim::Adagrad>({0.01}, optim::AdagradOptions(0.01)); },
        [](optim::Optimizer& o) {
          return stepper<optim::OneCycleLR>(
              o,
              OneCycleLROptions(0.2).total_steps(7).pct_start(0.4).cycle_momentum(false));
        }}},
  };
  return all;
}

class SchedulerParity : public ::testing::TestWithParam<std::string> {};

TEST_P(SchedulerParity, RatesAfterEveryStep) {
  const std::string& name = GetParam();
  static const Golden g = testing::load_golden("lr_schedulers.txt");
  const Tensor want_lr = golden_at(g, name + ".lr");
  const bool has_momentum = g.count(name + ".momentum") > 0;
  const bool has_metrics = g.count(name + ".metrics") > 0;
  const Case& c = cases().at(name);
  auto opt = c.make_optimizer();
  auto step = c.make_scheduler(*opt);
  const int64_t steps = want_lr.size(0) - 1;
  const int64_t groups = want_lr.size(1);
  ASSERT_EQ(static_cast<int64_t>(opt->param_groups().size()), groups);
  for (int64_t s = 0; s <= steps; ++s) {
    if (s > 0)
      step(has_metrics ? golden_at(g, name + ".metrics")[s - 1].item<double>() : 0);
    for (int64_t k = 0; k < groups; ++k) {
      const auto& options = opt->param_groups()[k].options();
      EXPECT_NEAR(options.get_lr(), want_lr[s][k].item<double>(), 1e-15)
          << "lr of group " << k << " after " << s << " steps";
      if (has_momentum) {
        EXPECT_NEAR(momentum_of(options),
                    golden_at(g, name + ".momentum")[s][k].item<double>(),
                    1e-15)
            << "momentum of group " << k << " after " << s << " steps";
      }
    }
  }
}

TEST(SchedulerParityCoverage, EveryGoldenCaseHasATest) {
  const Golden g = testing::load_golden("lr_schedulers.txt");
  int found = 0;
  for (const auto& [key, value] : g) {
    if (!key.ends_with(".lr")) continue;
    ++found;
    EXPECT_EQ(cases().count(key.substr(0, key.size() - 3)), 1u) << key;
  }
  EXPECT_EQ(found, static_cast<int>(cases().size()));
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& [name, c] : cases()) names.push_back(name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Cases,
                         SchedulerParity,
                         ::testing::ValuesIn(case_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tandem
