// A kernel slot that a device type lacks throws, naming the kernel and the
// device, instead of jumping through a null pointer; the tables that
// kernels() hands out have every slot set.
#include "backend/dispatch.h"
#include "backend/missing_kernels.h"
#include "core/device_services.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::throws_with;

// A table with no kernel set (and the host's services, which every table
// holds).
backend::Kernels no_kernels() { return {.services = detail::device_services(kCPU)}; }

TEST(MissingKernel, AnEmptySlotThrowsNamingTheKernelAndTheDevice) {
  const backend::Kernels table = backend::refuse_missing_kernels(no_kernels());
  const Tensor param = zeros({4}, TensorOptions().device("cpu:1"));
  EXPECT_TRUE(throws_with([&] { table.sgd_step(param, param, Tensor(), {}); },
                          "sgd_step: no kernel for cpu:1"));
  EXPECT_TRUE(
      throws_with([&] { table.adam_step(param, param, param, param, Tensor(), {}); },
                  "adam_step: no kernel for cpu:1"));
  // The device is that of the first defined tensor operand.
  EXPECT_TRUE(
      throws_with([&] { table.copy(Tensor(), param); }, "copy: no kernel for cpu:1"));
}

TEST(MissingKernel, ASetSlotIsKept) {
  backend::Kernels partial = no_kernels();
  partial.fill = backend::kernels(Device(kCPU)).fill;
  const backend::Kernels table = backend::refuse_missing_kernels(partial);
  EXPECT_EQ(table.fill, partial.fill);
  EXPECT_NE(table.copy, nullptr);
  EXPECT_EQ(&table.services, &partial.services);
}

TEST(MissingKernel, TheCpuOptimizerStepsAreInTheCpuTable) {
  // They used to be null there (optim/ ran its own loops): the fused steps
  // now reach the CPU kernels through the table, as on a GPU.
  const backend::Kernels& cpu = backend::kernels(Device(kCPU));
  const backend::Kernels refused = backend::refuse_missing_kernels(no_kernels());
  EXPECT_NE(cpu.sgd_step, refused.sgd_step);
  EXPECT_NE(cpu.adam_step, refused.adam_step);
  Tensor param = ones({3}, kFloat64);
  const Tensor grad = full({3}, 2.0, kFloat64);
  cpu.sgd_step(param, grad, Tensor(), backend::SgdStepArgs{.lr = 0.5});
  EXPECT_TRUE(testing::all_close(param, zeros({3}, kFloat64), 0, 0));
}

}  // namespace
}  // namespace tandem
