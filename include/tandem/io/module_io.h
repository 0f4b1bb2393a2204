// Saving and loading a module's parameters and buffers (its state_dict) as
// a safetensors file, as torch::save / torch::load do for a module.
//
//   Net net;
//   tandem::io::save(net, "net.safetensors");      // atomic; with a checksum
//   Net other;
//   tandem::io::load(other, "net.safetensors");    // strict
//
// Loading is strict: missing and unexpected keys and shape mismatches are
// all listed in one tandem::Error (Module::load_state_dict's, in PyTorch's
// words), and then the module is unchanged. Values are converted to each
// parameter's dtype and copied to its device.
#pragma once

#include <filesystem>

#include "tandem/io/safetensors.h"
#include "tandem/nn/module.h"

namespace tandem::io {

void save(const nn::Module& module, const std::filesystem::path& path);
void load(nn::Module& module, const std::filesystem::path& path);

template <nn::module_holder Holder>
void save(const Holder& module, const std::filesystem::path& path) {
  save(*module, path);
}
template <nn::module_holder Holder>
void load(Holder& module, const std::filesystem::path& path) {
  load(*module, path);
}

/// A state_dict as a TensorMap (sorted by name) and back; the tensors are
/// shared, not copied.
TensorMap to_tensor_map(const OrderedDict<std::string, Tensor>& state_dict);
OrderedDict<std::string, Tensor> to_state_dict(const TensorMap& tensors);

}  // namespace tandem::io
