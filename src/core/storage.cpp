// Storage: memory from the device's allocator, pinned host memory, borrowed
// blobs, aliases.
#include "tandem/core/storage.h"

#include "core/device_services.h"
#include "tandem/core/error.h"

namespace tandem {

Storage make_storage(size_t nbytes, Device device) {
  DataPtr data = detail::device_services(device.type()).allocate(nbytes, device);
  return std::make_shared<StorageImpl>(nbytes, device, std::move(data));
}

Storage make_pinned_storage(size_t nbytes, Device device) {
  TANDEM_CHECK(device.is_cpu(), "pin_memory: pinned memory is host memory, not ", device);
  return std::make_shared<StorageImpl>(
      nbytes,
      device,
      detail::device_services(kCUDA).allocate_pinned(nbytes),
      /*pinned=*/true);
}

Storage make_storage_from_blob(void* data,
                               size_t nbytes,
                               Device device,
                               std::function<void(void*)> deleter) {
  if (!deleter) deleter = [](void*) {};
  return std::make_shared<StorageImpl>(nbytes, device, DataPtr(data, std::move(deleter)));
}

Storage alias_storage(const Storage& base, Device device) {
  TANDEM_CHECK(base->device().is_cpu() && device.is_cpu(),
               "alias_storage: only CPU devices share memory, not ",
               base->device(),
               " and ",
               device);
  // Borrow from the root, so aliases of aliases share one counter.
  const Storage& root = base->base() ? base->base() : base;
  Storage alias = make_storage_from_blob(root->data(), root->nbytes(), device, nullptr);
  alias->version_ = root->version_;
  alias->pinned_ = root->pinned_;
  alias->base_ = root;
  return alias;
}

}  // namespace tandem
