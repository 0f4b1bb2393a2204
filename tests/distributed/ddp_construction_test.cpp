// DistributedDataParallel's construction (spec/distributed.md §12 cases
// 1-8, §13 item 4): rank 0's parameters and buffers are broadcast (buffers
// only with broadcast_buffers), a model that differs on some rank is a
// ModelMismatchError on every rank (PyTorch's texts where PyTorch has them),
// the argument checks' exact texts, and the "module." state-dict prefix.
#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>

#include "distributed_testing.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem::distributed {
namespace {

using testing::error_of;
using testing::root_copy;
using testing::world;

// An MLP with a BatchNorm1d (buffers running_mean, running_var,
// num_batches_tracked), initialized from `seed`, its buffers set to `value`.
nn::Sequential make_bn_mlp(uint64_t seed, double value) {
  manual_seed(seed);
  nn::Sequential model(nn::Linear(6, 8),
                       nn::BatchNorm1d(8),
                       nn::ReLU(),
                       nn::Linear(8, 8),
                       nn::ReLU(),
                       nn::Linear(8, 1));
  NoGradGuard no_grad;
  for (auto& buffer : model->named_buffers()) {
    const bool var = buffer.key().find("running_var") != std::string::npos;
    Tensor(buffer.value()).fill_(var ? value + 1 : value);
  }
  return model;
}

// Two parameters: "w" of `sizes`, "b" of 3 elements in `b_dtype`.
struct TwoParamsImpl : nn::Module {
  TwoParamsImpl(const IntList& sizes, ScalarType b_dtype) {
    w = register_parameter("w", randn(sizes));
    b = register_parameter("b", zeros({3}, b_dtype));
  }
  Tensor forward(const Tensor& x) { return x; }
  Tensor w, b;
};

std::string text_of(ScalarType dtype) {
  std::ostringstream out;
  out << dtype;
  return out.str();
}

bool contains(const std::string& s, const std::string& needle) {
  return s.find(needle) != std::string::npos;
}

TEST(DdpConstruction, EveryRankEndsWithRankZerosParametersAndBuffers) {
  auto pg = world();
  nn::Sequential rank0 = make_bn_mlp(100, 0.0);  // what rank 0 starts with
  nn::Sequential local = make_bn_mlp(100 + pg->rank(), pg->rank());
  nn::DistributedDataParallel ddp(local);
  const auto want = rank0->state_dict();
  for (const auto& item : local->state_dict()) {
    EXPECT_TRUE(equal(item.value(), want[item.key()]))
        << "rank " << pg->rank() << ": " << item.key();
  }
  // And the same as what rank 0 holds now (a collective per tensor).
  for (const auto& item : local->state_dict()) {
    EXPECT_TRUE(equal(item.value(), root_copy(pg, item.value())))
        << "rank " << pg->rank() << ": " << item.key();
  }
}

TEST(DdpConstruction, WithoutBroadcastBuffersEachRankKeepsItsOwnBuffers) {
  auto pg = world();
  nn::Sequential rank0 = make_bn_mlp(200, 0.0);
  nn::Sequential local = make_bn_mlp(200 + pg->rank(), pg->rank());
  nn::DistributedDataParallel ddp(
      local, nn::DistributedDataParallelOptions().broadcast_buffers(false));
  for (const auto& p : local->named_parameters()) {
    EXPECT_TRUE(equal(p.value(), rank0->named_parameters()[p.key()]))
        << "rank " << pg->rank() << ": " << p.key();
  }
  const Tensor mean = local->named_buffers()["1.running_mean"];
  EXPECT_TRUE(equal(mean, full({8}, static_cast<double>(pg->rank()))))
      << "rank " << pg->rank();
  const Tensor var = local->named_buffers()["1.running_var"];
  EXPECT_TRUE(equal(var, full({8}, pg->rank() + 1.0))) << "rank " << pg->rank();
}

TEST(DdpConstruction, DifferentParameterCountsFailOnEveryRankInPyTorchsWords) {
  auto pg = world();
  if (pg->size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const int me = pg->rank();
  std::string message = "(no ModelMismatchError)";
  try {
    if (me == 1) {
      nn::DistributedDataParallel ddp(nn::Sequential(nn::Linear(4, 4), nn::Linear(4, 4)));
    } else {
      nn::DistributedDataParallel ddp(nn::Linear(4, 4));
    }
  } catch (const ModelMismatchError& e) {
    message = e.what();
  }
  const std::string expected =
      me == 1
          ? "DDP expects same model across all ranks, but Rank 1 has 4 params, while "
            "rank 0 has inconsistent 2 params."
          : "DDP expects same model across all ranks, but Rank " + std::to_string(me) +
                " has 2 params, while rank 1 has inconsistent 4 params.";
  EXPECT_EQ(message, expected) << "rank " << me;
}

TEST(DdpConstruction, DifferentShapeFailsOnEveryRankAtOnce) {
  auto pg = world();
  if (pg->size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const int me = pg->rank();
  auto model =
      std::make_shared<TwoParamsImpl>(me == 1 ? IntList{3, 2} : IntList{2, 3}, kFloat32);
  pg->barrier().wait();
  const auto start = std::chrono::steady_clock::now();
  std::string message = "(no ModelMismatchError)";
  try {
    nn::DistributedDataParallel ddp(model);
  } catch (const ModelMismatchError& e) {
    message = e.what();
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::seconds(1)) << "rank " << me;
  if (me == 1) {
    EXPECT_EQ(
        message.rfind("[1]: params[0] in this process with sizes [3, 2] appears not "
                      "to match sizes of the same param in process 0.",
                      0),
        0u)
        << message;
  } else {
    EXPECT_TRUE(contains(message, "rank 1")) << "rank " << me << ": " << message;
    EXPECT_TRUE(contains(message, "params[0]")) << "rank " << me << ": " << message;
  }
}

// Same sizes, other strides: PyTorch's text has no "[rank]: " prefix here
// (reducer.cpp's verify_params_across_processes; spec §1 item 5).
TEST(DdpConstruction, DifferentStridesFailOnEveryRankInPyTorchsWords) {
  auto pg = world();
  if (pg->size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const int me = pg->rank();
  auto model = std::make_shared<TwoParamsImpl>(IntList{2, 3}, kFloat32);
  if (me == 1) model->w.set_data(randn({3, 2}).t());  // sizes [2, 3], strides [1, 2]
  std::string message = "(no ModelMismatchError)";
  try {
    nn::DistributedDataParallel ddp(model);
  } catch (const ModelMismatchError& e) {
    message = e.what();
  }
  if (me == 1) {
    EXPECT_EQ(message.rfind("params[0] in this process with sizes [2, 3] appears not to "
                            "match strides of the same param in process 0.",
                            0),
              0u)
        << message;
  } else {
    EXPECT_TRUE(contains(message, "rank 1")) << "rank " << me << ": " << message;
    EXPECT_TRUE(contains(message, "strides")) << "rank " << me << ": " << message;
  }
}

TEST(DdpConstruction, DifferentDtypeFailsOnEveryRankNamingBothDtypes) {
  auto pg = world();
  if (pg->size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const int me = pg->rank();
  auto model =
      std::make_shared<TwoParamsImpl>(IntList{2, 3}, me == 1 ? kFloat64 : kFloat32);
  std::string message = "(no ModelMismatchError)";
  try {
    nn::DistributedDataParallel ddp(model);
  } catch (const ModelMismatchError& e) {
    message = e.what();
  }
  EXPECT_TRUE(contains(message, "'b'")) << "rank " << me << ": " << message;
  EXPECT_TRUE(contains(message, "params[1]")) << "rank " << me << ": " << message;
  EXPECT_TRUE(contains(message, text_of(kFloat32))) << "rank " << me << ": " << message;
  EXPECT_TRUE(contains(message, text_of(kFloat64))) << "rank " << me << ": " << message;
  if (me != 1) {
    EXPECT_TRUE(contains(message, "rank 1")) << "rank " << me << ": " << message;
  }
}

// Spec §12 case 28: before a synchronized forward rank 0's buffers are
// broadcast, then each rank's forward updates them with its own batch.
TEST(DdpConstruction, BuffersAreBroadcastBeforeEachForward) {
  auto pg = world();
  nn::Sequential local = make_bn_mlp(400 + pg->rank(), 0.0);
  nn::DistributedDataParallel ddp(local);
  // What every rank holds now, as a bare model, updated by this rank's rows.
  nn::Sequential expected = make_bn_mlp(0, 0.0);
  expected->load_state_dict(local->state_dict());
  if (pg->rank() == 1) {
    NoGradGuard no_grad;
    Tensor(local->named_buffers()["1.running_mean"]).fill_(100.0);
  }
  Generator g(9);
  const Tensor x = randn({2 * pg->size(), 6}, g);
  const Tensor mine = testing::share(x, pg->rank(), pg->size());
  ddp->forward(mine).sum().backward();
  {
    NoGradGuard no_grad;
    expected->forward(mine);
  }
  for (const char* name : {"1.running_mean", "1.running_var", "1.num_batches_tracked"}) {
    EXPECT_TRUE(tandem::testing::all_close(local->named_buffers()[name].to(kFloat64),
                                           expected->named_buffers()[name].to(kFloat64),
                                           1e-6,
                                           1e-7))
        << "rank " << pg->rank() << ": " << name;
  }
}

TEST(DdpConstruction, NoParameterRequiringGradIsAnError) {
  nn::Linear fc(4, 4);
  for (Tensor& p : fc->parameters()) p.requires_grad_(false);
  EXPECT_EQ(error_of([&] { nn::DistributedDataParallel ddp(fc); }),
            "DistributedDataParallel is not needed when a module doesn't have any "
            "parameter that requires a gradient.");
}

TEST(DdpConstruction, DeviceIdsChecksUsePyTorchsWords) {
  nn::Linear fc(4, 4);
  const Device cpu(kCPU);
  EXPECT_EQ(error_of([&] {
              nn::DistributedDataParallel ddp(
                  fc, nn::DistributedDataParallelOptions().device_ids({cpu, cpu}));
            }),
            "device_ids can only be None or contain a single element.");
  std::ostringstream ids;
  ids << "[" << cpu << "]";
  EXPECT_EQ(error_of([&] {
              nn::DistributedDataParallel ddp(
                  fc, nn::DistributedDataParallelOptions().device_ids({cpu}));
            }),
            "DistributedDataParallel device_ids and output_device arguments only work "
            "with single-device/multiple-device GPU modules or CPU modules, but got "
            "device_ids " +
                ids.str() + ", output_device None, and module parameters {cpu}.");
}

TEST(DdpConstruction, NonPositiveBucketCapIsAnError) {
  nn::Linear fc(4, 4);
  EXPECT_TRUE(tandem::testing::throws_with(
      [&] {
        nn::DistributedDataParallel ddp(
            fc, nn::DistributedDataParallelOptions().bucket_cap_mb(0));
      },
      "bucket_cap_mb must be positive"));
}

TEST(DdpConstruction, StateDictKeysArePrefixedAndLoadIntoABareModel) {
  auto pg = world();
  nn::Sequential local = make_bn_mlp(300 + pg->rank(), 0.5);
  nn::DistributedDataParallel ddp(local);
  const auto wrapped = ddp->state_dict();
  const auto bare = local->state_dict();
  ASSERT_EQ(wrapped.size(), bare.size());
  OrderedDict<std::string, Tensor> stripped("Tensor");
  for (size_t i = 0; i < wrapped.size(); ++i) {
    EXPECT_EQ(wrapped[i].key(), "module." + bare[i].key());
    std::string key = wrapped[i].key();
    if (key.rfind("module.", 0) == 0) key = key.substr(7);
    stripped.insert(key, wrapped[i].value());
  }
  nn::Sequential fresh = make_bn_mlp(999, 3.0);
  fresh->load_state_dict(stripped);
  local->eval();
  fresh->eval();
  Generator g(5);
  const Tensor x = randn({4, 6}, g);
  NoGradGuard no_grad;
  EXPECT_TRUE(equal(fresh->forward(x), local->forward(x))) << "rank " << pg->rank();
}

}  // namespace
}  // namespace tandem::distributed
