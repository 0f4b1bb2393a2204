// Trains y = 3x - 1 with a Linear(1, 1) and plain SGD through the installed
// tandem, and fails (exit 1) unless the loss falls and the fit is close.
#include <tandem/tandem.h>

#include <cmath>
#include <iostream>

int main() {
  tandem::manual_seed(0);
  tandem::nn::Linear model(1, 1);
  tandem::optim::SGD optimizer(model->parameters(), tandem::optim::SGDOptions(0.5));
  auto x = tandem::rand({64, 1});
  auto y = x * 3 - 1;
  float first = 0, last = 0;
  for (int step = 0; step < 500; ++step) {
    optimizer.zero_grad();
    auto loss = tandem::mse_loss(model->forward(x), y);
    loss.backward();
    optimizer.step();
    last = loss.item<float>();
    if (step == 0) first = last;
  }
  float w = model->weight.item<float>(), b = model->bias.item<float>();
  std::cout << "loss " << first << " -> " << last << ", w=" << w << " b=" << b << "\n";
  bool ok = last < first * 0.01 && std::abs(w - 3) < 0.1 && std::abs(b + 1) < 0.1;
  return ok ? 0 : 1;
}
