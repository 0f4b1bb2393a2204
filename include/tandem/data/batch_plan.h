// How a pass's index order splits into batches for the DataLoader: batch b
// holds positions [b * batch_size, (b + 1) * batch_size) of the order; the
// last batch is shorter, or left out with drop_last. A sharded loader takes
// split(batch(b), index, count) of each batch: the batch's positions split as
// torch.tensor_split splits rows, so the parts of all shards, in order, are
// the batch.
//
//   detail::BatchPlan plan(sampler.indices(epoch), /*batch_size=*/64,
//                          /*drop_last=*/false);
//   std::span<const size_t> first = plan.batch(0);
//   std::span<const size_t> mine = detail::BatchPlan::split(first, /*index=*/1,
//                                                            /*count=*/4);
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "tandem/core/error.h"

namespace tandem::data::detail {

class BatchPlan {
 public:
  BatchPlan(std::vector<size_t> order, size_t batch_size, bool drop_last)
      : order_(std::move(order)),
        batch_size_(batch_size),
        num_batches_(count(order_.size(), batch_size, drop_last)) {}

  /// Batches a pass of `num_samples` indices makes.
  static size_t count(size_t num_samples, size_t batch_size, bool drop_last) {
    TANDEM_CHECK(batch_size > 0, "data loader: batch_size must be positive");
    return drop_last ? num_samples / batch_size
                     : (num_samples + batch_size - 1) / batch_size;
  }

  size_t num_batches() const { return num_batches_; }
  std::span<const size_t> batch(size_t b) const {
    const size_t start = b * batch_size_;
    return std::span<const size_t>(order_).subspan(
        start, std::min(batch_size_, order_.size() - start));
  }

  /// Part `index` of `count` of `rows`: `count` consecutive parts whose
  /// sizes differ by at most one, the larger ones first, as
  /// torch.tensor_split(rows, count)[index]. A part is empty when `rows`
  /// has fewer than `count` entries and index >= rows.size().
  static std::span<const size_t> split(std::span<const size_t> rows,
                                       size_t index,
                                       size_t count) {
    TANDEM_CHECK(count > 0 && index < count,
                 "data loader: shard ",
                 index,
                 " of ",
                 count,
                 " does not exist (need 0 <= index < count)");
    const size_t base = rows.size() / count;
    const size_t larger = rows.size() % count;  // parts with base + 1 rows
    const size_t start = index * base + std::min(index, larger);
    return rows.subspan(start, base + (index < larger ? 1 : 0));
  }

  /// Part `index` of `rows` cut into parts[0], parts[1], ... entries in
  /// order (every part >= 0, summing to rows.size(): checked).
  static std::span<const size_t> split(std::span<const size_t> rows,
                                       size_t index,
                                       const std::vector<int64_t>& parts) {
    TANDEM_CHECK(index < parts.size(),
                 "data loader: shard ",
                 index,
                 " has no part in a cut of ",
                 parts.size());
    size_t start = 0, total = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      TANDEM_CHECK(
          parts[i] >= 0, "data loader: the shard cut has a negative part ", parts[i]);
      if (i < index) start += static_cast<size_t>(parts[i]);
      total += static_cast<size_t>(parts[i]);
    }
    TANDEM_CHECK(total == rows.size(),
                 "data loader: the shard cut's parts sum to ",
                 total,
                 " but the batch has ",
                 rows.size(),
                 " rows");
    return rows.subspan(start, static_cast<size_t>(parts[index]));
  }

 private:
  std::vector<size_t> order_;
  size_t batch_size_;
  size_t num_batches_;
};

}  // namespace tandem::data::detail
