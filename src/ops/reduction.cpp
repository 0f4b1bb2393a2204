// STUB: owned by a helper, to be replaced.
#include "tandem/ops/reduction.h"

namespace tandem {

Tensor sum(const Tensor&) {
  throw NotImplementedError("sum: not implemented yet");
}

Tensor sum(const Tensor&, const IntList&, bool) {
  throw NotImplementedError("sum: not implemented yet");
}

Tensor mean(const Tensor&) {
  throw NotImplementedError("mean: not implemented yet");
}

Tensor mean(const Tensor&, const IntList&, bool) {
  throw NotImplementedError("mean: not implemented yet");
}

Tensor max(const Tensor&) {
  throw NotImplementedError("max: not implemented yet");
}

Tensor min(const Tensor&) {
  throw NotImplementedError("min: not implemented yet");
}

std::tuple<Tensor, Tensor> max(const Tensor&, int64_t, bool) {
  throw NotImplementedError("max: not implemented yet");
}

std::tuple<Tensor, Tensor> min(const Tensor&, int64_t, bool) {
  throw NotImplementedError("min: not implemented yet");
}

Tensor argmax(const Tensor&) {
  throw NotImplementedError("argmax: not implemented yet");
}

Tensor argmin(const Tensor&) {
  throw NotImplementedError("argmin: not implemented yet");
}

Tensor argmax(const Tensor&, int64_t, bool) {
  throw NotImplementedError("argmax: not implemented yet");
}

Tensor argmin(const Tensor&, int64_t, bool) {
  throw NotImplementedError("argmin: not implemented yet");
}

}  // namespace tandem
