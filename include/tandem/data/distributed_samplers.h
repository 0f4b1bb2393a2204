// LibTorch's distributed samplers, DistributedRandomSampler and
// DistributedSequentialSampler: its constructors, its split of the data
// between replicas and its reset() that keeps the epoch, so that a LibTorch
// program ports by renaming torch:: to tandem::. (PyTorch's Python
// DistributedSampler, which splits otherwise, is samplers::DistributedSampler
// in sampler.h.)
//
//   namespace samplers = tandem::data::samplers;
//   // rank 1 of 4: 15000 of the 60000 indices per pass, none shared
//   samplers::DistributedRandomSampler sampler(
//       60000, /*num_replicas=*/4, /*rank=*/1, /*allow_duplicates=*/false);
//   auto loader = tandem::data::make_data_loader(std::move(dataset), sampler, 16);
//   sampler.indices(/*epoch=*/3);  // the pass of epoch 3, a pure function
//
// Note [LibTorch's distributed split]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// With R replicas, each takes local = ceil(size / R) indices per pass
// (floor(size / R) without allow_duplicates), as one block: replica r the
// positions [r * local, (r + 1) * local) of a list of local * R indices.
// - Random: the list is 0, 1, ..., size - 1, cut to local * R entries or
//   padded with 0, 1, ... (the duplicates), then shuffled as a whole. So the
//   indices a cut leaves out are always the last ones, in every epoch, and a
//   duplicate may fall to any replica, even twice to one. (Python's sampler
//   shuffles first, then pads or cuts, and deals round robin.)
// - Sequential: replica r counts up from r * local, wrapping past the end
//   to 0, 1, ...: the duplicates are the first indices, on the last replica.
// - One replica: every index once, whatever allow_duplicates says.
// - reset() keeps the epoch: every pass has the order of the epoch that
//   set_epoch set (0 at first). A LibTorch program calls set_epoch(e) for a
//   new shuffle; one that does not gets one order every pass, here as there.
// The shuffle is LibTorch's: std::shuffle driven by std::mt19937 seeded with
// the epoch, the same on every replica (which is what makes the blocks
// disjoint). mt19937 is fixed by the C++ standard, but std::shuffle is the
// standard library's own: built against the same library (libstdc++, as
// Debian's LibTorch), the orders are LibTorch's bit for bit, which
// tests/data/distributed_samplers_test.cpp checks against LibTorch 1.13;
// with another library they are other permutations with the same shares,
// disjointness, coverage and padding. One deliberate difference: LibTorch
// pads with index i - size at position i, which leaves the dataset when the
// padding is longer than the data (2 examples on 5 replicas); here it is
// i % size, the same wherever LibTorch's is a valid index.
#pragma once

#include <cstddef>
#include <vector>

#include "tandem/data/sampler.h"

namespace tandem::data::samplers {

/// What LibTorch's two distributed samplers share (LibTorch's
/// DistributedSampler<> base): the block split of Note [LibTorch's
/// distributed split], and an epoch that only set_epoch changes.
class DistributedBlockSampler : public Sampler {
 public:
  /// This replica's count per pass, the same on every replica.
  size_t num_samples() const override;
  size_t num_replicas() const { return num_replicas_; }
  size_t rank() const { return rank_; }
  bool allow_duplicates() const { return allow_duplicates_; }

 protected:
  /// `name` is the sampler's, for the errors.
  DistributedBlockSampler(const char* name,
                          size_t size,
                          size_t num_replicas,
                          size_t rank,
                          bool allow_duplicates);
  /// This replica's first position in the list of local * R indices.
  size_t first_position() const { return rank_ * num_samples(); }

 private:
  size_t num_replicas_;
  size_t rank_;
  bool allow_duplicates_;
};

/// This replica's block of the epoch's shuffled, padded (or cut) indices.
class DistributedRandomSampler : public DistributedBlockSampler {
 public:
  explicit DistributedRandomSampler(size_t size,
                                    size_t num_replicas = 1,
                                    size_t rank = 0,
                                    bool allow_duplicates = true)
      : DistributedBlockSampler(
            "DistributedRandomSampler", size, num_replicas, rank, allow_duplicates) {}

  std::vector<size_t> indices(size_t epoch) const override;
};

/// This replica's block of 0, 1, ..., size - 1 (wrapping to 0 to pad), the
/// same in every epoch.
class DistributedSequentialSampler : public DistributedBlockSampler {
 public:
  explicit DistributedSequentialSampler(size_t size,
                                        size_t num_replicas = 1,
                                        size_t rank = 0,
                                        bool allow_duplicates = true)
      : DistributedBlockSampler(
            "DistributedSequentialSampler", size, num_replicas, rank, allow_duplicates) {}

  std::vector<size_t> indices(size_t epoch) const override;
};

}  // namespace tandem::data::samplers
