// The functional data_parallel (LibTorch's): composition, nested inputs,
// one device, no device, and a master module on another device.
#include "parallel/parallel_testing.h"

namespace {

namespace nn = tandem::nn;
using nn::parallel::TensorTree;
using tandem::Device;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::cpu_devices;
using tandem::testing::make_mlp;
using tandem::testing::throws_with;

TEST(DataParallelFunction, EqualsTheModuleOnTheWholeBatch) {
  auto mlp = make_mlp(5, 8, 3);
  const Tensor x = tandem::randn({10, 5});
  const Tensor want = mlp->forward(x);
  for (int n : {2, 3, 4}) {
    const Tensor y = nn::parallel::data_parallel(mlp, x, cpu_devices(n));
    EXPECT_EQ(y.device(), Device("cpu:0"));
    EXPECT_TRUE(all_close(y, want, 1e-6, 1e-6)) << n << " devices";
  }
  const Tensor y = nn::parallel::data_parallel(mlp, x, cpu_devices(2), Device("cpu:3"));
  EXPECT_EQ(y.device(), Device("cpu:3"));
}

// Returns input[1][0] (spec case 3).
struct PickImpl : nn::Cloneable<PickImpl> {
  void reset() override {}
  TensorTree forward(const TensorTree& input) { return input[1][0]; }
};
TANDEM_MODULE(Pick);

TEST(DataParallelFunction, NestedInputs) {
  const Tensor a = tandem::randn({20, 2}), b = tandem::randn({20, 3}),
               c = tandem::randn({20, 3}), d = tandem::randn({20});
  const TensorTree out =
      nn::parallel::data_parallel(Pick(), TensorTree{a, {b, c}, d}, cpu_devices(2));
  EXPECT_TRUE(all_close(out.tensor(), b, 0, 0));
}

TEST(DataParallelFunction, OneDeviceMovesModuleInputAndOutput) {
  nn::Linear fc(4, 2);
  const Tensor x = tandem::randn({3, 4});
  const Tensor want = fc(x);
  const std::vector<Device> one = {Device("cpu:1")};
  const Tensor y = nn::parallel::data_parallel(fc, x, one, Device("cpu:2"));
  EXPECT_EQ(fc->weight.device(), Device("cpu:1"));
  EXPECT_EQ(y.device(), Device("cpu:2"));
  EXPECT_TRUE(all_close(y.to("cpu:0"), want, 0, 0));
}

TEST(DataParallelFunction, NoDeviceListAndNoCudaCallsTheModule) {
  if (tandem::device_count(tandem::kCUDA) > 0)
    GTEST_SKIP() << "the default device list is every GPU";
  nn::Linear fc(4, 2);
  fc->to(Device("cpu:3"));
  const Tensor x = tandem::randn({3, 4}).to("cpu:3");
  const Tensor y = nn::parallel::data_parallel(fc, x);
  EXPECT_EQ(y.device(), Device("cpu:3"));
  EXPECT_TRUE(all_close(y, fc(x), 0, 0));
  EXPECT_TRUE(
      throws_with([&] { nn::parallel::data_parallel(fc, x, std::vector<Device>{}); },
                  "data_parallel: the device list is empty"));
}

TEST(DataParallelFunction, TheModuleMayLiveElsewhere) {
  // As in LibTorch, the master copy need not be on devices[0]: gradients
  // are summed onto the module's own device.
  auto mlp = make_mlp(4, 6, 2);
  mlp->to(Device("cpu:5"));
  auto reference = std::dynamic_pointer_cast<nn::SequentialImpl>(mlp->clone());
  const Tensor x = tandem::randn({7, 4}).to("cpu:5");
  reference->forward(x).sum().backward();
  const Tensor y = nn::parallel::data_parallel(mlp, x, cpu_devices(3));
  EXPECT_EQ(y.device(), Device("cpu:0"));
  y.sum().backward();
  const auto want = reference->parameters();
  const auto got = mlp->parameters();
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].grad().device(), Device("cpu:5"));
    EXPECT_TRUE(all_close(got[i].grad(), want[i].grad(), 1e-5, 1e-6)) << i;
  }
}

}  // namespace
