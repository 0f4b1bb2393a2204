#include "tandem/core/device_work_time.h"

#include <array>
#include <atomic>
#include <cstdint>

namespace tandem {
namespace {

constexpr int kRecorded = 64;  // devices of each type

// Nanoseconds per device: [type][index].
std::array<std::array<std::atomic<int64_t>, kRecorded>, kNumDeviceTypes> totals{};

std::atomic<int64_t>* total_of(Device device) {
  if (device.index() >= kRecorded) return nullptr;
  return &totals[static_cast<size_t>(device.type())][static_cast<size_t>(device.index())];
}

}  // namespace

double device_work_seconds(Device device) {
  const std::atomic<int64_t>* total = total_of(device);
  return total ? static_cast<double>(total->load(std::memory_order_relaxed)) * 1e-9 : 0.0;
}

namespace detail {

namespace {

thread_local DeviceWorkScope* innermost = nullptr;

}  // namespace

DeviceWorkScope::DeviceWorkScope(Device device)
    : device_(device), start_(std::chrono::steady_clock::now()), outer_(innermost) {
  innermost = this;
}

DeviceWorkScope::~DeviceWorkScope() {
  innermost = outer_;
  std::atomic<int64_t>* total = total_of(device_);
  if (total == nullptr) return;
  const auto spent = std::chrono::steady_clock::now() - start_ - excluded_;
  total->fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(spent).count(),
                   std::memory_order_relaxed);
}

StepWorkScope::StepWorkScope() noexcept
    : paused_(innermost), start_(std::chrono::steady_clock::now()) {}

StepWorkScope::~StepWorkScope() {
  if (paused_ != nullptr) paused_->excluded_ += std::chrono::steady_clock::now() - start_;
}

}  // namespace detail
}  // namespace tandem
