// `tandem demo`: the seed tutorial's toy problem. A Linear(5, 2) is trained
// with SGD and MSE on a fixed random dataset (RandomDataset(5, 100) in the
// tutorial) in batches of 30; each step prints the sizes the model saw, as
// the tutorial's Model does, and the loss.
#include <CLI/CLI.hpp>
#include <iomanip>
#include <iostream>
#include <memory>

#include "commands.h"
#include "options.h"
#include "tandem/tandem.h"

namespace tandem::cli {
namespace {

struct DemoFlags {
  int64_t epochs = 3;
  int64_t batch_size = 30;
  double lr = 0.1;
  uint64_t seed = 0;
};

int run_demo(const DemoFlags& flags) {
  manual_seed(flags.seed);
  const int64_t input_size = 5, output_size = 2, data_size = 100;
  Tensor data = randn({data_size, input_size});
  Tensor target = data.matmul(randn({input_size, output_size}));  // learnable
  nn::Linear model(input_size, output_size);
  optim::SGD optimizer(model->parameters(), optim::SGDOptions(flags.lr));

  std::cout << std::fixed << std::setprecision(4);
  for (int64_t epoch = 0; epoch < flags.epochs; ++epoch) {
    for (int64_t start = 0; start < data_size; start += flags.batch_size) {
      int64_t n = std::min(flags.batch_size, data_size - start);
      Tensor input = data.narrow(0, start, n);
      optimizer.zero_grad();
      Tensor output = model->forward(input);
      Tensor loss = mse_loss(output, target.narrow(0, start, n));
      loss.backward();
      optimizer.step();
      std::cout << "epoch " << epoch << "  In Model: input size " << input.sizes()
                << " output size " << output.sizes() << "  loss " << loss.item<float>()
                << "\n";
    }
  }
  return 0;
}

}  // namespace

Action demo_command(CLI::App& command) {
  auto flags = std::make_shared<DemoFlags>();
  command.add_option("--epochs", flags->epochs, "passes over the 100 samples")
      ->check(whole_number(1));
  command.add_option("--batch-size", flags->batch_size, "samples per step")
      ->check(whole_number(1));
  command.add_option("--lr", flags->lr, "SGD learning rate")->check(positive_number());
  command.add_option("--seed", flags->seed, "random seed")->check(whole_number(0));
  return [flags] { return run_demo(*flags); };
}

}  // namespace tandem::cli
