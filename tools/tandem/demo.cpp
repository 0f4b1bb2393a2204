// `tandem demo`: the seed tutorial's toy problem. A Linear(5, 2) is trained
// with SGD and MSE on a fixed random dataset (RandomDataset(5, 100) in the
// tutorial) in batches of 30; each step prints the sizes the model saw, as
// the tutorial's Model does, and the loss.
#include <iomanip>
#include <iostream>

#include "commands.h"
#include "flags.h"
#include "tandem/tandem.h"

namespace tandem::cli {

int run_demo(const Args& args) {
  Flags flags("demo");
  flags.add("epochs", "3", "passes over the 100 samples");
  flags.add("batch-size", "30", "samples per step");
  flags.add("lr", "0.1", "SGD learning rate");
  flags.add("seed", "0", "random seed");
  if (!flags.parse(args)) return 0;
  const int64_t epochs = flags.get_int("epochs");
  const int64_t batch_size = flags.get_int("batch-size");
  if (epochs < 0) throw UsageError("demo: --epochs must be >= 0");
  if (batch_size <= 0) throw UsageError("demo: --batch-size must be positive");

  manual_seed(static_cast<uint64_t>(flags.get_int("seed")));
  const int64_t input_size = 5, output_size = 2, data_size = 100;
  Tensor data = randn({data_size, input_size});
  Tensor target = data.matmul(randn({input_size, output_size}));  // learnable
  nn::Linear model(input_size, output_size);
  optim::SGD optimizer(model->parameters(), optim::SGDOptions(flags.get_double("lr")));

  std::cout << std::fixed << std::setprecision(4);
  for (int64_t epoch = 0; epoch < epochs; ++epoch) {
    for (int64_t start = 0; start < data_size; start += batch_size) {
      int64_t n = std::min(batch_size, data_size - start);
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

}  // namespace tandem::cli
