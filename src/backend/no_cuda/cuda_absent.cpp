// The CUDA backend's interface in a build without CUDA: no GPUs, and a
// clear error for anything that would need one.
#include "backend/cuda_backend.h"
#include "tandem/core/error.h"

namespace tandem::backend {
namespace {

[[noreturn]] void no_cuda(const char* what) {
  throw Error(detail::str(what,
                          ": tandem was built without CUDA (configure with "
                          "-DTANDEM_CUDA=ON on a machine with nvcc)"));
}

}  // namespace

bool cuda_built() { return false; }
int cuda_device_count() { return 0; }
CudaDeviceProperties cuda_device_properties(int) { no_cuda("get_device_properties"); }
DataPtr cuda_allocate(size_t, Device device) {
  no_cuda(detail::str("cannot allocate on ", device).c_str());
}
DataPtr cuda_pinned_allocate(size_t) {
  no_cuda("pin_memory: cannot page-lock host memory");
}
CudaPinnedMemoryStats cuda_pinned_memory_stats() { return {}; }
CudaMemoryStats cuda_memory_stats(int) { no_cuda("memory_stats"); }
void cuda_reset_peak_memory_stats(int) { no_cuda("reset_peak_memory_stats"); }
void cuda_empty_cache() {}
void cuda_copy_bytes(
    void*, Device dst_device, const void*, Device src_device, size_t, bool) {
  no_cuda(detail::str("copy from ", src_device, " to ", dst_device).c_str());
}
void cuda_synchronize(Device) {}
const Kernels* cuda_kernel_table() { return nullptr; }

}  // namespace tandem::backend
