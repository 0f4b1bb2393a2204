// Sample-keyed random masks. While a SampleKeys scope is alive on a thread,
// a random mask drawn over a batch (dropout's) takes each sample's numbers
// from a counter-based stream keyed by the scope's seed, the draw's number
// within the scope and the sample's index in the whole batch, instead of
// from the default generator. nn::DataParallel opens one around each
// replica's forward (each micro-batch's in invariant mode), so a sample gets
// the same mask whichever device, micro-batch or thread computes it (Note
// [Sample-keyed masks] in backend/cpu/random.cpp).
//
// The scope's piece of the batch holds `rows` samples. A masked tensor with
// rows along `dim` is keyed row by row; one with k * rows there (attention
// weights laid out [batch * heads, ...]) takes each run of k rows as one
// sample's; one of any other size is not laid out by sample and is keyed as
// a whole, by the piece (Note [What a mask is keyed by] in ops/dropout.cpp).
//
//   tandem::SampleKeys keys(seed, /*first_row=*/64, /*rows=*/32, /*dim=*/0);
//   auto y = tandem::dropout(x, 0.5, true);  // x's rows are samples 64..95
#pragma once

#include <cstdint>

namespace tandem {

class SampleKeys {
 public:
  /// The piece of the batch the scope runs holds its samples first_row to
  /// first_row + rows - 1 along `dim` (rows > 0).
  SampleKeys(uint64_t seed, int64_t first_row, int64_t rows, int64_t dim) noexcept;
  ~SampleKeys();
  SampleKeys(const SampleKeys&) = delete;
  SampleKeys& operator=(const SampleKeys&) = delete;

  /// The innermost scope alive on this thread, or null.
  static SampleKeys* current() noexcept;

  /// The key of the scope's next draw: the n-th draw of every scope with
  /// the same seed gets the same key.
  uint64_t next_key() noexcept;
  int64_t first_row() const noexcept { return first_row_; }
  int64_t rows() const noexcept { return rows_; }
  int64_t dim() const noexcept { return dim_; }

 private:
  uint64_t seed_;
  int64_t first_row_;
  int64_t rows_;
  int64_t dim_;
  uint64_t draws_ = 0;
  SampleKeys* previous_;
};

}  // namespace tandem
