// Products for micro-batches. While a MicroBatchProducts scope is alive on
// a thread, linear() multiplies float inputs on the CPU by weights it packs
// once per step and keeps, instead of calling BLAS, which repacks them at
// every call (Note [Panel products] in backend/cpu/panel_gemm.cpp; on CPUs
// without AVX-512F the scope changes nothing). Invariant mode opens one
// around each micro-batch's forward, all of one step's with the same step
// number, so a device packs each weight once per step rather than once per
// micro-batch. A row's result depends on its own values only, as with the
// products it replaces, so micro-batches give the same bits on any device.
//
//   const uint64_t step = tandem::MicroBatchProducts::next_step();
//   tandem::MicroBatchProducts products(step);   // on the replica's thread
//   auto y = tandem::linear(x, w, b);            // w packed once per step
#pragma once

#include <cstdint>
#include <vector>

namespace tandem {

class MicroBatchProducts {
 public:
  /// `leaf_rows`, when given, are the rows of the micro-batches the scope's
  /// forward runs together (a whole subtree of invariant mode's gradient
  /// tree): linear() then sums its weight's gradient over them in that
  /// tree, with the bits of running them one by one.
  explicit MicroBatchProducts(uint64_t step,
                              std::vector<int64_t> leaf_rows = {}) noexcept;
  ~MicroBatchProducts();
  MicroBatchProducts(const MicroBatchProducts&) = delete;
  MicroBatchProducts& operator=(const MicroBatchProducts&) = delete;

  /// The innermost scope alive on this thread, or null.
  static const MicroBatchProducts* current() noexcept;
  /// A step number no earlier call returned.
  static uint64_t next_step() noexcept;

  /// Weights packed under another step are packed again.
  uint64_t step() const noexcept { return step_; }
  const std::vector<int64_t>& leaf_rows() const noexcept { return leaf_rows_; }

 private:
  uint64_t step_;
  std::vector<int64_t> leaf_rows_;
  const MicroBatchProducts* previous_;
};

}  // namespace tandem
