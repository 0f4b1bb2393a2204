// DataParallel over a small DCGAN-style generator (ConvTranspose2d layers):
// its output and every parameter's gradient equal one device's on the whole
// batch, over 1-4 logical CPU devices.
#include "parallel/parallel_testing.h"

namespace {

namespace nn = tandem::nn;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::cpu_devices;

nn::Sequential small_generator() {
  return nn::Sequential(
      nn::ConvTranspose2d(nn::ConvTranspose2dOptions(6, 8, 4).bias(false)),
      nn::ReLU(),
      nn::ConvTranspose2d(nn::ConvTranspose2dOptions(8, 4, 4).stride(2).padding(1)),
      nn::ReLU(),
      nn::ConvTranspose2d(
          nn::ConvTranspose2dOptions(4, 1, 3).stride(2).padding(1).output_padding(1)),
      nn::Tanh());
}

TEST(ConvTransposeDataParallel, GeneratorEqualsOneDevice) {
  for (int n : {1, 2, 3, 4}) {
    nn::Sequential gen = small_generator();
    gen->to(tandem::kFloat64);
    auto reference = std::dynamic_pointer_cast<nn::SequentialImpl>(gen->clone());
    const Tensor z = tandem::randn({7, 6, 1, 1}, tandem::kFloat64);
    const Tensor target = tandem::randn({7, 1, 16, 16}, tandem::kFloat64);
    const Tensor want_out = reference->forward(z);
    tandem::mse_loss(want_out, target).backward();

    nn::DataParallel dp(gen, nn::DataParallelOptions().device_ids(cpu_devices(n)));
    const Tensor out = dp(z);
    EXPECT_TRUE(all_close(out, want_out, 1e-12, 1e-12)) << n << " devices";
    tandem::mse_loss(out, target).backward();
    const auto want = reference->named_parameters();
    ASSERT_EQ(gen->named_parameters().size(), 5u);
    for (const auto& item : gen->named_parameters()) {
      ASSERT_TRUE(item->grad().defined()) << item.key() << " on " << n << " devices";
      EXPECT_TRUE(all_close(item->grad(), want[item.key()].grad(), 1e-12, 1e-12))
          << item.key() << " on " << n << " devices";
    }
  }
}

}  // namespace
