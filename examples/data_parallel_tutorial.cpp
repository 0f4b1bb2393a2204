// The second seed, "data parallelism in PyTorch", in C++: a Linear model
// that prints the sizes it sees, wrapped in DataParallel when there is more
// than one device, fed batches of 30 from a random dataset of 100 samples.
// Devices: every GPU if there are several, else the logical CPU devices
// given as arguments (default cpu:0 cpu:1).
//
//   ./data_parallel_tutorial cpu:0 cpu:1 cpu:2
#include <tandem/tandem.h>

#include <algorithm>
#include <iostream>
#include <mutex>
#include <numeric>
#include <random>
#include <sstream>

using namespace tandem;

// Parameters, as in the tutorial.
constexpr int64_t input_size = 5, output_size = 2, batch_size = 30, data_size = 100;

struct ModelImpl : nn::Cloneable<ModelImpl> {
  ModelImpl() { reset(); }
  void reset() override {
    fc = register_module("fc", nn::Linear(input_size, output_size));
  }

  Tensor forward(const Tensor& input) {
    Tensor output = fc->forward(input);
    // Replicas print from their own threads: one whole line at a time.
    static std::mutex print;
    std::ostringstream line;
    line << "\tIn Model: input size " << input.sizes() << " output size "
         << output.sizes() << "\n";
    std::lock_guard<std::mutex> lock(print);
    std::cout << line.str();
    return output;
  }

  nn::Linear fc{nullptr};
};
TANDEM_MODULE(Model);

int main(int argc, char** argv) {
  manual_seed(0);
  std::vector<Device> devices;
  for (int64_t i = 0; i < device_count(kCUDA); ++i) devices.emplace_back(kCUDA, i);
  if (devices.size() < 2) {
    devices.assign(argv + 1, argv + argc);
    if (argc == 1) devices = {"cpu:0", "cpu:1"};
  }

  // RandomDataset(input_size, data_size), read in shuffled batches.
  Tensor data = randn({data_size, input_size});
  std::vector<int64_t> order(data_size);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(0));

  Model model;
  nn::DataParallel parallel{nullptr};
  if (devices.size() > 1) {
    std::cout << "Let's use " << devices.size() << " devices!\n";
    parallel = nn::DataParallel(model, nn::DataParallelOptions().device_ids(devices));
  }
  model->to(devices.front());

  for (int64_t start = 0; start < data_size; start += batch_size) {
    int64_t n = std::min(batch_size, data_size - start);
    Tensor index =
        tensor(std::vector<int64_t>(order.begin() + start, order.begin() + start + n));
    Tensor input = data.index_select(0, index).to(devices.front());
    Tensor output =
        parallel.is_empty() ? model->forward(input) : parallel->forward(input);
    std::cout << "Outside: input size " << input.sizes() << " output_size "
              << output.sizes() << "\n";
  }
  return 0;
}
