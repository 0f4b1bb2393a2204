// DistributedDataParallel and parameters that get no gradient
// (spec/distributed.md §4, §12 cases 18-22, §13 item 5): without
// find_unused_parameters an UnusedParameterError on every rank, from the
// backward of the same iteration, naming the parameters and ranks, and the
// next iteration works; with it, unused parameters keep undefined grads, a
// parameter used on one rank only gets that rank's gradient / world size,
// outputs left out of the loss are fine. A second synchronized forward
// without a backward in between is an error.
#include <gtest/gtest.h>

#include <string>

#include "distributed_testing.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem::distributed {
namespace {

using tandem::testing::all_close;
using testing::share;
using testing::world;

// net1 always; net2 after it when use_net2.
struct TwoNetImpl : nn::Module {
  TwoNetImpl() {
    net1 = register_module("net1", nn::Linear(10, 10));
    net2 = register_module("net2", nn::Linear(10, 10));
  }
  Tensor forward(const Tensor& x) {
    Tensor y = net1->forward(x).relu();
    return use_net2 ? net2->forward(y) : y;
  }
  nn::Linear net1{nullptr}, net2{nullptr};
  bool use_net2 = false;
};

// net1's and net2's outputs side by side.
struct TwoOutputsImpl : nn::Module {
  TwoOutputsImpl() {
    net1 = register_module("net1", nn::Linear(10, 10));
    net2 = register_module("net2", nn::Linear(10, 10));
  }
  parallel::TensorTree forward(const parallel::TensorTree& x) {
    return parallel::TensorTree({net1->forward(x.tensor()), net2->forward(x.tensor())});
  }
  nn::Linear net1{nullptr}, net2{nullptr};
};

// A model that starts different on every rank (rank 0's values win).
std::shared_ptr<TwoNetImpl> make_two_net() {
  manual_seed(500 + world()->rank());
  return std::make_shared<TwoNetImpl>();
}

// A bare copy of `model`'s current parameters.
// DDP over `model` with find_unused_parameters, gradients as bucket views or not.
nn::DistributedDataParallel finding_unused(const std::shared_ptr<TwoNetImpl>& model,
                                           bool as_view) {
  return nn::DistributedDataParallel(model,
                                     nn::DistributedDataParallelOptions()
                                         .find_unused_parameters(true)
                                         .gradient_as_bucket_view(as_view));
}

std::shared_ptr<TwoNetImpl> replica_of(const TwoNetImpl& model) {
  auto copy = std::make_shared<TwoNetImpl>();
  NoGradGuard no_grad;
  for (const auto& p : copy->named_parameters()) {
    Tensor(p.value()).copy_(model.named_parameters()[p.key()]);
  }
  copy->use_net2 = model.use_net2;
  return copy;
}

Tensor global_input(uint64_t seed) {
  Generator g(seed);
  return randn({2 * world()->size(), 10}, g);
}

Tensor local_loss(nn::DistributedDataParallel& ddp, const Tensor& x) {
  auto pg = world();
  return square(ddp->forward(share(x, pg->rank(), pg->size()))).sum();
}

// This rank's grads of `names` equal `want`'s grads times `scale`.
void expect_grads(const nn::Module& got,
                  const nn::Module& want,
                  const std::vector<std::string>& names,
                  double scale,
                  const std::string& where) {
  for (const std::string& name : names) {
    const Tensor grad = got.named_parameters()[name].grad();
    ASSERT_TRUE(grad.defined())
        << "rank " << world()->rank() << ", " << where << ": " << name;
    EXPECT_TRUE(all_close(grad, want.named_parameters()[name].grad() * scale, 1e-5, 1e-6))
        << "rank " << world()->rank() << ", " << where << ": " << name;
  }
}

const std::vector<std::string> kNet1{"net1.weight", "net1.bias"};
const std::vector<std::string> kNet2{"net2.weight", "net2.bias"};
const std::vector<std::string> kAll{
    "net1.weight", "net1.bias", "net2.weight", "net2.bias"};

// The reference for a mean over the global batch: one process, all rows.
std::shared_ptr<TwoNetImpl> reference_grads(const TwoNetImpl& model, const Tensor& x) {
  auto reference = replica_of(model);
  square(reference->forward(x)).sum().backward();
  return reference;
}

TEST(DdpUnusedParameters, WithoutTheFlagEveryRankRaisesInTheSameBackward) {
  auto pg = world();
  auto model = make_two_net();
  nn::DistributedDataParallel ddp(model);
  const Tensor x = global_input(1);
  std::string message = "(no UnusedParameterError)";
  try {
    local_loss(ddp, x).backward();
  } catch (const UnusedParameterError& e) {
    message = e.what();
  }
  for (const char* name : {"net2.weight (params[2])", "net2.bias (params[3])"}) {
    EXPECT_NE(message.find(name), std::string::npos)
        << "rank " << pg->rank() << ": " << message;
  }
  EXPECT_EQ(message.find("net1."), std::string::npos) << message;
  for (int r = 0; r < pg->size(); ++r) {
    EXPECT_NE(message.find("rank " + std::to_string(r) + ": "), std::string::npos)
        << message;
  }
  // The used parameters were reduced all the same (divided by the world
  // size per rank, summed: the global batch's gradient over W ranks).
  auto reference = reference_grads(*model, x);
  expect_grads(*model, *reference, kNet1, 1.0 / pg->size(), "the failed iteration");
  // The next iteration, using everything, works on every rank.
  model->use_net2 = true;
  model->zero_grad();
  const Tensor x2 = global_input(2);
  local_loss(ddp, x2).backward();
  reference = reference_grads(*model, x2);
  expect_grads(*model, *reference, kAll, 1.0 / pg->size(), "the next iteration");
}

TEST(DdpUnusedParameters, AParameterOneRankDidNotUseIsAnErrorOnEveryRank) {
  auto pg = world();
  if (pg->size() < 2) GTEST_SKIP() << "needs 2 ranks";
  auto model = make_two_net();
  model->use_net2 = pg->rank() != 1;
  nn::DistributedDataParallel ddp(model);
  std::string message = "(no UnusedParameterError)";
  try {
    local_loss(ddp, global_input(3)).backward();
  } catch (const UnusedParameterError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("rank 1: net2.weight (params[2]), net2.bias (params[3])"),
            std::string::npos)
      << "rank " << pg->rank() << ": " << message;
  EXPECT_EQ(message.find("rank 0: "), std::string::npos) << message;
}

TEST(DdpUnusedParameters, WithTheFlagUnusedParametersKeepUndefinedGrads) {
  auto pg = world();
  auto model = make_two_net();
  nn::DistributedDataParallel ddp(
      model, nn::DistributedDataParallelOptions().find_unused_parameters(true));
  for (int i = 0; i < 2; ++i) {
    const std::string where = "iteration " + std::to_string(i);
    model->zero_grad();
    const Tensor x = global_input(10 + i);
    EXPECT_NO_THROW(local_loss(ddp, x).backward()) << "rank " << pg->rank();
    for (const std::string& name : kNet2) {
      EXPECT_FALSE(model->named_parameters()[name].grad().defined())
          << "rank " << pg->rank() << ", " << where << ": " << name;
    }
    auto reference = reference_grads(*model, x);
    expect_grads(*model, *reference, kNet1, 1.0 / pg->size(), where);
  }
}

TEST(DdpUnusedParameters, ABranchUsedOnRankOneOnlyGetsItsGradientOverTheWorldSize) {
  auto pg = world();
  if (pg->size() < 2) GTEST_SKIP() << "needs 2 ranks";
  auto model = make_two_net();
  nn::DistributedDataParallel ddp(
      model, nn::DistributedDataParallelOptions().find_unused_parameters(true));
  model->use_net2 = pg->rank() == 1;
  const Tensor x = global_input(20);
  local_loss(ddp, x).backward();
  // Every rank's local gradients, summed in one replica, over W.
  auto sum = replica_of(*model);
  for (int r = 0; r < pg->size(); ++r) {
    sum->use_net2 = r == 1;
    square(sum->forward(share(x, r, pg->size()))).sum().backward();
  }
  expect_grads(*model, *sum, kAll, 1.0 / pg->size(), "branch on rank 1");
}

TEST(DdpUnusedParameters, AnOutputLeftOutOfTheLossIsFineWithTheFlag) {
  auto pg = world();
  manual_seed(600 + pg->rank());
  auto model = std::make_shared<TwoOutputsImpl>();
  nn::DistributedDataParallel ddp(
      model, nn::DistributedDataParallelOptions().find_unused_parameters(true));
  for (int i = 0; i < 2; ++i) {
    const Tensor x = global_input(30 + i);
    const parallel::TensorTree out =
        ddp->forward(parallel::TensorTree(share(x, pg->rank(), pg->size())));
    ASSERT_EQ(out.size(), 2u);
    EXPECT_NO_THROW(square(out[0].tensor()).sum().backward()) << "rank " << pg->rank();
    for (const std::string& name : kNet2) {
      EXPECT_FALSE(model->named_parameters()[name].grad().defined())
          << "rank " << pg->rank() << ": " << name;
    }
    for (const std::string& name : kNet1) {
      EXPECT_TRUE(model->named_parameters()[name].grad().defined()) << name;
    }
    model->zero_grad();
  }
}

// Gradient accumulation across synchronized iterations (no zero_grad in
// between) with a parameter no rank uses in the second: its .grad keeps the
// first iteration's average (spec §3 finalize: "globally unused parameters
// keep .grad untouched"; this class's header says the same).
TEST(DdpUnusedParameters, AccumulatedGradOfAParameterNoRankUsedIsKept) {
  auto pg = world();
  for (bool as_view : {true, false}) {
    const std::string where =
        std::string("gradient_as_bucket_view ") + (as_view ? "on" : "off");
    auto model = make_two_net();
    nn::DistributedDataParallel ddp = finding_unused(model, as_view);
    model->use_net2 = true;
    local_loss(ddp, global_input(60)).backward();
    std::vector<Tensor> kept;
    for (const std::string& name : kNet2) {
      kept.push_back(model->named_parameters()[name].grad().clone());
    }
    model->use_net2 = false;
    local_loss(ddp, global_input(61)).backward();  // no zero_grad: accumulate
    for (size_t k = 0; k < kNet2.size(); ++k) {
      const Tensor grad = model->named_parameters()[kNet2[k]].grad();
      ASSERT_TRUE(grad.defined()) << where << ": " << kNet2[k];
      EXPECT_TRUE(all_close(grad, kept[k], 1e-6, 1e-7))
          << "rank " << pg->rank() << ", " << where << ": " << kNet2[k];
    }
  }
}

// The same with a parameter only rank 1 uses in the second iteration: every
// rank's .grad holds the first average A, so the new average is A + g1 / W
// (PyTorch copies every defined .grad into its bucket, used or not).
TEST(DdpUnusedParameters, AccumulatedGradOfAParameterOneRankUsedIsAveragedWhole) {
  auto pg = world();
  if (pg->size() < 2) GTEST_SKIP() << "needs 2 ranks";
  for (bool as_view : {true, false}) {
    const std::string where =
        std::string("gradient_as_bucket_view ") + (as_view ? "on" : "off");
    auto model = make_two_net();
    nn::DistributedDataParallel ddp = finding_unused(model, as_view);
    auto sum = replica_of(*model);
    const Tensor x1 = global_input(70);
    const Tensor x2 = global_input(71);
    model->use_net2 = true;
    local_loss(ddp, x1).backward();
    model->use_net2 = pg->rank() == 1;
    local_loss(ddp, x2).backward();  // no zero_grad: accumulate
    for (int r = 0; r < pg->size(); ++r) {
      sum->use_net2 = true;
      square(sum->forward(share(x1, r, pg->size()))).sum().backward();
      sum->use_net2 = r == 1;
      square(sum->forward(share(x2, r, pg->size()))).sum().backward();
    }
    expect_grads(*model, *sum, kAll, 1.0 / pg->size(), where);
  }
}

// The "flag given but nothing unused" warning is PyTorch's TORCH_WARN_ONCE:
// once per process, however many DDP instances (spec §12 case 22).
TEST(DdpUnusedParameters, TheFlagWithEverythingUsedWorksAndWarnsOncePerProcess) {
  auto pg = world();
  int warnings = 0;
  auto previous = set_warning_handler([&](const std::string& message) {
    if (message.find("find_unused_parameters") != std::string::npos) ++warnings;
  });
  for (int instance = 0; instance < 2; ++instance) {
    auto model = make_two_net();
    model->use_net2 = true;
    nn::DistributedDataParallel ddp(
        model, nn::DistributedDataParallelOptions().find_unused_parameters(true));
    for (int i = 0; i < 3; ++i) {
      model->zero_grad();
      const Tensor x = global_input(40 + i);
      EXPECT_NO_THROW(local_loss(ddp, x).backward()) << "rank " << pg->rank();
      auto reference = reference_grads(*model, x);
      expect_grads(
          *model,
          *reference,
          kAll,
          1.0 / pg->size(),
          "instance " + std::to_string(instance) + ", iteration " + std::to_string(i));
    }
  }
  set_warning_handler(previous);
  EXPECT_LE(warnings, 1) << "rank " << pg->rank()
                         << ": the warning came once per instance";
}

TEST(DdpUnusedParameters, ASecondForwardBeforeBackwardIsAnError) {
  auto pg = world();
  auto model = make_two_net();
  model->use_net2 = true;
  nn::DistributedDataParallel ddp(model);
  const Tensor x = global_input(50);
  const Tensor first = local_loss(ddp, x);
  EXPECT_TRUE(tandem::testing::throws_with(
      [&] { local_loss(ddp, x); },
      "Expected to have finished reduction in the prior iteration"))
      << "rank " << pg->rank();
  // The first forward's backward is still synchronized, and training goes on.
  first.backward();
  auto reference = reference_grads(*model, x);
  expect_grads(*model, *reference, kAll, 1.0 / pg->size(), "after the error");
  model->zero_grad();
  const Tensor x2 = global_input(51);
  local_loss(ddp, x2).backward();
  reference = reference_grads(*model, x2);
  expect_grads(*model, *reference, kAll, 1.0 / pg->size(), "the next iteration");
}

}  // namespace
}  // namespace tandem::distributed
