#include "tandem/data/pin_memory.h"

#include "tandem/core/cuda.h"
#include "tandem/core/warning.h"

namespace tandem::data::detail {

bool pin_memory_usable(const char* loader) {
  if (cuda::is_available()) return true;
  warn(tandem::detail::str(
      loader,
      ": pin_memory is ignored because no CUDA device is available (",
      cuda::is_built() ? "no GPU, or no driver that can run this CUDA build"
                       : "tandem was built without CUDA",
      "); batches stay in ordinary host memory"));
  return false;
}

}  // namespace tandem::data::detail
