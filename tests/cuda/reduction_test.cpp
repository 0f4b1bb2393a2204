// Reductions and softmax on the device under test, forward: sum, mean, max,
// min, argmax, argmin over everything, one dim or several, with keepdim, in
// every dtype the CPU takes; exact results where float32 can be exact (sums
// of small whole numbers, so a dropped or doubled element shows); ties
// resolved to the first index; NaN; empty inputs; and softmax rows that
// span many blocks or hold -inf.
#include <cmath>
#include <limits>

#include "cuda/cuda_testing.h"

namespace tandem {
namespace {

using testing::close_to;
using testing::device_under_test;
using testing::identical;
using testing::to_dut;

class CudaReduction : public testing::CudaTest {};

// Reference: the same reduction on the CPU, in float64 for floating inputs.
void expect_reduction(const std::string& what,
                      const std::function<Tensor(const Tensor&)>& fn,
                      const Tensor& x) {
  const Tensor got = fn(to_dut(x));
  const Tensor want = fn(x.is_floating_point() ? x.to(kFloat64) : x);
  EXPECT_EQ(got.device(), device_under_test()) << what;
  if (x.is_floating_point() && got.is_floating_point()) {
    EXPECT_EQ(got.dtype(), x.dtype()) << what;
  } else {
    EXPECT_EQ(got.dtype(), want.dtype()) << what;
  }
  EXPECT_TRUE(close_to(got, want)) << what;
}

TEST_F(CudaReduction, SumAndMeanOverDimsAndShapes) {
  struct Shape {
    IntList sizes;
    std::vector<IntList> dims;
  };
  const std::vector<Shape> shapes = {
      {{37, 129}, {{0}, {1}, {0, 1}, {-1}}},
      {{13, 257, 9}, {{0}, {1}, {2}, {0, 2}, {1, 2}, {0, 1, 2}}},
      {{4096, 256}, {{0}, {1}}},
      {{3, 1 << 18}, {{1}, {0}}},
      {{1 << 18, 3}, {{0}, {1}}},
      {{1, 1, 5}, {{0}, {1}, {0, 1}}},
      {{0, 4}, {{0}, {1}}},
  };
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    for (const Shape& s : shapes) {
      // Positive values: the sums do not cancel, so float32's relative
      // tolerance applies to every element.
      const Tensor x = testing::uniform(s.sizes, gen, 0.5, 2).to(dtype);
      const std::string shape = detail::str(dtype, " ", s.sizes);
      expect_reduction(
          "sum " + shape, [](const Tensor& t) { return t.sum(); }, x);
      expect_reduction(
          "mean " + shape, [](const Tensor& t) { return t.mean(); }, x);
      for (const IntList& dims : s.dims) {
        for (bool keepdim : {false, true}) {
          const std::string what =
              detail::str(shape, " dims ", dims, " keepdim ", keepdim);
          expect_reduction(
              "sum " + what, [&](const Tensor& t) { return sum(t, dims, keepdim); }, x);
          if (s.sizes[dims[0] < 0 ? dims[0] + static_cast<int64_t>(s.sizes.size())
                                  : dims[0]] > 0) {
            expect_reduction(
                "mean " + what,
                [&](const Tensor& t) { return mean(t, dims, keepdim); },
                x);
          }
          // The same reduction of a transposed view.
          if (s.sizes.size() == 2) {
            expect_reduction(
                "sum transposed " + what,
                [&](const Tensor& t) { return sum(t.t(), dims, keepdim); },
                x);
          }
        }
      }
    }
  }
}

TEST_F(CudaReduction, SumsOfWholeNumbersAreExact) {
  // Every partial sum of numbers in [0, 4) over 2^22 elements stays below
  // 2^24, so float32 adds them exactly in any order: a dropped, doubled or
  // misplaced element changes the result.
  const Tensor x = testing::integers({(1 << 22) + 5}, gen, 0, 4);
  for (ScalarType dtype : {kFloat32, kFloat64, kInt64}) {
    const Tensor d = to_dut(x.to(dtype));
    EXPECT_EQ(d.sum().item<double>(), x.sum().item<double>()) << dtype;
    EXPECT_EQ(d.narrow(0, 3, 1 << 22).sum().item<double>(),
              x.narrow(0, 3, 1 << 22).sum().item<double>())
        << dtype << " from an unaligned offset";
  }
  const Tensor m = testing::integers({2049, 4099}, gen, 0, 4);
  for (ScalarType dtype : {kFloat32, kInt64, kUInt8}) {
    const Tensor d = to_dut(m.to(dtype));
    for (int64_t dim : {0, 1}) {
      EXPECT_TRUE(identical(sum(d, {dim}).to(kCPU), sum(m.to(dtype), {dim})))
          << dtype << " dim " << dim;
      EXPECT_TRUE(identical(sum(d.t(), {dim}).to(kCPU), sum(m.to(dtype).t(), {dim})))
          << dtype << " transposed, dim " << dim;
    }
  }
}

TEST_F(CudaReduction, IntegerAndBoolSumsMatchTheCpu) {
  for (ScalarType dtype : {kBool, kUInt8, kInt64}) {
    const Tensor x =
        testing::integers({300, 70}, gen, 0, dtype == kBool ? 2 : 200, dtype);
    const Tensor d = to_dut(x);
    EXPECT_TRUE(identical(d.sum().to(kCPU), x.sum())) << dtype;
    EXPECT_TRUE(identical(sum(d, {0}).to(kCPU), sum(x, {0}))) << dtype;
    EXPECT_TRUE(identical(sum(d, {1}, true).to(kCPU), sum(x, {1}, true))) << dtype;
  }
  // Large int64 values: no float detour.
  const Tensor big = testing::integers({1000}, gen, 0, 1000) + (int64_t{1} << 53);
  EXPECT_TRUE(identical(to_dut(big).sum().to(kCPU), big.sum()));
}

TEST_F(CudaReduction, MaxMinArgmaxArgmin) {
  struct Shape {
    IntList sizes;
    std::vector<int64_t> dims;
  };
  const std::vector<Shape> shapes = {
      {{37, 129}, {0, 1, -1}},
      {{64, 4097}, {1}},
      {{4097, 5}, {0, 1}},
      {{6, 7, 8}, {0, 1, 2}},
      {{(1 << 20) + 1}, {0}},
      {{1, 1}, {0, 1}},
  };
  for (ScalarType dtype : {kFloat32, kFloat64, kInt64, kUInt8}) {
    for (const Shape& s : shapes) {
      // Whole numbers from a small range: many ties, which resolve to the
      // first index on both devices.
      const Tensor x = dtype == kFloat32 || dtype == kFloat64
                           ? testing::uniform(s.sizes, gen).to(dtype)
                           : testing::integers(s.sizes, gen, 0, 50, dtype);
      const Tensor d = to_dut(x);
      const std::string what = detail::str(dtype, " ", s.sizes);
      EXPECT_TRUE(identical(max(d).to(kCPU), max(x))) << what;
      EXPECT_TRUE(identical(min(d).to(kCPU), min(x))) << what;
      EXPECT_TRUE(identical(argmax(d).to(kCPU), argmax(x))) << what;
      EXPECT_TRUE(identical(argmin(d).to(kCPU), argmin(x))) << what;
      for (int64_t dim : s.dims) {
        for (bool keepdim : {false, true}) {
          const std::string at = detail::str(what, " dim ", dim, " keepdim ", keepdim);
          auto [values, indices] = max(d, dim, keepdim);
          auto [want_values, want_indices] = max(x, dim, keepdim);
          EXPECT_TRUE(identical(values.to(kCPU), want_values)) << "max " << at;
          EXPECT_TRUE(identical(indices.to(kCPU), want_indices)) << "max " << at;
          auto [low, low_indices] = min(d.transpose(0, -1), dim, keepdim);
          auto [want_low, want_low_indices] = min(x.transpose(0, -1), dim, keepdim);
          EXPECT_TRUE(identical(low.to(kCPU), want_low)) << "min transposed " << at;
          EXPECT_TRUE(identical(low_indices.to(kCPU), want_low_indices))
              << "min transposed " << at;
          EXPECT_TRUE(
              identical(argmax(d, dim, keepdim).to(kCPU), argmax(x, dim, keepdim)))
              << "argmax " << at;
          EXPECT_TRUE(
              identical(argmin(d, dim, keepdim).to(kCPU), argmin(x, dim, keepdim)))
              << "argmin " << at;
        }
      }
    }
  }
}

TEST_F(CudaReduction, TiesAndNaN) {
  // All equal: index 0 everywhere.
  const Tensor same = full({5, 3000}, 2.0);
  EXPECT_EQ(argmax(to_dut(same)).item<int64_t>(), 0);
  EXPECT_TRUE(identical(argmin(to_dut(same), 1).to(kCPU), zeros({5}, kInt64)));
  // The maximum twice, far apart (different blocks): the first one.
  Tensor twice = testing::uniform({1 << 20}, gen);
  twice.narrow(0, 700000, 1).fill_(5);
  twice.narrow(0, 900000, 1).fill_(5);
  EXPECT_EQ(argmax(to_dut(twice)).item<int64_t>(), 700000);
  EXPECT_EQ(argmax(to_dut(twice.to(kFloat32))).item<int64_t>(), 700000);
  // NaN: whatever the CPU says (PyTorch: NaN wins), the device says too.
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    Tensor x = testing::uniform({4, 5000}, gen).to(dtype);
    x.select(0, 1).narrow(0, 4000, 1).fill_(std::numeric_limits<double>::quiet_NaN());
    const Tensor d = to_dut(x);
    EXPECT_TRUE(identical(max(d).to(kCPU), max(x))) << dtype;
    EXPECT_TRUE(identical(argmax(d).to(kCPU), argmax(x))) << dtype;
    EXPECT_TRUE(identical(std::get<0>(min(d, 1)).to(kCPU), std::get<0>(min(x, 1))))
        << dtype;
    EXPECT_TRUE(identical(std::get<1>(min(d, 1)).to(kCPU), std::get<1>(min(x, 1))))
        << dtype;
    EXPECT_TRUE(close_to(d.sum(1), x.to(kFloat64).sum(1))) << dtype;
  }
}

TEST_F(CudaReduction, EmptyInputs) {
  const Tensor empty = to_dut(zeros({0, 4}));
  EXPECT_EQ(empty.sum().item<double>(), 0.0);
  EXPECT_TRUE(identical(sum(empty, {0}).to(kCPU), zeros({4})));
  EXPECT_TRUE(std::isnan(empty.mean().item<double>()));
  EXPECT_THROW(max(empty), IndexError);
  EXPECT_THROW(argmax(empty), IndexError);
  EXPECT_THROW(max(empty, 0), IndexError);
  EXPECT_EQ(std::get<0>(max(empty, 1)).sizes(), IntList({0}));
}

TEST_F(CudaReduction, SoftmaxRowsAndMasks) {
  const double inf = std::numeric_limits<double>::infinity();
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    for (const IntList& sizes :
         {IntList{64, 4097}, IntList{3, 100000}, IntList{1000, 3}}) {
      const Tensor x = testing::uniform(sizes, gen, -10, 10);
      const Tensor d = to_dut(x, dtype);
      for (bool log : {false, true}) {
        for (int64_t dim : {0, 1}) {
          const std::string what =
              detail::str(log ? "log_" : "", "softmax ", dtype, " ", sizes, " dim ", dim);
          const Tensor got = log ? log_softmax(d, dim) : softmax(d, dim);
          EXPECT_TRUE(close_to(got, log ? log_softmax(x, dim) : softmax(x, dim))) << what;
          if (!log) {
            EXPECT_TRUE(close_to(got.sum(dim), ones({sizes[1 - dim]}, kFloat64))) << what;
          }
        }
      }
    }
    // Masked entries give exact zeros (and -inf in log space); a fully
    // masked row gives NaN, as on the CPU.
    Tensor masked = testing::uniform({4, 3000}, gen).to(dtype);
    masked.select(0, 1).narrow(0, 0, 2999).fill_(-inf);
    masked.select(0, 2).narrow(0, 10, 1000).fill_(-inf);
    masked.select(0, 3).fill_(-inf);
    for (bool log : {false, true}) {
      const Tensor want = log ? log_softmax(masked, 1) : softmax(masked, 1);
      const Tensor got =
          log ? log_softmax(to_dut(masked), 1) : softmax(to_dut(masked), 1);
      EXPECT_TRUE(testing::all_close(got, want, 1e-5, 1e-7)) << dtype << " log " << log;
    }
  }
}

}  // namespace
}  // namespace tandem
