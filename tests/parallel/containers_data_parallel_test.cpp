// DataParallel over a model built from ModuleList, ModuleDict,
// ParameterList and ParameterDict: its gradients equal one device's on the
// whole batch, over 1-3 logical CPU devices.
#include "parallel/parallel_testing.h"

namespace {

namespace nn = tandem::nn;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::cpu_devices;

struct BlocksImpl : nn::Cloneable<BlocksImpl> {
  BlocksImpl() { reset(); }
  void reset() override {
    layers =
        register_module("layers", nn::ModuleList(nn::Linear(4, 6), nn::Linear(6, 3)));
    gates =
        register_module("gates", nn::ParameterList(tandem::ones({6}).requires_grad_()));
    heads = register_module("heads", nn::ModuleDict());
    heads->insert("out", nn::Linear(3, 2));
    bias = register_module("bias", nn::ParameterDict());
    bias->insert("out", tandem::zeros({2}).requires_grad_());
  }
  Tensor forward(const Tensor& x) {
    Tensor h = layers->at<nn::LinearImpl>(0).forward(x).tanh() * gates[0];
    h = layers->at<nn::LinearImpl>(1).forward(h).tanh();
    return heads->at<nn::LinearImpl>("out").forward(h) + bias["out"];
  }
  nn::ModuleList layers{nullptr};
  nn::ParameterList gates{nullptr};
  nn::ModuleDict heads{nullptr};
  nn::ParameterDict bias{nullptr};
};
TANDEM_MODULE(Blocks);

TEST(ContainersDataParallel, GradientsEqualOneDevice) {
  for (int n : {1, 2, 3}) {
    Blocks net;
    net->to(tandem::kFloat64);
    auto reference = std::dynamic_pointer_cast<BlocksImpl>(net->clone());
    const Tensor x = tandem::randn({7, 4}, tandem::kFloat64);
    const Tensor target = tandem::randn({7, 2}, tandem::kFloat64);
    tandem::mse_loss(reference->forward(x), target).backward();

    nn::DataParallel dp(net, nn::DataParallelOptions().device_ids(cpu_devices(n)));
    tandem::mse_loss(dp(x), target).backward();
    const auto want = reference->named_parameters();
    ASSERT_EQ(net->named_parameters().size(), 8u);
    for (const auto& item : net->named_parameters()) {
      ASSERT_TRUE(item->grad().defined()) << item.key() << " on " << n << " devices";
      EXPECT_TRUE(all_close(item->grad(), want[item.key()].grad(), 1e-12, 1e-12))
          << item.key() << " on " << n << " devices";
    }
  }
}

}  // namespace
