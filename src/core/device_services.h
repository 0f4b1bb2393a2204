// Private: what core asks of a device type's memory: how many devices
// there are, memory on one of them, copies that involve one, waiting for
// it, and its memory statistics. Each device type's services belong to its
// one device table (backend::Kernels), which the layers above core use;
// core cannot see that table, so it looks them up here. Core serves the
// CPU itself; an accelerator's backend registers its table's services when
// tandem loads (backend/cuda/ for kCUDA), so core never includes a
// backend. A device type nobody registered has no devices, and every
// service that would need one throws, saying that tandem was built
// without it (Note [Device services] in device_services.cpp).
//
//   DataPtr p = detail::device_services(device.type()).allocate(nbytes, device);
//   detail::device_services(kCUDA).synchronize(Device(kCUDA, 0));
#pragma once

#include <cstddef>

#include "tandem/core/allocator.h"
#include "tandem/core/cuda.h"
#include "tandem/core/device.h"

namespace tandem::detail {

/// One device type's services. Every slot is set: a registering backend
/// fills them all (register_device_services checks), and core's own
/// tables (the CPU, a type that was not built) say what each means there.
struct DeviceServices {
  /// Whether this build can run this device type at all.
  bool built = false;
  /// The devices of this type visible to this process (0: none, including
  /// when the driver is missing or too old).
  int (*device_count)() = nullptr;
  cuda::DeviceProperties (*properties)(int index) = nullptr;
  /// Memory on `device`, ordered after the work already queued on it.
  DataPtr (*allocate)(size_t nbytes, Device device) = nullptr;
  /// Page-locked host memory that copies to this type's devices read
  /// asynchronously (Tensor::pin_memory).
  DataPtr (*allocate_pinned)(size_t nbytes) = nullptr;
  /// Copies `nbytes` between two devices, at least one of this type; see
  /// backend/cuda_backend.h for when the copy is complete.
  void (*copy_bytes)(void* dst,
                     Device dst_device,
                     const void* src,
                     Device src_device,
                     size_t nbytes,
                     bool non_blocking) = nullptr;
  /// Blocks until `device`'s queued work is done; throws on a fault.
  void (*synchronize)(Device device) = nullptr;
  cuda::MemoryStats (*memory_stats)(int index) = nullptr;
  void (*reset_peak_memory_stats)(int index) = nullptr;
  /// Gives cached device memory back to the driver.
  void (*empty_cache)() = nullptr;
  cuda::HostMemoryStats (*pinned_memory_stats)() = nullptr;
  /// The profiler's clock on a device's queue (Note [Spans on a device's
  /// queue] in core/profiler.cpp). queue_mark records a mark behind the
  /// work queued on `device` so far (a CUDA event on its stream) and
  /// returns its id, never 0; 0 where work is not queued (the CPU: a span
  /// there is the work itself). queue_mark_times waits until the device
  /// has passed each of `count` marks, writes when it did on now_ns()'s
  /// clock, and forgets them.
  uint64_t (*queue_mark)(Device device) = nullptr;
  void (*queue_mark_times)(const uint64_t* marks, size_t count, int64_t* ns) = nullptr;
};

/// Makes `services` the ones of `type` (not kCPU, which core serves). Called
/// once per type from a backend's static initialiser with the services of
/// its device table, which must live as long as the process. Throws for
/// kCPU, a second registration or an empty slot (naming the slot).
void register_device_services(DeviceType type, const DeviceServices& services);

/// The services of `type`: the registered ones, core's own for kCPU, else
/// a table of a type this build lacks.
const DeviceServices& device_services(DeviceType type);

}  // namespace tandem::detail
