// scatter and gather: the chunk rule, devices, views, errors and gradients
// (spec cases 1, 2, 3, 6, 21, 22, 24).
#include "parallel/parallel_testing.h"

namespace {

namespace parallel = tandem::parallel;
using parallel::TensorTree;
using tandem::Device;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::cpu_devices;
using tandem::testing::from_values;
using tandem::testing::rows_of;
using tandem::testing::throws_with;

TEST(Scatter, ChunkRule) {
  struct Case {
    int64_t batch;
    int devices;
    std::vector<int64_t> rows;
  };
  const std::vector<Case> cases = {
      {30, 2, {15, 15}},
      {30, 3, {10, 10, 10}},
      {30, 8, {4, 4, 4, 4, 4, 4, 4, 2}},
      {10, 2, {5, 5}},
      {10, 3, {4, 4, 2}},
      {10, 8, {2, 2, 2, 2, 2}},
      {1, 4, {1}},
      {9, 4, {3, 3, 3}},
      {36, 7, {6, 6, 6, 6, 6, 6}},
      {17, 8, {3, 3, 3, 3, 3, 2}},
      {0, 4, {0, 0, 0, 0}},
  };
  for (const Case& c : cases) {
    const Tensor x =
        tandem::arange(static_cast<double>(c.batch * 3)).reshape({c.batch, 3});
    const auto pieces = parallel::scatter(x, cpu_devices(c.devices));
    EXPECT_EQ(rows_of(pieces), c.rows) << "B=" << c.batch << " n=" << c.devices;
    EXPECT_EQ(rows_of(x.chunk(c.devices)), c.rows);
    int64_t start = 0;
    for (size_t i = 0; i < pieces.size(); ++i) {
      EXPECT_EQ(pieces[i].device(), Device(tandem::kCPU, static_cast<int>(i)));
      EXPECT_TRUE(all_close(pieces[i].to("cpu:0"), x.narrow(0, start, c.rows[i])));
      start += c.rows[i];
    }
  }
}

TEST(Scatter, ZeroDimensionalInputIsAnError) {
  EXPECT_TRUE(
      throws_with([] { parallel::scatter(tandem::scalar_tensor(1.0), cpu_devices(2)); },
                  "chunk expects at least a 1-dimensional tensor"));
  EXPECT_TRUE(throws_with(
      [] {
        parallel::scatter(TensorTree{tandem::ones({2}), tandem::scalar_tensor(1.0)},
                          cpu_devices(2));
      },
      "chunk expects at least a 1-dimensional tensor, but input[1] is 0-dimensional"));
}

TEST(Scatter, PiecesOnCpuDevicesShareTheSourcesMemoryAndGradientsGoBack) {
  for (const char* source : {"cpu:0", "cpu:5"}) {
    Tensor x = tandem::randn({4, 4}).to(source).requires_grad_();
    const auto pieces = parallel::scatter(x, cpu_devices(2));
    ASSERT_EQ(pieces.size(), 2u);
    EXPECT_EQ(pieces[0].device(), Device("cpu:0"));
    EXPECT_EQ(pieces[1].device(), Device("cpu:1"));
    EXPECT_TRUE(all_close(pieces[0].to(source), x.narrow(0, 0, 2)));
    EXPECT_TRUE(all_close(pieces[1].to(source), x.narrow(0, 2, 2)));
    // Logical CPU devices share the host's memory: no piece is a copy.
    EXPECT_EQ(pieces[0].data_ptr(), x.data_ptr());
    EXPECT_EQ(pieces[1].data_ptr(), x[2].data_ptr());
    EXPECT_TRUE(pieces[0].requires_grad());
    // A gradient through piece 0 only: rows 2-3 of the source get zeros.
    pieces[0].backward(tandem::full({2, 4}, 2.0, pieces[0].options()));
    ASSERT_TRUE(x.grad().defined());
    EXPECT_EQ(x.grad().device(), Device(source));
    const Tensor want =
        tandem::cat({tandem::full({2, 4}, 2.0), tandem::zeros({2, 4})}).to(source);
    EXPECT_TRUE(all_close(x.grad(), want));
  }
}

TEST(Scatter, AlongAnotherDim) {
  Tensor x = tandem::randn({3, 10});
  const auto pieces = parallel::scatter(x, cpu_devices(3), /*dim=*/-1);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[2].sizes(), tandem::IntList({3, 2}));
  EXPECT_TRUE(all_close(pieces[1].to("cpu:0"), x.narrow(1, 4, 4)));
}

TEST(Scatter, NestedInputsKeepTheirNesting) {
  const Tensor a = tandem::randn({20, 3}), b = tandem::randn({20, 2}),
               c = tandem::randn({20}), d = tandem::randn({20, 1, 2});
  const TensorTree input{a, {b, c}, d};
  const auto per_device = parallel::scatter(input, cpu_devices(2));
  ASSERT_EQ(per_device.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const TensorTree& t = per_device[i];
    ASSERT_EQ(t.size(), 3u);
    ASSERT_EQ(t[1].size(), 2u);
    const Tensor& b_i = t[1][0].tensor();
    EXPECT_EQ(b_i.device(), Device(tandem::kCPU, static_cast<int>(i)));
    EXPECT_TRUE(all_close(b_i.to("cpu:0"), b.narrow(0, 10 * i, 10)));
    EXPECT_EQ(t[2].tensor().sizes(), tandem::IntList({10, 1, 2}));
    EXPECT_EQ(t[1][1].tensor().sizes(), tandem::IntList({10}));
  }
}

TEST(Scatter, DifferentSizesAlongTheDimAreAnError) {
  // PyTorch would run 3 replicas and drop row 10 of the first tensor.
  const TensorTree input{tandem::randn({10, 2}), tandem::randn({3, 2})};
  EXPECT_TRUE(throws_with([&] { parallel::scatter(input, cpu_devices(4)); },
                          "input[0] has 10 and input[1] has 3"));
}

TEST(Scatter, TreesWithoutTensorsGoToEveryDevice) {
  const TensorTree empty;
  const auto per_device = parallel::scatter(empty, cpu_devices(3));
  ASSERT_EQ(per_device.size(), 3u);
  for (const TensorTree& t : per_device) {
    EXPECT_TRUE(t.is_list());
    EXPECT_EQ(t.size(), 0u);
  }
  // An undefined tensor ("None") reaches every replica next to the chunks.
  const auto with_none =
      parallel::scatter(TensorTree{tandem::ones({4}), Tensor()}, cpu_devices(2));
  ASSERT_EQ(with_none.size(), 2u);
  EXPECT_FALSE(with_none[1][1].tensor().defined());
}

TEST(Gather, JoinsRowsOnTheDestination) {
  Tensor a = tandem::randn({2, 4}).requires_grad_();
  Tensor b = tandem::randn({2, 4}).to("cpu:1").detach().requires_grad_();
  for (const char* destination : {"cpu:0", "cpu:3"}) {
    Tensor out = parallel::gather({a, b}, destination);
    EXPECT_EQ(out.device(), Device(destination));
    EXPECT_EQ(out.sizes(), tandem::IntList({4, 4}));
    EXPECT_TRUE(all_close(out.narrow(0, 0, 2).to("cpu:0"), a));
    EXPECT_TRUE(all_close(out.narrow(0, 2, 2).to("cpu:0"), b.to("cpu:0")));
    // Each input gets its rows of the gradient, on its own device.
    a.mutable_grad() = Tensor();
    b.mutable_grad() = Tensor();
    const Tensor g = tandem::randn({4, 4}).to(destination);
    out.backward(g);
    EXPECT_EQ(a.grad().device(), Device("cpu:0"));
    EXPECT_EQ(b.grad().device(), Device("cpu:1"));
    EXPECT_TRUE(all_close(a.grad(), g.narrow(0, 0, 2).to("cpu:0")));
    EXPECT_TRUE(all_close(b.grad().to("cpu:0"), g.narrow(0, 2, 2).to("cpu:0")));
  }
}

TEST(Gather, GradientPartsForCpuDevicesShareTheOutputGradientsMemory) {
  Tensor a = tandem::randn({2, 4}).requires_grad_();
  Tensor b = tandem::randn({2, 4}).to("cpu:1").detach().requires_grad_();
  Tensor out = parallel::gather({a, b}, "cpu:0");
  const void* seen = nullptr;
  b.register_hook([&](const Tensor& grad) {
    EXPECT_EQ(grad.device(), Device("cpu:1"));
    seen = grad.data_ptr();
    return Tensor();
  });
  const Tensor g = tandem::randn({4, 4});
  out.backward(g);
  EXPECT_EQ(seen, g[2].data_ptr());  // rows 2-3 of g, not a copy of them
  EXPECT_TRUE(all_close(b.grad().to("cpu:0"), g.narrow(0, 2, 2)));
}

TEST(Gather, ScalarsBecomeAVector) {
  Tensor a = tandem::scalar_tensor(3.0).requires_grad_();
  Tensor b = tandem::scalar_tensor(5.0).to("cpu:1").detach().requires_grad_();
  Tensor out = parallel::gather({a, b}, "cpu:0");
  EXPECT_EQ(out.sizes(), tandem::IntList({2}));
  EXPECT_TRUE(all_close(out, from_values({3, 5}, {2}, out.dtype())));
  out.backward(from_values({7, 11}, {2}, out.dtype()));
  EXPECT_EQ(a.grad().dim(), 0);
  EXPECT_EQ(b.grad().dim(), 0);
  EXPECT_EQ(b.grad().device(), Device("cpu:1"));
  EXPECT_EQ(a.grad().item<double>(), 7.0);
  EXPECT_EQ(b.grad().item<double>(), 11.0);
}

TEST(Gather, Errors) {
  const std::vector<Tensor> none;
  EXPECT_TRUE(throws_with([&] { parallel::gather(none, "cpu:0"); },
                          "Expected at least one tensor to gather from"));
  const std::vector<Tensor> shapes = {tandem::ones({2, 4}), tandem::ones({2, 5})};
  EXPECT_TRUE(throws_with([&] { parallel::gather(shapes, "cpu:0"); },
                          "Input tensor at index 1 has invalid shape [2, 5], but "
                          "expected [2, 4]"));
  const std::vector<Tensor> ranks = {tandem::ones({2}), tandem::scalar_tensor(1.0)};
  EXPECT_TRUE(throws_with([&] { parallel::gather(ranks, "cpu:0"); },
                          "tensor at index 1 has 0 dimensions"));
  const std::vector<Tensor> dtypes = {tandem::ones({2}),
                                      tandem::ones({2}, tandem::kFloat64)};
  EXPECT_TRUE(throws_with([&] { parallel::gather(dtypes, "cpu:0"); }, "has dtype"));
}

TEST(Gather, TreesLeafByLeaf) {
  const Tensor x0 = tandem::randn({2, 3}), x1 = tandem::randn({3, 3}).to("cpu:1");
  const std::vector<TensorTree> outputs = {
      TensorTree{x0, TensorTree{x0.exp(), Tensor()}},
      TensorTree{x1, TensorTree{x1.exp(), Tensor()}}};
  const TensorTree out = parallel::gather(outputs, "cpu:0");
  ASSERT_EQ(out.size(), 2u);
  const Tensor want = tandem::cat({x0, x1.to("cpu:0")});
  EXPECT_TRUE(all_close(out[0].tensor(), want));
  EXPECT_TRUE(all_close(out[1][0].tensor(), want.exp()));
  EXPECT_FALSE(out[1][1].tensor().defined());  // None stays None

  const std::vector<TensorTree> mismatched = {TensorTree{x0, x0}, TensorTree{x1}};
  EXPECT_TRUE(throws_with([&] { parallel::gather(mismatched, "cpu:0"); },
                          "replica 1 returned a list of 1 at output where replica 0 "
                          "returned a list of 2"));
}

}  // namespace
