// tandem::save and tandem::load: LibTorch's one-call serialization
// (torch::save / torch::load) for modules, optimizers, tensors and lists of
// tensors, in safetensors files written atomically and checksummed.
//
//   tandem::save(model, "model.pt");            // a holder, shared_ptr or Module
//   tandem::save(optimizer, "optimizer.pt");    // its state_dict
//   tandem::save(tensor, "tensor.pt");
//   tandem::save(std::vector<tandem::Tensor>{a, b}, "tensors.pt");
//
//   tandem::load(model, "model.pt");            // strict, as load_state_dict
//   tandem::load(optimizer, "optimizer.pt");
//   tandem::load(tensor, "tensor.pt");          // on the device it was saved from
//   tandem::load(tensor, "tensor.pt", tandem::Device("cpu"));
//
// What each file holds:
//   module     its state_dict, as tandem::io::save (module_io.h) writes it;
//   optimizer  a checkpoint (checkpoint.h) holding only the optimizer's
//              state_dict, so the optimizer state has one serializer;
//   tensors    the tensors under "0", "1", ..., with metadata saying
//              whether the file holds one tensor or a list, and the device
//              each came from.
// A load that fails (a missing or corrupt file, a file of another kind, a
// parameter of another shape) throws a tandem::Error naming the file and
// the problem, and leaves the target unchanged.
#pragma once

#include <concepts>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "tandem/core/device.h"
#include "tandem/core/tensor.h"
#include "tandem/io/module_io.h"
#include "tandem/nn/module.h"
#include "tandem/nn/module_holder.h"
#include "tandem/optim/optimizer.h"

namespace tandem {

// ---- modules ----
inline void save(const nn::Module& module, const std::filesystem::path& path) {
  io::save(module, path);
}
inline void load(nn::Module& module, const std::filesystem::path& path) {
  io::load(module, path);
}
template <nn::module_holder Holder>
void save(const Holder& module, const std::filesystem::path& path) {
  io::save(*module, path);
}
template <nn::module_holder Holder>
void load(Holder& module, const std::filesystem::path& path) {
  io::load(*module, path);
}
template <std::derived_from<nn::Module> M>
void save(const std::shared_ptr<M>& module, const std::filesystem::path& path) {
  TANDEM_CHECK(module != nullptr, "save: the module pointer is null");
  io::save(*module, path);
}
template <std::derived_from<nn::Module> M>
void load(const std::shared_ptr<M>& module, const std::filesystem::path& path) {
  TANDEM_CHECK(module != nullptr, "load: the module pointer is null");
  io::load(*module, path);
}

// ---- optimizers ----
void save(const optim::Optimizer& optimizer, const std::filesystem::path& path);
void load(optim::Optimizer& optimizer, const std::filesystem::path& path);

// ---- tensors ----
void save(const Tensor& tensor, const std::filesystem::path& path);
void save(const std::vector<Tensor>& tensors, const std::filesystem::path& path);
/// Tensors come back on the device they were saved from, or on `device`.
void load(Tensor& tensor,
          const std::filesystem::path& path,
          std::optional<Device> device = std::nullopt);
void load(std::vector<Tensor>& tensors,
          const std::filesystem::path& path,
          std::optional<Device> device = std::nullopt);

}  // namespace tandem
