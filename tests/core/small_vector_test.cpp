// SmallVector (IntList's storage): inline up to N, on the heap beyond, and
// the vector operations tandem uses, including inserting a vector's own
// elements into itself and moves that steal or copy.
#include "tandem/core/small_vector.h"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "tandem/core/int_list.h"

namespace tandem {
namespace {

using Small = SmallVector<int64_t, 4>;

std::vector<int64_t> as_vector(const Small& v) { return v.vec(); }

TEST(SmallVector, StaysInlineUpToItsCapacityThenGrows) {
  Small v;
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.capacity(), 4u);
  const int64_t* inline_data = v.data();
  for (int64_t i = 0; i < 4; ++i) v.push_back(i);
  EXPECT_EQ(v.data(), inline_data);
  v.push_back(4);
  EXPECT_NE(v.data(), inline_data);
  EXPECT_GE(v.capacity(), 5u);
  EXPECT_EQ(as_vector(v), (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(SmallVector, PushBackOfItsOwnElementWhileGrowing) {
  Small v = {7, 8, 9, 10};
  v.push_back(v[0]);  // the source moves when the vector grows
  v.push_back(v.back());
  EXPECT_EQ(as_vector(v), (std::vector<int64_t>{7, 8, 9, 10, 7, 7}));
}

TEST(SmallVector, ResizesWithItsOwnElementWhileGrowing) {
  Small v = {7, 8, 9, 10, 11};  // on the heap; growing frees that block
  v.resize(v.capacity() + 3, v[0]);
  for (size_t i = 5; i < v.size(); ++i) EXPECT_EQ(v[i], 7) << "element " << i;
}

TEST(SmallVector, RefusesMoreElementsThanMemoryCanAddress) {
  Small v = {1};
  EXPECT_THROW(v.reserve(SIZE_MAX / 4), std::length_error);
  EXPECT_EQ(as_vector(v), (std::vector<int64_t>{1}));  // unchanged
}

TEST(SmallVector, InsertsAndErases) {
  Small v = {1, 2, 3};
  v.insert(v.begin(), 0);
  v.insert(v.end(), {4, 5});
  EXPECT_EQ(as_vector(v), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  v.insert(v.begin() + 1, 2, int64_t{9});
  EXPECT_EQ(as_vector(v), (std::vector<int64_t>{0, 9, 9, 1, 2, 3, 4, 5}));
  v.erase(v.begin() + 1, v.begin() + 3);
  v.erase(v.begin());
  EXPECT_EQ(as_vector(v), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  v.pop_back();
  v.resize(6, -1);
  EXPECT_EQ(as_vector(v), (std::vector<int64_t>{1, 2, 3, 4, -1, -1}));
  v.resize(2);
  EXPECT_EQ(as_vector(v), (std::vector<int64_t>{1, 2}));
  v.clear();
  EXPECT_TRUE(v.empty());
}

TEST(SmallVector, InsertsARangeOfItsOwnElements) {
  // Every split of the source around the insertion point, inline and on the
  // heap: the elements past the point move while they are being copied.
  for (size_t n : {3u, 6u}) {
    for (size_t at = 0; at <= n; ++at) {
      for (size_t first = 0; first < n; ++first) {
        for (size_t last = first; last <= n; ++last) {
          std::vector<int64_t> expected(n);
          for (size_t i = 0; i < n; ++i) expected[i] = static_cast<int64_t>(i);
          Small v(expected.begin(), expected.end());
          const std::vector<int64_t> source(
              expected.begin() + static_cast<int64_t>(first),
              expected.begin() + static_cast<int64_t>(last));
          expected.insert(
              expected.begin() + static_cast<int64_t>(at), source.begin(), source.end());
          v.insert(v.begin() + at, v.begin() + first, v.begin() + last);
          EXPECT_EQ(as_vector(v), expected)
              << "n " << n << " at " << at << " range [" << first << ", " << last << ")";
        }
      }
    }
  }
}

TEST(SmallVector, CopiesAndMovesInlineAndHeapElements) {
  Small small = {1, 2};
  Small big = {1, 2, 3, 4, 5, 6};
  const int64_t* heap = big.data();

  Small copy = big;
  EXPECT_EQ(copy, big);
  EXPECT_NE(copy.data(), heap);

  Small stolen = std::move(big);
  EXPECT_EQ(stolen.data(), heap);  // the heap block changes hands
  EXPECT_TRUE(big.empty());        // a moved-from SmallVector is empty
  big.push_back(3);                // and usable again
  EXPECT_EQ(as_vector(big), (std::vector<int64_t>{3}));

  Small moved_inline = std::move(small);
  EXPECT_EQ(as_vector(moved_inline), (std::vector<int64_t>{1, 2}));
  moved_inline = stolen;
  EXPECT_EQ(moved_inline, stolen);
  moved_inline = std::move(copy);
  EXPECT_EQ(as_vector(moved_inline), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
}

TEST(SmallVector, ComparesAndConvertsLikeAStdVector) {
  const IntList sizes = {2, 3};
  const std::vector<int64_t> same = {2, 3};
  EXPECT_TRUE(sizes == same);
  EXPECT_TRUE(same == sizes);
  EXPECT_FALSE(sizes == IntList({2, 3, 1}));
  EXPECT_TRUE(IntList({1, 9}) < sizes);
  const std::vector<int64_t> converted = sizes;
  EXPECT_EQ(converted, same);
  EXPECT_EQ(IntList(same), sizes);
  std::ostringstream out;
  out << sizes << ' ' << IntList{};
  EXPECT_EQ(out.str(), "[2, 3] []");
}

TEST(SmallVector, HoldsArrays) {
  SmallVector<std::array<int64_t, 2>, 2> strides;
  for (int64_t i = 0; i < 5; ++i) strides.push_back({i, -i});
  ASSERT_EQ(strides.size(), 5u);
  EXPECT_EQ(strides[4][1], -4);
  EXPECT_EQ(strides.front()[0], 0);
}

}  // namespace
}  // namespace tandem
