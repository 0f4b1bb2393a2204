// One table per device type holds its kernels and its memory services, and
// the services in it are the very object core's registry answers with
// (Note [Device services] in src/core/device_services.cpp). Core refuses
// services with an empty slot, naming the slot and the device type.
#include "backend/cuda_backend.h"
#include "backend/dispatch.h"
#include "core/device_services.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::throws_with;

TEST(DeviceTable, TheCpuTableHoldsCoresCpuServices) {
  const detail::DeviceServices& core = detail::device_services(kCPU);
  EXPECT_EQ(&backend::kernels(Device(kCPU, 0)).services, &core);
  EXPECT_EQ(&backend::kernels(Device(kCPU, 1)).services, &core);
}

TEST(DeviceTable, TheCudaTableHoldsTheServicesCoreRegistered) {
  const backend::Kernels* cuda = backend::cuda_kernel_table();
  if (cuda == nullptr) GTEST_SKIP() << "tandem was built without CUDA";
  const detail::DeviceServices& core = detail::device_services(kCUDA);
  EXPECT_TRUE(core.built);
  EXPECT_EQ(&cuda->services, &core);
  EXPECT_EQ(&backend::kernels(Device(kCUDA, 0)).services, &core);
}

TEST(DeviceTable, WithoutCudaThereIsNeitherTableNorServices) {
  if (backend::cuda_kernel_table() != nullptr) GTEST_SKIP() << "tandem has CUDA";
  EXPECT_FALSE(detail::device_services(kCUDA).built);
  EXPECT_EQ(detail::device_services(kCUDA).device_count(), 0);
  EXPECT_TRUE(throws_with([] { backend::kernels(Device(kCUDA, 0)); },
                          "no kernels for cuda:0: tandem was built without CUDA"));
}

TEST(DeviceTable, ServicesWithAnEmptySlotAreRefusedNamingTheSlotAndTheType) {
  // Static: were the check gone, core would keep a pointer to them.
  static detail::DeviceServices lacking_copy = detail::device_services(kCPU);
  static detail::DeviceServices lacking_last = detail::device_services(kCPU);
  lacking_copy.copy_bytes = nullptr;
  lacking_last.queue_mark_times = nullptr;
  EXPECT_TRUE(
      throws_with([] { detail::register_device_services(kCUDA, lacking_copy); },
                  "register_device_services: the cuda services leave copy_bytes empty"));
  EXPECT_TRUE(throws_with(
      [] { detail::register_device_services(kCUDA, lacking_last); },
      "register_device_services: the cuda services leave queue_mark_times empty"));
}

}  // namespace
}  // namespace tandem
