// A DCGAN-generator-shaped stack of ConvTranspose2d layers against PyTorch
// (tests/reference/conv_transpose.py): from PyTorch's parameters, the output
// and the gradients of the input and of every parameter, under PyTorch's
// state_dict keys. The single-op cases of that script are in ops_test.cpp.
#include "parity/parity.h"

namespace tandem {
namespace {

using parity::golden_at;
using parity::matches;

nn::Sequential generator() {
  return nn::Sequential(
      nn::ConvTranspose2d(nn::ConvTranspose2dOptions(8, 16, 4)),
      nn::ReLU(),
      nn::ConvTranspose2d(nn::ConvTranspose2dOptions(16, 8, 4).stride(2).padding(1)),
      nn::ReLU(),
      nn::ConvTranspose2d(
          nn::ConvTranspose2dOptions(8, 1, 4).stride(2).padding(1).bias(false)),
      nn::Tanh());
}

class ConvTransposeParity : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvTransposeParity, DcganGeneratorForwardAndGradients) {
  const std::string dtype = GetParam();
  const parity::Golden g = testing::load_golden("conv_transpose_" + dtype + ".txt");
  nn::Sequential gen = generator();
  gen->to(parity::dtype_named(dtype));
  {
    NoGradGuard no_grad;
    for (const auto& item : gen->named_parameters()) {
      Tensor param = item.value();
      param.copy_(golden_at(g, "gen." + item.key()));
    }
  }
  Tensor z = golden_at(g, "gen.z").clone().requires_grad_();
  Tensor out = gen->forward(z);
  EXPECT_TRUE(matches(out, golden_at(g, "gen.out")));
  out.backward(golden_at(g, "gen.grad_out"));
  EXPECT_TRUE(matches(z.grad(), golden_at(g, "gen.grad.z")));
  int checked = 0;
  for (const auto& item : gen->named_parameters()) {
    EXPECT_TRUE(matches(item.value().grad(), golden_at(g, "gen.grad." + item.key())))
        << item.key();
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}

INSTANTIATE_TEST_SUITE_P(Dtypes,
                         ConvTransposeParity,
                         ::testing::Values("float32", "float64"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tandem
