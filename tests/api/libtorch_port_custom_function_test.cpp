// LibTorch custom autograd functions ported by renaming: the programs of
// the C++ frontend's autograd tutorial ("Using custom autograd function in
// C++": LinearFunction, MulConstant) and custom functions from LibTorch's
// own tests (test/cpp/api/autograd.cpp), written as a LibTorch user writes
// them with `torch::` replaced by `tandem::` and <torch/torch.h> by
// "tandem/tandem.h". Each is checked for the numbers it computes: the
// gradients of the same math done with built-in ops.
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

using namespace tandem::autograd;

namespace {

using tandem::testing::all_close;

// ---- the tutorial's LinearFunction ----

// Inherit from Function
class LinearFunction : public Function<LinearFunction> {
 public:
  // Note that both forward and backward are static functions

  // bias is an optional argument
  static tandem::Tensor forward(AutogradContext* ctx,
                                tandem::Tensor input,
                                tandem::Tensor weight,
                                tandem::Tensor bias = tandem::Tensor()) {
    ctx->save_for_backward({input, weight, bias});
    auto output = input.mm(weight.t());
    if (bias.defined()) {
      output += bias.unsqueeze(0).expand_as(output);
    }
    return output;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    auto input = saved[0];
    auto weight = saved[1];
    auto bias = saved[2];

    auto grad_output = grad_outputs[0];
    auto grad_input = grad_output.mm(weight);
    auto grad_weight = grad_output.t().mm(input);
    auto grad_bias = tandem::Tensor();
    if (bias.defined()) {
      grad_bias = grad_output.sum(0);
    }

    return {grad_input, grad_weight, grad_bias};
  }
};

TEST(LibTorchPortCustomFunction, TutorialLinearFunction) {
  tandem::manual_seed(0);
  auto x = tandem::randn({2, 3}).requires_grad_();
  auto weight = tandem::randn({4, 3}).requires_grad_();
  auto y = LinearFunction::apply(x, weight);
  y.sum().backward();

  // The same math with built-in ops on copies of the leaves.
  auto x2 = x.detach().clone().requires_grad_();
  auto w2 = weight.detach().clone().requires_grad_();
  auto y2 = x2.mm(w2.t());
  y2.sum().backward();
  EXPECT_TRUE(all_close(y, y2));
  EXPECT_TRUE(all_close(x.grad(), x2.grad()));
  EXPECT_TRUE(all_close(weight.grad(), w2.grad()));
  // d(sum(x W^T))/dx is the column sums of W in every row.
  EXPECT_TRUE(all_close(x.grad(), weight.sum(0).unsqueeze(0).expand({2, 3}), 1e-5, 1e-6));
}

TEST(LibTorchPortCustomFunction, TutorialLinearFunctionWithBias) {
  tandem::manual_seed(1);
  auto x = tandem::randn({5, 3}).requires_grad_();
  auto weight = tandem::randn({4, 3}).requires_grad_();
  auto bias = tandem::randn({4}).requires_grad_();
  auto y = LinearFunction::apply(x, weight, bias);
  auto g = tandem::randn({5, 4});
  y.backward(g);

  auto x2 = x.detach().clone().requires_grad_();
  auto w2 = weight.detach().clone().requires_grad_();
  auto b2 = bias.detach().clone().requires_grad_();
  auto y2 = tandem::linear(x2, w2, b2);
  y2.backward(g);
  EXPECT_TRUE(all_close(y, y2, 1e-5, 1e-6));
  EXPECT_TRUE(all_close(x.grad(), x2.grad(), 1e-5, 1e-6));
  EXPECT_TRUE(all_close(weight.grad(), w2.grad(), 1e-5, 1e-6));
  EXPECT_TRUE(all_close(bias.grad(), b2.grad(), 1e-5, 1e-6));
}

// ---- the tutorial's MulConstant ----

class MulConstant : public Function<MulConstant> {
 public:
  static tandem::Tensor forward(AutogradContext* ctx,
                                tandem::Tensor tensor,
                                double constant) {
    // ctx is a context object that can be used to stash information
    // for backward computation
    ctx->saved_data["constant"] = constant;
    return tensor * constant;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    // We return as many input gradients as there were arguments.
    // Gradients of non-tensor arguments to forward must be `tandem::Tensor()`.
    return {grad_outputs[0] * ctx->saved_data["constant"].toDouble(), tandem::Tensor()};
  }
};

TEST(LibTorchPortCustomFunction, TutorialMulConstant) {
  auto x = tandem::randn({2}).requires_grad_();
  auto y = MulConstant::apply(x, 5.5);
  y.sum().backward();

  EXPECT_TRUE(all_close(y, x.detach() * 5.5));
  EXPECT_TRUE(all_close(x.grad(), tandem::full({2}, 5.5)));
}

// ---- LibTorch's tests of custom functions ----

TEST(LibTorchPortCustomFunction, CustomFunctionWithAnIntArgument) {
  struct MyFunction : public Function<MyFunction> {
    static Variable forward(AutogradContext* ctx, Variable var1, int mul, Variable var2) {
      ctx->saved_data["mul"] = mul;
      ctx->save_for_backward({var1, var2});
      return var1 + mul * var2 + var1 * var2;
    }

    static variable_list backward(AutogradContext* ctx, variable_list grad_output) {
      int mul = ctx->saved_data["mul"].toInt();
      auto saved = ctx->get_saved_variables();
      auto var1 = saved[0];
      auto var2 = saved[1];
      variable_list output = {grad_output[0] + grad_output[0] * var2,
                              Variable(),
                              grad_output[0] * mul + grad_output[0] * var1};
      return output;
    }
  };

  Variable x = tandem::randn({5, 5}, tandem::requires_grad());
  Variable y = tandem::randn({5, 5}, tandem::requires_grad());
  auto res = MyFunction::apply(x, 2, y);
  auto go = tandem::ones({}, tandem::requires_grad());
  res.sum().backward(go, false, true);

  EXPECT_TRUE(all_close(x.grad(), y + tandem::ones({5, 5})));
  EXPECT_TRUE(all_close(y.grad(), x + tandem::ones({5, 5}) * 2));
  // create_graph: the gradients have a history back to y and x.
  EXPECT_TRUE(x.grad().requires_grad());
  x.set_grad(tandem::Tensor());  // break the .grad -> graph -> x cycle
  y.set_grad(tandem::Tensor());
}

TEST(LibTorchPortCustomFunction, FunctionReturnsInput) {
  struct MyFunction : public Function<MyFunction> {
    static Variable forward(AutogradContext* ctx, Variable var1) { return var1; }

    static variable_list backward(AutogradContext* ctx, variable_list grad_output) {
      return {grad_output[0] * 2};
    }
  };

  Variable x(tandem::ones({1}, tandem::requires_grad()));
  MyFunction::apply(x).backward(tandem::ones({1}), true);
  EXPECT_TRUE(all_close(x.grad(), tandem::full({1}, 2.)));
}

TEST(LibTorchPortCustomFunction, MarkDirty) {
  struct MyFunction : public Function<MyFunction> {
    static Variable forward(AutogradContext* ctx, Variable v) {
      // Change the value inplace
      auto v_data = v.data_ptr<float>();
      v_data[0] = 2;
      ctx->mark_dirty({v});
      return v;
    }

    static variable_list backward(AutogradContext* ctx, variable_list grad_output) {
      return {(grad_output[0] * 2.0)};
    }
  };

  // Clone here because modifying leafs inplace is not allowed
  auto leaf = tandem::randn({5, 5}, tandem::requires_grad());
  auto x = leaf.clone();
  auto version_before = x._version();
  auto out = MyFunction::apply(x);
  auto version_after = x._version();
  ASSERT_TRUE(version_after >= (version_before + 1));
  out.sum().backward();

  EXPECT_FLOAT_EQ(x.data_ptr<float>()[0], 2.0F);
  // The changed input is the output: x's history now runs through MyFunction.
  EXPECT_TRUE(out.is_same(x));
  EXPECT_TRUE(all_close(leaf.grad(), tandem::full({5, 5}, 2.0)));
}

TEST(LibTorchPortCustomFunction, MarkNonDifferentiableMixed) {
  struct MyFunction : public Function<MyFunction> {
    static variable_list forward(AutogradContext* ctx, Variable input) {
      Variable a = input + 1;
      Variable b = input + 2;
      ctx->mark_non_differentiable({a});
      return {a, b};
    }

    static variable_list backward(AutogradContext* ctx, variable_list grad_output) {
      const Variable &grad_a = grad_output[0], &grad_b = grad_output[1];
      EXPECT_TRUE(all_close(grad_a, tandem::zeros({5, 5})));
      EXPECT_TRUE(all_close(grad_b, tandem::ones({5, 5})));
      return {grad_b};
    }
  };

  auto x = tandem::randn({5, 5}, tandem::requires_grad());
  auto out = MyFunction::apply(x);

  ASSERT_FALSE(out[0].requires_grad());
  ASSERT_TRUE(out[1].requires_grad());
  out[1].sum().backward();
  EXPECT_TRUE(all_close(x.grad(), tandem::ones({5, 5})));
}

TEST(LibTorchPortCustomFunction, SaveEmptyForBackward) {
  struct MyFunction : public Function<MyFunction> {
    static Variable forward(AutogradContext* ctx, Variable input) {
      ctx->save_for_backward({Variable(), input, Variable()});
      return input * input;
    }

    static variable_list backward(AutogradContext* ctx, variable_list grad_output) {
      auto saved = ctx->get_saved_variables();
      EXPECT_FALSE(saved[0].defined());
      EXPECT_FALSE(saved[2].defined());
      return {saved[1] * 2 * grad_output[0]};
    }
  };

  Variable x = tandem::randn({5, 5}, tandem::requires_grad());
  auto y = MyFunction::apply(x);
  y.sum().backward();
  EXPECT_TRUE(all_close(x.grad(), 2 * x));
}

TEST(LibTorchPortCustomFunction, TooManyUndefinedGradsAreAllowed) {
  struct MyFunction : public Function<MyFunction> {
    static Variable forward(AutogradContext*, Variable input) { return input; }

    static variable_list backward(AutogradContext*, variable_list grad) {
      grad.insert(grad.end(), {Variable(), Variable()});
      return grad;
    }
  };

  auto input = tandem::randn({5, 5}, tandem::requires_grad());
  auto a = MyFunction::apply(input);
  a.sum().backward();
  EXPECT_TRUE(all_close(input.grad(), tandem::ones({5, 5})));
}

TEST(LibTorchPortCustomFunction, DepNoGrad) {
  struct F1 : public Function<F1> {
    static variable_list forward(AutogradContext* ctx, Variable input) {
      auto out = tandem::randn(input.sizes());
      ctx->mark_non_differentiable({out});
      return {input, out};
    }

    static variable_list backward(AutogradContext* ctx, variable_list grad_output) {
      return {grad_output[0]};
    }
  };

  struct F2 : public Function<F2> {
    static Variable forward(AutogradContext*, Variable input, Variable ignore) {
      return input;
    }

    static variable_list backward(AutogradContext*, variable_list grad_output) {
      return {grad_output[0], Variable()};
    }
  };

  auto x = tandem::randn({5}, tandem::requires_grad());
  auto out = F1::apply(x);
  Variable &a = out[0], &b = out[1];
  b = b + 1;  // Separate F1 and F2 by another operation
  ASSERT_TRUE(a.requires_grad());
  ASSERT_FALSE(b.requires_grad());

  auto c = F2::apply(a, b);
  c.backward(tandem::ones(c.sizes()), false, false);
  EXPECT_TRUE(all_close(x.grad(), tandem::ones(x.sizes())));
}

}  // namespace
