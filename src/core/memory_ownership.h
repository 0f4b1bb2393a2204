// Private: when a tensor's memory may be reused rather than copied.
#pragma once

#include "tandem/core/storage.h"
#include "tandem/core/tensor.h"

namespace tandem::detail {

/// Whether `t` is contiguous and nothing but this handle reaches its
/// memory: no other handle on its TensorImpl, no other view of its storage,
/// and not an alias of another device's storage (alias_storage). The holder
/// may then keep the memory as it is or write into it in place.
inline bool holds_memory_alone(const Tensor& t) {
  const Storage& storage = t.unsafe_impl()->storage();
  return t.is_contiguous() && t.impl_ptr().use_count() == 1 && storage.use_count() == 1 &&
         storage->base() == nullptr;
}

}  // namespace tandem::detail
