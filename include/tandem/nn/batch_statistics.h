// BatchStatistics: what a module says when its forward normalises with
// statistics over the batch it is given (BatchNorm while training, or
// without running statistics), so that one sample's output depends on the
// other samples in the call. nn::DataParallel's invariant mode refuses such
// a module: the cut of the batch into micro-batches would change the
// result (data_parallel_module.h).
//
//   if (auto* s = dynamic_cast<const nn::BatchStatistics*>(&module);
//       s && s->uses_batch_statistics()) { ... }
#pragma once

namespace tandem::nn {

class BatchStatistics {
 public:
  /// Whether forward, as the module is set now, normalises over the batch.
  virtual bool uses_batch_statistics() const = 0;

 protected:
  ~BatchStatistics() = default;
};

}  // namespace tandem::nn
