// Invariant mode (issue 18): training reaches bitwise the same weights and
// optimizer state on any device list, with even, uneven or auto shares, at
// the same global batch, seed and dtype (Note [Invariant mode] in
// src/parallel/micro_batches.cpp).
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "parallel/parallel_testing.h"
#include "support/invariant_testing.h"
#include "tandem/core/profiler.h"

namespace {

namespace nn = tandem::nn;
namespace F = tandem::nn::functional;
namespace optim = tandem::optim;
using tandem::Device;
using tandem::Tensor;
using tandem::testing::cnn_without_batch_norm;
using tandem::testing::cpu_devices;
using tandem::testing::mlp_with_dropout;
using tandem::testing::Optimizer;
using tandem::testing::optimizer_name;
using tandem::testing::same_bits;
using tandem::testing::Task;
using tandem::testing::throws_with;
using tandem::testing::train;
using tandem::testing::tutorial_model;

// One way to run the devices.
struct DeviceSetup {
  std::string name;
  std::vector<Device> devices;
  std::optional<std::vector<double>> shares;
  nn::Balance balance = nn::Balance::kEven;
};

std::vector<DeviceSetup> setups() {
  return {
      {"cpu:0", cpu_devices(1), std::nullopt},
      {"cpu:0,1 even", cpu_devices(2), std::nullopt},
      {"cpu:0,1 shares 3,1", cpu_devices(2), std::vector<double>{3, 1}},
      {"cpu:0,1 auto", cpu_devices(2), std::nullopt, nn::Balance::kAuto},
      {"cpu:0..2 even", cpu_devices(3), std::nullopt},
      {"cpu:0..2 shares 1,0,2", cpu_devices(3), std::vector<double>{1, 0, 2}},
      {"cpu:0..3 even", cpu_devices(4), std::nullopt},
      {"cpu:0..3 shares 4,3,2,1", cpu_devices(4), std::vector<double>{4, 3, 2, 1}},
      {"cpu:0..3 auto from 1,2,3,4",
       cpu_devices(4),
       std::vector<double>{1, 2, 3, 4},
       nn::Balance::kAuto},
  };
}

nn::DataParallelOptions invariant_on(const DeviceSetup& s, int64_t micro_batch) {
  auto options = nn::DataParallelOptions()
                     .device_ids(s.devices)
                     .balance(s.balance)
                     .invariant(true)
                     .micro_batch(micro_batch);
  if (s.shares) options.shares(*s.shares);
  return options;
}

std::map<std::string, Tensor> train_data_parallel(const Task& task,
                                                  const DeviceSetup& setup,
                                                  Optimizer which) {
  tandem::manual_seed(7);
  nn::DataParallel dp(task.make(), invariant_on(setup, 8));
  return train(
      task,
      [&](const Tensor& x, const Tensor& y) { return F::cross_entropy(dp(x), y); },
      *dp,
      which);
}

class InvariantMode : public ::testing::TestWithParam<Optimizer> {};

void expect_same_on_every_setup(const Task& task, Optimizer which) {
  const auto reference = train_data_parallel(task, setups().front(), which);
  for (const DeviceSetup& setup : setups()) {
    EXPECT_TRUE(same_bits(reference, train_data_parallel(task, setup, which)))
        << task.name << " on " << setup.name;
  }
}

TEST_P(InvariantMode, MlpWithDropoutHasTheSameBitsOnEveryDeviceList) {
  expect_same_on_every_setup(mlp_with_dropout(), GetParam());
}

TEST_P(InvariantMode, CnnHasTheSameBitsOnEveryDeviceList) {
  expect_same_on_every_setup(cnn_without_batch_norm(), GetParam());
}

TEST_P(InvariantMode, TutorialModelHasTheSameBitsOnEveryDeviceList) {
  expect_same_on_every_setup(tutorial_model(), GetParam());
}

// The first seed's DataParallelModel: block2 alone is wrapped, inside a
// model that runs on cpu:0.
struct SeedModelImpl : nn::Cloneable<SeedModelImpl> {
  explicit SeedModelImpl(DeviceSetup setup) : setup(std::move(setup)) { reset(); }
  void reset() override {
    block1 = register_module("block1", nn::Linear(10, 20));
    block2 = register_module(
        "block2", nn::DataParallel(nn::Linear(20, 20), invariant_on(setup, 4)));
    block3 = register_module("block3", nn::Linear(20, 20));
  }
  Tensor forward(const Tensor& x) { return block3(block2(block1(x))); }
  DeviceSetup setup;
  nn::Linear block1{nullptr};
  nn::DataParallel block2{nullptr};
  nn::Linear block3{nullptr};
};
TANDEM_MODULE(SeedModel);

TEST_P(InvariantMode, SeedModelWithAWrappedBlockHasTheSameBitsOnEveryDeviceList) {
  const Task task{"",
                  nullptr,
                  [](tandem::Generator& g, int64_t rows) {
                    return tandem::randn({rows, 10}, g);
                  },
                  20,
                  30};
  auto run = [&](const DeviceSetup& setup) {
    tandem::manual_seed(7);
    SeedModel model(setup);
    return train(
        task,
        [&](const Tensor& x, const Tensor& y) { return F::cross_entropy(model(x), y); },
        *model,
        GetParam());
  };
  const auto reference = run(setups().front());
  for (const DeviceSetup& setup : setups()) {
    EXPECT_TRUE(same_bits(reference, run(setup))) << setup.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Optimizers,
                         InvariantMode,
                         ::testing::Values(Optimizer::kSgdMomentum, Optimizer::kAdam),
                         [](const auto& info) { return optimizer_name(info.param); });

TEST(InvariantMode, Float64TooAndTheGradientIsTheWholeBatchs) {
  // Against the module alone on the whole batch: the same gradient up to
  // rounding (the sums run in another order), in float64.
  tandem::manual_seed(3);
  auto model = nn::Sequential(nn::Linear(6, 8), nn::Tanh(), nn::Linear(8, 3));
  model->to(tandem::kFloat64);
  const Tensor x = tandem::randn({29, 6}, tandem::kFloat64);
  const Tensor y = tandem::randint(0, 3, {29});
  F::cross_entropy(model(x), y).backward();
  std::vector<Tensor> want;
  for (const Tensor& p : model->parameters()) want.push_back(p.grad().clone());
  model->zero_grad();
  nn::DataParallel dp(
      model, invariant_on({"", cpu_devices(3), std::vector<double>{2, 1, 1}}, 4));
  F::cross_entropy(dp(x), y).backward();
  const auto params = model->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_TRUE(tandem::testing::all_close(params[i].grad(), want[i], 1e-12, 1e-14));
  }
}

// Records the rows of every forward call.
struct RowsSeenImpl : nn::Cloneable<RowsSeenImpl> {
  RowsSeenImpl() { reset(); }
  void reset() override { fc = register_module("fc", nn::Linear(5, 2)); }
  Tensor forward(const Tensor& x) {
    std::lock_guard<std::mutex> lock(seen->mutex);
    seen->rows.push_back(x.size(0));
    return fc(x);
  }
  struct Seen {
    std::mutex mutex;
    std::vector<int64_t> rows;
  };
  nn::Linear fc{nullptr};
  std::shared_ptr<Seen> seen = std::make_shared<Seen>();
};
TANDEM_MODULE(RowsSeen);

TEST(InvariantMode, EveryCallSeesOneMicroBatchWhateverTheDevices) {
  for (int n = 1; n <= 4; ++n) {
    RowsSeen model;
    nn::DataParallel dp(model, invariant_on({"", cpu_devices(n), std::nullopt}, 8));
    EXPECT_EQ(dp(tandem::randn({30, 5})).sizes(), tandem::IntList({30, 2}));
    std::vector<int64_t> rows = model->seen->rows;
    std::sort(rows.begin(), rows.end());
    EXPECT_EQ(rows, (std::vector<int64_t>{6, 8, 8, 8})) << n << " devices";
  }
}

TEST(InvariantMode, CreateGraphSumsInTheSameTree) {
  // Five micro-batches: a tree whose last leaf is carried up two levels.
  tandem::manual_seed(4);
  auto model = nn::Sequential(nn::Linear(3, 4), nn::Tanh(), nn::Linear(4, 2));
  nn::DataParallel dp(
      model, invariant_on({"", cpu_devices(3), std::vector<double>{1, 2, 2}}, 3));
  const Tensor x = tandem::randn({14, 3});
  const std::vector<Tensor> params = model->parameters();
  const auto plain = tandem::autograd::grad({tandem::square(dp(x)).sum()}, params);
  const auto recorded = tandem::autograd::grad(
      {tandem::square(dp(x)).sum()}, params, {}, {}, /*create_graph=*/true);
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_TRUE(recorded[i].requires_grad());
    EXPECT_TRUE(tandem::equal(plain[i], recorded[i].detach())) << "parameter " << i;
  }
}

TEST(InvariantMode, RefusesBatchNormWhileTrainingNamingIt) {
  auto model = nn::Sequential(nn::Linear(4, 6), nn::BatchNorm1d(6), nn::Linear(6, 2));
  nn::DataParallel dp(model, invariant_on({"", cpu_devices(2), std::nullopt}, 4));
  EXPECT_TRUE(throws_with(
      [&] {
        dp(tandem::randn({10, 4}));
      },
      "DataParallel: invariant mode cannot run BatchNorm1d at '1' while "
      "it normalises over the batch"));
  model[1]->eval();
  EXPECT_EQ(dp(tandem::randn({10, 4})).sizes(), tandem::IntList({10, 2}));
}

TEST(InvariantMode, BadMicroBatchIsAnError) {
  EXPECT_TRUE(throws_with(
      [&] {
        nn::DataParallel(nn::Linear(2, 2),
                         nn::DataParallelOptions()
                             .device_ids(cpu_devices(2))
                             .invariant(true)
                             .micro_batch(0));
      },
      "DataParallelOptions::micro_batch: expected a positive number of rows, got 0"));
}

TEST(InvariantMode, DropoutMasksAreKeyedBySampleNotByCall) {
  // Rows 4.. of a 10-row mask drawn at once equal a 6-row mask drawn with
  // first_row 4; and two seeds give different masks.
  const Tensor x = tandem::ones({10, 50});
  auto draw = [&](uint64_t seed, int64_t first_row, const Tensor& input) {
    tandem::SampleKeys keys(seed, first_row, input.size(0), 0);
    return tandem::dropout(input, 0.5, true);
  };
  const Tensor whole = draw(1, 0, x);
  const Tensor tail = draw(1, 4, x.narrow(0, 4, 6).contiguous());
  EXPECT_TRUE(tandem::equal(whole.narrow(0, 4, 6), tail));
  EXPECT_FALSE(tandem::equal(whole, draw(2, 0, x)));
  const double kept = (whole != 0).to(tandem::kFloat64).mean().item<double>();
  EXPECT_NEAR(kept, 0.5, 0.05);
  // Batch on dim 1 (time-major): the same rule along that dim.
  const Tensor t = tandem::ones({3, 10, 7});
  auto draw_dim1 = [&](int64_t first_row, const Tensor& input) {
    tandem::SampleKeys keys(5, first_row, input.size(1), 1);
    return tandem::dropout(input, 0.5, true);
  };
  EXPECT_TRUE(tandem::equal(draw_dim1(0, t).narrow(1, 2, 8),
                            draw_dim1(2, t.narrow(1, 2, 8).contiguous())));
}

// Note [What a mask is keyed by] in src/ops/dropout.cpp.
TEST(InvariantMode, MasksOverSeveralRowsPerSampleOrNoneAreKeyedToo) {
  auto draw = [](int64_t first_row, int64_t rows, const Tensor& input) {
    tandem::SampleKeys keys(7, first_row, rows, 0);
    return tandem::dropout(input, 0.5, true);
  };
  // Three rows per sample ([batch * heads, ...]): samples 4.. of a 10-sample
  // draw equal a 6-sample draw that starts at sample 4.
  const Tensor heads = tandem::ones({30, 16});
  EXPECT_TRUE(tandem::equal(draw(0, 10, heads).narrow(0, 12, 18),
                            draw(4, 6, heads.narrow(0, 12, 18).contiguous())));
  // Keyed row by row, a piece of samples 4.. would have drawn its first rows
  // with the keys of rows 4.. of the piece before it.
  const Tensor first = draw(0, 4, tandem::ones({12, 16}));
  const Tensor second = draw(4, 4, tandem::ones({12, 16}));
  EXPECT_FALSE(tandem::equal(first.narrow(0, 4, 8), second.narrow(0, 0, 8)));
  // A tensor not laid out by sample (7 rows for a 4-sample piece) is drawn
  // whole per piece: the same for the same piece, apart for another.
  const Tensor other = tandem::ones({7, 16});
  EXPECT_TRUE(tandem::equal(draw(4, 4, other), draw(4, 4, other)));
  EXPECT_FALSE(tandem::equal(draw(0, 4, other), draw(4, 4, other)));
}

// A module whose type the subtree path does not know, holding a task's
// model: DataParallel runs it micro-batch by micro-batch.
struct OpaqueImpl : nn::Cloneable<OpaqueImpl> {
  explicit OpaqueImpl(std::function<nn::Sequential()> make) : make(std::move(make)) {
    reset();
  }
  void reset() override { inner = register_module("inner", make()); }
  Tensor forward(const Tensor& x) { return inner->forward(x); }
  std::function<nn::Sequential()> make;
  nn::Sequential inner{nullptr};
};
TANDEM_MODULE(Opaque);

// A Sequential of Linear, ReLU and Dropout runs each device's largest
// subtrees of micro-batches in one forward each (Note [Subtrees in one
// forward] in src/parallel/micro_batches.cpp): the same bits as running
// them one by one.
// How many replicas one forward of `model` over cpu:0,cpu:1 runs, in
// invariant mode with micro-batches of 8 rows, on a batch of `rows`.
template <typename Model>
size_t replica_forwards(Model model, int64_t rows) {
  nn::DataParallel dp(model, invariant_on({"", cpu_devices(2), std::nullopt}, 8));
  tandem::profiler::Session session;
  dp(tandem::randn({rows, 20}));
  session.stop();
  const auto events = session.events();
  return static_cast<size_t>(
      std::count_if(events.begin(), events.end(), [](const tandem::profiler::Event& e) {
        return e.name == "replica forward";
      }));
}

TEST_P(InvariantMode, SubtreesInOneForwardHaveTheBitsOfMicroBatchesOneByOne) {
  const Task task = mlp_with_dropout();
  // 50 rows, seven micro-batches: [0, 4) on cpu:0 and [4, 7) on cpu:1, each
  // a whole subtree, one replica each; the opaque module runs all seven
  // apart. Without AVX-512F both run seven.
  const size_t subtrees = __builtin_cpu_supports("avx512f") ? 2 : 7;
  EXPECT_EQ(replica_forwards(task.make(), 50), subtrees);
  EXPECT_EQ(replica_forwards(Opaque(task.make), 50), 7u);
  for (const DeviceSetup& setup : setups()) {
    const auto subtrees = train_data_parallel(task, setup, GetParam());
    tandem::manual_seed(7);
    nn::DataParallel dp(Opaque(task.make), invariant_on(setup, 8));
    const auto one_by_one = train(
        task,
        [&](const Tensor& x, const Tensor& y) { return F::cross_entropy(dp(x), y); },
        *dp,
        GetParam());
    std::map<std::string, Tensor> renamed;
    for (const auto& [name, value] : one_by_one) {
      // "module.inner.0.weight" and the like: the names without "inner.".
      std::string plain = name;
      const size_t at = plain.find("inner.");
      if (at != std::string::npos) plain.erase(at, 6);
      renamed[plain] = value;
    }
    EXPECT_TRUE(same_bits(subtrees, renamed)) << setup.name;
  }
}

}  // namespace
