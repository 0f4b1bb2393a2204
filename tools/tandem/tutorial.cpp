// `tandem tutorial`: the second seed run for real. A Linear model that
// prints the sizes each replica sees is wrapped in DataParallel over the
// given devices (when there is more than one) and fed a random dataset in
// batches, printing the per-replica and outside sizes as the seed shows.
#include <algorithm>
#include <iostream>
#include <mutex>
#include <numeric>
#include <random>
#include <sstream>

#include "commands.h"
#include "flags.h"
#include "tandem/tandem.h"

namespace tandem::cli {
namespace {

// The seed's Model: one Linear, and a line per call with the sizes.
struct SizePrintingModelImpl : nn::Cloneable<SizePrintingModelImpl> {
  SizePrintingModelImpl(int64_t in, int64_t out) : in_(in), out_(out) { reset(); }
  void reset() override { fc = register_module("fc", nn::Linear(in_, out_)); }

  Tensor forward(const Tensor& input) {
    Tensor output = fc->forward(input);
    std::ostringstream line;  // replicas print from their own threads
    line << "\tIn Model: input size " << input.sizes() << " output size "
         << output.sizes() << "\n";
    static std::mutex print;
    std::lock_guard<std::mutex> lock(print);
    std::cout << line.str() << std::flush;
    return output;
  }

  int64_t in_, out_;
  nn::Linear fc{nullptr};
};
TANDEM_MODULE(SizePrintingModel);

std::vector<Device> default_devices() {
  std::vector<Device> gpus;
  for (int64_t i = 0; i < device_count(kCUDA); ++i) gpus.emplace_back(kCUDA, i);
  return gpus.empty() ? std::vector<Device>{Device(kCPU)} : gpus;
}

}  // namespace

int run_tutorial(const Args& args) {
  Flags flags("tutorial");
  flags.add("devices",
            "",
            "comma-separated devices, e.g. cpu:0,cpu:1 (default: all GPUs, else cpu)");
  flags.add("batch-size", "30", "samples per batch");
  flags.add("data-size", "100", "samples in the random dataset");
  flags.add("input-size", "5", "features per sample");
  flags.add("output-size", "2", "outputs of the Linear model");
  flags.add("seed", "0", "random seed");
  if (!flags.parse(args)) return 0;
  std::vector<Device> devices = flags.get_devices("devices");
  if (devices.empty()) devices = default_devices();
  const int64_t batch_size = flags.get_int("batch-size"),
                data_size = flags.get_int("data-size");
  const int64_t input_size = flags.get_int("input-size");
  const int64_t output_size = flags.get_int("output-size");
  if (batch_size <= 0 || data_size < 0 || input_size <= 0 || output_size <= 0) {
    throw UsageError("tutorial: sizes must be positive (data-size may be 0)");
  }
  const auto seed = static_cast<uint64_t>(flags.get_int("seed"));
  manual_seed(seed);

  Tensor data = randn({data_size, input_size});  // RandomDataset
  std::vector<int64_t> order(data_size);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));  // shuffle=True

  SizePrintingModel model(input_size, output_size);
  nn::DataParallel parallel{nullptr};
  if (devices.size() > 1) {
    std::cout << "Let's use " << devices.size() << " devices!\n";
    parallel = nn::DataParallel(model, nn::DataParallelOptions().device_ids(devices));
  }
  model->to(devices.front());
  for (int64_t start = 0; start < data_size; start += batch_size) {
    const int64_t n = std::min(batch_size, data_size - start);
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

}  // namespace tandem::cli
