// Storage: a block of memory on one device, shared by every tensor that
// views it. It also holds the version counter that in-place ops bump, so a
// view and its base see the same version (autograd uses it to detect a
// saved tensor changed after it was saved). Storage made by
// make_pinned_storage is page-locked host memory (is_pinned()), which copies
// to a GPU can read asynchronously (see Tensor::pin_memory).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "tandem/core/allocator.h"
#include "tandem/core/device.h"

namespace tandem {

class StorageImpl {
 public:
  StorageImpl(size_t nbytes, Device device, DataPtr data, bool pinned = false)
      : nbytes_(nbytes), device_(device), data_(std::move(data)), pinned_(pinned) {}
  StorageImpl(const StorageImpl&) = delete;
  StorageImpl& operator=(const StorageImpl&) = delete;

  void* data() const { return data_.get(); }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  /// Whether the memory is page-locked host memory from the CUDA backend.
  bool is_pinned() const { return pinned_; }
  uint32_t version() const { return version_->load(std::memory_order_relaxed); }
  void bump_version() { version_->fetch_add(1, std::memory_order_relaxed); }

  /// The storage whose memory and version counter this one borrows (see
  /// alias_storage), or null.
  const std::shared_ptr<StorageImpl>& base() const { return base_; }

 private:
  size_t nbytes_;
  Device device_;
  DataPtr data_;
  bool pinned_;
  std::atomic<uint32_t> own_version_{0};
  std::atomic<uint32_t>* version_ = &own_version_;
  std::shared_ptr<StorageImpl> base_;

  friend std::shared_ptr<StorageImpl> alias_storage(const std::shared_ptr<StorageImpl>&,
                                                    Device);
};

using Storage = std::shared_ptr<StorageImpl>;

/// New storage of `nbytes` on `device` from that device type's allocator.
Storage make_storage(size_t nbytes, Device device);

/// New storage of `nbytes` on `device` (a CPU device) in page-locked host
/// memory from the CUDA backend's caching host allocator. Throws
/// tandem::Error when there is no CUDA device to pin memory for.
Storage make_pinned_storage(size_t nbytes, Device device);

/// Storage over memory tandem does not own; `deleter` (may be empty) runs when
/// the last tensor using it goes away.
Storage make_storage_from_blob(void* data,
                               size_t nbytes,
                               Device device,
                               std::function<void(void*)> deleter);

/// The memory of `base`, a CPU storage, seen from another logical CPU device
/// (they all share the host's memory): no copy. The alias keeps `base` alive
/// and shares its version counter, so an in-place write through either is
/// seen by autograd's saved-tensor checks on both.
Storage alias_storage(const Storage& base, Device device);

}  // namespace tandem
