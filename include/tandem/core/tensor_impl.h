// TensorImpl: the shared state behind a Tensor handle: storage, geometry
// (sizes, strides, offset in elements), dtype, and autograd metadata.
// Users work with Tensor; this header is public because Tensor's hot
// accessors are inline.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tandem/core/dtype.h"
#include "tandem/core/int_list.h"
#include "tandem/core/storage.h"

namespace tandem {

namespace autograd {
class Node;
}

// Autograd state (requires_grad, grad, grad_fn, hooks); made on first use,
// so tensors that never meet autograd carry only a null pointer. Defined in
// tandem/core/tensor.h.
struct AutogradMeta;

class TensorImpl {
 public:
  TensorImpl(
      Storage storage, ScalarType dtype, IntList sizes, IntList strides, int64_t offset);
  ~TensorImpl();
  TensorImpl(const TensorImpl&) = delete;
  TensorImpl& operator=(const TensorImpl&) = delete;

  const Storage& storage() const { return storage_; }
  ScalarType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  const IntList& sizes() const { return sizes_; }
  const IntList& strides() const { return strides_; }
  int64_t offset() const { return offset_; }
  int64_t numel() const { return numel_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  bool is_contiguous() const { return contiguous_; }
  void* data() const {
    return static_cast<char*>(storage_->data()) +
           offset_ * static_cast<int64_t>(element_size(dtype_));
  }

  /// Replaces storage, dtype and geometry, keeping this object (and so every
  /// handle to it, and its autograd state). Module::to uses it so that an
  /// optimizer's parameter handles stay valid.
  void set_data(
      Storage storage, ScalarType dtype, IntList sizes, IntList strides, int64_t offset);

  /// Views made by the view ops (narrow, select, t, view, ...) know the
  /// tensor whose memory they view, the first of a chain of views (PyTorch's
  /// _base), and the storage's version when their autograd history was last
  /// brought up to date. Weak: a view keeps neither its base nor the base's
  /// graph alive; a base that is gone is never read again. See Note [Writing
  /// through a view].
  std::shared_ptr<TensorImpl> view_base() const { return view_base_.lock(); }
  uint32_t view_version() const { return view_version_; }
  void set_view_base(std::weak_ptr<TensorImpl> base, uint32_t version) {
    view_base_ = std::move(base);
    view_version_ = version;
  }
  void set_view_version(uint32_t version) { view_version_ = version; }

  /// Null until autograd state is first needed.
  AutogradMeta* autograd_meta() const { return autograd_.get(); }
  AutogradMeta& autograd();

 private:
  Storage storage_;
  ScalarType dtype_;
  IntList sizes_;
  IntList strides_;
  int64_t offset_;
  int64_t numel_;
  bool contiguous_;
  std::unique_ptr<AutogradMeta> autograd_;
  std::weak_ptr<TensorImpl> view_base_;
  uint32_t view_version_ = 0;
};

/// Row-major strides for `sizes`.
IntList contiguous_strides(const IntList& sizes);
int64_t numel_of(const IntList& sizes);

}  // namespace tandem
