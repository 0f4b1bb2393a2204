#include "ops/reduction_dims.h"

#include <algorithm>

#include "tandem/core/wrap_dim.h"

namespace tandem::detail {

IntList normalize_dims(const char* op, const Tensor& x, const IntList& dims) {
  IntList out;
  if (dims.empty()) {
    for (int64_t d = 0; d < x.dim(); ++d) out.push_back(d);
    return out;
  }
  for (int64_t dim : dims) out.push_back(wrap_dim(dim, x.dim(), op));
  std::sort(out.begin(), out.end());
  auto dup = std::adjacent_find(out.begin(), out.end());
  TANDEM_CHECK(dup == out.end(),
               op,
               ": dim ",
               *dup,
               " appears multiple times in the list of dims ",
               dims);
  return out;
}

IntList reduced_shape(const IntList& sizes, const IntList& dims, bool keepdim) {
  IntList out;
  for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
    bool reduced = std::binary_search(dims.begin(), dims.end(), d);
    if (!reduced)
      out.push_back(sizes[d]);
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

int64_t reduced_count(const Tensor& x, const IntList& dims) {
  int64_t n = 1;
  if (x.dim() == 0) return n;
  for (int64_t d : dims) n *= x.sizes()[d];
  return n;
}

}  // namespace tandem::detail
