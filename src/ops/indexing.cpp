// STUB: owned by a helper, to be replaced.
#include "tandem/ops/indexing.h"

namespace tandem {

Tensor index_select(const Tensor&, int64_t, const Tensor&) {
  throw NotImplementedError("index_select: not implemented yet");
}

Tensor gather(const Tensor&, int64_t, const Tensor&) {
  throw NotImplementedError("gather: not implemented yet");
}

Tensor scatter_add(const Tensor&, int64_t, const Tensor&, const Tensor&) {
  throw NotImplementedError("scatter_add: not implemented yet");
}

Tensor& scatter_add_(Tensor&, int64_t, const Tensor&, const Tensor&) {
  throw NotImplementedError("scatter_add_: not implemented yet");
}

Tensor index_add(const Tensor&, int64_t, const Tensor&, const Tensor&) {
  throw NotImplementedError("index_add: not implemented yet");
}

Tensor embedding(const Tensor&, const Tensor&, int64_t) {
  throw NotImplementedError("embedding: not implemented yet");
}

}  // namespace tandem
