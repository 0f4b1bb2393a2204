// nn::utils::clip_grad_norm_ against torch.nn.utils.clip_grad_norm_: the
// total norm and the clipped gradients, for the cases of
// tests/reference/nn_utils.py, in float32 and float64.
#include <limits>

#include "parity/parity.h"

namespace tandem {
namespace {

using parity::Golden;
using parity::golden_at;
using parity::matches;

using Param = std::tuple<std::string, std::string>;  // case, dtype

class ClipGradNormParity : public ::testing::TestWithParam<Param> {};

TEST_P(ClipGradNormParity, TotalNormAndClippedGradients) {
  const auto& [name, dtype] = GetParam();
  Golden g = testing::load_golden("clip_grad_" + dtype + ".txt");
  std::vector<Tensor> params;
  for (int i = 0; i < 3; ++i) {
    const Tensor& grad = golden_at(g, "grad." + std::to_string(i));
    params.push_back(zeros(grad.sizes(), grad.dtype()).requires_grad_());
    params.back().set_grad(grad.clone());
  }
  const double norm_type = g.count(name + ".inf_norm") > 0
                               ? std::numeric_limits<double>::infinity()
                               : golden_at(g, name + ".norm_type").item<double>();
  const double total = nn::utils::clip_grad_norm_(
      params, golden_at(g, name + ".max_norm").item<double>(), norm_type);
  const double want = golden_at(g, name + ".total_norm").item<double>();
  EXPECT_NEAR(total, want, parity::rtol_for(parity::dtype_named(dtype)) * want);
  for (int i = 0; i < 3; ++i) {
    const std::string key = name + ".grad." + std::to_string(i);
    EXPECT_TRUE(matches(params[i].grad(), golden_at(g, key))) << key;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases,
    ClipGradNormParity,
    ::testing::Combine(
        ::testing::Values("l2_clipped", "l2_unclipped", "l1", "inf", "p3_5"),
        ::testing::Values("float32", "float64")),
    [](const auto& info) {
      return std::get<0>(info.param) + "_" + std::get<1>(info.param);
    });

}  // namespace
}  // namespace tandem
