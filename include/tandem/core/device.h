// Device: where a tensor lives.
//
// A device is a type (cpu, cuda) and an index. "cpu" means cpu:0; cpu:1,
// cpu:2, ... are logical CPU devices that share the host's memory but are
// separate placements (ops never mix them silently).
//
//   tandem::Device d("cuda:1");
//   tandem::Device c(tandem::kCPU);   // cpu:0
//   x.to(tandem::Device("cpu:1"));
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace tandem {

enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };
inline constexpr int kNumDeviceTypes = 2;
inline constexpr DeviceType kCPU = DeviceType::CPU;
inline constexpr DeviceType kCUDA = DeviceType::CUDA;

std::string_view device_type_name(DeviceType type);

class Device {
 public:
  /// `index` must be >= 0; -1 is accepted as "the default", which is 0.
  Device(DeviceType type, int index = 0);  // implicit
  /// Parses "cpu", "cpu:3", "cuda", "cuda:0"; throws tandem::Error otherwise.
  Device(std::string_view spec);                                // implicit
  Device(const char* spec) : Device(std::string_view(spec)) {}  // implicit
  Device(const std::string& spec)                               // implicit
      : Device(std::string_view(spec)) {}

  DeviceType type() const { return type_; }
  int index() const { return index_; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool is_cuda() const { return type_ == DeviceType::CUDA; }
  std::string str() const;

  friend bool operator==(const Device& a, const Device& b) {
    return a.type_ == b.type_ && a.index_ == b.index_;
  }
  friend bool operator!=(const Device& a, const Device& b) { return !(a == b); }
  friend bool operator<(const Device& a, const Device& b) {
    return a.type_ != b.type_ ? a.type_ < b.type_ : a.index_ < b.index_;
  }

 private:
  DeviceType type_;
  int index_;
};

std::ostream& operator<<(std::ostream& out, const Device& device);
std::ostream& operator<<(std::ostream& out, DeviceType type);

}  // namespace tandem

template <>
struct std::hash<tandem::Device> {
  size_t operator()(const tandem::Device& d) const noexcept {
    return std::hash<int>()(static_cast<int>(d.type()) * 65536 + d.index());
  }
};
