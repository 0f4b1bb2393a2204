// Random generators: seeding reproduces streams, explicit generators are
// independent of the default one, saved states resume exactly, and rand,
// randn and randint have the right ranges and moments.
#include <cmath>
#include <set>
#include <vector>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::throws_with;

// The values of any tensor as doubles, for checks without reduction ops.
std::vector<double> values(const Tensor& t) {
  Tensor d = t.to(kFloat64).contiguous();
  const double* p = d.data_ptr<double>();
  return {p, p + d.numel()};
}

TEST(Random, ManualSeedReproducesEverySampler) {
  auto draw = [] {
    std::vector<Tensor> out;
    out.push_back(rand({50}));
    out.push_back(randn({51}, kFloat64));
    out.push_back(randint(0, 1000, {52}));
    out.push_back(dropout(ones({53}), 0.5, /*train=*/true));
    return out;
  };
  manual_seed(123);
  auto first = draw();
  manual_seed(123);
  auto second = draw();
  auto third = draw();  // the stream moved on
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_TRUE(equal(first[i], second[i])) << "sampler " << i;
    EXPECT_FALSE(equal(second[i], third[i])) << "sampler " << i;
  }
  EXPECT_EQ(default_generator().initial_seed(), 123u);
}

TEST(Random, DifferentSeedsDiffer) {
  manual_seed(1);
  Tensor a = rand({100});
  manual_seed(2);
  Tensor b = rand({100});
  EXPECT_FALSE(equal(a, b));
}

TEST(Random, ExplicitGeneratorIsIndependentOfTheDefault) {
  Generator g(7);
  Tensor alone = randn({20}, g);
  // The same seed, with draws from the default generator interleaved.
  Generator h(7);
  manual_seed(99);
  Tensor before = rand({20});
  Tensor first = randn({10}, h);
  rand({1000});
  Tensor second = randn({10}, h);
  std::vector<double> want = values(alone);
  std::vector<double> got = values(first);
  for (double v : values(second)) got.push_back(v);
  EXPECT_EQ(got, want);
  // ...and drawing from h left the default stream untouched.
  manual_seed(99);
  EXPECT_TRUE(equal(rand({20}), before));
}

TEST(Random, StateRoundTripContinuesTheStream) {
  Generator g(42);
  randn({7}, g);
  std::string state = g.get_state();
  Tensor expected = rand({30}, g);
  Tensor expected_ints = randint(0, 10, {30}, g);
  rand({5}, g);
  g.set_state(state);
  EXPECT_TRUE(equal(rand({30}, g), expected));
  EXPECT_TRUE(equal(randint(0, 10, {30}, g), expected_ints));
  EXPECT_EQ(g.initial_seed(), 42u);

  Generator other;
  other.set_state(state);
  EXPECT_TRUE(equal(rand({30}, other), expected));
  EXPECT_TRUE(throws_with([&] { other.set_state("not a state"); },
                          "generator: set_state got a malformed state"));
}

TEST(Random, RandIsInTheHalfOpenUnitInterval) {
  Generator g(5);
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    Tensor x = rand({100000}, g, dtype);
    EXPECT_EQ(x.dtype(), dtype);
    double total = 0;
    for (double v : values(x)) {
      ASSERT_GE(v, 0.0);
      ASSERT_LT(v, 1.0);
      total += v;
    }
    EXPECT_NEAR(total / 100000, 0.5, 0.005);
  }
}

TEST(Random, RandintStaysInRangeAndHitsEveryValue) {
  Generator g(9);
  Tensor x = randint(-3, 4, {5000}, g);
  EXPECT_EQ(x.dtype(), kInt64);
  std::set<double> seen;
  for (double v : values(x)) {
    ASSERT_GE(v, -3);
    ASSERT_LT(v, 4);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 7u);
  Tensor small = randint(0, 2, {1000}, g, kFloat32);
  EXPECT_EQ(small.dtype(), kFloat32);
  std::set<double> bits;
  for (double v : values(small)) bits.insert(v);
  EXPECT_EQ(bits, (std::set<double>{0, 1}));
}

TEST(Random, RandnHasZeroMeanAndUnitStd) {
  Generator g(2024);
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    std::vector<double> v = values(randn({100000}, g, dtype));
    double mean = 0, sq = 0;
    for (double e : v) mean += e;
    mean /= static_cast<double>(v.size());
    for (double e : v) sq += (e - mean) * (e - mean);
    double std = std::sqrt(sq / static_cast<double>(v.size() - 1));
    // Standard errors: 0.0032 for the mean, 0.0022 for the std.
    EXPECT_NEAR(mean, 0.0, 0.015) << dtype;
    EXPECT_NEAR(std, 1.0, 0.011) << dtype;
  }
}

TEST(Random, Errors) {
  EXPECT_TRUE(throws_with([] { rand({3}, kInt64); },
                          "rand: expected 'dtype' to be float32 or float64, got int64"));
  EXPECT_TRUE(throws_with([] { randn({3}, kUInt8); },
                          "randn: expected 'dtype' to be float32 or float64, got uint8"));
  EXPECT_TRUE(throws_with([] { randint(5, 5, {3}); }, "randint: expected low < high"));
}

}  // namespace
}  // namespace tandem
