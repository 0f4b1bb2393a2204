#include "core/device_services.h"

#include <array>
#include <atomic>
#include <cstring>

#include "tandem/core/cpu_budget.h"
#include "tandem/core/error.h"

namespace tandem::detail {
namespace {

// Note [Device services]
// ~~~~~~~~~~~~~~~~~~~~~~
// Core owns tensors and their storage, but the memory of an accelerator
// is its backend's: core sits below the backends and may not include
// them. Each device type has one table, defined in one place by its
// backend: backend::Kernels (backend/dispatch.h), holding the type's
// kernels and its DeviceServices. Core cannot see that table, so it keeps
// this registry of the services alone, and the two hold the same objects:
// the CPU table's services are core's own (cpu_services below), and an
// accelerator's backend registers the services of its table from a static
// initialiser. The layers above core reach the services through the table
// (backend::kernels(device).services); core, through device_services(type).
//
// The initialiser lives in the file that defines the backend's table
// (backend/cuda/cuda_dispatch.cpp), which the ops always reach through
// backend/dispatch.cpp: a program linked against the static libtandem.a
// therefore always links the registration too, while a file holding only
// a registration would be dropped by the linker. The registry's pointers
// are constant-initialised, so a lookup during another file's static
// initialisation sees "not built" rather than garbage; nothing allocates
// on an accelerator before main.
//
// Unlike a kernel (backend/missing_kernels.h), a service is never missing:
// each has a meaning on every device type (waiting on the host is a
// no-op, its memory statistics are the CPU allocator's), which a stand-in
// that throws would get wrong, and core calls them on every allocation.
// So every slot is set: core's own tables set them all, and registration
// refuses a table with an empty slot, naming the slot and the type, which
// stops tandem as it loads instead of letting a call jump through null.
std::array<std::atomic<const DeviceServices*>, kNumDeviceTypes> registered{};

[[noreturn]] void not_built(const std::string& what) {
  throw Error(str(what,
                  ": tandem was built without CUDA (configure with -DTANDEM_CUDA=ON "
                  "on a machine with nvcc)"));
}

// A device type whose work is not queued: its spans time the work itself.
uint64_t no_queue_mark(Device) { return 0; }
void no_queue_mark_times(const uint64_t*, size_t count, int64_t*) {
  TANDEM_INTERNAL_ASSERT(count == 0, "queue marks on a device type that makes none");
}

// CUDA's services in a build without the CUDA backend (kCUDA is the one
// accelerator type): no devices, and an error for whatever would need one.
const DeviceServices& absent_cuda_services() {
  static const DeviceServices services{
      .built = false,
      .device_count = [] { return 0; },
      .properties = [](int) -> cuda::DeviceProperties {
        not_built("get_device_properties");
      },
      .allocate = [](size_t, Device device) -> DataPtr {
        not_built(str("cannot allocate on ", device));
      },
      .allocate_pinned = [](size_t) -> DataPtr {
        not_built("pin_memory: cannot page-lock host memory");
      },
      .copy_bytes =
          [](void*, Device dst_device, const void*, Device src_device, size_t, bool) {
            not_built(str("copy from ", src_device, " to ", dst_device));
          },
      .synchronize = [](Device) {},
      .memory_stats = [](int) -> cuda::MemoryStats { not_built("memory_stats"); },
      .reset_peak_memory_stats = [](int) { not_built("reset_peak_memory_stats"); },
      .empty_cache = [] {},
      .pinned_memory_stats = [] { return cuda::HostMemoryStats{}; },
      .queue_mark = no_queue_mark,
      .queue_mark_times = no_queue_mark_times,
  };
  return services;
}

// The host: one logical device per core of the budget, memory from the
// CPU allocator, copies with memcpy, nothing queued to wait for.
const DeviceServices& cpu_services() {
  static const DeviceServices services{
      .built = true,
      .device_count = [] { return static_cast<int>(num_threads()); },
      .properties = [](int) -> cuda::DeviceProperties {
        throw Error("get_device_properties: a CPU device has no CUDA properties");
      },
      .allocate = [](size_t nbytes, Device) { return cpu_allocator().allocate(nbytes); },
      .allocate_pinned = [](size_t) -> DataPtr {
        throw Error("pin_memory: page-locked memory is for copies to a GPU");
      },
      .copy_bytes =
          [](void* dst, Device, const void* src, Device, size_t nbytes, bool) {
            std::memmove(dst, src, nbytes);
          },
      .synchronize = [](Device) {},
      .memory_stats = [](int) -> cuda::MemoryStats {
        throw Error("memory_stats: CPU memory is counted by cpu_allocator_stats()");
      },
      .reset_peak_memory_stats =
          [](int) {
            throw Error(
                "reset_peak_memory_stats: for CPU memory use "
                "reset_peak_cpu_allocator_stats()");
          },
      .empty_cache = [] { tandem::empty_cache(); },
      .pinned_memory_stats = [] { return cuda::HostMemoryStats{}; },
      .queue_mark = no_queue_mark,
      .queue_mark_times = no_queue_mark_times,
  };
  return services;
}

// Every slot of DeviceServices, once. The static_assert below fails when a
// slot is added to the struct and not here.
#define TANDEM_SERVICE_SLOTS(X) \
  X(device_count)               \
  X(properties)                 \
  X(allocate)                   \
  X(allocate_pinned)            \
  X(copy_bytes)                 \
  X(synchronize)                \
  X(memory_stats)               \
  X(reset_peak_memory_stats)    \
  X(empty_cache)                \
  X(pinned_memory_stats)        \
  X(queue_mark)                 \
  X(queue_mark_times)

// `built`, padded to the alignment of a pointer, then the slots.
#define TANDEM_COUNT_SLOT(slot) +1
static_assert(sizeof(DeviceServices) ==
                  alignof(DeviceServices) +
                      (0 TANDEM_SERVICE_SLOTS(TANDEM_COUNT_SLOT)) * sizeof(void (*)()),
              "a slot of DeviceServices is missing from TANDEM_SERVICE_SLOTS");
#undef TANDEM_COUNT_SLOT

// The name of a slot `services` leaves empty, or null when all are set.
const char* empty_slot(const DeviceServices& services) {
#define TANDEM_NAME_EMPTY_SLOT(slot) \
  if (services.slot == nullptr) return #slot;
  TANDEM_SERVICE_SLOTS(TANDEM_NAME_EMPTY_SLOT)
#undef TANDEM_NAME_EMPTY_SLOT
  return nullptr;
}

#undef TANDEM_SERVICE_SLOTS

}  // namespace

void register_device_services(DeviceType type, const DeviceServices& services) {
  TANDEM_CHECK(type != kCPU, "register_device_services: core serves the CPU itself");
  const char* empty = empty_slot(services);
  TANDEM_CHECK(empty == nullptr,
               "register_device_services: the ",
               type,
               " services leave ",
               empty,
               " empty (a backend must set every slot)");
  const DeviceServices* expected = nullptr;
  TANDEM_CHECK(
      registered[static_cast<int>(type)].compare_exchange_strong(expected, &services),
      "register_device_services: the ",
      type,
      " services are registered twice");
}

const DeviceServices& device_services(DeviceType type) {
  if (type == kCPU) return cpu_services();
  if (const DeviceServices* s = registered[static_cast<int>(type)].load()) return *s;
  return absent_cuda_services();
}

}  // namespace tandem::detail
