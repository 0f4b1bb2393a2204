// Tensor's autograd methods: requires_grad_, grad, hooks, detach (backward,
// which runs the engine, is in autograd/engine.cpp).
#include <algorithm>

#include "tandem/core/tensor.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/graph/node.h"

namespace tandem {

bool Tensor::is_leaf() const {
  const AutogradMeta* m = impl().autograd_meta();
  return m == nullptr || m->grad_fn == nullptr;
}

std::shared_ptr<autograd::Node> Tensor::grad_fn() const {
  const AutogradMeta* m = impl().autograd_meta();
  return m ? m->grad_fn : nullptr;
}

bool Tensor::retains_grad() const {
  const AutogradMeta* m = impl().autograd_meta();
  return m != nullptr && m->retains_grad;
}

Tensor& Tensor::requires_grad_(bool requires_grad) {
  TANDEM_CHECK(is_leaf() || requires_grad,
               "requires_grad_: cannot turn off ",
               "requires_grad on a non-leaf tensor (shape ",
               sizes(),
               "); use detach() instead");
  TANDEM_CHECK(!requires_grad || is_floating_point(),
               "requires_grad_: only ",
               "floating-point tensors can require gradients, got ",
               dtype());
  impl().autograd().requires_grad = requires_grad;
  return *this;
}

Tensor Tensor::grad() const {
  const AutogradMeta* m = impl().autograd_meta();
  return m ? m->grad : Tensor();
}

Tensor& Tensor::mutable_grad() { return impl().autograd().grad; }

void Tensor::set_grad(const Tensor& grad) {
  if (grad.defined()) {
    TANDEM_CHECK(grad.sizes() == sizes(),
                 "set_grad: gradient has shape ",
                 grad.sizes(),
                 " but the tensor has shape ",
                 sizes());
    TANDEM_CHECK(grad.device() == device(),
                 "set_grad: gradient is on ",
                 grad.device(),
                 " but the tensor is on ",
                 device());
    TANDEM_CHECK(grad.dtype() == dtype(),
                 "set_grad: gradient has dtype ",
                 grad.dtype(),
                 " but the tensor has dtype ",
                 dtype());
  }
  impl().autograd().grad = grad;
}

void Tensor::retain_grad() {
  TANDEM_CHECK(requires_grad(),
               "retain_grad: the tensor (shape ",
               sizes(),
               ") does not require grad");
  if (is_leaf() || retains_grad()) return;
  AutogradMeta& meta = impl().autograd();
  meta.retains_grad = true;
  std::weak_ptr<TensorImpl> weak = impl_ptr();
  meta.grad_fn->add_pre_hook(meta.output_nr, [weak](const Tensor& g) {
    if (auto self = weak.lock()) {
      Tensor& grad = self->autograd().grad;
      grad = grad.defined() ? grad + g : g.clone();
    }
    return Tensor();
  });
}

Tensor Tensor::detach() const {
  auto impl = std::make_shared<TensorImpl>(
      this->impl().storage(), dtype(), sizes(), strides(), storage_offset());
  return Tensor(std::move(impl));
}

Tensor& Tensor::detach_() {
  if (AutogradMeta* m = impl().autograd_meta()) {
    m->grad_fn = nullptr;
    m->requires_grad = false;
    m->output_nr = 0;
  }
  return *this;
}

size_t Tensor::register_hook(TensorHook hook) const {
  TANDEM_CHECK(requires_grad(),
               "register_hook: cannot register a hook on a ",
               "tensor that does not require grad (shape ",
               sizes(),
               ")");
  AutogradMeta& meta = impl().autograd();
  if (meta.grad_fn) return meta.grad_fn->add_pre_hook(meta.output_nr, std::move(hook));
  size_t id = autograd::new_hook_id();
  meta.hooks.emplace_back(id, std::move(hook));
  return id;
}

size_t Tensor::register_post_accumulate_grad_hook(PostAccumulateGradHook hook) const {
  TANDEM_CHECK(requires_grad() && is_leaf(),
               "register_post_accumulate_grad_hook: only a leaf tensor that requires "
               "grad accumulates a gradient (this one has shape ",
               sizes(),
               requires_grad() ? " and a grad_fn)" : " and does not require grad)");
  size_t id = autograd::new_hook_id();
  impl().autograd().post_accumulate_hooks.emplace_back(id, std::move(hook));
  return id;
}

void Tensor::remove_hook(size_t handle) const {
  AutogradMeta* meta = impl().autograd_meta();
  if (!meta) return;
  if (meta->grad_fn && meta->grad_fn->remove_pre_hook(handle)) return;
  std::erase_if(meta->hooks, [handle](const auto& h) { return h.first == handle; });
  std::erase_if(meta->post_accumulate_hooks,
                [handle](const auto& h) { return h.first == handle; });
}

}  // namespace tandem
