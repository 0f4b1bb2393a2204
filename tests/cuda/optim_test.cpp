// Optimizer steps and whole training runs on the device under test: SGD
// (momentum, dampening, Nesterov, weight decay), Adam / AdamW (weight
// decay, amsgrad), RMSprop (centered, momentum) and Adagrad steps on the device equal the
// same steps on the CPU in float64; an MLP and a small CNN (conv, batch norm, pooling)
// trained for five SGD steps on the device end where the CPU run ends.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>

#include "cuda/cuda_testing.h"

namespace tandem {
namespace {

using testing::close_to;
using testing::device_under_test;
using testing::identical;
using testing::to_dut;
using MakeOptimizer =
    std::function<std::unique_ptr<optim::Optimizer>(const std::vector<Tensor>&)>;

struct OptimizerCase {
  std::string name;
  MakeOptimizer make;
};

std::vector<OptimizerCase> optimizer_cases() {
  using namespace optim;
  auto sgd = [](SGDOptions o) -> MakeOptimizer {
    return [o](const std::vector<Tensor>& p) { return std::make_unique<SGD>(p, o); };
  };
  auto adam = [](AdamOptions o) -> MakeOptimizer {
    return [o](const std::vector<Tensor>& p) { return std::make_unique<Adam>(p, o); };
  };
  auto adamw = [](AdamWOptions o) -> MakeOptimizer {
    return [o](const std::vector<Tensor>& p) { return std::make_unique<AdamW>(p, o); };
  };
  auto rmsprop = [](RMSpropOptions o) -> MakeOptimizer {
    return [o](const std::vector<Tensor>& p) { return std::make_unique<RMSprop>(p, o); };
  };
  auto adagrad = [](AdagradOptions o) -> MakeOptimizer {
    return [o](const std::vector<Tensor>& p) { return std::make_unique<Adagrad>(p, o); };
  };
  return {
      {"sgd", sgd(SGDOptions(0.1))},
      {"sgd_momentum_dampening", sgd(SGDOptions(0.1).momentum(0.9).dampening(0.1))},
      {"sgd_nesterov", sgd(SGDOptions(0.05).momentum(0.9).nesterov(true))},
      {"sgd_weight_decay", sgd(SGDOptions(0.1).momentum(0.5).weight_decay(0.01))},
      {"adam", adam(AdamOptions(1e-2))},
      {"adam_weight_decay_amsgrad",
       adam(AdamOptions(1e-2).betas({0.8, 0.9}).weight_decay(0.1).amsgrad(true))},
      {"adamw", adamw(AdamWOptions(1e-2).weight_decay(0.1))},
      {"adamw_amsgrad_eps", adamw(AdamWOptions(3e-3).eps(1e-6).amsgrad(true))},
      {"rmsprop", rmsprop(RMSpropOptions(1e-2))},
      {"rmsprop_centered_momentum",
       rmsprop(RMSpropOptions(1e-2).alpha(0.9).momentum(0.5).centered(true).weight_decay(
           0.01))},
      {"adagrad", adagrad(AdagradOptions(0.1))},
      {"adagrad_lr_decay",
       adagrad(
           AdagradOptions(0.1).lr_decay(0.01).weight_decay(0.1).initial_accumulator_value(
               0.1))},
  };
}

// Five steps from the same start with the same gradients; returns the
// parameters after them.
std::vector<Tensor> five_steps(const OptimizerCase& c, Device device, ScalarType dtype) {
  Generator gen(17);
  const std::vector<IntList> shapes = {{64, 33}, {33}, {300007}, {1}};
  std::vector<Tensor> params;
  for (const IntList& s : shapes) {
    params.push_back(testing::uniform(s, gen).to(device, dtype).requires_grad_());
  }
  auto optimizer = c.make(params);
  for (int step = 0; step < 5; ++step) {
    for (Tensor& p : params) {
      // Gradients of mixed sizes and signs, some exactly zero.
      Tensor g = testing::uniform(p.sizes(), gen, -1, 1) * (step + 1);
      g = where(g.abs() < 0.05, zeros_like(g), g);
      p.mutable_grad() = g.to(device, dtype);
    }
    optimizer->step();
  }
  return params;
}

class CudaOptim : public testing::CudaTest {};

TEST_F(CudaOptim, StepsOnTheDeviceEqualStepsOnTheCpu) {
  for (const OptimizerCase& c : optimizer_cases()) {
    const std::vector<Tensor> want = five_steps(c, Device(kCPU), kFloat64);
    for (ScalarType dtype : {kFloat32, kFloat64}) {
      const std::vector<Tensor> got = five_steps(c, device_under_test(), dtype);
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].device(), device_under_test()) << c.name;
        EXPECT_EQ(got[i].dtype(), dtype) << c.name;
        EXPECT_TRUE(close_to(got[i], want[i]))
            << c.name << " " << dtype << " parameter " << i;
      }
    }
  }
}

TEST_F(CudaOptim, ZeroGradAndStateStayOnTheDevice) {
  const Tensor w = to_dut(testing::uniform({10, 4}, gen), kFloat32).requires_grad_();
  optim::Adam adam(std::vector<Tensor>{w}, optim::AdamOptions(0.1).amsgrad(true));
  (w * w).sum().backward();
  adam.step();
  for (const auto& [name, t] : adam.state_dict()) {
    if (t.numel() > 1) {
      EXPECT_EQ(t.device(), device_under_test()) << name;
    }
  }
  adam.zero_grad();
  EXPECT_TRUE(!w.grad().defined() || w.grad().abs().sum().item<double>() == 0);
}

TEST_F(CudaOptim, CheckpointThroughTheCpuResumesExactly) {
  // Two Adam steps, a checkpoint (module file, optimizer state on the CPU),
  // two more steps; then the same two steps again from the checkpoint in a
  // fresh module and optimizer: the same parameters, bit for bit.
  const auto path = std::filesystem::temp_directory_path() /
                    detail::str("tandem_cuda_checkpoint_", ::getpid(), ".safetensors");
  auto make = [] {
    auto m = nn::Sequential(nn::Linear(20, 30), nn::Tanh(), nn::Linear(30, 3)).ptr();
    m->to(device_under_test());
    return m;
  };
  std::vector<Tensor> inputs;
  for (int i = 0; i < 4; ++i)
    inputs.push_back(to_dut(testing::uniform({16, 20}, gen), kFloat32));
  auto step = [&](nn::SequentialImpl& model, optim::Optimizer& opt, int i) {
    opt.zero_grad();
    square(model.forward(inputs[i])).mean().backward();
    opt.step();
  };
  auto model = make();
  optim::Adam adam(model->parameters(), optim::AdamOptions(0.01).amsgrad(true));
  step(*model, adam, 0);
  step(*model, adam, 1);
  io::save(*model, path);
  std::map<std::string, Tensor> saved;
  for (const auto& [key, value] : adam.state_dict()) saved[key] = value.to(kCPU);
  step(*model, adam, 2);
  step(*model, adam, 3);

  auto resumed = make();
  io::load(*resumed, path);
  std::filesystem::remove(path);
  optim::Adam resumed_adam(resumed->parameters(), optim::AdamOptions(0.01).amsgrad(true));
  resumed_adam.load_state_dict(saved);
  step(*resumed, resumed_adam, 2);
  step(*resumed, resumed_adam, 3);
  const auto want = model->parameters();
  const auto got = resumed->parameters();
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].device(), device_under_test());
    EXPECT_TRUE(identical(got[i].to(kCPU), want[i].to(kCPU))) << "parameter " << i;
  }
}

// ---- whole models ----

std::shared_ptr<nn::SequentialImpl> mlp() {
  return nn::Sequential(nn::Linear(784, 256),
                        nn::ReLU(),
                        nn::Linear(256, 256),
                        nn::ReLU(),
                        nn::Linear(256, 10))
      .ptr();
}

std::shared_ptr<nn::SequentialImpl> cnn() {
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 8, 3).padding(1)),
                        nn::BatchNorm2d(8),
                        nn::ReLU(),
                        nn::MaxPool2d(2),
                        nn::Conv2d(nn::Conv2dOptions(8, 16, 3).padding(1)),
                        nn::ReLU(),
                        nn::AvgPool2d(2),
                        nn::Flatten(),
                        nn::Linear(16 * 7 * 7, 10))
      .ptr();
}

// Five SGD steps (momentum, weight decay) of cross-entropy on fixed random
// batches; returns the final state dict (parameters and buffers) and the
// last loss.
std::pair<std::vector<Tensor>, double> train(
    const std::shared_ptr<nn::SequentialImpl>& start,
    const IntList& input_shape,
    Device device,
    ScalarType dtype) {
  auto model = std::dynamic_pointer_cast<nn::SequentialImpl>(start->clone());
  model->to(dtype);
  model->to(device);
  optim::SGD sgd(model->parameters(),
                 optim::SGDOptions(0.05).momentum(0.9).weight_decay(1e-4));
  Generator gen(3);
  double loss_value = 0;
  for (int step = 0; step < 5; ++step) {
    const Tensor x = testing::uniform(input_shape, gen).to(device, dtype);
    const Tensor y = testing::integers({input_shape[0]}, gen, 0, 10).to(device);
    sgd.zero_grad();
    const Tensor loss = cross_entropy(model->forward(x), y);
    loss.backward();
    for (const Tensor& p : model->parameters()) {
      EXPECT_EQ(p.grad().device(), device);
    }
    sgd.step();
    loss_value = loss.item<double>();
  }
  std::vector<Tensor> state;
  for (const auto& item : model->state_dict()) state.push_back(item.value());
  return {state, loss_value};
}

void expect_training_matches(const std::shared_ptr<nn::SequentialImpl>& model,
                             const IntList& input_shape,
                             const char* what) {
  const auto [want, want_loss] = train(model, input_shape, Device(kCPU), kFloat64);
  for (ScalarType dtype : {kFloat64, kFloat32}) {
    const auto [got, got_loss] = train(model, input_shape, device_under_test(), dtype);
    // float64 on the device: float64 rounding, amplified a little by five
    // steps; float32: ten times float32's tolerance.
    const double loosen = dtype == kFloat64 ? 100 : 10;
    EXPECT_NEAR(got_loss, want_loss, (dtype == kFloat64 ? 1e-9 : 1e-4) * want_loss)
        << what << " " << dtype;
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].device(), device_under_test()) << what << " " << i;
      EXPECT_TRUE(close_to(got[i], want[i], loosen))
          << what << " " << dtype << " state " << i;
    }
  }
}

TEST_F(CudaOptim, MlpTrainingEqualsTheCpuRun) {
  manual_seed(1);
  expect_training_matches(mlp(), {64, 784}, "MLP 784-256-256-10");
}

TEST_F(CudaOptim, CnnTrainingEqualsTheCpuRun) {
  manual_seed(2);
  expect_training_matches(cnn(), {32, 1, 28, 28}, "CNN");
}

}  // namespace
}  // namespace tandem
