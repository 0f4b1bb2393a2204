#include "tandem/data/sampler.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "tandem/core/error.h"

namespace tandem::data::samplers {
namespace {

// SplitMix64 (Steele, Lea, Flood 2014): fixed by its definition, unlike the
// standard distributions, so orders match across platforms and compilers.
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Uniform in [0, n), without modulo bias.
uint64_t uniform_below(uint64_t& state, uint64_t n) {
  const uint64_t threshold = (0 - n) % n;  // 2^64 mod n
  while (true) {
    const uint64_t r = splitmix64(state);
    if (r >= threshold) return r % n;
  }
}

std::vector<size_t> iota(size_t n) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  return order;
}

uint64_t draw_seed(Generator& generator) {
  auto lock = generator.lock();
  return generator.engine()();
}

}  // namespace

namespace detail {

std::vector<size_t> permutation(size_t n, uint64_t seed, uint64_t epoch) {
  uint64_t epoch_state = epoch;
  uint64_t state = seed ^ splitmix64(epoch_state);
  std::vector<size_t> order = iota(n);
  for (size_t i = n; i > 1; --i) {  // Fisher-Yates
    std::swap(order[i - 1], order[uniform_below(state, i)]);
  }
  return order;
}

}  // namespace detail

void Sampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  epoch_ = next_epoch_;
  if (epoch_after_reset_ == EpochAfterReset::kNext) next_epoch_ = epoch_ + 1;
  order_ = indices(epoch_);
  position_ = 0;
  started_ = true;
}

std::optional<std::vector<size_t>> Sampler::next(size_t batch_size) {
  TANDEM_CHECK(batch_size > 0, "Sampler::next: batch_size must be positive");
  if (!started_) reset();
  if (position_ >= order_.size()) return std::nullopt;
  const size_t end = position_ + std::min(batch_size, order_.size() - position_);
  std::vector<size_t> batch(order_.begin() + static_cast<std::ptrdiff_t>(position_),
                            order_.begin() + static_cast<std::ptrdiff_t>(end));
  position_ = end;
  return batch;
}

std::vector<size_t> SequentialSampler::indices(size_t /*epoch*/) const {
  return iota(dataset_size());
}

RandomSampler::RandomSampler(size_t size) : RandomSampler(size, default_generator()) {}

RandomSampler::RandomSampler(size_t size, Generator& generator)
    : Sampler(size), seed_(draw_seed(generator)) {}

std::vector<size_t> RandomSampler::indices(size_t epoch) const {
  return detail::permutation(dataset_size(), seed_, epoch);
}

DistributedSampler::DistributedSampler(size_t size,
                                       size_t num_replicas,
                                       size_t rank,
                                       bool shuffle,
                                       uint64_t seed,
                                       bool drop_last)
    : Sampler(size),
      num_replicas_(num_replicas),
      rank_(rank),
      shuffle_(shuffle),
      seed_(seed),
      drop_last_(drop_last) {
  TANDEM_CHECK(num_replicas > 0, "DistributedSampler: num_replicas must be positive");
  TANDEM_CHECK(rank < num_replicas,
               "DistributedSampler: rank ",
               rank,
               " is outside [0, ",
               num_replicas,
               ")");
}

size_t DistributedSampler::num_samples() const {
  const size_t n = dataset_size();
  return drop_last_ ? n / num_replicas_ : (n + num_replicas_ - 1) / num_replicas_;
}

size_t DistributedSampler::padded() const {
  // Position i of this replica is position rank + i * R of the padded
  // order; those at or past the dataset size are repeats.
  const size_t n = dataset_size();
  const size_t first_repeat =
      n > rank_ ? (n - rank_ + num_replicas_ - 1) / num_replicas_ : 0;
  return num_samples() > first_repeat ? num_samples() - first_repeat : 0;
}

std::vector<size_t> DistributedSampler::indices(size_t epoch) const {
  const size_t n = dataset_size();
  const std::vector<size_t> order =
      shuffle_ ? detail::permutation(n, seed_, epoch) : iota(n);
  std::vector<size_t> mine(num_samples());
  for (size_t i = 0; i < mine.size(); ++i) {
    mine[i] = order[(rank_ + i * num_replicas_) % n];  // past n: the padding repeats
  }
  return mine;
}

}  // namespace tandem::data::samplers
