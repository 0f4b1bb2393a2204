#include "tandem/core/wrap_dim.h"

#include <algorithm>

#include "tandem/core/error.h"

namespace tandem {

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  // A 0-dim tensor accepts dims 0 and -1, like PyTorch.
  const int64_t n = std::max<int64_t>(ndim, 1);
  TANDEM_CHECK_INDEX(dim >= -n && dim < n,
                     op,
                     ": dimension out of range (expected to be in range of [",
                     -n,
                     ", ",
                     n - 1,
                     "], but got ",
                     dim,
                     ")");
  return dim < 0 ? dim + n : dim;
}

}  // namespace tandem
