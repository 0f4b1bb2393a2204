// Indexing and matrix products on the device under test, forward: index_select,
// gather, scatter_add, index_add and embedding in every dtype the CPU takes
// (integer accumulation exact, with heavily repeated indices), and mm / bmm /
// matmul / linear over odd sizes, every transpose combination, narrowed
// operands, empty and k = 0 products, and the TF32 switch (off by default:
// float32 products keep float32 precision).
#include "cuda/cuda_testing.h"

namespace tandem {
namespace {

using testing::close_to;
using testing::device_under_test;
using testing::identical;
using testing::to_dut;

const std::vector<ScalarType> kAllDtypes = {kBool, kUInt8, kInt64, kFloat32, kFloat64};

Tensor values_of(const IntList& sizes, ScalarType dtype, Generator& gen) {
  if (dtype == kFloat32 || dtype == kFloat64)
    return testing::uniform(sizes, gen).to(dtype);
  return testing::integers(sizes, gen, 0, dtype == kBool ? 2 : 100, dtype);
}

// Exact for integral results, the float64 reference otherwise.
void expect_matches(const std::string& what,
                    const Tensor& got,
                    const std::function<Tensor(bool)>& reference) {
  EXPECT_EQ(got.device(), device_under_test()) << what;
  if (got.is_floating_point()) {
    EXPECT_TRUE(close_to(got, reference(true))) << what;
  } else {
    EXPECT_TRUE(identical(got, reference(false))) << what;
  }
}

class CudaIndexing : public testing::CudaTest {};

TEST_F(CudaIndexing, SelectAndGatherInEveryDtype) {
  for (ScalarType dtype : kAllDtypes) {
    const Tensor x = values_of({1000, 33}, dtype, gen);
    const Tensor d = to_dut(x);
    const std::string what = detail::str(dtype);
    for (const IntList& index_sizes : {IntList{517}, IntList{0}, IntList{100000}}) {
      const Tensor rows = testing::integers(index_sizes, gen, 0, 1000);
      EXPECT_TRUE(
          identical(index_select(d, 0, to_dut(rows)).to(kCPU), index_select(x, 0, rows)))
          << what << " rows " << index_sizes;
    }
    const Tensor columns = testing::integers({70}, gen, 0, 33);
    EXPECT_TRUE(identical(index_select(d, 1, to_dut(columns)).to(kCPU),
                          index_select(x, 1, columns)))
        << what;
    EXPECT_TRUE(identical(index_select(d.t(), 0, to_dut(columns)).to(kCPU),
                          index_select(x.t(), 0, columns)))
        << what << " of a transposed input";
    const Tensor scalar_index = testing::from_values({999}, {}, kInt64);
    EXPECT_TRUE(identical(index_select(d, 0, to_dut(scalar_index)).to(kCPU),
                          index_select(x, 0, scalar_index)))
        << what << " 0-dim index";
    const Tensor g1 = testing::integers({1000, 50}, gen, 0, 33);
    EXPECT_TRUE(identical(gather(d, 1, to_dut(g1)).to(kCPU), gather(x, 1, g1))) << what;
    const Tensor g0 = testing::integers({20, 33}, gen, 0, 1000);
    EXPECT_TRUE(identical(gather(d, 0, to_dut(g0)).to(kCPU), gather(x, 0, g0))) << what;
  }
}

TEST_F(CudaIndexing, AccumulationWithRepeatedIndices) {
  for (ScalarType dtype : {kUInt8, kInt64, kFloat32, kFloat64}) {
    const std::string what = detail::str(dtype);
    // 100k rows added into 10: every destination row collects ~10k.
    const Tensor base = values_of({10, 33}, dtype, gen);
    const Tensor src = dtype == kUInt8
                           ? testing::integers({100000, 33}, gen, 0, 3, kUInt8)
                           : values_of({100000, 33}, dtype, gen);
    const Tensor index = testing::integers({100000}, gen, 0, 10);
    const Tensor got = index_add(to_dut(base), 0, to_dut(index), to_dut(src));
    expect_matches("index_add " + what, got, [&](bool wide) {
      return wide ? index_add(base.to(kFloat64), 0, index, src.to(kFloat64))
                  : index_add(base, 0, index, src);
    });
    const Tensor cols = testing::integers({400}, gen, 0, 33);
    const Tensor src1 = values_of({10, 400}, dtype, gen);
    expect_matches("index_add dim 1 " + what,
                   index_add(to_dut(base), 1, to_dut(cols), to_dut(src1)),
                   [&](bool wide) {
                     return wide
                                ? index_add(base.to(kFloat64), 1, cols, src1.to(kFloat64))
                                : index_add(base, 1, cols, src1);
                   });
    // scatter_add: 300 sources per row into 5 columns.
    const Tensor into = values_of({64, 5}, dtype, gen);
    const Tensor scatter_index = testing::integers({64, 3000}, gen, 0, 5);
    const Tensor scatter_src = values_of({64, 3000}, dtype, gen);
    expect_matches(
        "scatter_add " + what,
        scatter_add(to_dut(into), 1, to_dut(scatter_index), to_dut(scatter_src)),
        [&](bool wide) {
          return wide ? scatter_add(
                            into.to(kFloat64), 1, scatter_index, scatter_src.to(kFloat64))
                      : scatter_add(into, 1, scatter_index, scatter_src);
        });
    // In place, into a transposed destination.
    Tensor target = to_dut(values_of({5, 64}, dtype, gen));
    const Tensor want_base = target.to(kCPU);
    Tensor view = target.t();
    view.scatter_add_(1, to_dut(scatter_index), to_dut(scatter_src));
    expect_matches(
        "scatter_add_ into a transposed view " + what, target.t(), [&](bool wide) {
          return wide ? scatter_add(want_base.t().to(kFloat64),
                                    1,
                                    scatter_index,
                                    scatter_src.to(kFloat64))
                      : scatter_add(want_base.t(), 1, scatter_index, scatter_src);
        });
  }
}

TEST_F(CudaIndexing, EmbeddingLookupAndModule) {
  const Tensor weight = testing::uniform({5000, 96}, gen);
  const Tensor ids = testing::integers({8, 16, 20}, gen, 0, 5000);
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    const Tensor got = embedding(to_dut(weight, dtype), to_dut(ids));
    EXPECT_EQ(got.sizes(), IntList({8, 16, 20, 96}));
    EXPECT_TRUE(identical(got.to(kCPU), embedding(weight.to(dtype), ids))) << dtype;
  }
  // The module on the device: forward, and the gradient of a padding row.
  manual_seed(3);
  nn::Embedding reference(nn::EmbeddingOptions(50, 8).padding_idx(0));
  auto module = std::dynamic_pointer_cast<nn::EmbeddingImpl>(reference->clone());
  module->to(device_under_test());
  const Tensor tokens = testing::integers({40, 30}, gen, 0, 50);
  const Tensor y = module->forward(to_dut(tokens));
  EXPECT_EQ(y.device(), device_under_test());
  EXPECT_TRUE(identical(y.to(kCPU), reference->forward(tokens)));
  (y * y).sum().backward();
  (reference->forward(tokens).pow(2)).sum().backward();
  EXPECT_EQ(module->weight.grad().device(), device_under_test());
  EXPECT_TRUE(close_to(module->weight.grad(), reference->weight.grad()));
  EXPECT_EQ(module->weight.grad().to(kCPU)[0].abs().sum().item<double>(), 0.0);
}

class CudaLinalg : public testing::CudaTest {};

TEST_F(CudaLinalg, MatrixProductsOverShapesAndLayouts) {
  struct Case {
    int64_t n, k, m;
  };
  const std::vector<Case> cases = {{1, 1, 1},
                                   {1, 1000, 1},
                                   {1000, 1, 1000},
                                   {513, 1025, 257},
                                   {7, 3, 5},
                                   {0, 5, 3},
                                   {3, 0, 4},
                                   {64, 4097, 33}};
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    for (const Case& c : cases) {
      const Tensor a = testing::uniform({c.n, c.k}, gen),
                   b = testing::uniform({c.k, c.m}, gen);
      const Tensor want = mm(a, b);
      const Tensor da = to_dut(a, dtype), db = to_dut(b, dtype);
      // Transposed operands come from contiguous copies of the transposes.
      const Tensor dat = to_dut(a.t().contiguous(), dtype).t();
      const Tensor dbt = to_dut(b.t().contiguous(), dtype).t();
      const std::string what = detail::str(dtype, " ", c.n, "x", c.k, "x", c.m);
      for (const auto& [name, lhs, rhs] : {std::tuple{"nn", da, db},
                                           std::tuple{"tn", dat, db},
                                           std::tuple{"nt", da, dbt},
                                           std::tuple{"tt", dat, dbt}}) {
        const Tensor got = mm(lhs, rhs);
        EXPECT_EQ(got.dtype(), dtype);
        EXPECT_TRUE(close_to(got, want)) << what << " " << name;
      }
      EXPECT_TRUE(close_to(matmul(da, db), want)) << what << " matmul";
      EXPECT_TRUE(close_to(linear(da, dbt.t()), want)) << what << " linear";
    }
  }
}

TEST_F(CudaLinalg, NarrowedOperandsAndBatches) {
  const Tensor a = testing::uniform({50, 64}, gen), b = testing::uniform({40, 70}, gen);
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    const Tensor da = to_dut(a, dtype), db = to_dut(b, dtype);
    // Leading dimensions larger than the sizes, in both operands.
    EXPECT_TRUE(close_to(mm(da.narrow(1, 3, 40), db.narrow(1, 9, 30)),
                         mm(a.narrow(1, 3, 40), b.narrow(1, 9, 30))))
        << dtype;
    EXPECT_TRUE(close_to(mm(da.narrow(0, 5, 40).t(), db.narrow(1, 1, 7)),
                         mm(a.narrow(0, 5, 40).t(), b.narrow(1, 1, 7))))
        << dtype;
    // Batches: transposed inside each batch, an empty batch, and broadcasting.
    const Tensor x = testing::uniform({9, 33, 17}, gen),
                 y = testing::uniform({9, 17, 21}, gen);
    const Tensor dx = to_dut(x, dtype), dy = to_dut(y, dtype);
    EXPECT_TRUE(close_to(bmm(dx, dy), bmm(x, y))) << dtype;
    EXPECT_TRUE(
        close_to(bmm(to_dut(x.transpose(1, 2).contiguous(), dtype).transpose(1, 2), dy),
                 bmm(x, y)))
        << dtype;
    EXPECT_TRUE(
        close_to(bmm(to_dut(zeros({0, 3, 4}), dtype), to_dut(zeros({0, 4, 5}), dtype)),
                 zeros({0, 3, 5}, kFloat64)));
    const Tensor p = testing::uniform({2, 1, 30, 40}, gen),
                 q = testing::uniform({3, 40, 20}, gen);
    EXPECT_TRUE(close_to(matmul(to_dut(p, dtype), to_dut(q, dtype)), matmul(p, q)))
        << dtype;
    const Tensor w = testing::uniform({100, 300}, gen),
                 bias = testing::uniform({100}, gen);
    const Tensor in = testing::uniform({4, 5, 300}, gen);
    EXPECT_TRUE(close_to(linear(to_dut(in, dtype), to_dut(w, dtype), to_dut(bias, dtype)),
                         linear(in, w, bias)))
        << dtype;
  }
}

TEST_F(CudaLinalg, Float32ProductsAndConvolutionsAreNotTf32UnlessAllowed) {
  EXPECT_FALSE(tandem::cuda::allow_tf32());
  // Values with all 24 mantissa bits in use and a short inner dimension (so
  // rounding errors do not average out): TF32's 10-bit inputs would be off
  // by about 1e-4 relative, float32 is within about 1e-7.
  const Tensor a = testing::uniform({512, 16}, gen, 1, 2);
  const Tensor b = testing::uniform({16, 512}, gen, 1, 2);
  const Tensor want = mm(a, b);
  const Tensor got = mm(to_dut(a, kFloat32), to_dut(b, kFloat32));
  EXPECT_TRUE(testing::all_close(got, want, 1e-5, 0))
      << "float32 mm lost precision (TF32?)";
  // Convolutions too (cuDNN's default math mode would allow TF32).
  const Tensor x = testing::uniform({8, 16, 20, 20}, gen, 1, 2);
  const Tensor w = testing::uniform({16, 16, 1, 1}, gen, 1, 2);
  const Tensor conv_want = conv2d(x, w);
  EXPECT_TRUE(testing::all_close(
      conv2d(to_dut(x, kFloat32), to_dut(w, kFloat32)), conv_want, 1e-5, 0))
      << "float32 conv2d lost precision (TF32?)";
  tandem::cuda::set_allow_tf32(true);
  const Tensor fast = mm(to_dut(a, kFloat32), to_dut(b, kFloat32));
  const Tensor fast_conv = conv2d(to_dut(x, kFloat32), to_dut(w, kFloat32));
  tandem::cuda::set_allow_tf32(false);
  EXPECT_TRUE(testing::all_close(fast, want, 1e-2, 0)) << "TF32 mm far off";
  EXPECT_TRUE(testing::all_close(fast_conv, conv_want, 1e-2, 0)) << "TF32 conv2d far off";
  EXPECT_FALSE(tandem::cuda::allow_tf32());
}

}  // namespace
}  // namespace tandem
