// Issue 22's normalisation, pooling, convolution and resampling layers
// against PyTorch (tests/reference/norms_pooling.py), in float32 and
// float64: every single-op case's forward, indices and input gradients,
// and two small models (parameters copied from PyTorch's) whose outputs,
// input and parameter gradients and updated buffers must match.
#include <functional>
#include <set>

#include "parity/parity.h"

namespace tandem {
namespace {

namespace F = nn::functional;
using parity::Golden;
using parity::golden_at;
using parity::matches;

using Inputs = std::function<Tensor(const std::string&)>;
using OpCase = std::function<std::vector<Tensor>(const Inputs&)>;

OpCase unary(std::function<Tensor(const Tensor&)> f) {
  return [f](const Inputs& in) { return std::vector<Tensor>{f(in("x"))}; };
}

OpCase with_indices(std::function<std::tuple<Tensor, Tensor>(const Tensor&)> f) {
  return [f](const Inputs& in) {
    auto [values, indices] = f(in("x"));
    return std::vector<Tensor>{values, indices};
  };
}

OpCase conv1d_case(bool bias,
                   ExpandingArray<1> stride = 1,
                   ExpandingArray<1> padding = 0,
                   ExpandingArray<1> dilation = 1,
                   int64_t groups = 1) {
  return [=](const Inputs& in) {
    return std::vector<Tensor>{conv1d(in("input"),
                                      in("weight"),
                                      bias ? in("bias") : Tensor(),
                                      stride,
                                      padding,
                                      dilation,
                                      groups)};
  };
}

OpCase interpolate_case(F::InterpolateFuncOptions options) {
  return unary([options](const Tensor& x) { return F::interpolate(x, options); });
}

using Sizes = std::vector<int64_t>;
using Scales = std::vector<double>;

const std::map<std::string, OpCase>& op_cases() {
  static const std::map<std::string, OpCase> cases = {
      {"conv1d", conv1d_case(true)},
      {"conv1d_stride_padding_groups", conv1d_case(true, 2, 1, 1, 2)},
      {"conv1d_dilation_nobias", conv1d_case(false, 1, 2, 2)},
      {"conv1d_unbatched", conv1d_case(true, 3)},
      {"max_pool1d",
       with_indices([](const Tensor& x) { return max_pool1d_with_indices(x, 3, 2, 1); })},
      {"max_pool1d_dilation_ceil_mode", with_indices([](const Tensor& x) {
         return max_pool1d_with_indices(x, 2, 2, 0, /*dilation=*/2, /*ceil_mode=*/true);
       })},
      {"max_pool1d_unbatched",
       with_indices([](const Tensor& x) { return max_pool1d_with_indices(x, 2); })},
      {"avg_pool1d", unary([](const Tensor& x) { return avg_pool1d(x, 3, 2, 1); })},
      {"avg_pool1d_exclude_pad_ceil_mode", unary([](const Tensor& x) {
         return avg_pool1d(x, 3, 2, 1, /*ceil_mode=*/true, /*count_include_pad=*/false);
       })},
      {"adaptive_avg_pool2d_global",
       unary([](const Tensor& x) { return adaptive_avg_pool2d(x, 1); })},
      {"adaptive_avg_pool2d_uneven", unary([](const Tensor& x) {
         return adaptive_avg_pool2d(x, {3, 4});
       })},
      {"adaptive_avg_pool2d_divisible_unbatched", unary([](const Tensor& x) {
         return adaptive_avg_pool2d(x, {3, 2});
       })},
      {"adaptive_avg_pool2d_upsampling", unary([](const Tensor& x) {
         return adaptive_avg_pool2d(x, {4, 3});
       })},
      {"adaptive_avg_pool2d_mixed", unary([](const Tensor& x) {
         return adaptive_avg_pool2d(x, {2, 5});
       })},
      {"adaptive_max_pool2d_global", with_indices([](const Tensor& x) {
         return adaptive_max_pool2d_with_indices(x, 1);
       })},
      {"adaptive_max_pool2d_uneven", with_indices([](const Tensor& x) {
         return adaptive_max_pool2d_with_indices(x, {3, 4});
       })},
      {"adaptive_max_pool2d_divisible_unbatched", with_indices([](const Tensor& x) {
         return adaptive_max_pool2d_with_indices(x, {3, 2});
       })},
      {"adaptive_max_pool2d_upsampling", with_indices([](const Tensor& x) {
         return adaptive_max_pool2d_with_indices(x, {4, 3});
       })},
      {"adaptive_max_pool2d_mixed", with_indices([](const Tensor& x) {
         return adaptive_max_pool2d_with_indices(x, {2, 5});
       })},
      {"group_norm",
       [](const Inputs& in) {
         return std::vector<Tensor>{group_norm(in("x"), 3, in("weight"), in("bias"))};
       }},
      {"group_norm_no_affine_4d",
       unary([](const Tensor& x) { return group_norm(x, 2); })},
      {"group_norm_eps_one_group", unary([](const Tensor& x) {
         return F::group_norm(x, F::GroupNormFuncOptions(1).eps(0.1));
       })},
      {"instance_norm_affine",
       [](const Inputs& in) {
         return std::vector<Tensor>{F::instance_norm(
             in("x"),
             F::InstanceNormFuncOptions().weight(in("weight")).bias(in("bias")))};
       }},
      {"instance_norm_running_stats",
       [](const Inputs& in) {
         Tensor mean = in("running_mean").clone(), var = in("running_var").clone();
         Tensor out = instance_norm(in("x"), mean, var, {}, {}, true, 0.3, 1e-3);
         return std::vector<Tensor>{out, mean, var};
       }},
      {"instance_norm_eval",
       [](const Inputs& in) {
         return std::vector<Tensor>{instance_norm(
             in("x"), in("running_mean"), in("running_var"), {}, {}, false)};
       }},
      {"interpolate_nearest_size",
       interpolate_case(F::InterpolateFuncOptions().size(Sizes{5, 9}))},
      {"interpolate_nearest_scale",
       interpolate_case(F::InterpolateFuncOptions().scale_factor(Scales{2.5, 2.0}))},
      {"interpolate_nearest_scale_down",
       interpolate_case(F::InterpolateFuncOptions().scale_factor(Scales{0.6}))},
      {"interpolate_nearest_double",
       interpolate_case(F::InterpolateFuncOptions().scale_factor(Scales{2}))},
      {"interpolate_bilinear_size",
       interpolate_case(F::InterpolateFuncOptions()
                            .size(Sizes{5, 7})
                            .mode(kBilinear)
                            .align_corners(false))},
      {"interpolate_bilinear_align_corners",
       interpolate_case(F::InterpolateFuncOptions()
                            .size(Sizes{6, 7})
                            .mode(kBilinear)
                            .align_corners(true))},
      {"interpolate_bilinear_scale",
       interpolate_case(
           F::InterpolateFuncOptions().scale_factor(Scales{1.5, 2.5}).mode(kBilinear))},
      {"interpolate_bilinear_scale_down",
       interpolate_case(
           F::InterpolateFuncOptions().scale_factor(Scales{0.75, 0.5}).mode(kBilinear))},
      {"interpolate_bilinear_recompute",
       interpolate_case(F::InterpolateFuncOptions()
                            .scale_factor(Scales{1.7})
                            .mode(kBilinear)
                            .recompute_scale_factor(true))},
  };
  return cases;
}

const Golden& golden(const std::string& dtype) {
  static std::map<std::string, Golden> cache;
  auto it = cache.find(dtype);
  if (it == cache.end()) {
    it = cache.emplace(dtype, testing::load_golden("norms_pooling_" + dtype + ".txt"))
             .first;
  }
  return it->second;
}

using Param = std::tuple<std::string, std::string>;  // case, dtype

class NormsPoolingParity : public ::testing::TestWithParam<Param> {};

TEST_P(NormsPoolingParity, ForwardAndInputGradients) {
  const auto& [name, dtype] = GetParam();
  const Golden& g = golden(dtype);
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

TEST(NormsPoolingParityCoverage, EveryGoldenCaseHasATest) {
  for (const char* dtype : {"float32", "float64"}) {
    std::set<std::string> names;
    for (const auto& [key, value] : golden(dtype)) {
      names.insert(key.substr(0, key.find('.')));
    }
    names.erase("net2d");
    names.erase("net1d");
    for (const auto& name : names) {
      EXPECT_EQ(op_cases().count(name), 1u) << name << " (" << dtype << ") has no case";
    }
  }
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& [name, op] : op_cases()) names.push_back(name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Cases,
                         NormsPoolingParity,
                         ::testing::Combine(::testing::ValuesIn(case_names()),
                                            ::testing::Values("float32", "float64")),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param);
                         });

// ---- the two models ----

nn::Sequential net2d() {
  return nn::Sequential(
      nn::Conv2d(nn::Conv2dOptions(3, 4, 3).padding(1)),
      nn::GroupNorm(2, 4),
      nn::ReLU(),
      nn::Upsample(nn::UpsampleOptions()
                       .scale_factor(std::vector<double>{2})
                       .mode(kBilinear)
                       .align_corners(false)),
      nn::InstanceNorm2d(
          nn::InstanceNormOptions(4).affine(true).track_running_stats(true)),
      nn::AdaptiveMaxPool2d(ExpandingArray<2>({3, 5})),
      nn::AdaptiveAvgPool2d(1),
      nn::Flatten(),
      nn::Linear(4, 2));
}

nn::Sequential net1d() {
  return nn::Sequential(nn::Conv1d(nn::Conv1dOptions(3, 4, 3).padding(1)),
                        nn::MaxPool1d(2),
                        nn::ReLU(),
                        nn::Conv1d(nn::Conv1dOptions(4, 6, 3).dilation(2).groups(2)),
                        nn::AvgPool1d(2));
}

void check_model(const std::string& name,
                 nn::Sequential model,
                 const std::string& dtype) {
  const Golden& g = golden(dtype);
  model->to(parity::dtype_named(dtype));
  {
    NoGradGuard no_grad;
    for (const auto& item : model->named_parameters()) {
      Tensor param = item.value();
      param.copy_(golden_at(g, name + "." + item.key()));
    }
  }
  Tensor x = golden_at(g, name + ".x").clone().requires_grad_();
  Tensor out = model->forward(x);
  EXPECT_TRUE(matches(out, golden_at(g, name + ".out"))) << name << " out";
  out.backward(golden_at(g, name + ".grad_out"));
  EXPECT_TRUE(matches(x.grad(), golden_at(g, name + ".grad.x"))) << name << " grad x";
  for (const auto& item : model->named_parameters()) {
    EXPECT_TRUE(matches(item.value().grad(), golden_at(g, name + ".grad." + item.key())))
        << name << " grad " << item.key();
  }
  for (const auto& item : model->named_buffers()) {
    const Tensor& want = golden_at(g, name + ".after." + item.key());
    if (want.is_floating_point()) {
      EXPECT_TRUE(matches(item.value(), want)) << name << " buffer " << item.key();
    } else {
      EXPECT_TRUE(equal(item.value(), want)) << name << " buffer " << item.key();
    }
  }
}

class NormsPoolingModelParity : public ::testing::TestWithParam<std::string> {};

TEST_P(NormsPoolingModelParity, Net2dForwardGradientsAndBuffers) {
  check_model("net2d", net2d(), GetParam());
}

TEST_P(NormsPoolingModelParity, Net1dForwardAndGradients) {
  check_model("net1d", net1d(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(Dtypes,
                         NormsPoolingModelParity,
                         ::testing::Values("float32", "float64"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tandem
