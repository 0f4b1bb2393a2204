// Every factory in tandem/ops/factory.h: values, dtypes, devices, the
// requires_grad option, arange's dtype rules, from_blob ownership.
#include <cmath>
#include <vector>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::throws_with;

// Copies a tensor's values out as doubles (row-major), whatever its dtype.
std::vector<double> values(const Tensor& t) {
  Tensor c = t.to(Device(kCPU), kFloat64).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

TEST(Factory, FilledTensorsHaveValuesDtypeAndDevice) {
  Tensor z = zeros({2, 3});
  EXPECT_EQ(z.sizes(), (IntList{2, 3}));
  EXPECT_EQ(z.dtype(), kFloat32);
  EXPECT_EQ(z.device(), Device("cpu:0"));
  EXPECT_TRUE(z.is_contiguous());
  EXPECT_EQ(values(z), std::vector<double>(6, 0.0));
  EXPECT_EQ(values(ones({3}, kInt64)), (std::vector<double>{1, 1, 1}));
  Tensor f = full({2}, 2.5, TensorOptions(kFloat64).device("cpu:2"));
  EXPECT_EQ(f.dtype(), kFloat64);
  EXPECT_EQ(f.device(), Device("cpu:2"));
  EXPECT_EQ(values(f), (std::vector<double>{2.5, 2.5}));
  EXPECT_EQ(values(full({2}, 1, kBool)), (std::vector<double>{1, 1}));
  Tensor e = empty({4, 0});
  EXPECT_EQ(e.numel(), 0);
  EXPECT_EQ(e.sizes(), (IntList{4, 0}));
  Tensor s = scalar_tensor(3.5, kFloat64);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.item<double>(), 3.5);
  EXPECT_TRUE(throws_with([] { zeros({2, -1}); }, "[2, -1]"));
}

TEST(Factory, SizesWhoseCountOverflowsAreRefusedBeforeAllocating) {
  const int64_t big = int64_t{1} << 40;
  EXPECT_TRUE(throws_with(
      [&] {
        empty({big, big});
      },
      "more elements than int64 can count"));
  EXPECT_TRUE(throws_with(
      [&] {
        empty({0, big, big});
      },
      "more elements than int64 can count"));
  EXPECT_TRUE(throws_with(
      [&] {
        empty({big, big / 2 - 1, 4}, kFloat64);
      },
      "more elements than int64 can count"));
  EXPECT_TRUE(throws_with([&] { empty({int64_t{1} << 61}, kFloat64); },
                          "needs more bytes than int64 can count"));
  EXPECT_EQ(empty({0, big}).numel(), 0);
}

TEST(Factory, FillValuesMustFitIntegerDtypes) {
  EXPECT_TRUE(
      throws_with([] { full({2}, 300, kUInt8); },
                  "full: value 300 cannot be converted to uint8 without overflow"));
  EXPECT_TRUE(throws_with([] { full({2}, NAN, kInt64); }, "int64 without overflow"));
  EXPECT_TRUE(throws_with([] { full({2}, 1e19, kInt64); }, "overflow"));
  EXPECT_TRUE(throws_with([] { zeros({2}, kUInt8).fill_(INFINITY); }, "fill_:"));
  EXPECT_EQ(values(full({2}, -1, kUInt8)), (std::vector<double>{255, 255}));  // wraps
  EXPECT_EQ(values(full({1}, 2.7, kInt64)), (std::vector<double>{2}));
  EXPECT_EQ(values(full({1}, 5, kBool)), (std::vector<double>{1}));
  EXPECT_TRUE(std::isinf(values(full({1}, INFINITY))[0]));
}

TEST(Factory, LikeVariantsCopyGeometryAndAcceptOverrides) {
  Tensor base = zeros({2, 2}, TensorOptions(kFloat64).device("cpu:1"));
  Tensor o = ones_like(base);
  EXPECT_EQ(o.dtype(), kFloat64);
  EXPECT_EQ(o.device(), Device("cpu:1"));
  EXPECT_EQ(values(o), std::vector<double>(4, 1.0));
  Tensor f = full_like(base, 7, kInt64);
  EXPECT_EQ(f.dtype(), kInt64);
  EXPECT_EQ(f.device(), Device("cpu:1"));
  EXPECT_EQ(values(f), std::vector<double>(4, 7.0));
  EXPECT_EQ(values(zeros_like(o)), std::vector<double>(4, 0.0));
  Tensor e = empty_like(base, Device("cpu:0"));
  EXPECT_EQ(e.sizes(), base.sizes());
  EXPECT_EQ(e.device(), Device("cpu:0"));
  EXPECT_EQ(e.dtype(), kFloat64);
  EXPECT_EQ(rand_like(base).device(), Device("cpu:1"));
  EXPECT_EQ(randn_like(base).dtype(), kFloat64);
}

TEST(Factory, RequiresGradOption) {
  Tensor w = zeros({3}, TensorOptions(kFloat64).requires_grad(true));
  EXPECT_TRUE(w.requires_grad());
  EXPECT_TRUE(w.is_leaf());
  EXPECT_TRUE(randn({2}, requires_grad()).requires_grad());
  EXPECT_FALSE(ones({2}).requires_grad());
  EXPECT_TRUE(throws_with([] { ones({2}, TensorOptions(kInt64).requires_grad(true)); },
                          "floating-point"));
}

TEST(Factory, ArangeIntegerAndFloatRules) {
  Tensor a = arange(5);
  EXPECT_EQ(a.dtype(), kInt64);
  EXPECT_EQ(values(a), (std::vector<double>{0, 1, 2, 3, 4}));
  Tensor b = arange(2, 11, 3);
  EXPECT_EQ(b.dtype(), kInt64);
  EXPECT_EQ(values(b), (std::vector<double>{2, 5, 8}));
  Tensor c = arange(0, 1, 0.25);
  EXPECT_EQ(c.dtype(), kFloat32);
  EXPECT_EQ(values(c), (std::vector<double>{0, 0.25, 0.5, 0.75}));
  Tensor d = arange(3, kFloat64);
  EXPECT_EQ(d.dtype(), kFloat64);
  EXPECT_EQ(values(d), (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(values(arange(5, 0, -2)), (std::vector<double>{5, 3, 1}));
  EXPECT_EQ(arange(0, 1, 0.1).numel(), 10);
  EXPECT_EQ(arange(3, 3).numel(), 0);
  EXPECT_EQ(arange(4, Device("cpu:3")).device(), Device("cpu:3"));
  EXPECT_TRUE(throws_with([] { arange(0, 5, 0); }, "step must be nonzero"));
  EXPECT_TRUE(throws_with([] { arange(5, 0, 1); }, "cannot be walked"));
  EXPECT_TRUE(throws_with([] { arange(0, INFINITY); }, "finite"));
}

TEST(Factory, RandomFactoriesRespectRangesAndSeeds) {
  Tensor u = rand({1000}, kFloat64);
  for (double v : values(u)) {
    EXPECT_GE(v, 0.0);
    EXPECT_LT(v, 1.0);
  }
  Tensor r = randint(3, 7, {500});
  EXPECT_EQ(r.dtype(), kInt64);
  std::vector<double> seen = values(r);
  for (double v : seen) {
    EXPECT_GE(v, 3);
    EXPECT_LT(v, 7);
  }
  EXPECT_EQ(randint(5, {4}, kFloat32).dtype(), kFloat32);
  Generator g1(11), g2(11);
  EXPECT_EQ(values(randn({5}, g1)), values(randn({5}, g2)));
  EXPECT_TRUE(throws_with([] { rand({2}, kInt64); }, "rand"));
  EXPECT_TRUE(throws_with([] { randint(4, 4, {2}); }, "low < high"));
}

TEST(Factory, TensorFromInitializerListsAndVectors) {
  Tensor f = tensor({1.5f, -2.0f});
  EXPECT_EQ(f.dtype(), kFloat32);
  EXPECT_EQ(values(f), (std::vector<double>{1.5, -2.0}));
  Tensor d = tensor({0.1, 0.2, 0.3});
  EXPECT_EQ(d.dtype(), kFloat64);
  EXPECT_EQ(d.data_ptr<double>()[2], 0.3);
  Tensor i = tensor({1, 2, 3});
  EXPECT_EQ(i.dtype(), kInt64);
  EXPECT_EQ(values(i), (std::vector<double>{1, 2, 3}));
  Tensor l = tensor({int64_t{1} << 40});
  EXPECT_EQ(l.dtype(), kInt64);
  EXPECT_EQ(l.item<int64_t>(), int64_t{1} << 40);
  Tensor b = tensor({true, false, true});
  EXPECT_EQ(b.dtype(), kBool);
  EXPECT_EQ(values(b), (std::vector<double>{1, 0, 1}));
  Tensor v = tensor(std::vector<uint8_t>{200, 3});
  EXPECT_EQ(v.dtype(), kUInt8);
  EXPECT_EQ(values(v), (std::vector<double>{200, 3}));
  Tensor conv =
      tensor({1, 2}, TensorOptions(kFloat64).device("cpu:1").requires_grad(true));
  EXPECT_EQ(conv.dtype(), kFloat64);
  EXPECT_EQ(conv.device(), Device("cpu:1"));
  EXPECT_TRUE(conv.requires_grad());
  EXPECT_EQ(tensor(std::vector<float>{}).numel(), 0);
}

TEST(Factory, FromBlobSharesMemoryWithoutDeleter) {
  float data[6] = {0, 1, 2, 3, 4, 5};
  Tensor t = from_blob(data, {2, 3});
  EXPECT_EQ(t.data_ptr<float>(), data);
  EXPECT_EQ(t.strides(), (IntList{3, 1}));
  data[4] = 40;
  EXPECT_EQ(values(t)[4], 40);
  t.mul_(2);
  EXPECT_EQ(data[1], 2);
  Tensor col = from_blob(data, {2}, {3}, kFloat32);  // a strided column
  EXPECT_EQ(values(col), (std::vector<double>{0, 6}));
  double dd[2] = {1, 2};
  EXPECT_EQ(from_blob(dd, {2}, kFloat64).data_ptr<double>()[1], 2.0);
  EXPECT_TRUE(throws_with([&] { from_blob(data, {2, 3}, {1}); }, "differ in length"));
}

TEST(Factory, FromBlobDeleterRunsOnceWhenTheLastTensorGoes) {
  int calls = 0;
  void* seen = nullptr;
  auto* data = new int64_t[4]{1, 2, 3, 4};
  {
    Tensor t = from_blob(
        data,
        {4},
        [&](void* p) {
          ++calls;
          seen = p;
          delete[] static_cast<int64_t*>(p);
        },
        kInt64);
    Tensor view = t.detach();
    Tensor alias = t;
    t = Tensor();
    EXPECT_EQ(calls, 0);
    EXPECT_EQ(view.data_ptr<int64_t>()[3], 4);
    alias = Tensor();
    EXPECT_EQ(calls, 0);
  }
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen, data);
}

}  // namespace
}  // namespace tandem
