#include "tandem/data/distributed_samplers.h"

#include <algorithm>
#include <cstddef>
#include <random>

#include "tandem/core/error.h"

namespace tandem::data::samplers {

DistributedBlockSampler::DistributedBlockSampler(const char* name,
                                                 size_t size,
                                                 size_t num_replicas,
                                                 size_t rank,
                                                 bool allow_duplicates)
    : Sampler(size, EpochAfterReset::kSame),
      num_replicas_(num_replicas),
      rank_(rank),
      allow_duplicates_(allow_duplicates) {
  TANDEM_CHECK(num_replicas > 0, name, ": num_replicas must be positive");
  TANDEM_CHECK(
      rank < num_replicas, name, ": rank ", rank, " is outside [0, ", num_replicas, ")");
}

size_t DistributedBlockSampler::num_samples() const {
  const size_t n = dataset_size();
  return allow_duplicates_ ? (n + num_replicas_ - 1) / num_replicas_ : n / num_replicas_;
}

std::vector<size_t> DistributedRandomSampler::indices(size_t epoch) const {
  // See Note [LibTorch's distributed split].
  const size_t n = dataset_size();
  std::vector<size_t> all(num_samples() * num_replicas());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i < n ? i : i % n;
  std::mt19937 engine(static_cast<std::mt19937::result_type>(epoch));
  std::shuffle(all.begin(), all.end(), engine);
  const auto first = all.begin() + static_cast<std::ptrdiff_t>(first_position());
  return {first, first + static_cast<std::ptrdiff_t>(num_samples())};
}

std::vector<size_t> DistributedSequentialSampler::indices(size_t /*epoch*/) const {
  std::vector<size_t> mine(num_samples());
  for (size_t i = 0; i < mine.size(); ++i) {
    mine[i] = (first_position() + i) % dataset_size();  // wraps to pad
  }
  return mine;
}

}  // namespace tandem::data::samplers
