// Pinned batches: what the DataLoader's pin_memory option does to each
// batch a worker makes, so that the training thread's copies of it to a GPU
// can be asynchronous (to(device, /*non_blocking=*/true)).
//
//   auto loader = make_data_loader(dataset, DataLoaderOptions().batch_size(256)
//                                               .workers(2).pin_memory(true));
//   for (const Batch& batch : loader->epoch(0)) {
//     Tensor x = batch.data.to(gpu, /*non_blocking=*/true);  // batch.data.is_pinned()
//   }
//
// Without a CUDA device there is nothing to pin for: a loader asked to pin
// warns once, when it is made, and gives ordinary batches (as PyTorch's
// DataLoader does).
#pragma once

#include <ranges>
#include <type_traits>

#include "tandem/core/tensor.h"

namespace tandem::data::detail {

/// Whether a loader made with pin_memory(true) can pin its batches: true
/// with a CUDA device; otherwise warns that `loader` ignores pin_memory,
/// and why, and returns false.
bool pin_memory_usable(const char* loader);

/// Pins every CPU tensor in `batch`: a Tensor, the data and target of an
/// Example or Batch, the items of a vector (recursively). Anything else
/// stays as it is.
template <typename BatchType>
void pin_batch(BatchType& batch) {
  if constexpr (std::is_same_v<BatchType, Tensor>) {
    if (batch.defined() && batch.is_cpu()) batch = batch.pin_memory();
  } else if constexpr (requires { batch.data; }) {
    pin_batch(batch.data);
    if constexpr (requires { batch.target; }) pin_batch(batch.target);
  } else if constexpr (std::ranges::range<BatchType>) {
    for (auto& item : batch) pin_batch(item);
  }
}

}  // namespace tandem::data::detail
