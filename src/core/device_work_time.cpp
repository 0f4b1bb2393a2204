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

// Adds the time since `start` to `device`'s total, times `sign`.
void record(Device device, std::chrono::steady_clock::time_point start, int64_t sign) {
  std::atomic<int64_t>* total = total_of(device);
  if (total == nullptr) return;
  const auto spent = std::chrono::steady_clock::now() - start;
  total->fetch_add(
      sign * std::chrono::duration_cast<std::chrono::nanoseconds>(spent).count(),
      std::memory_order_relaxed);
}

}  // namespace

DeviceWorkScope::~DeviceWorkScope() { record(device_, start_, 1); }

StepWorkScope::~StepWorkScope() { record(device_, start_, -1); }

}  // namespace detail
}  // namespace tandem
