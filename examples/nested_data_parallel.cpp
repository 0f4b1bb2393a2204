// The first seed's DataParallelModel: only block2 is wrapped in
// DataParallel, so block1 and block3 run once on the calling thread while
// block2's input is split over the devices. "The code does not need to be
// changed in CPU-mode": without a device list and without CUDA, block2 is
// a pass-through; here it runs over the logical CPU devices cpu:0, cpu:1.
#include <tandem/tandem.h>

#include <iostream>

using namespace tandem;

struct DataParallelModelImpl : nn::Module {
  explicit DataParallelModelImpl(std::vector<Device> devices) {
    block1 = register_module("block1", nn::Linear(10, 20));
    // wrap block2 in DataParallel
    block2 =
        register_module("block2",
                        nn::DataParallel(nn::Linear(20, 20),
                                         nn::DataParallelOptions().device_ids(devices)));
    block3 = register_module("block3", nn::Linear(20, 20));
  }

  Tensor forward(const Tensor& x) {
    return block3->forward(block2->forward(block1->forward(x)));
  }

  nn::Linear block1{nullptr};
  nn::DataParallel block2{nullptr};
  nn::Linear block3{nullptr};
};
TANDEM_MODULE(DataParallelModel);

int main() {
  manual_seed(0);
  DataParallelModel model(std::vector<Device>{"cpu:0", "cpu:1"});
  Tensor x = randn({16, 10});
  Tensor y = model->forward(x);
  y.sum().backward();

  std::cout << "output " << y.sizes() << "\nstate_dict keys:";
  std::vector<std::string> keys;
  for (const auto& item : model->state_dict()) {
    keys.push_back(item.key());
    std::cout << " " << item.key();
  }
  std::cout << "\n";
  const std::vector<std::string> want = {"block1.weight",
                                         "block1.bias",
                                         "block2.module.weight",
                                         "block2.module.bias",
                                         "block3.weight",
                                         "block3.bias"};
  bool ok = keys == want && y.sizes() == IntList{16, 20};
  for (const auto& p : model->parameters()) ok = ok && p.grad().defined();
  std::cout << (ok ? "ok" : "FAILED") << "\n";
  return ok ? 0 : 1;
}
