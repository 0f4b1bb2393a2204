// `tandem eval --checkpoint PATH`: the test loss and accuracy of the model
// a `tandem train` checkpoint holds.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>

#include "commands.h"
#include "evaluation.h"
#include "image_data.h"
#include "model_on_devices.h"
#include "models.h"
#include "options.h"
#include "tandem/io/checkpoint.h"

namespace tandem::cli {
namespace {

struct EvalFlags {
  std::string checkpoint;
  std::string data;
  std::string devices;
  int64_t batch_size = 1000;
};

int run_eval(const EvalFlags& flags) {
  const std::string& path = flags.checkpoint;
  const std::vector<Device> devices = devices_or_default(flags.devices);

  const io::Checkpoint checkpoint = io::load_checkpoint(path);
  auto model_name = checkpoint.extra.find("model");
  TANDEM_CHECK(model_name != checkpoint.extra.end(),
               "eval: ",
               path,
               " does not say which model it holds (was it written by tandem train?)");
  const auto& classifiers = model_names();
  if (std::find(classifiers.begin(), classifiers.end(), model_name->second) ==
      classifiers.end()) {
    throw UsageError("eval: " + path + " holds a " + model_name->second +
                     " run; tandem eval scores the classifiers (mlp, cnn, resnet), and "
                     "that run's scores are in its --metrics file");
  }
  nn::Sequential network = make_model(model_name->second);
  auto dtype = checkpoint.extra.find("dtype");
  if (dtype != checkpoint.extra.end() && dtype->second == "float64")
    network->to(kFloat64);
  ModelOnDevices model(network, devices);
  model.model()->load_state_dict(checkpoint.model);
  const ImageSplit test = load_split(flags.data, /*train=*/false);
  const Evaluation result = evaluate(model, test, flags.batch_size);
  std::cout << std::fixed << std::setprecision(4) << "test_loss " << result.loss
            << "  test_accuracy " << result.accuracy << "  (" << result.images
            << " images, " << model_name->second << " at step " << checkpoint.step
            << ", ";
  if (checkpoint.batch_in_epoch > 0) {
    std::cout << "epoch " << checkpoint.epoch + 1 << " batch "
              << checkpoint.batch_in_epoch;
  } else {
    std::cout << "after epoch " << checkpoint.epoch;
  }
  std::cout << ")\n";
  return 0;
}

}  // namespace

Action eval_command(CLI::App& command) {
  auto flags = std::make_shared<EvalFlags>();
  command
      .add_option(
          "--checkpoint", flags->checkpoint, "a checkpoint written by tandem train")
      ->required();
  add_data_flag(command, flags->data);
  add_devices_flag(command, flags->devices);
  command.add_option("--batch-size", flags->batch_size, "images per forward")
      ->check(whole_number(1));
  return [flags] { return run_eval(*flags); };
}

}  // namespace tandem::cli
