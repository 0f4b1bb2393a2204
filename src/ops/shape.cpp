// STUB: owned by a helper, to be replaced.
#include "tandem/ops/shape.h"

namespace tandem {

Tensor view(const Tensor&, const IntList&) {
  throw NotImplementedError("view: not implemented yet");
}

Tensor reshape(const Tensor&, const IntList&) {
  throw NotImplementedError("reshape: not implemented yet");
}

Tensor narrow(const Tensor&, int64_t, int64_t, int64_t) {
  throw NotImplementedError("narrow: not implemented yet");
}

Tensor select(const Tensor&, int64_t, int64_t) {
  throw NotImplementedError("select: not implemented yet");
}

std::vector<Tensor> chunk(const Tensor&, int64_t, int64_t) {
  throw NotImplementedError("chunk: not implemented yet");
}

std::vector<Tensor> split(const Tensor&, int64_t, int64_t) {
  throw NotImplementedError("split: not implemented yet");
}

std::vector<Tensor> split(const Tensor&, const IntList&, int64_t) {
  throw NotImplementedError("split: not implemented yet");
}

Tensor transpose(const Tensor&, int64_t, int64_t) {
  throw NotImplementedError("transpose: not implemented yet");
}

Tensor t(const Tensor&) {
  throw NotImplementedError("t: not implemented yet");
}

Tensor permute(const Tensor&, const IntList&) {
  throw NotImplementedError("permute: not implemented yet");
}

Tensor unsqueeze(const Tensor&, int64_t) {
  throw NotImplementedError("unsqueeze: not implemented yet");
}

Tensor squeeze(const Tensor&) {
  throw NotImplementedError("squeeze: not implemented yet");
}

Tensor squeeze(const Tensor&, int64_t) {
  throw NotImplementedError("squeeze: not implemented yet");
}

Tensor flatten(const Tensor&, int64_t, int64_t) {
  throw NotImplementedError("flatten: not implemented yet");
}

Tensor expand(const Tensor&, const IntList&) {
  throw NotImplementedError("expand: not implemented yet");
}

Tensor contiguous(const Tensor&) {
  throw NotImplementedError("contiguous: not implemented yet");
}

Tensor cat(const std::vector<Tensor>&, int64_t) {
  throw NotImplementedError("cat: not implemented yet");
}

Tensor stack(const std::vector<Tensor>&, int64_t) {
  throw NotImplementedError("stack: not implemented yet");
}

int64_t wrap_dim(int64_t, int64_t, const char*) {
  throw NotImplementedError("wrap_dim: not implemented yet");
}

}  // namespace tandem
