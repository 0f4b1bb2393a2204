#include "tandem/core/device.h"

#include <charconv>

#include "tandem/core/error.h"

namespace tandem {

std::string_view device_type_name(DeviceType type) {
  return type == DeviceType::CPU ? "cpu" : "cuda";
}

Device::Device(DeviceType type, int index)
    : type_(type), index_(index == -1 ? 0 : index) {
  TANDEM_CHECK(index >= -1, "device: index must be non-negative, got ", index);
}

Device::Device(std::string_view spec) : type_(DeviceType::CPU), index_(0) {
  auto colon = spec.find(':');
  std::string_view type = spec.substr(0, colon);
  if (type == "cpu") {
    type_ = DeviceType::CPU;
  } else if (type == "cuda") {
    type_ = DeviceType::CUDA;
  } else {
    throw Error(detail::str(
        "device: expected 'cpu', 'cpu:N', 'cuda' or ", "'cuda:N', got '", spec, "'"));
  }
  if (colon == std::string_view::npos) return;
  std::string_view digits = spec.substr(colon + 1);
  int index = -1;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  TANDEM_CHECK(!digits.empty() && ec == std::errc() &&
                   end == digits.data() + digits.size() && index >= 0,
               "device: invalid index in '",
               spec,
               "' (expected a non-negative integer after ':')");
  index_ = index;
}

std::string Device::str() const {
  return detail::str(device_type_name(type_), ":", index_);
}

std::ostream& operator<<(std::ostream& out, const Device& device) {
  return out << device.str();
}

std::ostream& operator<<(std::ostream& out, DeviceType type) {
  return out << device_type_name(type);
}

}  // namespace tandem
