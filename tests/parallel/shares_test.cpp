// Cutting a batch by shares: the cut rules, scatter with chunk sizes, the
// balancer's re-planning, and DataParallel over uneven cuts, whose gradient
// must be the whole batch's (issue 18).
#include <chrono>
#include <cmath>
#include <thread>

#include "parallel/parallel_testing.h"

namespace {

namespace nn = tandem::nn;
namespace parallel = tandem::parallel;
using tandem::Device;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::cpu_devices;
using tandem::testing::make_mlp;
using tandem::testing::rows_of;
using tandem::testing::throws_with;

TEST(Shares, EvenCutIsTheChunkRule) {
  for (int64_t rows = 1; rows <= 20; ++rows) {
    for (size_t n = 1; n <= 5; ++n) {
      std::vector<int64_t> want = rows_of(tandem::arange(rows).chunk(n));
      want.resize(n, 0);
      EXPECT_EQ(parallel::even_cut(rows, n), want) << rows << " rows over " << n;
    }
  }
}

TEST(Shares, SplitEvenlyGivesTheLargerPartsFirst) {
  using tandem::parallel::split_evenly;
  EXPECT_EQ(split_evenly(10, 3), (std::vector<int64_t>{4, 3, 3}));
  EXPECT_EQ(split_evenly(9, 3), (std::vector<int64_t>{3, 3, 3}));
  EXPECT_EQ(split_evenly(2, 4), (std::vector<int64_t>{1, 1, 0, 0}));
  EXPECT_EQ(split_evenly(0, 2), (std::vector<int64_t>{0, 0}));
}

TEST(Shares, CutByShares) {
  EXPECT_EQ(parallel::cut_by_shares(256, {3, 1}), (std::vector<int64_t>{192, 64}));
  EXPECT_EQ(parallel::cut_by_shares(10, {1, 1, 1}), (std::vector<int64_t>{4, 3, 3}));
  EXPECT_EQ(parallel::cut_by_shares(7, {1, 0, 2}), (std::vector<int64_t>{2, 0, 5}));
  EXPECT_EQ(parallel::cut_by_shares(1, {0, 1}), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(parallel::cut_by_shares(0, {1, 1}), (std::vector<int64_t>{0, 0}));
  for (int64_t rows = 0; rows < 50; ++rows) {
    const std::vector<int64_t> cut = parallel::cut_by_shares(rows, {0.7, 0.2, 0.1, 0});
    EXPECT_EQ(cut[0] + cut[1] + cut[2] + cut[3], rows);
    EXPECT_EQ(cut[3], 0);
  }
}

TEST(Shares, BadSharesAreNamed) {
  const std::string what = "--balance";
  EXPECT_TRUE(throws_with(
      [&] {
        parallel::check_shares({1, 2, 3}, 2, what);
      },
      "--balance: expected one share per device (2 devices) but got 3"));
  EXPECT_TRUE(throws_with(
      [&] {
        parallel::check_shares({1, -1}, 2, what);
      },
      "--balance: share 1 is -1; shares are relative weights"));
  EXPECT_TRUE(throws_with(
      [&] {
        parallel::check_shares({NAN, 1}, 2, what);
      },
      "--balance: share 0 is nan"));
  EXPECT_TRUE(throws_with(
      [&] {
        parallel::check_shares({0, 0}, 2, what);
      },
      "--balance: every share is 0"));
  EXPECT_TRUE(throws_with(
      [] {
        nn::DataParallel dp(
            nn::Linear(3, 2),
            nn::DataParallelOptions().device_ids(cpu_devices(2)).shares({1, 2, 3}));
      },
      "DataParallelOptions::shares: expected one share per device (2 devices) but got "
      "3"));
}

TEST(Shares, ScatterWithChunkSizes) {
  const Tensor x = tandem::randn({10, 3}).requires_grad_();
  const std::vector<Device> devices = cpu_devices(3);
  const std::vector<Tensor> pieces = parallel::scatter(x, devices, {5, 3, 2});
  EXPECT_EQ(rows_of(pieces), (std::vector<int64_t>{5, 3, 2}));
  for (size_t i = 0; i < pieces.size(); ++i) EXPECT_EQ(pieces[i].device(), devices[i]);
  EXPECT_TRUE(all_close(pieces[1].to("cpu:0"), x.narrow(0, 5, 3), 0, 0));
  // Backward joins the pieces' gradients on x's device.
  (pieces[0].sum() + 2 * pieces[2].sum().to("cpu:0")).backward();
  const Tensor want = tandem::cat(
      {tandem::ones({5, 3}), tandem::zeros({3, 3}), tandem::full({2, 3}, 2.0)});
  EXPECT_TRUE(all_close(x.grad(), want, 0, 0));
  // Along dim 1, and over a tree.
  const Tensor y = tandem::randn({2, 5});
  EXPECT_EQ(parallel::scatter(y, cpu_devices(2), {1, 4}, 1)[1].sizes(),
            (tandem::IntList{2, 4}));
  const auto trees = parallel::scatter(
      parallel::TensorTree{x.detach(), {x.detach()}}, cpu_devices(2), {9, 1});
  EXPECT_EQ(trees[1][1][0].tensor().size(0), 1);
}

TEST(Shares, ScatterChecksChunkSizes) {
  const Tensor x = tandem::randn({10, 3});
  EXPECT_TRUE(throws_with(
      [&] {
        parallel::scatter(x, cpu_devices(2), {5, 3, 2});
      },
      "scatter: Expected devices and chunk_sizes to be of same length, "
      "but got len(devices) = 2 and len(chunk_sizes) = 3"));
  EXPECT_TRUE(throws_with(
      [&] {
        parallel::scatter(x, cpu_devices(2), {10, 0});
      },
      "scatter: Chunk size must be positive, but chunk_sizes[1] is 0"));
  EXPECT_TRUE(throws_with(
      [&] {
        parallel::scatter(x, cpu_devices(2), {5, 4});
      },
      "scatter: given chunk sizes don't sum up to the tensor's size "
      "(sum(chunk_sizes) == 9, but expected 10)"));
}

// The whole batch's loss and gradients on one device against DataParallel
// over `devices` cut by `shares`, in float64.
void expect_whole_batch_gradient(const std::vector<Device>& devices,
                                 std::vector<double> shares,
                                 int64_t batch) {
  tandem::manual_seed(7);
  nn::Sequential model = make_mlp(6, 8, 4);
  model->to(tandem::kFloat64);
  const Tensor x = tandem::randn({batch, 6}, tandem::kFloat64);
  const Tensor target = tandem::randint(4, {batch});
  tandem::cross_entropy(model->forward(x), target).backward();
  std::vector<Tensor> want;
  for (const Tensor& p : model->parameters()) want.push_back(p.grad().clone());
  model->zero_grad();

  nn::DataParallel dp(
      model, nn::DataParallelOptions().device_ids(devices).shares(std::move(shares)));
  for (int step = 0; step < 2; ++step) {  // the second uses the cached replicas
    model->zero_grad();
    tandem::cross_entropy(dp(x), target).backward();
    const std::vector<Tensor> got = model->parameters();
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_TRUE(all_close(got[i].grad(), want[i], 1e-12, 1e-14))
          << "parameter " << i << " over " << devices.size() << " devices, step " << step;
    }
  }
}

TEST(Shares, UnevenCutGivesTheWholeBatchGradient) {
  expect_whole_batch_gradient(cpu_devices(2), {3, 1}, 32);
  expect_whole_batch_gradient(cpu_devices(2), {1, 5}, 7);
  expect_whole_batch_gradient(cpu_devices(3), {1, 0, 2}, 11);  // cpu:1 sits out
  expect_whole_batch_gradient(cpu_devices(4), {4, 3, 2, 1}, 13);
}

TEST(Shares, DataParallelReportsItsShares) {
  nn::DataParallel even(nn::Linear(3, 2),
                        nn::DataParallelOptions().device_ids(cpu_devices(2)));
  EXPECT_EQ(even->shares(), (std::vector<double>{0.5, 0.5}));
  nn::DataParallel fixed(
      nn::Linear(3, 2),
      nn::DataParallelOptions().device_ids(cpu_devices(2)).shares({3, 1}));
  EXPECT_EQ(fixed->shares(), (std::vector<double>{0.75, 0.25}));
}

TEST(ShareBalancer, FollowsTheRatesAndIgnoresNoise) {
  parallel::ShareBalancer balancer({1, 1});
  EXPECT_EQ(balancer.cut(256), (std::vector<int64_t>{128, 128}));
  // The first step is ignored; then device 1 runs at half speed.
  EXPECT_FALSE(balancer.observe({128, 128}, {9.0, 9.0}, 9.0));
  EXPECT_TRUE(balancer.observe({128, 128}, {0.010, 0.020}, 0.020));
  EXPECT_EQ(balancer.cut(256), (std::vector<int64_t>{171, 85}));
  // Until the search takes over (cut_search_test.cpp), the rates hold it.
  for (int step = 0; step < parallel::ShareBalancer::kSettledSteps; ++step) {
    const std::vector<int64_t> cut = balancer.cut(256);
    balancer.observe(cut, {cut[0] / 12800.0, cut[1] / 6400.0}, cut[1] / 6400.0);
  }
  EXPECT_EQ(balancer.cut(256), (std::vector<int64_t>{171, 85}));
  EXPECT_NEAR(balancer.shares()[0], 2.0 / 3.0, 1e-9);
  // A 2% wobble does not move the cut.
  parallel::ShareBalancer steady({1, 1});
  steady.observe({128, 128}, {1, 1}, 1);
  for (int step = 0; step < 20; ++step) {
    EXPECT_FALSE(
        steady.observe({128, 128}, {0.0100, step % 2 ? 0.0102 : 0.0098}, 0.0102));
  }
  EXPECT_EQ(steady.cut(256), (std::vector<int64_t>{128, 128}));
}

// A module whose replica on cpu:1 sleeps 40 µs a row: cpu:1 is slow.
struct SlowOnOneImpl : nn::Cloneable<SlowOnOneImpl> {
  SlowOnOneImpl() { reset(); }
  void reset() override { fc = register_module("fc", nn::Linear(4, 2)); }
  Tensor forward(const Tensor& x) {
    if (x.device() == Device("cpu:1")) {
      std::this_thread::sleep_for(std::chrono::microseconds(40 * x.size(0)));
    }
    return fc->forward(x);
  }
  nn::Linear fc{nullptr};
};
TANDEM_MODULE(SlowOnOne);

TEST(Shares, AutoBalanceMovesRowsAwayFromASlowDevice) {
  SlowOnOne model;
  nn::DataParallel dp(
      model,
      nn::DataParallelOptions().device_ids(cpu_devices(2)).balance(nn::Balance::kAuto));
  const Tensor x = tandem::randn({200, 4});
  for (int step = 0; step < 12; ++step) dp(x).sum().backward();
  const std::vector<double> shares = dp->shares();
  EXPECT_GT(shares[0], 0.7) << "cpu:1 sleeps 40 µs a row; cpu:0's share is " << shares[0];
}

}  // namespace
