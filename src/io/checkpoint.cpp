#include "tandem/io/checkpoint.h"

#include <charconv>
#include <optional>
#include <string_view>

#include "tandem/core/error.h"
#include "tandem/core/profiler.h"
#include "tandem/io/safetensors.h"

namespace tandem::io {

namespace {

constexpr std::string_view kModelPrefix = "model.";
constexpr std::string_view kOptimizerPrefix = "optimizer.";
constexpr std::string_view kRngPrefix = "rng.";
constexpr std::string_view kExtraPrefix = "extra.";
constexpr std::string_view kVersionKey = "checkpoint.version";
constexpr std::string_view kEpochKey = "checkpoint.epoch";
constexpr std::string_view kStepKey = "checkpoint.step";
constexpr std::string_view kBatchKey = "checkpoint.batch_in_epoch";

// The rest of `key` after `prefix`, or nullopt when it does not start so.
std::optional<std::string> strip_prefix(const std::string& key, std::string_view prefix) {
  if (key.size() < prefix.size() || key.compare(0, prefix.size(), prefix) != 0) {
    return std::nullopt;
  }
  return key.substr(prefix.size());
}

// Reads a checkpoint's metadata, failing with the file's name.
class MetadataReader {
 public:
  MetadataReader(Metadata metadata, const std::filesystem::path& path)
      : metadata_(std::move(metadata)), path_(path.string()) {}

  template <typename... Details>
  [[noreturn]] void fail(const Details&... details) const {
    throw Error(tandem::detail::str("load_checkpoint: '", path_, "' ", details...));
  }

  /// Removes and returns the counter stored under `key`.
  int64_t take_count(std::string_view key) {
    auto it = metadata_.find(std::string(key));
    if (it == metadata_.end()) fail("lacks the metadata entry ", key);
    const std::string& text = it->second;
    int64_t value = -1;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < 0) {
      fail("has ", key, " = \"", text, "\", not a non-negative integer");
    }
    metadata_.erase(it);
    return value;
  }

  /// Moves every entry under `prefix` into `out`, keyed without it.
  void take_prefixed(std::string_view prefix, std::map<std::string, std::string>& out) {
    for (auto it = metadata_.begin(); it != metadata_.end();) {
      if (auto name = strip_prefix(it->first, prefix)) {
        out.emplace(std::move(*name), std::move(it->second));
        it = metadata_.erase(it);
      } else {
        ++it;
      }
    }
  }

  /// Fails if anything was left untaken.
  void expect_empty() const {
    if (!metadata_.empty()) {
      fail("has the metadata entry \"",
           metadata_.begin()->first,
           "\", which is not part of a tandem checkpoint (version ",
           kCheckpointVersion,
           ")");
    }
  }

 private:
  Metadata metadata_;
  std::string path_;
};

}  // namespace

void save_checkpoint(const Checkpoint& checkpoint, const std::filesystem::path& path) {
  TANDEM_CHECK(
      checkpoint.epoch >= 0 && checkpoint.step >= 0 && checkpoint.batch_in_epoch >= 0,
      "save_checkpoint: epoch, step and batch_in_epoch must be non-negative, got ",
      checkpoint.epoch,
      ", ",
      checkpoint.step,
      " and ",
      checkpoint.batch_in_epoch);
  TensorMap tensors;
  for (const auto& item : checkpoint.model) {
    tensors.emplace(std::string(kModelPrefix) + item.key(), item.value());
  }
  for (const auto& [key, tensor] : checkpoint.optimizer) {
    tensors.emplace(std::string(kOptimizerPrefix) + key, tensor);
  }
  Metadata metadata = {
      {std::string(kVersionKey), std::to_string(kCheckpointVersion)},
      {std::string(kEpochKey), std::to_string(checkpoint.epoch)},
      {std::string(kStepKey), std::to_string(checkpoint.step)},
      {std::string(kBatchKey), std::to_string(checkpoint.batch_in_epoch)},
  };
  for (const auto& [name, state] : checkpoint.rng_states) {
    metadata.emplace(std::string(kRngPrefix) + name, state);
  }
  for (const auto& [key, value] : checkpoint.extra) {
    metadata.emplace(std::string(kExtraPrefix) + key, value);
  }
  profiler::Span span("io", "save_checkpoint", kCPU);
  span.arg("path", path.string());
  save_tensors(tensors, path, metadata);
}

Checkpoint load_checkpoint(const std::filesystem::path& path) {
  profiler::Span span("io", "load_checkpoint", kCPU);
  span.arg("path", path.string());
  SafetensorsContents contents = load_safetensors(path);
  MetadataReader metadata(std::move(contents.metadata), path);
  if (!contents.checksum_verified) {
    metadata.fail("has no checksum (",
                  kChecksumKey,
                  "); save_checkpoint always stores one, so this file was written by "
                  "something else");
  }
  int64_t version = metadata.take_count(kVersionKey);
  if (version != kCheckpointVersion) {
    metadata.fail("has checkpoint format version ",
                  version,
                  " but this tandem reads version ",
                  kCheckpointVersion);
  }
  Checkpoint checkpoint;
  checkpoint.epoch = metadata.take_count(kEpochKey);
  checkpoint.step = metadata.take_count(kStepKey);
  checkpoint.batch_in_epoch = metadata.take_count(kBatchKey);
  metadata.take_prefixed(kRngPrefix, checkpoint.rng_states);
  metadata.take_prefixed(kExtraPrefix, checkpoint.extra);
  metadata.expect_empty();
  for (auto& [key, tensor] : contents.tensors) {
    if (auto name = strip_prefix(key, kModelPrefix)) {
      checkpoint.model.insert(std::move(*name), std::move(tensor));
    } else if (auto state = strip_prefix(key, kOptimizerPrefix)) {
      checkpoint.optimizer.emplace(std::move(*state), std::move(tensor));
    } else {
      metadata.fail("has the tensor \"",
                    key,
                    "\"; a checkpoint's tensors are named ",
                    kModelPrefix,
                    "<key> or ",
                    kOptimizerPrefix,
                    "<key>");
    }
  }
  return checkpoint;
}

}  // namespace tandem::io
