#include "run_position.h"

#include <charconv>
#include <cmath>
#include <type_traits>

#include "tandem/core/error.h"

namespace tandem::cli {
namespace {

constexpr const char* kEpochLossSum = "epoch_loss_sum";
constexpr const char* kEpochSamples = "epoch_samples";
constexpr const char* kSkippedSteps = "skipped_steps";

// A number `checkpoint` records under extra.<key> (`fallback` when absent:
// an older checkpoint), finite and >= 0, or an error naming key and value.
template <typename Number>
Number recorded_number(const io::Checkpoint& checkpoint,
                       const std::string& path,
                       const char* key,
                       Number fallback) {
  auto it = checkpoint.extra.find(key);
  if (it == checkpoint.extra.end()) return fallback;
  const std::string& text = it->second;
  Number value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc() && end == text.data() + text.size() && std::isfinite(value) &&
      value >= 0) {
    return value;
  }
  throw Error("resume: " + path + " records " + key + " = \"" + text + "\", not " +
              (std::is_integral_v<Number> ? "a whole number" : "a finite number") +
              " >= 0 (the file is damaged or was not written by tandem train)");
}

// The shortest text that reads back as `value`.
std::string exact_text(double value) {
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  return std::string(text, end);
}

}  // namespace

void record_position(const Position& position, io::Checkpoint& checkpoint) {
  checkpoint.epoch = position.epoch;
  checkpoint.batch_in_epoch = position.batch;
  checkpoint.step = position.step;
  checkpoint.extra[kEpochLossSum] = exact_text(position.loss_sum);
  checkpoint.extra[kEpochSamples] = std::to_string(position.samples);
  checkpoint.extra[kSkippedSteps] = std::to_string(position.skipped);
}

Position resumed_position(const io::Checkpoint& checkpoint,
                          const std::string& path,
                          int64_t epochs,
                          int64_t batches) {
  const Position position{checkpoint.epoch,
                          checkpoint.batch_in_epoch,
                          checkpoint.step,
                          recorded_number<double>(checkpoint, path, kEpochLossSum, 0),
                          recorded_number<int64_t>(checkpoint, path, kEpochSamples, 0),
                          recorded_number<int64_t>(checkpoint, path, kSkippedSteps, 0)};
  TANDEM_CHECK(position.batch <= batches,
               "resume: ",
               path,
               " stopped at batch ",
               position.batch,
               " of an epoch, but an epoch has ",
               batches,
               " batches of this data");
  TANDEM_CHECK(
      position.epoch < epochs || (position.epoch == epochs && position.batch == 0),
      "resume: ",
      path,
      " records epoch ",
      position.epoch,
      " done and batch ",
      position.batch,
      " of the next, past the run's ",
      epochs,
      " epochs");
  int64_t step = 0;
  const bool fits = !__builtin_mul_overflow(position.epoch, batches, &step) &&
                    !__builtin_add_overflow(step, position.batch, &step);
  TANDEM_CHECK(fits && step == position.step,
               "resume: ",
               path,
               " records step ",
               position.step,
               " at batch ",
               position.batch,
               " of epoch ",
               position.epoch + 1,
               ", where a run with ",
               batches,
               " batches an epoch has taken ",
               fits ? std::to_string(step) : "more steps than an int64 holds",
               " (the file is damaged, or the data differs from the run's)");
  return position;
}

}  // namespace tandem::cli
