#include "step_metrics.h"

#include <charconv>
#include <cmath>
#include <utility>

#include "tandem/core/device_work_time.h"

namespace tandem::cli {

StepMetrics::StepMetrics(int64_t every, std::vector<Device> devices)
    : every_(every), devices_(std::move(devices)) {
  restart();
}

void StepMetrics::restart() {
  loss_sum_ = 0;
  samples_ = 0;
  start_ = std::chrono::steady_clock::now();
  work_at_start_.clear();
  for (const Device& d : devices_) work_at_start_.push_back(device_work_seconds(d));
}

std::string StepMetrics::step(int64_t epoch,
                              int64_t step,
                              double loss,
                              int64_t samples,
                              const std::vector<double>& shares) {
  if (every_ <= 0) return "";
  if (samples > 0) {
    loss_sum_ += loss * static_cast<double>(samples);
    samples_ += samples;
  }
  if (step % every_ != 0) return "";
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::vector<double> busy;
  if (devices_.size() > 1) {
    for (size_t i = 0; i < devices_.size(); ++i) {
      const double work = device_work_seconds(devices_[i]) - work_at_start_[i];
      busy.push_back(wall > 0 ? work / wall : 0.0);
    }
  }
  std::string record =
      "{\"epoch\": " + std::to_string(epoch) + ", \"step\": " + std::to_string(step) +
      ", \"train_loss\": " +
      json_number(samples_ > 0 ? loss_sum_ / static_cast<double>(samples_) : NAN) +
      ", \"samples_per_second\": " +
      json_number(wall > 0 ? static_cast<double>(samples_) / wall : 0.0);
  if (!busy.empty()) record += ", \"busy\": " + json_numbers(busy);
  record += ", \"shares\": " + json_numbers(shares) + "}\n";
  restart();
  return record;
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  return std::string(text, end);
}

std::string json_numbers(const std::vector<double>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    text += (i ? ", " : "") + json_number(values[i]);
  }
  return text + "]";
}

}  // namespace tandem::cli
