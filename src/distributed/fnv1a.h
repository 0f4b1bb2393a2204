// Private: the 64-bit FNV-1a hash, for comparing what ranks hold (model
// descriptions, parameter bytes) with one small collective.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tandem::distributed::detail {

inline constexpr uint64_t kFnv1aOffset = 14695981039346656037ull;

/// Hashes `size` bytes at `data`, continuing from `hash` (to hash several
/// pieces as one).
inline uint64_t fnv1a(const void* data, size_t size, uint64_t hash = kFnv1aOffset) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  return hash;
}

}  // namespace tandem::distributed::detail
