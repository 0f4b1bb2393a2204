// ConvTranspose1d / ConvTranspose2d layers: parameters and state_dict keys
// as PyTorch names them, PyTorch's initialisation (fans of the transposed
// weight layout), forward as the op and as nn::functional, forward with an
// output_size, printing, cloning, errors, and a DCGAN-style generator
// inside Sequential.
#include <cmath>
#include <sstream>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

namespace F = nn::functional;
using testing::all_close;
using testing::throws_with;

template <typename T>
std::string printed(const T& module) {
  std::ostringstream out;
  out << module;
  return out.str();
}

TEST(ConvTranspose2dLayer, ParametersAndPyTorchInitialisation) {
  manual_seed(0);
  nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(4, 6, {3, 2}).groups(2));
  EXPECT_EQ(up->weight.sizes(), (IntList{4, 3, 3, 2}));
  EXPECT_EQ(up->bias.sizes(), (IntList{6}));
  EXPECT_EQ(up->state_dict().keys(), (std::vector<std::string>{"weight", "bias"}));
  // PyTorch's fans of [in, out / groups, k...]: fan_in = 4 * 3 * 3 = 36,
  // so both draw from U(-1/6, 1/6); 576 draws come close to the bound
  // (fan_in from the input channels, 144, would give 1/12).
  nn::ConvTranspose2d wide(16, 4, 3);
  const double bound = 1.0 / 6;
  EXPECT_LE(max(wide->weight).item<double>(), bound);
  EXPECT_GE(min(wide->weight).item<double>(), -bound);
  EXPECT_GT(max(wide->weight).item<double>(), 0.9 * bound);
  EXPECT_LE(max(abs(wide->bias)).item<double>(), bound);
  nn::ConvTranspose2d no_bias(nn::ConvTranspose2dOptions(1, 2, 3).bias(false));
  EXPECT_FALSE(no_bias->bias.defined());
  EXPECT_EQ(no_bias->parameters().size(), 1u);
  nn::ConvTranspose1d one_d(nn::ConvTranspose1dOptions(4, 6, 5).groups(2));
  EXPECT_EQ(one_d->weight.sizes(), (IntList{4, 3, 5}));
}

TEST(ConvTranspose2dLayer, ForwardIsTheOp) {
  nn::ConvTranspose2d up(
      nn::ConvTranspose2dOptions(2, 3, 3).stride(2).padding(1).output_padding(1).dilation(
          {1, 2}));
  Tensor x = randn({2, 2, 4, 5});
  Tensor y = up->forward(x);
  EXPECT_EQ(y.sizes(), (IntList{2, 3, 8, 12}));
  EXPECT_TRUE(
      all_close(y, conv_transpose2d(x, up->weight, up->bias, 2, 1, 1, 1, {1, 2}), 0, 0));
  EXPECT_TRUE(all_close(F::conv_transpose2d(x,
                                            up->weight,
                                            F::ConvTranspose2dFuncOptions()
                                                .bias(up->bias)
                                                .stride(2)
                                                .padding(1)
                                                .output_padding(1)
                                                .dilation({1, 2})),
                        y,
                        0,
                        0));
  nn::ConvTranspose1d up1(nn::ConvTranspose1dOptions(2, 4, 3).stride(2));
  Tensor s = randn({3, 2, 5});
  EXPECT_TRUE(all_close(
      up1->forward(s),
      F::conv_transpose1d(
          s, up1->weight, F::ConvTranspose1dFuncOptions().bias(up1->bias).stride(2)),
      0,
      0));
  EXPECT_EQ(up1->forward(s).sizes(), (IntList{3, 4, 11}));
}

TEST(ConvTranspose2dLayer, OutputSizePicksTheOutputPadding) {
  nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(2, 3, 3).stride({2, 3}).padding(1));
  Tensor x = randn({1, 2, 4, 4});
  // Smallest sizes (4 - 1) * s - 2 + 3: 7 and 10; up to s - 1 more.
  EXPECT_EQ(up->forward(x).sizes(), (IntList{1, 3, 7, 10}));
  Tensor y = up->forward(x, IntList{8, 12});
  EXPECT_TRUE(
      all_close(y, conv_transpose2d(x, up->weight, up->bias, {2, 3}, 1, {1, 2}), 0, 0));
  EXPECT_EQ(up->forward(x, IntList{1, 3, 7, 11}).sizes(), (IntList{1, 3, 7, 11}));
  EXPECT_TRUE(throws_with(
      [&] {
        up->forward(x, IntList{9, 10});
      },
      "ConvTranspose2d: requested an output size of [9, 10], but "
      "valid sizes range from [7, 10] to [8, 12] (for an input of "
      "[4, 4])"));
  EXPECT_TRUE(
      throws_with([&] { up->forward(x, IntList{8}); },
                  "ConvTranspose2d: output_size must have 2 or 4 elements, got [8]"));
  nn::ConvTranspose1d up1(nn::ConvTranspose1dOptions(2, 3, 4).stride(4));
  EXPECT_EQ(up1->forward(randn({2, 5}), IntList{22}).sizes(), (IntList{3, 22}));
}

TEST(ConvTranspose2dLayer, PrintsAsLibTorch) {
  EXPECT_EQ(printed(nn::ConvTranspose2d(100, 256, 4)),
            "ConvTranspose2d(100, 256, kernel_size=[4, 4], stride=[1, 1])");
  EXPECT_EQ(printed(nn::ConvTranspose2d(nn::ConvTranspose2dOptions(8, 4, {4, 3})
                                            .stride(2)
                                            .padding(1)
                                            .output_padding(1)
                                            .dilation(2)
                                            .groups(2)
                                            .bias(false))),
            "ConvTranspose2d(8, 4, kernel_size=[4, 3], stride=[2, 2], padding=[1, 1], "
            "dilation=[2, 2], output_padding=[1, 1], groups=2, bias=false)");
  EXPECT_EQ(printed(nn::ConvTranspose1d(nn::ConvTranspose1dOptions(3, 5, 2).stride(2))),
            "ConvTranspose1d(3, 5, kernel_size=[2], stride=[2])");
}

TEST(ConvTranspose2dLayer, CloneIsDeep) {
  nn::ConvTranspose2d up(3, 2, 2);
  auto copy = std::dynamic_pointer_cast<nn::ConvTranspose2dImpl>(up->clone());
  ASSERT_NE(copy, nullptr);
  EXPECT_TRUE(all_close(copy->weight, up->weight, 0, 0));
  {
    NoGradGuard no_grad;
    copy->weight.fill_(0.5);
  }
  EXPECT_FALSE(all_close(copy->weight, up->weight, 0, 0));
}

TEST(ConvTranspose2dLayer, Errors) {
  EXPECT_TRUE(throws_with(
      [] { nn::ConvTranspose2d(nn::ConvTranspose2dOptions(4, 6, 3).groups(4)); },
      "ConvTranspose2d: groups=4 must divide in_channels (4) and out_channels (6)"));
  EXPECT_TRUE(
      throws_with([] { nn::ConvTranspose2d(0, 6, 3); },
                  "ConvTranspose2d: in_channels and out_channels must be positive, got "
                  "0 and 6"));
  EXPECT_TRUE(throws_with([] { nn::ConvTranspose1d(2, 6, 0); },
                          "ConvTranspose1d: kernel_size must be positive, got [0]"));
  nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(3, 8, 3).stride(2).output_padding(2));
  EXPECT_TRUE(throws_with(
      [&] {
        up->forward(randn({1, 3, 4, 4}));
      },
      "conv_transpose2d: output_padding must be smaller than either "
      "stride or dilation"));
}

TEST(ConvTranspose2dLayer, DcganGeneratorInSequentialTrainsAStep) {
  manual_seed(1);
  nn::Sequential gen(
      nn::ConvTranspose2d(nn::ConvTranspose2dOptions(8, 16, 4).bias(false)),
      nn::ReLU(),
      nn::ConvTranspose2d(nn::ConvTranspose2dOptions(16, 1, 4).stride(2).padding(1)),
      nn::Tanh());
  Tensor z = randn({5, 8, 1, 1});
  Tensor out = gen->forward(z);
  EXPECT_EQ(out.sizes(), (IntList{5, 1, 8, 8}));
  EXPECT_EQ(gen->state_dict().keys(),
            (std::vector<std::string>{"0.weight", "2.weight", "2.bias"}));
  out.pow(2).mean().backward();
  for (const Tensor& p : gen->parameters()) {
    ASSERT_TRUE(p.grad().defined());
    EXPECT_GT(p.grad().abs().sum().item<double>(), 0);
  }
}

}  // namespace
}  // namespace tandem
