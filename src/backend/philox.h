// Private to the backends: the Philox-4x32-10 counter-based generator
// (Salmon, Moraes, Dror and Shaw, "Parallel Random Numbers: As Easy as 1, 2,
// 3", SC 2011). A block of 128 random bits is a pure function of a 128-bit
// counter and a 64-bit key, so every element of a random fill computes its
// own bits from its index, whatever the launch shape or thread count. Host
// and device code both compile it: the CUDA random fills and both backends'
// sample-keyed masks use it, and tests/backend checks its known answers.
//
//   PhiloxBlock r = philox(counter_of(j), key);  // r.w[0..3]
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define TANDEM_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define TANDEM_HOST_DEVICE inline
#endif

namespace tandem::backend {

struct PhiloxBlock {
  uint32_t w[4];
};

namespace philox_detail {

constexpr uint32_t kMul0 = 0xD2511F53u;
constexpr uint32_t kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u;  // golden ratio
constexpr uint32_t kWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1

TANDEM_HOST_DEVICE void mul_hi_lo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
#if defined(__CUDA_ARCH__)  // one 32-bit multiply each, not a 64-bit one
  hi = __umulhi(a, b);
  lo = a * b;
#else
  const uint64_t product = static_cast<uint64_t>(a) * b;
  hi = static_cast<uint32_t>(product >> 32);
  lo = static_cast<uint32_t>(product);
#endif
}

}  // namespace philox_detail

/// Ten rounds of Philox-4x32 on `counter` under `key` (low word first).
TANDEM_HOST_DEVICE PhiloxBlock philox(PhiloxBlock counter, uint64_t key) {
  using namespace philox_detail;
  uint32_t k0 = static_cast<uint32_t>(key);
  uint32_t k1 = static_cast<uint32_t>(key >> 32);
  uint32_t* c = counter.w;
#if defined(__CUDA_ARCH__)  // the host compiler does not know the pragma
#pragma unroll
#endif
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kWeyl0;
      k1 += kWeyl1;
    }
    uint32_t hi0, lo0, hi1, lo1;
    mul_hi_lo(kMul0, c[0], hi0, lo0);
    mul_hi_lo(kMul1, c[2], hi1, lo1);
    const uint32_t next[4] = {hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0};
    c[0] = next[0];
    c[1] = next[1];
    c[2] = next[2];
    c[3] = next[3];
  }
  return counter;
}

/// The counter of block `index`, with `stream` in the third word (a second
/// draw for the same index uses stream 1, 2, ...).
TANDEM_HOST_DEVICE PhiloxBlock counter_of(uint64_t index, uint32_t stream = 0) {
  return PhiloxBlock{
      {static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), stream, 0}};
}

/// Two words as one 64-bit value.
TANDEM_HOST_DEVICE uint64_t join64(uint32_t hi, uint32_t lo) {
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

/// The top 53 bits of `bits` as a double in [0, 1), as the CPU kernels.
TANDEM_HOST_DEVICE double uniform01(uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

/// The Philox counter of element `c` of a sample-keyed fill (Note [Sample-
/// keyed masks] in backend/cpu/random.cpp): element (o, r, i) of a tensor
/// seen as [outer, rows, inner] around its sample dim, where row r is
/// sample first_row + r of the whole batch. Four elements share a block.
TANDEM_HOST_DEVICE uint64_t sample_keyed_index(
    int64_t o, int64_t global_row, int64_t i, int64_t outer, int64_t inner) {
  return (static_cast<uint64_t>(global_row) * static_cast<uint64_t>(outer) +
          static_cast<uint64_t>(o)) *
             static_cast<uint64_t>(inner) +
         static_cast<uint64_t>(i);
}

/// Word `index % 4` of block `index / 4` under `key` as a draw in [0, 1)
/// (32 bits are plenty for a Bernoulli draw), below `p` or not.
TANDEM_HOST_DEVICE bool keyed_bernoulli(const PhiloxBlock& block,
                                        uint64_t index,
                                        double p) {
  return static_cast<double>(block.w[index % 4]) * 0x1.0p-32 < p;
}

}  // namespace tandem::backend

#undef TANDEM_HOST_DEVICE
