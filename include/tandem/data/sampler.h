// Samplers: the order in which a loader visits a dataset's indices.
//
// Each pass over the data (an epoch) has its own order, and that order is
// a pure function of the sampler's settings and the epoch number:
// indices(epoch) gives it without touching any state, so a run resumed
// from a checkpoint that saved (seed, epoch, batch) sees exactly the same
// batches. LibTorch's stepping interface sits on top: reset() starts the
// next pass (epoch 0, then 1, 2, ...; set_epoch picks the next one) and
// next(n) hands out its indices n at a time.
//
//   tandem::data::samplers::RandomSampler sampler(/*size=*/60000, /*seed=*/42);
//   std::vector<size_t> order = sampler.indices(/*epoch=*/3);  // always the same
//
//   DistributedSampler shard(60000, /*num_replicas=*/4, /*rank=*/1);
//   shard.num_samples();   // 15000; shard.padded() of them repeat others'
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "tandem/core/generator.h"

namespace tandem::data::samplers {

class Sampler {
 public:
  explicit Sampler(size_t size) : size_(size) {}
  Sampler(const Sampler&) = default;
  Sampler(Sampler&&) noexcept = default;
  Sampler& operator=(const Sampler&) = default;
  Sampler& operator=(Sampler&&) noexcept = default;
  virtual ~Sampler() = default;

  /// The order of the pass for `epoch` (num_samples() indices, each below
  /// dataset_size()).
  virtual std::vector<size_t> indices(size_t epoch) const = 0;
  /// How many indices a pass yields.
  virtual size_t num_samples() const = 0;
  size_t dataset_size() const { return size_; }

  /// Starts the next pass (LibTorch's reset); `new_size` changes the
  /// dataset size first. The pass after epoch e is epoch e + 1, unless the
  /// sampler keeps its epoch (see EpochAfterReset) or set_epoch says.
  void reset(std::optional<size_t> new_size = std::nullopt);
  /// Up to `batch_size` more indices of the pass; nullopt once it is done.
  std::optional<std::vector<size_t>> next(size_t batch_size);
  /// The epoch the next reset() starts (like PyTorch's set_epoch).
  void set_epoch(size_t epoch) { next_epoch_ = epoch; }
  /// The epoch of the pass in progress (or of the next one, before any).
  size_t epoch() const { return started_ ? epoch_ : next_epoch_; }

 protected:
  /// What reset() starts after a pass: the next epoch (tandem's samplers,
  /// so that each pass of a loop over a loader has its own order), or the
  /// same one until set_epoch changes it (LibTorch's distributed samplers).
  enum class EpochAfterReset { kNext, kSame };
  Sampler(size_t size, EpochAfterReset rule) : size_(size), epoch_after_reset_(rule) {}

 private:
  size_t size_;
  EpochAfterReset epoch_after_reset_ = EpochAfterReset::kNext;
  std::vector<size_t> order_;
  size_t position_ = 0;
  size_t epoch_ = 0;
  size_t next_epoch_ = 0;
  bool started_ = false;
};

/// 0, 1, ..., size - 1 in every epoch.
class SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(size_t size) : Sampler(size) {}
  std::vector<size_t> indices(size_t epoch) const override;
  size_t num_samples() const override { return dataset_size(); }
};

/// A new random permutation of 0..size-1 in each epoch, from (seed, epoch).
class RandomSampler : public Sampler {
 public:
  /// Seeded from the default generator (reproducible after manual_seed).
  explicit RandomSampler(size_t size);
  RandomSampler(size_t size, uint64_t seed) : Sampler(size), seed_(seed) {}
  /// Seeded from one draw of `generator`.
  RandomSampler(size_t size, Generator& generator);

  std::vector<size_t> indices(size_t epoch) const override;
  size_t num_samples() const override { return dataset_size(); }
  uint64_t seed() const { return seed_; }

 private:
  uint64_t seed_;
};

/// One replica's share of the data, as PyTorch's DistributedSampler splits
/// it: the epoch's order (shuffled from (seed, epoch), or 0..size-1) is
/// dealt out round-robin, replica r taking positions r, r + R, r + 2R, ...
/// Unless drop_last, the order is first padded by repeating its start so
/// that every replica gets the same count; padded() says how many of this
/// replica's samples are such repeats: they are the last ones of its pass,
/// and an evaluation should not count them. With drop_last the tail that
/// does not divide evenly is left out instead.
class DistributedSampler : public Sampler {
 public:
  DistributedSampler(size_t size,
                     size_t num_replicas,
                     size_t rank,
                     bool shuffle = true,
                     uint64_t seed = 0,
                     bool drop_last = false);

  std::vector<size_t> indices(size_t epoch) const override;
  /// This replica's count per pass (the same for every replica).
  size_t num_samples() const override;
  /// How many of this replica's samples, at the end of its pass, repeat
  /// samples given out already.
  size_t padded() const;

  size_t num_replicas() const { return num_replicas_; }
  size_t rank() const { return rank_; }

 private:
  size_t num_replicas_;
  size_t rank_;
  bool shuffle_;
  uint64_t seed_;
  bool drop_last_;
};

namespace detail {
/// A permutation of 0..n-1 that depends only on (seed, epoch), the same on
/// every platform.
std::vector<size_t> permutation(size_t n, uint64_t seed, uint64_t epoch);
}  // namespace detail

}  // namespace tandem::data::samplers
