// Panel products (Note [Panel products] in src/backend/cpu/panel_gemm.cpp):
// right against a float64 product, a row's bits independent of how many
// rows share the call, any strides, and the old output added when asked.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "backend/cpu/panel_gemm.h"
#include "gtest/gtest.h"
#include "tandem/parallel/gradient_tree.h"

namespace tandem::backend::cpu {
namespace {

struct Case {
  int64_t m, k, n;
};

std::vector<float> random_floats(int64_t count, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = uniform(engine);
  return v;
}

class PanelGemm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!panel_gemm_available()) GTEST_SKIP() << "this CPU has no AVX-512F";
  }
};

TEST_F(PanelGemm, MatchesAFloat64ProductForEveryTileAndPanelEdge) {
  for (const Case& c : {Case{1, 1, 1},
                        Case{5, 7, 31},
                        Case{12, 64, 32},
                        Case{13, 100, 33},
                        Case{32, 784, 1024},
                        Case{37, 3, 70},
                        Case{1024, 32, 784}}) {
    const auto a = random_floats(c.m * c.k, 1), b = random_floats(c.k * c.n, 2);
    PackedPanels packed;
    pack_panels(packed, b.data(), c.k, c.n, c.n, 1);
    std::vector<float> out(static_cast<size_t>(c.m * c.n), 99.0f);
    panel_gemm(c.m, a.data(), c.k, 1, packed, false, out.data(), c.n);
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        double want = 0;
        for (int64_t r = 0; r < c.k; ++r) {
          want += static_cast<double>(a[i * c.k + r]) * b[r * c.n + j];
        }
        ASSERT_NEAR(out[i * c.n + j], want, 1e-5 * (1 + std::sqrt(c.k)))
            << c.m << "x" << c.k << "x" << c.n << " at " << i << "," << j;
      }
    }
  }
}

TEST_F(PanelGemm, ARowHasTheSameBitsAloneAndAmongOthers) {
  const int64_t m = 37, k = 300, n = 70;
  const auto a = random_floats(m * k, 3), b = random_floats(k * n, 4);
  PackedPanels packed;
  pack_panels(packed, b.data(), k, n, n, 1);
  std::vector<float> together(static_cast<size_t>(m * n));
  panel_gemm(m, a.data(), k, 1, packed, false, together.data(), n);
  // Every row alone, and the rows in groups that fall into other tiles.
  for (int64_t group : {1, 3, 5, 13}) {
    std::vector<float> apart(static_cast<size_t>(m * n));
    for (int64_t first = 0; first < m; first += group) {
      const int64_t rows = std::min(group, m - first);
      panel_gemm(
          rows, a.data() + first * k, k, 1, packed, false, apart.data() + first * n, n);
    }
    EXPECT_EQ(std::memcmp(apart.data(), together.data(), apart.size() * sizeof(float)), 0)
        << "rows in groups of " << group;
  }
}

TEST_F(PanelGemm, ReadsTransposedOperandsAndAddsTheOldOutput) {
  const int64_t m = 20, k = 17, n = 40;
  const auto a = random_floats(m * k, 5), b = random_floats(k * n, 6);
  // a stored transposed (k x m), b stored transposed (n x k).
  std::vector<float> at(static_cast<size_t>(k * m)), bt(static_cast<size_t>(n * k));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t r = 0; r < k; ++r) at[r * m + i] = a[i * k + r];
  for (int64_t r = 0; r < k; ++r)
    for (int64_t j = 0; j < n; ++j) bt[j * k + r] = b[r * n + j];
  PackedPanels plain, transposed;
  pack_panels(plain, b.data(), k, n, n, 1);
  pack_panels(transposed, bt.data(), k, n, 1, k);
  std::vector<float> want(static_cast<size_t>(m * n)), got(static_cast<size_t>(m * n));
  panel_gemm(m, a.data(), k, 1, plain, false, want.data(), n);
  panel_gemm(m, at.data(), 1, m, transposed, false, got.data(), n);
  EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0);

  std::vector<float> sum(static_cast<size_t>(m * n), 0.25f);
  panel_gemm(m, a.data(), k, 1, plain, true, sum.data(), n);
  for (size_t i = 0; i < sum.size(); ++i) ASSERT_EQ(sum[i], want[i] + 0.25f) << i;
}

TEST_F(PanelGemm, ALargeOutputWrittenPastTheCachesIsTheSame) {
  // 1024 x 1024 floats: 4 MB, above the size from which stores stream.
  const int64_t m = 1024, k = 8, n = 1024;
  const auto a = random_floats(m * k, 7), b = random_floats(k * n, 8);
  PackedPanels packed;
  pack_panels(packed, b.data(), k, n, n, 1);
  // 64-byte aligned, as the caching allocator's blocks are: the stores stream.
  std::unique_ptr<float[], void (*)(float*)> big(
      static_cast<float*>(std::aligned_alloc(64, m * n * sizeof(float))),
      [](float* p) { std::free(p); });
  panel_gemm(m, a.data(), k, 1, packed, false, big.get(), n);
  std::vector<float> row(static_cast<size_t>(n));
  for (int64_t i : {int64_t{0}, int64_t{511}, m - 1}) {
    panel_gemm(1, a.data() + i * k, k, 1, packed, false, row.data(), n);
    EXPECT_EQ(std::memcmp(row.data(), big.get() + i * n, n * sizeof(float)), 0) << i;
  }
}

TEST_F(PanelGemm, RepackingIntoSmallerPanelsReusesTheMemory) {
  PackedPanels packed;
  const auto b = random_floats(64 * 64, 9);
  pack_panels(packed, b.data(), 64, 64, 64, 1);
  const float* first = packed.data.get();
  pack_panels(packed, b.data(), 16, 40, 64, 1);
  EXPECT_EQ(packed.data.get(), first);
  EXPECT_EQ(packed.k, 16);
  EXPECT_EQ(packed.n, 40);
  EXPECT_EQ(packed.panels(), 2);
}

TEST(PanelTree, SplitsWhereInvariantModesTreeDoes) {
  for (int64_t lo : {0, 3, 8}) {
    for (int64_t size = 2; size <= 40; ++size) {
      EXPECT_EQ(leaf_tree_split(lo, lo + size), parallel::tree_split(lo, lo + size))
          << lo << " + " << size;
    }
  }
}

// The leaves' products one by one, summed in the tree.
std::vector<float> tree_of_products(int64_t m,
                                    const std::vector<float>& at,  // k x m
                                    const std::vector<float>& b,   // k x n
                                    int64_t n,
                                    const std::vector<int64_t>& rows,
                                    size_t lo,
                                    size_t hi,
                                    int64_t first) {
  if (hi - lo == 1) {
    PackedPanels packed;
    pack_panels(packed, b.data() + first * n, rows[lo], n, n, 1);
    std::vector<float> out(static_cast<size_t>(m * n));
    panel_gemm(m, at.data() + first * m, 1, m, packed, false, out.data(), n);
    return out;
  }
  const auto mid = static_cast<size_t>(
      leaf_tree_split(static_cast<int64_t>(lo), static_cast<int64_t>(hi)));
  int64_t right_first = first;
  for (size_t j = lo; j < mid; ++j) right_first += rows[j];
  std::vector<float> left = tree_of_products(m, at, b, n, rows, lo, mid, first);
  const std::vector<float> right =
      tree_of_products(m, at, b, n, rows, mid, hi, right_first);
  for (size_t x = 0; x < left.size(); ++x) left[x] += right[x];
  return left;
}

TEST_F(PanelGemm, ATreeProductHasTheBitsOfItsLeavesSummedInTheTree) {
  const int64_t m = 29, n = 45;
  for (const std::vector<int64_t>& rows : std::vector<std::vector<int64_t>>{
           {7}, {8, 8}, {8, 8, 8}, {8, 8, 8, 8, 8}, {8, 8, 8, 8, 8, 8, 8, 3}}) {
    int64_t k = 0;
    for (int64_t r : rows) k += r;
    const auto at = random_floats(k * m, 10), b = random_floats(k * n, 11);
    PackedPanels packed;
    pack_panels(packed, b.data(), k, n, n, 1);
    std::vector<float> got(static_cast<size_t>(m * n), 5.0f);
    panel_gemm_tree(m, at.data(), 1, m, packed, rows, got.data(), n);
    const std::vector<float> want =
        tree_of_products(m, at, b, n, rows, 0, rows.size(), 0);
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
        << rows.size() << " leaves";
  }
}

}  // namespace
}  // namespace tandem::backend::cpu
