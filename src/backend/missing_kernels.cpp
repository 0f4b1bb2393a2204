#include "backend/missing_kernels.h"

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "tandem/core/error.h"

namespace tandem::backend {
namespace {

// Every kernel slot of Kernels, once. The static_assert below fails when a slot is
// added to the struct and not here.
#define TANDEM_KERNEL_SLOTS(X) \
  X(copy)                      \
  X(fill)                      \
  X(unary)                     \
  X(binary)                    \
  X(activation)                \
  X(activation_backward)       \
  X(where)                     \
  X(reduce_dim)                \
  X(gemm)                      \
  X(bmm)                       \
  X(softmax)                   \
  X(softmax_backward)          \
  X(index_select)              \
  X(index_add)                 \
  X(gather)                    \
  X(scatter_add)               \
  X(nll_loss_forward)          \
  X(nll_loss_backward)         \
  X(conv2d)                    \
  X(conv2d_backward)           \
  X(max_pool2d)                \
  X(max_pool2d_backward)       \
  X(avg_pool2d)                \
  X(avg_pool2d_backward)       \
  X(batch_norm_stats)          \
  X(batch_norm_apply)          \
  X(batch_norm_backward)       \
  X(layer_norm)                \
  X(layer_norm_backward)       \
  X(lstm_cell)                 \
  X(lstm_cell_backward)        \
  X(gru_cell)                  \
  X(gru_cell_backward)         \
  X(uniform)                   \
  X(normal)                    \
  X(randint)                   \
  X(bernoulli)                 \
  X(bernoulli_keyed)           \
  X(sgd_step)                  \
  X(adam_step)                 \
  X(rmsprop_step)              \
  X(adagrad_step)

// A kernel's name as a template argument.
template <size_t N>
struct KernelName {
  char text[N];
  constexpr KernelName(const char (&name)[N]) { std::copy_n(name, N, text); }  // NOLINT
};

// The device of a call: that of its first defined tensor operand.
template <typename... Args>
std::string device_of(const Args&... args) {
  std::string device;
  auto visit = [&](const auto& arg) {
    if constexpr (std::is_same_v<std::decay_t<decltype(arg)>, Tensor>) {
      if (device.empty() && arg.defined()) device = detail::str(arg.device());
    }
  };
  (visit(args), ...);
  return device.empty() ? std::string("this device") : device;
}

template <KernelName Name, typename Slot>
struct MissingKernel;

template <KernelName Name, typename R, typename... Args>
struct MissingKernel<Name, R (*)(Args...)> {
  static R call(Args... args) {
    throw Error(detail::str(Name.text,
                            ": no kernel for ",
                            device_of(args...),
                            " (its backend does not implement this operation)"));
  }
};

// The services (a reference, held as a pointer), then the kernel slots.
#define TANDEM_COUNT_SLOT(slot) +1
static_assert(sizeof(Kernels) ==
                  sizeof(const detail::DeviceServices*) +
                      (0 TANDEM_KERNEL_SLOTS(TANDEM_COUNT_SLOT)) * sizeof(void (*)()),
              "a slot of Kernels is missing from TANDEM_KERNEL_SLOTS");
#undef TANDEM_COUNT_SLOT

}  // namespace

Kernels refuse_missing_kernels(Kernels table) {
#define TANDEM_REFUSE_MISSING(slot) \
  if (table.slot == nullptr)        \
    table.slot = MissingKernel<#slot, decltype(table.slot)>::call;
  TANDEM_KERNEL_SLOTS(TANDEM_REFUSE_MISSING)
#undef TANDEM_REFUSE_MISSING
  return table;
}

#undef TANDEM_KERNEL_SLOTS

}  // namespace tandem::backend
