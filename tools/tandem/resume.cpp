#include "resume.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <optional>
#include <sstream>

#include "commands.h"

namespace tandem::cli {
namespace {

// A setting's flag: run_settings() key "batch_size" is --batch-size.
std::string flag_of(std::string key) {
  std::replace(key.begin(), key.end(), '_', '-');
  return "--" + key;
}

// What `checkpoint` records for `key`; for a setting tandem began to record
// later, what the runs before it had.
std::optional<std::string> recorded(const io::Checkpoint& checkpoint,
                                    const std::string& key) {
  if (auto it = checkpoint.extra.find(key); it != checkpoint.extra.end()) {
    return it->second;
  }
  if (key == "dtype") return "float32";
  if (key == "on_nonfinite") return "stop";
  if (key == "micro_batch") return "0";  // invariant mode off
  if (key == "augment") return "0";
  if (key == "weight_decay") return "0";
  return std::nullopt;
}

double number(const std::string& text) {
  double value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// Equal settings; the numbers by value (older checkpoints wrote the lr in 17
// digits).
bool same_setting(const std::string& key, const std::string& a, const std::string& b) {
  return key == "lr" || key == "weight_decay" ? number(a) == number(b) : a == b;
}

void give(CLI::App& command,
          const std::string& key,
          const std::string& value,
          const std::string& path) {
  CLI::Option* flag = command.get_option(flag_of(key));
  if (flag->count() > 0) return;
  try {
    flag->add_result(value);
    flag->run_callback();
  } catch (const CLI::ParseError& e) {
    throw Error("resume: " + path + " records a " + key +
                " tandem train refuses: " + e.what());
  }
}

int64_t recorded_epochs(const std::string& text, const std::string& path) {
  int64_t epochs = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), epochs);
  if (ec == std::errc() && end == text.data() + text.size() && epochs >= 1) return epochs;
  throw Error("resume: " + path + " records epochs = \"" + text +
              "\", not a whole number >= 1 (the file is damaged)");
}

std::string lr_text(double lr) {
  std::ostringstream out;
  out << lr;
  return out.str();
}

// What a new --epochs changes, or a UsageError when it ends the run before
// the checkpoint's position.
std::string epochs_change(const TrainConfig& config,
                          const io::Checkpoint& checkpoint,
                          int64_t recorded_epochs) {
  const int64_t at_least = checkpoint.epoch + (checkpoint.batch_in_epoch > 0 ? 1 : 0);
  if (config.epochs < at_least) {
    throw UsageError("train: --epochs " + std::to_string(config.epochs) +
                     " ends the run before the checkpoint, which is at epoch " +
                     std::to_string(checkpoint.epoch + 1) + ", batch " +
                     std::to_string(checkpoint.batch_in_epoch) + "; give at least " +
                     std::to_string(std::max<int64_t>(at_least, 1)));
  }
  std::string change =
      std::string(config.epochs > recorded_epochs ? "extending" : "shortening") +
      " the run from " + std::to_string(recorded_epochs) + " to " +
      std::to_string(config.epochs) + " epochs";
  if (config.lr_schedule != "cosine" || checkpoint.epoch >= config.epochs) return change;
  TrainConfig before = config;
  before.epochs = recorded_epochs;
  return change + "; the cosine schedule is re-planned over " +
         std::to_string(config.epochs) + " epochs from step " +
         std::to_string(checkpoint.step) + ": epoch " +
         std::to_string(checkpoint.epoch + 1) + " trains at lr " +
         lr_text(epoch_lr(config, checkpoint.epoch)) + " instead of " +
         lr_text(epoch_lr(before, checkpoint.epoch));
}

}  // namespace

void fill_flags_from_checkpoint(CLI::App& command,
                                const io::Checkpoint& checkpoint,
                                const std::string& path,
                                bool distributed) {
  for (const auto& [key, unused] : run_settings(TrainConfig())) {
    if (command.get_option(flag_of(key))->count() > 0) continue;
    const std::optional<std::string> value = recorded(checkpoint, key);
    if (!value) {
      throw UsageError("train: " + path + " does not record the run's " + flag_of(key) +
                       " (it was written by an older tandem, or not by tandem "
                       "train); give " +
                       flag_of(key) + " as the run had it");
    }
    give(command, key, *value, path);
  }
  for (const auto& [key, unused] : run_places(TrainConfig())) {
    if (key == "devices" && distributed) continue;  // one device per process
    if (auto it = checkpoint.extra.find(key); it != checkpoint.extra.end()) {
      give(command, key, it->second, path);
    }
  }
}

std::vector<std::string> check_same_run(const TrainConfig& config,
                                        const io::Checkpoint& checkpoint,
                                        const std::string& path) {
  std::vector<std::string> changes;
  std::string refused;
  for (const auto& [key, value] : run_settings(config)) {
    const std::optional<std::string> before = recorded(checkpoint, key);
    // Not recorded (an older checkpoint): the given flag says what it was.
    if (!before || same_setting(key, *before, value)) continue;
    if (key == "epochs") {
      changes.push_back(
          epochs_change(config, checkpoint, recorded_epochs(*before, path)));
    } else if (key == "on_nonfinite") {
      changes.push_back(
          "a step with a non-finite loss now " +
          std::string(value == "skip" ? "skips its update" : "stops the run") +
          " (the run had --on-nonfinite " + *before + ")");
    } else {
      refused += (refused.empty() ? "" : ", ") + flag_of(key) + " " + value +
                 " (the checkpoint has " + *before + ")";
    }
  }
  if (!refused.empty()) {
    throw UsageError("train: --resume " + path +
                     " continues the run as it was, and these flags would change it: " +
                     refused + "; leave them out, or start a new run without --resume");
  }
  return changes;
}

}  // namespace tandem::cli
