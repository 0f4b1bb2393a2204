// TensorOptions: dtype, device and requires_grad for factory functions, with
// LibTorch's chainable setters. A bare dtype or device converts implicitly.
//
//   auto w = tandem::randn({3, 4}, tandem::TensorOptions()
//                                      .dtype(tandem::kFloat64)
//                                      .requires_grad(true));
//   auto z = tandem::zeros({2}, tandem::Device("cpu:1"));
#pragma once

#include <optional>

#include "tandem/core/device.h"
#include "tandem/core/dtype.h"

namespace tandem {

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(ScalarType dtype) : dtype_(dtype) {}              // implicit
  TensorOptions(Device device) : device_(device) {}               // implicit
  TensorOptions(DeviceType type) : device_(Device(type)) {}       // implicit
  TensorOptions(const char* device) : device_(Device(device)) {}  // implicit

  TensorOptions dtype(ScalarType dtype) const {
    TensorOptions o = *this;
    o.dtype_ = dtype;
    return o;
  }
  TensorOptions device(Device device) const {
    TensorOptions o = *this;
    o.device_ = device;
    return o;
  }
  /// .device(kCUDA, 1), as LibTorch's.
  TensorOptions device(DeviceType type, int index) const {
    return device(Device(type, index));
  }
  /// .dtype<float>(), as LibTorch's.
  template <typename T>
  TensorOptions dtype() const {
    return dtype(dtype_of_v<T>);
  }
  TensorOptions requires_grad(bool requires_grad) const {
    TensorOptions o = *this;
    o.requires_grad_ = requires_grad;
    return o;
  }

  ScalarType dtype() const { return dtype_.value_or(kFloat32); }
  Device device() const { return device_.value_or(Device(kCPU)); }
  bool requires_grad() const { return requires_grad_; }
  bool has_dtype() const { return dtype_.has_value(); }
  bool has_device() const { return device_.has_value(); }

 private:
  std::optional<ScalarType> dtype_;
  std::optional<Device> device_;
  bool requires_grad_ = false;
};

/// LibTorch spells these as free functions too: tandem::dtype(kFloat64).
inline TensorOptions dtype(ScalarType t) { return TensorOptions().dtype(t); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions requires_grad(bool r = true) {
  return TensorOptions().requires_grad(r);
}

}  // namespace tandem
