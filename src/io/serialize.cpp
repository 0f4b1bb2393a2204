#include "tandem/io/serialize.h"

#include <string>
#include <string_view>

#include "tandem/core/error.h"
#include "tandem/io/checkpoint.h"
#include "tandem/io/safetensors.h"

namespace tandem {
namespace {

// Note [What a tensor file holds]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// torch::save(tensor) and torch::save(vector) write one pickle each; here
// both write tensors named "0", "1", ... and say in the metadata which of
// the two it was ("tandem.content"), so that loading a list into a tensor
// (or the reverse, or a module's file into either) is refused by name
// instead of guessed. "tandem.device.<i>" keeps each tensor's device, which
// safetensors does not record, so a load puts it back where it was, as
// LibTorch's does.
constexpr std::string_view kContentKey = "tandem.content";
constexpr std::string_view kOneTensor = "tensor";
constexpr std::string_view kTensorList = "tensor_list";
constexpr std::string_view kDevicePrefix = "tandem.device.";

void save_list(const std::vector<Tensor>& tensors,
               std::string_view content,
               const std::filesystem::path& path) {
  io::TensorMap named;
  io::Metadata metadata = {{std::string(kContentKey), std::string(content)}};
  for (size_t i = 0; i < tensors.size(); ++i) {
    TANDEM_CHECK(
        tensors[i].defined(), "save: '", path.string(), "': tensor ", i, " is undefined");
    named.emplace(std::to_string(i), tensors[i]);
    metadata.emplace(std::string(kDevicePrefix) + std::to_string(i),
                     tensors[i].device().str());
  }
  io::save_tensors(named, path, metadata);
}

// The tensors of a file save_list wrote with `content`, in order, each on
// `device` or the device it was saved from.
std::vector<Tensor> load_list(const std::filesystem::path& path,
                              std::string_view content,
                              const std::optional<Device>& device) {
  io::SafetensorsContents file = io::load_safetensors(path);
  auto fail = [&](const auto&... details) {
    throw Error(str("load: '", path.string(), "' ", details...));
  };
  auto kind = file.metadata.find(std::string(kContentKey));
  if (kind == file.metadata.end()) {
    fail("has no \"",
         kContentKey,
         "\" entry: it was not written by tandem::save of a ",
         "tensor or a list of tensors (a module's file loads into a module)");
  }
  if (kind->second != content) {
    fail("holds a ",
         kind->second == kTensorList ? "list of tensors" : kind->second,
         ", not a ",
         content == kTensorList ? "list of tensors" : content);
  }
  std::vector<Tensor> tensors(file.tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string name = std::to_string(i);
    auto found = file.tensors.find(name);
    if (found == file.tensors.end()) fail("lacks tensor \"", name, "\"");
    auto saved_on = file.metadata.find(std::string(kDevicePrefix) + name);
    if (saved_on == file.metadata.end())
      fail("lacks the device of tensor \"", name, "\"");
    tensors[i] = found->second.to(device.value_or(Device(saved_on->second)));
  }
  return tensors;
}

}  // namespace

void save(const optim::Optimizer& optimizer, const std::filesystem::path& path) {
  io::Checkpoint checkpoint;
  checkpoint.optimizer = optimizer.state_dict();
  io::save_checkpoint(checkpoint, path);
}

void load(optim::Optimizer& optimizer, const std::filesystem::path& path) {
  io::Checkpoint checkpoint = io::load_checkpoint(path);
  TANDEM_CHECK(checkpoint.model.is_empty(),
               "load: '",
               path.string(),
               "' is a training checkpoint with model weights, not an optimizer's "
               "file; read it with io::load_checkpoint");
  try {
    optimizer.load_state_dict(checkpoint.optimizer);
  } catch (const Error& e) {
    throw Error(str("load: '", path.string(), "': ", e.what()));
  }
}

void save(const Tensor& tensor, const std::filesystem::path& path) {
  save_list({tensor}, kOneTensor, path);
}

void save(const std::vector<Tensor>& tensors, const std::filesystem::path& path) {
  save_list(tensors, kTensorList, path);
}

void load(Tensor& tensor,
          const std::filesystem::path& path,
          std::optional<Device> device) {
  std::vector<Tensor> loaded = load_list(path, kOneTensor, device);
  TANDEM_CHECK(loaded.size() == 1,
               "load: '",
               path.string(),
               "' holds ",
               loaded.size(),
               " tensors under the one-tensor marker");
  tensor = loaded[0];
}

void load(std::vector<Tensor>& tensors,
          const std::filesystem::path& path,
          std::optional<Device> device) {
  tensors = load_list(path, kTensorList, device);
}

}  // namespace tandem
