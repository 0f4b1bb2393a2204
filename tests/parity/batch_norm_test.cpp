// BatchNorm modules against PyTorch (tests/reference/batch_norm.py): two
// training steps and an eval step from the same parameters and inputs. After
// each step the whole state_dict must match PyTorch's, key for key, so the
// buffer names, the running statistics (unbiased variance, momentum or
// cumulative average) and num_batches_tracked are all checked.
#include <algorithm>

#include "parity/parity.h"

namespace tandem {
namespace {

using parity::Golden;
using parity::golden_at;
using parity::matches;

// The state_dict keys PyTorch wrote for `config` after step `step`, in
// golden-file (sorted) order.
std::vector<std::string> golden_state_keys(const Golden& g,
                                           const std::string& config,
                                           int step) {
  const std::string prefix = config + ".step" + std::to_string(step) + ".state.";
  std::vector<std::string> keys;
  for (const auto& [key, value] : g) {
    if (key.rfind(prefix, 0) == 0) keys.push_back(key.substr(prefix.size()));
  }
  return keys;
}

template <typename Holder>
void expect_matches_pytorch(const Golden& g,
                            const std::string& config,
                            Holder bn,
                            ScalarType dtype) {
  bn->to(dtype);
  {
    NoGradGuard no_grad;
    bn->weight.copy_(golden_at(g, config + ".weight"));
    bn->bias.copy_(golden_at(g, config + ".bias"));
  }
  for (int step = 1; step <= 2; ++step) {
    SCOPED_TRACE(config + " step " + std::to_string(step));
    const std::string s = std::to_string(step);
    const std::string at = config + ".step" + s;
    Tensor x = golden_at(g, config + ".x" + s).clone().requires_grad_();
    Tensor out = bn->forward(x);
    out.backward(golden_at(g, config + ".grad_out" + s));
    EXPECT_TRUE(matches(out, golden_at(g, at + ".out")));
    EXPECT_TRUE(matches(x.grad(), golden_at(g, at + ".grad.input")));
    EXPECT_TRUE(matches(bn->weight.grad(), golden_at(g, at + ".grad.weight")));
    EXPECT_TRUE(matches(bn->bias.grad(), golden_at(g, at + ".grad.bias")));
    bn->zero_grad();

    const OrderedDict<std::string, Tensor> state = bn->state_dict();
    std::vector<std::string> keys = state.keys();
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(keys, golden_state_keys(g, config, step));
    for (const auto& item : state) {
      const Tensor& want = golden_at(g, at + ".state." + item.key());
      if (want.is_floating_point()) {
        EXPECT_TRUE(matches(item.value(), want)) << item.key();
      } else {
        EXPECT_EQ(item.value().dtype(), kInt64) << item.key();
        EXPECT_TRUE(equal(item.value(), want)) << item.key();
      }
    }
  }
  bn->eval();
  EXPECT_TRUE(matches(bn->forward(golden_at(g, config + ".x3")),
                      golden_at(g, config + ".eval.out")));
}

class BatchNormParity : public ::testing::TestWithParam<std::string> {
 protected:
  Golden golden() const {
    return testing::load_golden("batch_norm_" + GetParam() + ".txt");
  }
  ScalarType dtype() const { return parity::dtype_named(GetParam()); }
};

TEST_P(BatchNormParity, BatchNorm2dWithMomentum) {
  expect_matches_pytorch(golden(), "bn2d", nn::BatchNorm2d(3), dtype());
}

TEST_P(BatchNormParity, BatchNorm1dCumulativeAverage) {
  expect_matches_pytorch(golden(),
                         "bn1d_cumulative",
                         nn::BatchNorm1d(nn::BatchNormOptions(4).momentum(std::nullopt)),
                         dtype());
}

INSTANTIATE_TEST_SUITE_P(Dtypes,
                         BatchNormParity,
                         ::testing::Values("float32", "float64"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tandem
