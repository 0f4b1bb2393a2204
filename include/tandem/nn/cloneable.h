// Cloneable<Derived>: gives a module a deep clone(), as LibTorch's
// torch::nn::Cloneable. Derived implements reset(), which (re)creates all of
// its parameters, buffers and submodules; the constructor calls reset().
// clone() copy-constructs Derived, calls reset() on the copy, then copies
// every value and clones every child, so the clone shares no storage with
// the original, keeps requires_grad, and starts with no gradients.
//
//   struct NetImpl : tandem::nn::Cloneable<NetImpl> {
//     NetImpl() { reset(); }
//     void reset() override { fc = register_module("fc", tandem::nn::Linear(4, 2)); }
//     tandem::nn::Linear fc{nullptr};
//   };
//   auto copy = std::dynamic_pointer_cast<NetImpl>(net->clone());
#pragma once

#include <memory>
#include <optional>

#include "tandem/core/error.h"
#include "tandem/core/generator.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/nn/module.h"

namespace tandem::nn {

template <typename Derived>
class Cloneable : public Module {
 public:
  using Module::Module;

  /// (Re)creates this module's parameters, buffers and submodules.
  virtual void reset() = 0;

  std::shared_ptr<Module> clone(
      const std::optional<Device>& device = std::nullopt) const override {
    NoGradGuard no_grad;
    auto copy = std::make_shared<Derived>(static_cast<const Derived&>(*this));
    copy->parameters_.clear();
    copy->buffers_.clear();
    copy->children_.clear();
    {
      // reset()'s fresh values are overwritten just below: draw them from a
      // scratch generator, leaving the default one's stream untouched.
      ScratchDefaultGenerator scratch;
      copy->reset();
    }
    copy->copy_state_from(*this, device);
    return copy;
  }

 private:
  std::pair<const void*, size_t> object_bytes() const final {
    return {static_cast<const Derived*>(this), sizeof(Derived)};
  }

  // The parent's reset() made this child afresh, and the parent's members
  // point at it: fill this very object, rather than replacing it.
  void clone_(Module& other, const std::optional<Device>& device) final {
    auto clone = std::dynamic_pointer_cast<Derived>(other.clone(device));
    TANDEM_INTERNAL_ASSERT(clone != nullptr,
                           "clone() of ",
                           other.name(),
                           " returned a module of another type");
    static_cast<Derived&>(*this) = std::move(*clone);
  }
};

}  // namespace tandem::nn
