// DataParallel over small models built from issue 22's layers (Conv1d,
// MaxPool1d, AvgPool1d, GroupNorm, InstanceNorm2d, Upsample,
// AdaptiveMaxPool2d, AdaptiveAvgPool2d): the output and every parameter's
// gradient equal one device's on the whole batch, over 1-4 logical CPU
// devices. (The layers normalise per sample, so a slice of the batch sees
// what the whole batch would.)
#include "parallel/parallel_testing.h"

namespace {

namespace nn = tandem::nn;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::cpu_devices;

nn::Sequential image_model() {
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(2, 4, 3).padding(1)),
                        nn::GroupNorm(2, 4),
                        nn::ReLU(),
                        nn::Upsample(nn::UpsampleOptions()
                                         .scale_factor(std::vector<double>{2})
                                         .mode(tandem::kBilinear)),
                        nn::InstanceNorm2d(nn::InstanceNormOptions(4).affine(true)),
                        nn::AdaptiveMaxPool2d(tandem::ExpandingArray<2>({3, 5})),
                        nn::AdaptiveAvgPool2d(1),
                        nn::Flatten(),
                        nn::Linear(4, 3));
}

nn::Sequential sequence_model() {
  return nn::Sequential(nn::Conv1d(nn::Conv1dOptions(3, 4, 3).padding(1)),
                        nn::MaxPool1d(2),
                        nn::ReLU(),
                        nn::Conv1d(nn::Conv1dOptions(4, 4, 3).dilation(2).groups(2)),
                        nn::AvgPool1d(2),
                        nn::Flatten(),
                        nn::Linear(8, 2));
}

void check_equals_one_device(nn::Sequential (*make)(),
                             const tandem::IntList& input_shape,
                             size_t parameters) {
  for (int n : {1, 2, 3, 4}) {
    nn::Sequential model = make();
    model->to(tandem::kFloat64);
    auto reference = std::dynamic_pointer_cast<nn::SequentialImpl>(model->clone());
    const Tensor x = tandem::randn(input_shape, tandem::kFloat64);
    const Tensor want_out = reference->forward(x);
    const Tensor target = tandem::randn(want_out.sizes(), tandem::kFloat64);
    tandem::mse_loss(want_out, target).backward();

    nn::DataParallel dp(model, nn::DataParallelOptions().device_ids(cpu_devices(n)));
    const Tensor out = dp(x);
    EXPECT_TRUE(all_close(out, want_out, 1e-12, 1e-12)) << n << " devices";
    tandem::mse_loss(out, target).backward();
    const auto want = reference->named_parameters();
    ASSERT_EQ(model->named_parameters().size(), parameters);
    for (const auto& item : model->named_parameters()) {
      ASSERT_TRUE(item->grad().defined()) << item.key() << " on " << n << " devices";
      EXPECT_TRUE(all_close(item->grad(), want[item.key()].grad(), 1e-12, 1e-12))
          << item.key() << " on " << n << " devices";
    }
  }
}

TEST(NormsPoolingDataParallel, ImageModelEqualsOneDevice) {
  check_equals_one_device(image_model, {7, 2, 5, 6}, 8);
}

TEST(NormsPoolingDataParallel, SequenceModelEqualsOneDevice) {
  check_equals_one_device(sequence_model, {7, 3, 16}, 6);
}

}  // namespace
