// Single ops against PyTorch: forward values and input gradients for the
// cases of tests/reference/ops.py, in float32 and float64. Each case here
// maps a golden case name to the same computation in tandem; the harness
// loads the inputs ("<case>.<input>"), makes those with a golden gradient
// require grad, and compares "<case>.out", "<case>.out1" and
// "<case>.grad.<input>" after a backward from "<case>.grad_out".
#include <functional>
#include <set>

#include "parity/parity.h"

namespace tandem {
namespace {

using parity::Golden;
using parity::golden_at;
using parity::matches;

using Inputs = std::function<Tensor(const std::string&)>;
using OpCase = std::function<std::vector<Tensor>(const Inputs&)>;

template <typename F>
OpCase unary(F f) {
  return [f](const Inputs& in) { return std::vector<Tensor>{f(in("x"))}; };
}

OpCase cross_entropy_case(bool weighted,
                          Reduction reduction,
                          int64_t ignore_index,
                          double label_smoothing) {
  return [=](const Inputs& in) {
    return std::vector<Tensor>{cross_entropy(in("input"),
                                             in("target"),
                                             weighted ? in("weight") : Tensor(),
                                             reduction,
                                             ignore_index,
                                             label_smoothing)};
  };
}

OpCase nll_loss_case(bool weighted, Reduction reduction, int64_t ignore_index) {
  return [=](const Inputs& in) {
    return std::vector<Tensor>{nll_loss(in("input"),
                                        in("target"),
                                        weighted ? in("weight") : Tensor(),
                                        reduction,
                                        ignore_index)};
  };
}

OpCase mse_loss_case(Reduction reduction) {
  return [=](const Inputs& in) {
    return std::vector<Tensor>{mse_loss(in("input"), in("target"), reduction)};
  };
}

// A loss of (input, target) with no further tensor operands.
OpCase pointwise_loss_case(std::function<Tensor(const Tensor&, const Tensor&)> f) {
  return
      [f](const Inputs& in) { return std::vector<Tensor>{f(in("input"), in("target"))}; };
}

OpCase bce_case(bool weighted, Reduction reduction) {
  return [=](const Inputs& in) {
    return std::vector<Tensor>{binary_cross_entropy(
        in("input"), in("target"), weighted ? in("weight") : Tensor(), reduction)};
  };
}

OpCase bce_with_logits_case(bool weighted, bool pos_weighted, Reduction reduction) {
  return [=](const Inputs& in) {
    return std::vector<Tensor>{
        binary_cross_entropy_with_logits(in("input"),
                                         in("target"),
                                         weighted ? in("weight") : Tensor(),
                                         pos_weighted ? in("pos_weight") : Tensor(),
                                         reduction)};
  };
}

// (input1, input2, target) losses with a margin.
OpCase pair_loss_case(
    Tensor (*f)(const Tensor&, const Tensor&, const Tensor&, double, Reduction),
    double margin,
    Reduction reduction) {
  return [=](const Inputs& in) {
    return std::vector<Tensor>{
        f(in("input1"), in("input2"), in("target"), margin, reduction)};
  };
}

OpCase values_and_indices(std::function<std::tuple<Tensor, Tensor>(const Tensor&)> f) {
  return [f](const Inputs& in) {
    auto [values, indices] = f(in("x"));
    return std::vector<Tensor>{values, indices};
  };
}

OpCase matmul_case() {
  return [](const Inputs& in) { return std::vector<Tensor>{matmul(in("a"), in("b"))}; };
}

OpCase conv2d_case(bool with_bias,
                   ExpandingArray<2> stride = 1,
                   ExpandingArray<2> padding = 0,
                   ExpandingArray<2> dilation = 1,
                   int64_t groups = 1) {
  return [=](const Inputs& in) {
    return std::vector<Tensor>{conv2d(in("input"),
                                      in("weight"),
                                      with_bias ? in("bias") : Tensor(),
                                      stride,
                                      padding,
                                      dilation,
                                      groups)};
  };
}

// Transposed convolutions (cases of tests/reference/conv_transpose.py):
// f(input, weight, bias) with the case's other arguments bound.
OpCase conv_transpose_case(
    std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)> f,
    bool with_bias = true) {
  return [=](const Inputs& in) {
    return std::vector<Tensor>{
        f(in("input"), in("weight"), with_bias ? in("bias") : Tensor())};
  };
}

// batch_norm's output and its updated copies of the running statistics.
OpCase batch_norm_case(bool training, bool affine, double momentum) {
  return [=](const Inputs& in) {
    Tensor mean = in("running_mean").clone(), var = in("running_var").clone();
    Tensor out = batch_norm(in("input"),
                            mean,
                            var,
                            affine ? in("weight") : Tensor(),
                            affine ? in("bias") : Tensor(),
                            training,
                            momentum);
    return std::vector<Tensor>{out, mean, var};
  };
}

OpCase layer_norm_case(IntList normalized_shape, bool affine, double eps = 1e-5) {
  return [=](const Inputs& in) {
    return std::vector<Tensor>{layer_norm(in("x"),
                                          normalized_shape,
                                          affine ? in("weight") : Tensor(),
                                          affine ? in("bias") : Tensor(),
                                          eps)};
  };
}

const std::map<std::string, OpCase>& op_cases() {
  static const std::map<std::string, OpCase> cases = {
      {"linear",
       [](const Inputs& in) {
         return std::vector<Tensor>{linear(in("input"), in("weight"), in("bias"))};
       }},
      {"linear_nobias",
       [](const Inputs& in) {
         return std::vector<Tensor>{linear(in("input"), in("weight"))};
       }},
      {"linear_3d",
       [](const Inputs& in) {
         return std::vector<Tensor>{linear(in("input"), in("weight"), in("bias"))};
       }},
      {"relu", unary([](const Tensor& x) { return relu(x); })},
      {"gelu", unary([](const Tensor& x) { return gelu(x); })},
      {"gelu_tanh", unary([](const Tensor& x) { return gelu(x, "tanh"); })},
      {"tanh", unary([](const Tensor& x) { return tanh(x); })},
      {"sigmoid", unary([](const Tensor& x) { return sigmoid(x); })},
      {"softmax_dim1", unary([](const Tensor& x) { return softmax(x, 1); })},
      {"softmax_dim0", unary([](const Tensor& x) { return softmax(x, 0); })},
      {"softmax_3d_dim_neg1", unary([](const Tensor& x) { return softmax(x, -1); })},
      {"log_softmax_dim1", unary([](const Tensor& x) { return log_softmax(x, 1); })},
      {"log_softmax_dim0", unary([](const Tensor& x) { return log_softmax(x, 0); })},
      {"cross_entropy", cross_entropy_case(false, kMean, -100, 0)},
      {"cross_entropy_sum", cross_entropy_case(false, kSum, -100, 0)},
      {"cross_entropy_none", cross_entropy_case(false, kNone, -100, 0)},
      {"cross_entropy_weight", cross_entropy_case(true, kMean, -100, 0)},
      {"cross_entropy_ignore_index", cross_entropy_case(false, kMean, 1, 0)},
      {"cross_entropy_weight_ignore_index", cross_entropy_case(true, kMean, 3, 0)},
      {"cross_entropy_label_smoothing", cross_entropy_case(false, kMean, -100, 0.1)},
      {"cross_entropy_label_smoothing_sum", cross_entropy_case(false, kSum, -100, 0.2)},
      {"cross_entropy_label_smoothing_none", cross_entropy_case(false, kNone, -100, 0.2)},
      {"cross_entropy_all", cross_entropy_case(true, kMean, 1, 0.15)},
      {"nll_loss", nll_loss_case(false, kMean, -100)},
      {"nll_loss_sum", nll_loss_case(false, kSum, -100)},
      {"nll_loss_none", nll_loss_case(false, kNone, -100)},
      {"nll_loss_weight_ignore_index", nll_loss_case(true, kMean, 1)},
      {"nll_loss_weight_sum", nll_loss_case(true, kSum, -100)},
      {"mse_loss", mse_loss_case(kMean)},
      {"mse_loss_sum", mse_loss_case(kSum)},
      {"mse_loss_none", mse_loss_case(kNone)},
      {"leaky_relu", unary([](const Tensor& x) { return leaky_relu(x); })},
      {"leaky_relu_slope", unary([](const Tensor& x) { return leaky_relu(x, 0.2); })},
      {"elu", unary([](const Tensor& x) { return elu(x); })},
      {"elu_alpha", unary([](const Tensor& x) { return elu(x, 0.7); })},
      {"selu", unary([](const Tensor& x) { return selu(x); })},
      {"silu", unary([](const Tensor& x) { return silu(x); })},
      {"mish", unary([](const Tensor& x) { return mish(x); })},
      {"softplus", unary([](const Tensor& x) { return softplus(x); })},
      {"softplus_beta_threshold",
       unary([](const Tensor& x) { return softplus(x, 2.0, 3.0); })},
      {"hardtanh", unary([](const Tensor& x) { return hardtanh(x); })},
      {"hardtanh_range", unary([](const Tensor& x) { return hardtanh(x, -0.5, 1.5); })},
      {"logsigmoid", unary([](const Tensor& x) { return log_sigmoid(x); })},
      {"logsigmoid_large", unary([](const Tensor& x) { return log_sigmoid(x); })},
      {"softsign", unary([](const Tensor& x) { return softsign(x); })},
      {"prelu",
       [](const Inputs& in) {
         return std::vector<Tensor>{prelu(in("input"), in("weight"))};
       }},
      {"prelu_shared",
       [](const Inputs& in) {
         return std::vector<Tensor>{prelu(in("input"), in("weight"))};
       }},
      {"bce", bce_case(false, kMean)},
      {"bce_weight_sum", bce_case(true, kSum)},
      {"bce_none", bce_case(false, kNone)},
      {"bce_with_logits", bce_with_logits_case(false, false, kMean)},
      {"bce_with_logits_pos_weight", bce_with_logits_case(false, true, kMean)},
      {"bce_with_logits_weights_none", bce_with_logits_case(true, true, kNone)},
      {"bce_with_logits_large", bce_with_logits_case(false, true, kSum)},
      {"l1_loss", pointwise_loss_case([](const Tensor& x, const Tensor& y) {
         return l1_loss(x, y);
       })},
      {"l1_loss_sum", pointwise_loss_case([](const Tensor& x, const Tensor& y) {
         return l1_loss(x, y, kSum);
       })},
      {"l1_loss_none", pointwise_loss_case([](const Tensor& x, const Tensor& y) {
         return l1_loss(x, y, kNone);
       })},
      {"smooth_l1_loss", pointwise_loss_case([](const Tensor& x, const Tensor& y) {
         return smooth_l1_loss(x, y);
       })},
      {"smooth_l1_loss_beta_sum",
       pointwise_loss_case([](const Tensor& x, const Tensor& y) {
         return smooth_l1_loss(x, y, kSum, 0.5);
       })},
      {"smooth_l1_loss_beta0_none",
       pointwise_loss_case([](const Tensor& x, const Tensor& y) {
         return smooth_l1_loss(x, y, kNone, 0.0);
       })},
      {"huber_loss", pointwise_loss_case([](const Tensor& x, const Tensor& y) {
         return huber_loss(x, y);
       })},
      {"huber_loss_delta_sum", pointwise_loss_case([](const Tensor& x, const Tensor& y) {
         return huber_loss(x, y, kSum, 0.3);
       })},
      {"kl_div", pointwise_loss_case([](const Tensor& x, const Tensor& y) {
         return kl_div(x, y);
       })},
      {"kl_div_batchmean", pointwise_loss_case([](const Tensor& x, const Tensor& y) {
         return kl_div(x, y, kBatchMean);
       })},
      {"kl_div_sum", pointwise_loss_case([](const Tensor& x, const Tensor& y) {
         return kl_div(x, y, kSum);
       })},
      {"kl_div_none", pointwise_loss_case([](const Tensor& x, const Tensor& y) {
         return kl_div(x, y, kNone);
       })},
      {"kl_div_log_target_batchmean",
       pointwise_loss_case([](const Tensor& x, const Tensor& y) {
         return kl_div(x, y, kBatchMean, /*log_target=*/true);
       })},
      {"kl_div_zero_target_sum",
       pointwise_loss_case(
           [](const Tensor& x, const Tensor& y) { return kl_div(x, y, kSum); })},
      {"cosine_embedding_loss", pair_loss_case(cosine_embedding_loss, 0.0, kMean)},
      {"cosine_embedding_loss_margin_sum",
       pair_loss_case(cosine_embedding_loss, -0.2, kSum)},
      {"cosine_embedding_loss_none", pair_loss_case(cosine_embedding_loss, 0.1, kNone)},
      {"margin_ranking_loss", pair_loss_case(margin_ranking_loss, 0.0, kMean)},
      {"margin_ranking_loss_margin_sum", pair_loss_case(margin_ranking_loss, 0.5, kSum)},
      {"margin_ranking_loss_none", pair_loss_case(margin_ranking_loss, 0.2, kNone)},
      {"embedding",
       [](const Inputs& in) {
         return std::vector<Tensor>{embedding(in("weight"), in("input"))};
       }},
      {"embedding_padding_idx",
       [](const Inputs& in) {
         return std::vector<Tensor>{
             embedding(in("weight"), in("input"), /*padding_idx=*/2)};
       }},
      {"sum_all", unary([](const Tensor& x) { return x.sum(); })},
      {"sum_dim1", unary([](const Tensor& x) { return sum(x, {1}); })},
      {"sum_dims02_keepdim", unary([](const Tensor& x) {
         return sum(x, {0, 2}, true);
       })},
      {"mean_all", unary([](const Tensor& x) { return x.mean(); })},
      {"mean_dim_neg1", unary([](const Tensor& x) { return mean(x, {-1}); })},
      {"mean_dims01_keepdim", unary([](const Tensor& x) {
         return mean(x, {0, 1}, true);
       })},
      {"max_all", unary([](const Tensor& x) { return max(x); })},
      {"max_dim1", values_and_indices([](const Tensor& x) { return max(x, 1); })},
      {"max_dim2_keepdim",
       values_and_indices([](const Tensor& x) { return max(x, 2, true); })},
      {"min_all", unary([](const Tensor& x) { return min(x); })},
      {"min_dim0", values_and_indices([](const Tensor& x) { return min(x, 0); })},
      {"matmul_mm", matmul_case()},
      {"matmul_dot", matmul_case()},
      {"matmul_vec_mat", matmul_case()},
      {"matmul_mat_vec", matmul_case()},
      {"matmul_batch_vec", matmul_case()},
      {"matmul_vec_batch", matmul_case()},
      {"matmul_bmm", matmul_case()},
      {"matmul_broadcast", matmul_case()},
      {"matmul_broadcast_mat", matmul_case()},
      {"conv2d", conv2d_case(true)},
      {"conv2d_stride_padding", conv2d_case(true, {2, 1}, {1, 0})},
      {"conv2d_dilation", conv2d_case(true, 1, 2, {2, 3})},
      {"conv2d_groups", conv2d_case(true, 1, 1, 1, 2)},
      {"conv2d_depthwise", conv2d_case(false, 2, 1, 1, 3)},
      {"conv2d_pointwise", conv2d_case(true)},
      {"conv2d_unbatched", conv2d_case(true, 1, 1)},
      {"conv_transpose2d", conv_transpose_case([](auto x, auto w, auto b) {
         return conv_transpose2d(x, w, b);
       })},
      {"conv_transpose2d_stride2_output_padding",
       conv_transpose_case(
           [](auto x, auto w, auto b) { return conv_transpose2d(x, w, b, 2, 1, 1); })},
      {"conv_transpose2d_padding_nonsquare",
       conv_transpose_case([](auto x, auto w, auto b) {
         return conv_transpose2d(x, w, b, {2, 1}, {1, 0}, {1, 0});
       })},
      {"conv_transpose2d_dilation", conv_transpose_case([](auto x, auto w, auto b) {
         return conv_transpose2d(x, w, b, 1, 1, 0, 1, {2, 3});
       })},
      {"conv_transpose2d_output_padding_over_stride",
       conv_transpose_case([](auto x, auto w, auto b) {
         return conv_transpose2d(x, w, b, 1, 0, /*output_padding=*/1, 1, /*dilation=*/2);
       })},
      {"conv_transpose2d_groups_nobias",
       conv_transpose_case(
           [](auto x, auto w, auto b) { return conv_transpose2d(x, w, b, 2, 1, 0, 2); },
           false)},
      {"conv_transpose2d_dcgan_first", conv_transpose_case([](auto x, auto w, auto b) {
         return conv_transpose2d(x, w, b);
       })},
      {"conv_transpose2d_unbatched", conv_transpose_case([](auto x, auto w, auto b) {
         return conv_transpose2d(x, w, b, 2);
       })},
      {"conv_transpose1d", conv_transpose_case([](auto x, auto w, auto b) {
         return conv_transpose1d(x, w, b, 2, 1, 1);
       })},
      {"conv_transpose1d_groups_dilation_nobias",
       conv_transpose_case(
           [](auto x, auto w, auto b) {
             return conv_transpose1d(x, w, b, 1, 2, 0, 2, 2);
           },
           false)},
      {"conv_transpose1d_unbatched", conv_transpose_case([](auto x, auto w, auto b) {
         return conv_transpose1d(x, w, b, 3);
       })},
      {"max_pool2d", unary([](const Tensor& x) { return max_pool2d(x, 2); })},
      {"max_pool2d_stride_padding_indices", values_and_indices([](const Tensor& x) {
         return max_pool2d_with_indices(x, 3, 2, 1);
       })},
      {"max_pool2d_dilation_ceil_mode", unary([](const Tensor& x) {
         return max_pool2d(x, {3, 2}, 2, 1, {2, 1}, /*ceil_mode=*/true);
       })},
      {"max_pool2d_unbatched", unary([](const Tensor& x) { return max_pool2d(x, 2); })},
      {"avg_pool2d", unary([](const Tensor& x) { return avg_pool2d(x, 2); })},
      {"avg_pool2d_padding_exclude_pad", unary([](const Tensor& x) {
         return avg_pool2d(x, 3, 2, 1, false, /*count_include_pad=*/false);
       })},
      {"avg_pool2d_ceil_mode_include_pad", unary([](const Tensor& x) {
         return avg_pool2d(x, {3, 2}, 2, 1, /*ceil_mode=*/true);
       })},
      {"avg_pool2d_divisor_override", unary([](const Tensor& x) {
         return avg_pool2d(x, 2, 1, 0, false, true, /*divisor_override=*/3);
       })},
      {"batch_norm_train", batch_norm_case(true, true, 0.1)},
      {"batch_norm_train_2d_momentum", batch_norm_case(true, true, 0.3)},
      {"batch_norm_train_no_affine", batch_norm_case(true, false, 0.1)},
      {"batch_norm_eval", batch_norm_case(false, true, 0.1)},
      {"layer_norm_last_dim", layer_norm_case({5}, true)},
      {"layer_norm_last_two_dims", layer_norm_case({3, 4}, true)},
      {"layer_norm_no_affine", layer_norm_case({6}, false, 1e-3)},
  };
  return cases;
}

const Golden& ops_golden(const std::string& dtype) {
  static std::map<std::string, Golden> cache;
  auto it = cache.find(dtype);
  if (it == cache.end()) {
    it = cache.emplace(dtype, testing::load_golden("ops_" + dtype + ".txt")).first;
  }
  return it->second;
}

// The case names in a golden file: the part before the first '.'.
std::set<std::string> golden_cases(const Golden& g) {
  std::set<std::string> names;
  for (const auto& [key, value] : g) names.insert(key.substr(0, key.find('.')));
  return names;
}

using Param = std::tuple<std::string, std::string>;  // case, dtype

class OpParity : public ::testing::TestWithParam<Param> {};

TEST_P(OpParity, ForwardAndInputGradients) {
  const auto& [name, dtype] = GetParam();
  const Golden& g = ops_golden(dtype);
  const std::string prefix = name + ".";
  std::map<std::string, Tensor> inputs;
  auto input = [&](const std::string& key) -> Tensor {
    auto it = inputs.find(key);
    if (it != inputs.end()) return it->second;
    Tensor t = golden_at(g, prefix + key).clone();
    if (g.count(prefix + "grad." + key) > 0) t.requires_grad_();
    return inputs[key] = t;
  };
  std::vector<Tensor> outputs = op_cases().at(name)(input);
  ASSERT_FALSE(outputs.empty());
  EXPECT_TRUE(matches(outputs[0], golden_at(g, prefix + "out"))) << "out";
  // Further outputs: indices match exactly, values (batch_norm's running
  // statistics) to the dtype's tolerance.
  for (size_t i = 1; i < outputs.size(); ++i) {
    const std::string key = prefix + "out" + std::to_string(i);
    const Tensor& want = golden_at(g, key);
    if (want.is_floating_point()) {
      EXPECT_TRUE(matches(outputs[i], want)) << key;
    } else {
      EXPECT_TRUE(equal(outputs[i], want)) << key;
    }
  }
  outputs[0].backward(golden_at(g, prefix + "grad_out"));
  int gradients = 0;
  for (const auto& [key, t] : inputs) {
    auto want = g.find(prefix + "grad." + key);
    if (want == g.end()) continue;
    ++gradients;
    EXPECT_TRUE(matches(t.grad(), want->second)) << "gradient of " << key;
  }
  EXPECT_GT(gradients, 0);
}

TEST(OpParityCoverage, EveryGoldenCaseHasATest) {
  for (const char* dtype : {"float32", "float64"}) {
    for (const auto& name : golden_cases(ops_golden(dtype))) {
      EXPECT_EQ(op_cases().count(name), 1u)
          << name << " (" << dtype << ") has no case here";
    }
  }
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& [name, op] : op_cases()) names.push_back(name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Ops,
                         OpParity,
                         ::testing::Combine(::testing::ValuesIn(case_names()),
                                            ::testing::Values("float32", "float64")),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param);
                         });

}  // namespace
}  // namespace tandem
