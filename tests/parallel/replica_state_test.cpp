// A change to the original module between DataParallel calls reaches the
// replicas, whatever it touches: its options or a plain member of a
// user's module. (The replicas are
// cached; PyTorch copies the modules on every call, so there every change
// shows at the next call, and tandem must not differ.)
#include "parallel/parallel_testing.h"

namespace {

namespace nn = tandem::nn;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::cpu_devices;

nn::DataParallelOptions over_two_devices() {
  return nn::DataParallelOptions().device_ids(cpu_devices(2));
}

// A user's module with plain members its forward reads.
struct ScaleImpl : nn::Cloneable<ScaleImpl> {
  ScaleImpl() { reset(); }
  void reset() override {}
  Tensor forward(const Tensor& x) { return negate ? x * -factor : x * factor; }
  double factor = 2.0;
  bool negate = false;
};
TANDEM_MODULE(Scale);

TEST(ReplicaState, APlainMemberChangedBetweenCallsReachesEveryReplica) {
  Scale scale;
  nn::DataParallel dp(scale, over_two_devices());
  const Tensor x = tandem::randn({6, 3});
  EXPECT_TRUE(all_close(dp(x), x * 2.0, 0, 0));
  scale->factor = 3.0;
  EXPECT_TRUE(all_close(dp(x), x * 3.0, 0, 0));
  scale->negate = true;
  EXPECT_TRUE(all_close(dp(x), x * -3.0, 0, 0));
}

TEST(ReplicaState, ADropoutProbabilityChangedBetweenCallsReachesEveryReplica) {
  nn::Dropout dropout(nn::DropoutOptions(0.0));
  nn::DataParallel dp(dropout, over_two_devices());
  const Tensor x = tandem::randn({8, 5});
  EXPECT_TRUE(all_close(dp(x), x, 0, 0));
  dropout->options.p(1.0);  // drops every element
  EXPECT_TRUE(all_close(dp(x), tandem::zeros({8, 5}), 0, 0));
}

TEST(ReplicaState, ABatchNormMomentumChangedBetweenCallsIsTheOneReplicaZeroUses) {
  nn::BatchNorm1d bn(nn::BatchNormOptions(3).momentum(0.1));
  nn::DataParallel dp(bn, over_two_devices());
  const Tensor x = tandem::randn({8, 3});
  dp(x);
  // Momentum 1 makes the running mean the last batch's mean: that of
  // replica 0's chunk (rows 0-3), whose updates reach the original.
  bn->options.momentum(1.0);
  dp(x);
  EXPECT_TRUE(all_close(bn->running_mean, x.narrow(0, 0, 4).mean(0), 1e-6, 1e-6));
}

TEST(ReplicaState, TrainAndEvalDoNotRebuildTheReplicas) {
  nn::Sequential net(nn::Linear(4, 3), nn::Dropout(0.5));
  const auto devices = cpu_devices(2);
  tandem::parallel::ReplicaCache cache;
  const auto first = tandem::parallel::replicate(net, devices, &cache);
  net->eval();
  const auto second = tandem::parallel::replicate(net, devices, &cache);
  EXPECT_EQ(second[1].get(), first[1].get());
  EXPECT_FALSE(second[1]->is_training());
  net->train();
  EXPECT_EQ(tandem::parallel::replicate(net, devices, &cache)[1].get(), first[1].get());
}

}  // namespace
