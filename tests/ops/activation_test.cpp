// relu, gelu (erf and tanh forms), sigmoid and tanh: values, dtypes,
// strided inputs, gradients at special points, gradchecks of strided inputs.
#include <cmath>
#include <vector>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using autograd::tensor_list;
using testing::all_close;
using testing::throws_with;

Tensor inputs() { return tensor({-3.0, -0.5, 0.0, 0.7, 2.5}); }

TEST(Activation, ReluValuesAndDtypes) {
  EXPECT_TRUE(all_close(relu(inputs()), tensor({0.0, 0.0, 0.0, 0.7, 2.5}), 0, 0));
  Tensor f = relu(tensor({-1.0f, 2.0f}));
  EXPECT_EQ(f.dtype(), kFloat32);
  Tensor i = relu(tensor({-1, 2}));  // PyTorch keeps integers
  EXPECT_EQ(i.dtype(), kInt64);
  EXPECT_EQ(i.data_ptr<int64_t>()[0], 0);
  EXPECT_EQ(i.data_ptr<int64_t>()[1], 2);
  EXPECT_EQ(inputs().relu().sizes(), (IntList{5}));
}

TEST(Activation, GeluMatchesPyTorch) {
  // torch.nn.functional.gelu(x) and gelu(x, approximate='tanh') in float64.
  Tensor erf_form = tensor({-0.00404969409489031,
                            -0.15426876936299344,
                            0.0,
                            0.5306254434438489,
                            2.4844758366855597});
  Tensor tanh_form = tensor({-0.0036373920817729943,
                             -0.15428599017485606,
                             0.0,
                             0.5305701347051167,
                             2.484915733910001});
  EXPECT_TRUE(all_close(gelu(inputs()), erf_form, 1e-14, 1e-16));
  EXPECT_TRUE(all_close(gelu(inputs(), "tanh"), tanh_form, 1e-14, 1e-16));
  EXPECT_TRUE(all_close(gelu(inputs().to(kFloat32)), erf_form, 1e-6, 1e-7));
  EXPECT_TRUE(throws_with([] { gelu(inputs(), "fast"); }, "approximate must be"));
  EXPECT_TRUE(throws_with([] { gelu(tensor({1, 2})); }, "gelu"));
}

TEST(Activation, SigmoidAndTanhValues) {
  std::vector<double> want_s, want_t;
  for (double v : {-3.0, -0.5, 0.0, 0.7, 2.5}) {
    want_s.push_back(1 / (1 + std::exp(-v)));
    want_t.push_back(std::tanh(v));
  }
  EXPECT_TRUE(all_close(sigmoid(inputs()), tensor(want_s), 1e-15, 0));
  EXPECT_TRUE(all_close(tanh(inputs()), tensor(want_t), 1e-15, 0));
  EXPECT_TRUE(all_close(inputs().sigmoid(), tensor(want_s), 1e-15, 0));
  // Saturation stays finite.
  Tensor big = sigmoid(tensor({-1000.0f, 1000.0f}));
  EXPECT_EQ(big.data_ptr<float>()[0], 0.0f);
  EXPECT_EQ(big.data_ptr<float>()[1], 1.0f);
  EXPECT_EQ(tanh(tensor({50.0})).item<double>(), 1.0);
  // Integers become float32, as for exp.
  EXPECT_EQ(sigmoid(tensor({0, 1})).dtype(), kFloat32);
  EXPECT_EQ(tanh(tensor({0, 1})).dtype(), kFloat32);
  EXPECT_EQ(sigmoid(tensor({0})).item<float>(), 0.5f);
}

TEST(Activation, StridedInputs) {
  double data[6] = {-1, 4, 2, -5, -3, 6};
  Tensor cols = from_blob(data, {2, 3}, {1, 2}, kFloat64);  // [[-1, 2, -3], [4, -5, 6]]
  EXPECT_TRUE(
      all_close(relu(cols), tensor({0.0, 2.0, 0.0, 4.0, 0.0, 6.0}).reshape({2, 3})));
  EXPECT_TRUE(all_close(tanh(cols), tanh(cols.contiguous())));
}

TEST(ActivationGrad, ReluGradientIsZeroAtAndBelowZero) {
  Tensor x = tensor({-1.0, 0.0, 2.0}, TensorOptions(kFloat64).requires_grad(true));
  relu(x).backward(ones({3}, kFloat64));
  EXPECT_TRUE(all_close(x.grad(), tensor({0.0, 0.0, 1.0}), 0, 0));
}

TEST(ActivationGrad, GeluGradientAtZeroIsHalf) {
  for (const char* form : {"none", "tanh"}) {
    Tensor x = tensor({0.0}, TensorOptions(kFloat64).requires_grad(true));
    gelu(x, form).backward();
    EXPECT_NEAR(x.grad().item<double>(), 0.5, 1e-15) << form;
  }
}

TEST(ActivationGrad, ReluInPlaceRecordsWhenNeeded) {
  Tensor x = tensor({-1.0, 3.0}, TensorOptions(kFloat64).requires_grad(true));
  Tensor y = x * 2;
  relu_(y);
  EXPECT_TRUE(all_close(y, tensor({0.0, 6.0})));
  y.backward(ones({2}, kFloat64));
  EXPECT_TRUE(all_close(x.grad(), tensor({0.0, 2.0})));
}

struct ActCase {
  const char* name;
  Tensor (*fn)(const Tensor&);
};

void PrintTo(const ActCase& c, std::ostream* out) { *out << c.name; }

class ActivationGradcheck : public ::testing::TestWithParam<ActCase> {};

// Contiguous inputs are gradchecked in tests/consistency/op_cases_test.cpp;
// here the input is transposed, so forward and backward kernels (which save
// the input or the output) see strided operands.
TEST_P(ActivationGradcheck, OnAStridedInput) {
  Generator gen(3);
  Tensor base = (rand({3, 4}, gen, kFloat64) * 6 - 3).requires_grad_();
  auto fn = GetParam().fn;
  auto r =
      autograd::gradcheck([fn](const tensor_list& in) { return fn(in[0].t()); }, {base});
  EXPECT_TRUE(r) << r.message;
}

INSTANTIATE_TEST_SUITE_P(
    All,
    ActivationGradcheck,
    ::testing::Values(ActCase{"relu", [](const Tensor& x) { return relu(x); }},
                      ActCase{"gelu", [](const Tensor& x) { return gelu(x); }},
                      ActCase{"gelu_tanh",
                              [](const Tensor& x) { return gelu(x, "tanh"); }},
                      ActCase{"sigmoid", [](const Tensor& x) { return sigmoid(x); }},
                      ActCase{"tanh", [](const Tensor& x) { return tanh(x); }}),
    [](const ::testing::TestParamInfo<ActCase>& info) { return info.param.name; });

}  // namespace
}  // namespace tandem
