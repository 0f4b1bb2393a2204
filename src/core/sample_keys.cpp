#include "tandem/core/sample_keys.h"

namespace tandem {
namespace {

thread_local SampleKeys* current_keys = nullptr;

// SplitMix64's finaliser: nearby inputs (seed + draw number) give unrelated
// keys.
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

SampleKeys::SampleKeys(uint64_t seed,
                       int64_t first_row,
                       int64_t rows,
                       int64_t dim) noexcept
    : seed_(seed),
      first_row_(first_row),
      rows_(rows),
      dim_(dim),
      previous_(current_keys) {
  current_keys = this;
}

SampleKeys::~SampleKeys() { current_keys = previous_; }

SampleKeys* SampleKeys::current() noexcept { return current_keys; }

uint64_t SampleKeys::next_key() noexcept {
  return mix(seed_ + 0x9E3779B97F4A7C15ULL * ++draws_);
}

}  // namespace tandem
