// `tandem eval --checkpoint PATH`: the test loss and accuracy of the model
// a `tandem train` checkpoint holds.
#include <iomanip>
#include <iostream>

#include "commands.h"
#include "evaluation.h"
#include "flags.h"
#include "image_data.h"
#include "model_on_devices.h"
#include "models.h"
#include "tandem/io/checkpoint.h"

namespace tandem::cli {

int run_eval(const Args& args) {
  Flags flags("eval");
  flags.add("checkpoint", "", "a checkpoint written by tandem train (required)");
  add_data_flag(flags);
  add_devices_flag(flags);
  flags.add("batch-size", "1000", "images per forward");
  if (!flags.parse(args)) return 0;
  const std::string path = flags.get("checkpoint");
  if (path.empty()) throw UsageError("eval: --checkpoint PATH is required");
  const int64_t batch_size = flags.get_int("batch-size");
  if (batch_size <= 0) throw UsageError("eval: --batch-size must be positive");
  const std::vector<Device> devices = devices_flag(flags);

  const io::Checkpoint checkpoint = io::load_checkpoint(path);
  auto model_name = checkpoint.extra.find("model");
  TANDEM_CHECK(model_name != checkpoint.extra.end(),
               "eval: ",
               path,
               " does not say which model it holds (was it written by tandem train?)");
  nn::Sequential network = make_model(model_name->second);
  auto dtype = checkpoint.extra.find("dtype");
  if (dtype != checkpoint.extra.end() && dtype->second == "float64")
    network->to(kFloat64);
  ModelOnDevices model(network, devices);
  model.model()->load_state_dict(checkpoint.model);
  const ImageSplit test = load_split(flags.get("data"), /*train=*/false);
  const Evaluation result = evaluate(model, test, batch_size);
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

}  // namespace tandem::cli
