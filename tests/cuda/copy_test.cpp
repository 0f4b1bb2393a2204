// Copies and data movement on the device under test: round trips and dtype
// conversions between every pair of dtypes (host to device, device to
// device, device to host), contiguous() of transposed and permuted views,
// cat / stack / chunk / split / narrow / select in every dtype, and the
// factories (zeros, ones, full, arange, empty, *_like, fill_, item) on the
// device.
#include <cmath>
#include <limits>
#include <sstream>

#include "cuda/cuda_testing.h"

namespace tandem {
namespace {

using testing::device_under_test;
using testing::identical;
using testing::to_dut;

const std::vector<ScalarType> kAllDtypes = {kBool, kUInt8, kInt64, kFloat32, kFloat64};

// Values every conversion defines: floats in [0, 200) with fractions (and
// exact zeros), int64 in [-300, 300) (wraps modulo 256 into uint8), bools.
Tensor convertible(const IntList& sizes, ScalarType dtype, Generator& gen) {
  switch (dtype) {
    case kBool:
      return testing::integers(sizes, gen, 0, 2, kBool);
    case kUInt8:
      return testing::integers(sizes, gen, 0, 256, kUInt8);
    case kInt64:
      return testing::integers(sizes, gen, -300, 300);
    default: {
      Tensor t = testing::uniform(sizes, gen, 0, 200);
      return where(t < 20, zeros_like(t), t).to(dtype);
    }
  }
}

class CudaCopy : public testing::CudaTest {};

TEST_F(CudaCopy, RoundTripsAreExactInEveryDtype) {
  for (ScalarType dtype : kAllDtypes) {
    for (const IntList& sizes :
         {IntList{}, IntList{0}, IntList{1}, IntList{3, 5}, IntList{(1 << 20) + 7}}) {
      const Tensor x = convertible(sizes, dtype, gen);
      const Tensor d = x.to(device_under_test());
      EXPECT_EQ(d.device(), device_under_test());
      EXPECT_EQ(d.dtype(), dtype);
      EXPECT_EQ(d.sizes(), x.sizes());
      EXPECT_TRUE(identical(d.to(kCPU), x)) << dtype << " " << sizes;
      EXPECT_TRUE(identical(d.clone().to(kCPU), x)) << "clone " << dtype << " " << sizes;
    }
  }
  // NaN, infinities, -0 and subnormals survive.
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor special = testing::from_values(
      {std::numeric_limits<double>::quiet_NaN(), -inf, inf, -0.0, 5e-324}, {5});
  EXPECT_TRUE(identical(special.to(device_under_test()).to(kCPU), special));
  EXPECT_EQ(std::signbit(special.to(device_under_test()).to(kCPU)[3].item<double>()),
            true);
}

TEST_F(CudaCopy, ConversionsBetweenEveryPairOfDtypesMatchTheCpu) {
  for (ScalarType from : kAllDtypes) {
    const Tensor x = convertible({33, 65}, from, gen);
    const Tensor x_dev = to_dut(x);
    for (ScalarType to : kAllDtypes) {
      const Tensor want = x.to(to);
      const std::string what = detail::str(from, " -> ", to);
      // On the device, then back.
      EXPECT_TRUE(identical(x_dev.to(to).to(kCPU), want)) << what << " on the device";
      // Converting while crossing, both ways.
      EXPECT_TRUE(identical(x.to(device_under_test(), to).to(kCPU), want))
          << what << " host to device";
      EXPECT_TRUE(identical(x_dev.to(Device(kCPU), to), want))
          << what << " device to host";
      // From a transposed view (a strided read with conversion).
      EXPECT_TRUE(identical(x_dev.t().to(to).to(kCPU), want.t()))
          << what << " transposed";
    }
  }
}

TEST_F(CudaCopy, ContiguousOfViews) {
  for (ScalarType dtype : kAllDtypes) {
    const Tensor x = convertible({6, 7, 8, 9}, dtype, gen);
    const Tensor d = to_dut(x);
    const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>>
        views = {
            {"transpose", [](const Tensor& t) { return t.transpose(1, 3); }},
            {"permute",
             [](const Tensor& t) {
               return t.permute({3, 1, 0, 2});
             }},
            {"narrow", [](const Tensor& t) { return t.narrow(2, 3, 4).narrow(3, 1, 7); }},
            {"select", [](const Tensor& t) { return t.select(1, 2).transpose(0, 2); }},
            {"expand",
             [](const Tensor& t) {
               return t.narrow(0, 1, 1).expand({5, 7, 8, 9});
             }},
            {"reshape_of_transpose",
             [](const Tensor& t) {
               return t.transpose(0, 3).reshape({-1, 6});
             }},
        };
    for (const auto& [name, view] : views) {
      const Tensor got = view(d).contiguous();
      EXPECT_TRUE(got.is_contiguous());
      EXPECT_EQ(got.device(), device_under_test());
      EXPECT_TRUE(identical(got.to(kCPU), view(x).contiguous())) << name << " " << dtype;
    }
  }
  // A large transposed matrix: many blocks, both dims odd.
  const Tensor big = testing::uniform({1031, 1029}, gen).to(kFloat32);
  EXPECT_TRUE(identical(to_dut(big).t().contiguous().to(kCPU), big.t().contiguous()));
}

TEST_F(CudaCopy, CatStackChunkSplitInEveryDtype) {
  for (ScalarType dtype : kAllDtypes) {
    const Tensor a = convertible({20, 3}, dtype, gen),
                 b = convertible({40, 3}, dtype, gen);
    const Tensor c = convertible({0, 3}, dtype, gen),
                 e = convertible({3, 20}, dtype, gen);
    const Tensor da = to_dut(a), db = to_dut(b), dc = to_dut(c), de = to_dut(e);
    const std::string what = detail::str(dtype);
    EXPECT_TRUE(identical(cat({da, dc, db}, 0).to(kCPU), cat({a, c, b}, 0))) << what;
    EXPECT_TRUE(identical(cat({da, de.t()}, 1).to(kCPU), cat({a, e.t()}, 1))) << what;
    EXPECT_TRUE(identical(stack({da, de.t()}, 1).to(kCPU), stack({a, e.t()}, 1))) << what;
    const auto pieces = chunk(db, 3, 0);
    const auto want = chunk(b, 3, 0);
    ASSERT_EQ(pieces.size(), want.size());
    for (size_t i = 0; i < pieces.size(); ++i) {
      EXPECT_EQ(pieces[i].device(), device_under_test());
      EXPECT_TRUE(identical(pieces[i].to(kCPU), want[i])) << what << " chunk " << i;
      EXPECT_TRUE(identical((pieces[i] * 1).to(kCPU), want[i] * 1))
          << what << " chunk " << i;
    }
    const auto parts = split(db.t(), IntList{7, 0, 33}, 1);
    EXPECT_TRUE(
        identical(parts[2].contiguous().to(kCPU), b.t().narrow(1, 7, 33).contiguous()))
        << what;
    EXPECT_EQ(parts[1].numel(), 0);
  }
  // Many inputs of different lengths into one large tensor.
  std::vector<Tensor> many, many_dev;
  for (int64_t i = 0; i < 40; ++i) {
    many.push_back(testing::uniform({i * 97 + 1, 129}, gen).to(kFloat32));
    many_dev.push_back(to_dut(many.back()));
  }
  EXPECT_TRUE(identical(cat(many_dev, 0).to(kCPU), cat(many, 0)));
}

TEST_F(CudaCopy, FactoriesOnTheDevice) {
  const Device dev = device_under_test();
  for (ScalarType dtype : kAllDtypes) {
    const TensorOptions options = TensorOptions(dtype).device(dev);
    const std::string what = detail::str(dtype);
    const Tensor z = zeros({1000, 33}, options);
    EXPECT_EQ(z.device(), dev) << what;
    EXPECT_TRUE(identical(z.to(kCPU), zeros({1000, 33}, dtype))) << what;
    EXPECT_TRUE(identical(ones({5, 0, 3}, options).to(kCPU), ones({5, 0, 3}, dtype)));
    EXPECT_TRUE(
        identical(ones({(1 << 20) + 1}, options).to(kCPU), ones({(1 << 20) + 1}, dtype)))
        << what;
    EXPECT_TRUE(identical(full({7, 9}, 3, options).to(kCPU), full({7, 9}, 3, dtype)))
        << what;
    EXPECT_TRUE(identical(zeros_like(z).to(kCPU), zeros({1000, 33}, dtype))) << what;
    EXPECT_EQ(empty({3, 4}, options).device(), dev);
    EXPECT_EQ(ones_like(z).device(), dev);
    Tensor filled = empty({513, 3}, options);
    filled.fill_(1);
    EXPECT_TRUE(identical(filled.to(kCPU), ones({513, 3}, dtype))) << what;
  }
  EXPECT_TRUE(
      identical(full({4}, -2.5, TensorOptions().device(dev)).to(kCPU), full({4}, -2.5)));
  EXPECT_TRUE(
      identical(full_like(zeros({3}, TensorOptions(kFloat64).device(dev)), 0.1).to(kCPU),
                full({3}, 0.1, kFloat64)));
  // arange: integers, floats, negative steps, empty and long ranges.
  EXPECT_TRUE(identical(arange(10, TensorOptions().device(dev)).to(kCPU), arange(10)));
  EXPECT_TRUE(identical(arange(0, 10, 3, TensorOptions(kInt64).device(dev)).to(kCPU),
                        arange(0, 10, 3, kInt64)));
  EXPECT_TRUE(identical(arange(1.5, -2.0, -0.25, TensorOptions().device(dev)).to(kCPU),
                        arange(1.5, -2.0, -0.25)));
  EXPECT_TRUE(
      identical(arange(0.0, 1.0, 0.1, TensorOptions(kFloat64).device(dev)).to(kCPU),
                arange(0.0, 1.0, 0.1, kFloat64)));
  EXPECT_TRUE(
      identical(arange(5, 5, TensorOptions().device(dev)).to(kCPU), arange(5, 5)));
  EXPECT_TRUE(identical(arange(3000000, TensorOptions(kInt64).device(dev)).to(kCPU),
                        arange(3000000, kInt64)));
  // Scalars read back.
  const Tensor v = to_dut(testing::from_values({1.25, -7, 3}, {3}));
  EXPECT_EQ(v[1].item<double>(), -7.0);
  EXPECT_EQ(v.sum().item<double>(), -2.75);
  EXPECT_EQ(to_dut(testing::from_values({42}, {1}, kInt64)).item<int64_t>(), 42);
  EXPECT_TRUE(to_dut(testing::from_values({1}, {}, kBool)).item<bool>());
}

TEST_F(CudaCopy, PrintingShowsTheValuesAndTheDevice) {
  for (ScalarType dtype : kAllDtypes) {
    const Tensor x = convertible({3, 4}, dtype, gen);
    std::ostringstream host, device;
    host << x;
    device << to_dut(x);
    // The same values, and the device named as PyTorch does.
    const std::string got = device.str(), want = host.str();
    EXPECT_EQ(got.substr(0, got.rfind(']') + 1), want.substr(0, want.rfind(']') + 1))
        << dtype;
    EXPECT_NE(got.find("device='" + device_under_test().str() + "'"), std::string::npos)
        << got;
  }
}

TEST_F(CudaCopy, ViewsShareTheDeviceStorage) {
  Tensor x = to_dut(zeros({4, 6}));
  Tensor row = x.select(0, 2);
  row.fill_(5);
  Tensor column = x.narrow(1, 4, 1);
  column.add_(1);
  Tensor want = zeros({4, 6});
  want.select(0, 2).fill_(5);
  want.narrow(1, 4, 1).add_(1);
  EXPECT_TRUE(identical(x.to(kCPU), want));
  EXPECT_EQ(row.device(), device_under_test());
  EXPECT_EQ(x.view({24}).to(kCPU).sum().item<double>(), want.sum().item<double>());
}

}  // namespace
}  // namespace tandem
