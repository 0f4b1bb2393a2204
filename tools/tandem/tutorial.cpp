// `tandem tutorial`: the second seed run for real. A Linear model that
// prints the sizes each replica sees is wrapped in DataParallel over the
// given devices (when there is more than one) and fed a random dataset in
// batches, printing the per-replica and outside sizes as the seed shows.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <sstream>

#include "commands.h"
#include "model_on_devices.h"
#include "options.h"
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

struct TutorialFlags {
  std::string devices;
  int64_t batch_size = 30;
  int64_t data_size = 100;
  int64_t input_size = 5;
  int64_t output_size = 2;
  uint64_t seed = 0;
};

int run_tutorial(const TutorialFlags& flags) {
  const std::vector<Device> devices = devices_or_default(flags.devices);
  const int64_t batch_size = flags.batch_size, data_size = flags.data_size;
  const int64_t input_size = flags.input_size, output_size = flags.output_size;
  const uint64_t seed = flags.seed;
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

}  // namespace

Action tutorial_command(CLI::App& command) {
  auto flags = std::make_shared<TutorialFlags>();
  add_devices_flag(command, flags->devices);
  command.add_option("--batch-size", flags->batch_size, "samples per batch")
      ->check(whole_number(1));
  command.add_option("--data-size", flags->data_size, "samples in the random dataset")
      ->check(whole_number(0));
  command.add_option("--input-size", flags->input_size, "features per sample")
      ->check(whole_number(1));
  command.add_option("--output-size", flags->output_size, "outputs of the Linear model")
      ->check(whole_number(1));
  command.add_option("--seed", flags->seed, "random seed")->check(whole_number(0));
  return [flags] { return run_tutorial(*flags); };
}

}  // namespace tandem::cli
