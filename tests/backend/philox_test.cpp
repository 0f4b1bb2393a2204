// Philox-4x32-10 (src/backend/philox.h) against the known answers that its
// authors publish with Random123 (kat_vectors: counter, key, result), and
// the sample-keyed mask's index rule.
#include <array>
#include <cstdint>

#include <gtest/gtest.h>

#include "backend/philox.h"

namespace tandem::backend {
namespace {

struct KnownAnswer {
  std::array<uint32_t, 4> counter;
  std::array<uint32_t, 2> key;
  std::array<uint32_t, 4> result;
};

TEST(Philox, MatchesThePublishedKnownAnswers) {
  const KnownAnswer answers[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const KnownAnswer& a : answers) {
    const PhiloxBlock counter{{a.counter[0], a.counter[1], a.counter[2], a.counter[3]}};
    const uint64_t key = (static_cast<uint64_t>(a.key[1]) << 32) | a.key[0];
    const PhiloxBlock r = philox(counter, key);
    for (int w = 0; w < 4; ++w) EXPECT_EQ(r.w[w], a.result[w]) << "word " << w;
  }
}

TEST(Philox, SampleKeyedIndexDependsOnTheSampleNotOnItsRowInTheCall) {
  // [outer 2, rows, inner 3]: sample 5's element (1, ., 2) has one index.
  EXPECT_EQ(sample_keyed_index(1, 5, 2, 2, 3), (5u * 2 + 1) * 3 + 2);
  // Distinct samples, positions and outer indices give distinct counters.
  EXPECT_NE(sample_keyed_index(0, 5, 0, 2, 3), sample_keyed_index(1, 5, 0, 2, 3));
  EXPECT_NE(sample_keyed_index(0, 5, 0, 2, 3), sample_keyed_index(0, 6, 0, 2, 3));
}

}  // namespace
}  // namespace tandem::backend
