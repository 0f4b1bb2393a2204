#include "training_task.h"

#include <sstream>

#include "classification_task.h"
#include "gan_task.h"
#include "language_model_task.h"
#include "models.h"

namespace tandem::cli {

const std::vector<std::string>& train_model_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all = model_names();
    all.insert(all.end(), {"lstm-lm", "dcgan"});
    return all;
  }();
  return names;
}

std::string optimizer_description(const TrainConfig& config) {
  std::ostringstream out;
  out << config.optimizer << " lr " << config.lr << " (" << config.lr_schedule << ")";
  if (config.weight_decay > 0) out << ", weight decay " << config.weight_decay;
  return out.str();
}

std::unique_ptr<TrainingTask> make_training_task(
    const TrainConfig& config,
    const io::Checkpoint* resume,
    std::shared_ptr<distributed::ProcessGroup> group) {
  if (config.model == "lstm-lm") return make_language_model_task(config);
  if (config.model == "dcgan") return make_gan_task(config);
  return make_classification_task(config, resume, std::move(group));
}

}  // namespace tandem::cli
