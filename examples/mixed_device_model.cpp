// The first seed's DistributedModel: part of a model on one device, part
// on another. The embedding runs on the CPU; its output moves to a second
// device (cuda:0 when there is a GPU, else the logical CPU device cpu:1),
// where a Linear runs. Backward crosses back, and each gradient lands on its
// own parameter's device. Exits non-zero if anything is wrong.
#include <tandem/tandem.h>

#include <iostream>

using namespace tandem;

struct DistributedModelImpl : nn::Module {
  explicit DistributedModelImpl(Device second) : second_(second) {
    embedding = register_module("embedding", nn::Embedding(1000, 10));
    rnn = register_module("rnn", nn::Linear(10, 10));
    rnn->to(second_);
  }

  Tensor forward(const Tensor& x) {
    Tensor h = embedding->forward(x);  // on the CPU
    h = h.to(second_);                 // transfer to the second device
    return rnn->forward(h);            // compute there
  }

  Device second_;
  nn::Embedding embedding{nullptr};
  nn::Linear rnn{nullptr};
};
TANDEM_MODULE(DistributedModel);

int main() {
  manual_seed(0);
  Device second = device_count(kCUDA) > 0 ? Device("cuda:0") : Device("cpu:1");
  DistributedModel model(second);
  Tensor tokens = randint(1000, {8, 4});
  Tensor out = model->forward(tokens);
  out.sum().backward();

  std::cout << "output " << out.sizes() << " on " << out.device() << "\n";
  bool ok = out.device() == second;
  for (const auto& item : model->named_parameters()) {
    const Tensor& p = item.value();
    std::cout << "  " << item.key() << " " << p.sizes() << " on " << p.device()
              << ", grad on " << p.grad().device() << "\n";
    ok = ok && p.grad().defined() && p.grad().device() == p.device();
  }
  // The linear's weight gradient equals the single-device computation.
  NoGradGuard no_grad;
  Tensor h = model->embedding->forward(tokens).reshape({-1, 10});
  Tensor want = ones({32, 10}).t().mm(h);
  ok = ok && allclose(model->rnn->weight.grad().to("cpu:0"), want, 1e-5, 1e-6);
  std::cout << (ok ? "ok" : "FAILED") << "\n";
  return ok ? 0 : 1;
}
