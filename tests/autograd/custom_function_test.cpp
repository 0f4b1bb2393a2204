// Custom autograd functions (autograd::Function<T>): gradients and second
// derivatives against finite differences in float64, what saved_data
// holds, the refusals of a wrong backward (each naming the function), the
// context's marks, freeing the context with the graph, and a custom
// function inside nn::DataParallel.
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using autograd::AutogradContext;
using autograd::Function;
using autograd::tensor_list;
using autograd::variable_list;
using testing::all_close;
using testing::throws_with;

TensorOptions f64_grad() { return TensorOptions(kFloat64).requires_grad(true); }

// input W^T + bias, the bias optional; computes only the gradients needed.
struct Affine : Function<Affine> {
  static Tensor forward(AutogradContext* ctx,
                        const Tensor& input,
                        const Tensor& weight,
                        const std::optional<Tensor>& bias) {
    ctx->save_for_backward({input, weight});
    ctx->saved_data["has_bias"] = bias.has_value();
    Tensor out = input.mm(weight.t());
    return bias ? out + *bias : out;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const Tensor& g = grads[0];
    Tensor grad_input = ctx->needs_input_grad(0) ? g.mm(saved[1]) : Tensor();
    Tensor grad_weight = ctx->needs_input_grad(1) ? g.t().mm(saved[0]) : Tensor();
    Tensor grad_bias = ctx->saved_data["has_bias"].toBool() ? g.sum(0) : Tensor();
    return {grad_input, grad_weight, grad_bias};
  }
};

// scale * exp(x); saves its own output, so double backward goes through a
// saved output.
struct ScaledExp : Function<ScaledExp> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x, double scale) {
    Tensor out = exp(x) * scale;
    ctx->save_for_backward({out});
    return out;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {grads[0] * ctx->get_saved_variables()[0], Tensor()};
  }
};

// ---- numbers ----

TEST(CustomFunction, AffineMatchesFiniteDifferencesWithAndWithoutBias) {
  manual_seed(0);
  const Tensor x = randn({4, 3}, f64_grad());
  const Tensor w = randn({2, 3}, f64_grad());
  const Tensor b = randn({2}, f64_grad());
  auto with_bias = [](const tensor_list& in) {
    return Affine::apply(in[0], in[1], in[2]);
  };
  auto without_bias = [](const tensor_list& in) {
    return Affine::apply(in[0], in[1], std::nullopt);
  };
  auto r = autograd::gradcheck(with_bias, {x, w, b});
  EXPECT_TRUE(r) << r.message;
  r = autograd::gradcheck(without_bias, {x, w});
  EXPECT_TRUE(r) << r.message;
  r = autograd::gradgradcheck(with_bias, {x, w, b});
  EXPECT_TRUE(r) << r.message;
}

TEST(CustomFunction, SavedOutputMatchesFiniteDifferencesToSecondOrder) {
  manual_seed(1);
  const Tensor x = randn({5}, f64_grad());
  auto f = [](const tensor_list& in) { return ScaledExp::apply(in[0], 0.5); };
  auto r = autograd::gradcheck(f, {x});
  EXPECT_TRUE(r) << r.message;
  r = autograd::gradgradcheck(f, {x});
  EXPECT_TRUE(r) << r.message;
  // d2/dx2 of 0.5 exp(x) is 0.5 exp(x).
  Tensor g = autograd::grad({ScaledExp::apply(x, 0.5).sum()}, {x}, {}, {}, true)[0];
  Tensor h = autograd::grad({g.sum()}, {x})[0];
  EXPECT_TRUE(all_close(h, 0.5 * exp(x.detach()), 1e-12, 1e-12));
}

TEST(CustomFunction, AffineGivesTheGradientsOfTheBuiltInLinear) {
  manual_seed(2);
  const Tensor x = randn({6, 4}, kFloat32).requires_grad_();
  const Tensor w = randn({3, 4}, kFloat32).requires_grad_();
  const Tensor b = randn({3}, kFloat32).requires_grad_();
  const Tensor g = randn({6, 3});
  Affine::apply(x, w, b).backward(g);
  const tensor_list want = autograd::grad({linear(x, w, b)}, {x, w, b}, {g});
  EXPECT_TRUE(all_close(x.grad(), want[0], 1e-5, 1e-6));
  EXPECT_TRUE(all_close(w.grad(), want[1], 1e-5, 1e-6));
  EXPECT_TRUE(all_close(b.grad(), want[2], 1e-5, 1e-6));
}

// ---- saved_data ----

struct KeepsValues : Function<KeepsValues> {
  static Tensor forward(AutogradContext* ctx,
                        const Tensor& x,
                        int n,
                        const std::string& tag) {
    ctx->saved_data["n"] = n;
    ctx->saved_data["half"] = 0.5F;
    ctx->saved_data["flag"] = true;
    ctx->saved_data["tag"] = tag;
    ctx->saved_data["sizes"] = x.sizes();
    ctx->saved_data["weights"] = std::vector<double>{1.0, 2.0};
    ctx->saved_data["x"] = x;
    return x * n;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto& data = ctx->saved_data;
    EXPECT_EQ(data["half"].toDouble(), 0.5);
    EXPECT_TRUE(data["flag"].toBool());
    EXPECT_EQ(data["tag"].toStringRef(), "scaled");
    EXPECT_EQ(data["sizes"].toIntVector(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(data["weights"].toDoubleVector(), (std::vector<double>{1.0, 2.0}));
    EXPECT_TRUE(data["x"].isTensor());
    EXPECT_EQ(data["x"].toTensor().sizes(), grads[0].sizes());
    return {grads[0] * data["n"].toInt(), Tensor(), Tensor()};
  }
};

TEST(CustomFunction, SavedDataCarriesValuesOfEveryKindToBackward) {
  const Tensor x = randn({2, 3}, f64_grad());
  KeepsValues::apply(x, 3, std::string("scaled")).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), full({2, 3}, 3.0, kFloat64)));
}

// ---- refusals ----

struct ForgetsTheConstant : Function<ForgetsTheConstant> {
  static Tensor forward(AutogradContext*, const Tensor& x, double c) { return x * c; }
  static variable_list backward(AutogradContext*, variable_list grads) {
    return {grads[0]};
  }
};

struct Named : Function<Named> {
  static std::string name() { return "MyScale"; }
  static Tensor forward(AutogradContext*, const Tensor& x) { return x * 2; }
  static variable_list backward(AutogradContext*, variable_list grads) {
    return {grads[0], grads[0]};
  }
};

TEST(CustomFunction, AWrongNumberOfGradientsNamesTheFunction) {
  const Tensor x = randn({3}, f64_grad());
  EXPECT_TRUE(throws_with([&] { ForgetsTheConstant::apply(x, 2.0).sum().backward(); },
                          "ForgetsTheConstant: backward must return one gradient per "
                          "argument of forward (2), got 1"));
  // A static name() replaces the type name, in messages and as grad_fn.
  const Tensor y = Named::apply(x);
  EXPECT_EQ(y.grad_fn()->name(), "MyScale");
  EXPECT_TRUE(throws_with([&] { y.sum().backward(); },
                          "MyScale: backward must return one gradient per argument of "
                          "forward (1), got 2"));
}

// Returns what the test puts in `returned` for the input's gradient.
Tensor returned;
struct ReturnsGiven : Function<ReturnsGiven> {
  static Tensor forward(AutogradContext*, const Tensor& x, int64_t) { return x.clone(); }
  static variable_list backward(AutogradContext*, variable_list) {
    return {returned, Tensor()};
  }
};

TEST(CustomFunction, AGradientOfTheWrongShapeDeviceOrKindIsRefused) {
  const Tensor x = randn({2, 3}, kFloat32).requires_grad_();
  auto run = [&] { ReturnsGiven::apply(x, 0).sum().backward(); };
  returned = ones({3, 2});
  EXPECT_TRUE(throws_with(run,
                          "ReturnsGiven: backward returned a gradient of shape [3, 2] at "
                          "position 0 but argument 0 of forward has shape [2, 3]"));
  returned = ones({2, 3}, kInt64);
  EXPECT_TRUE(
      throws_with(run, "backward returned a gradient of dtype int64 at position 0"));
  const Tensor on_cpu1 =
      randn({2, 3}, TensorOptions().device(Device("cpu:1")).requires_grad(true));
  returned = ones({2, 3});
  EXPECT_TRUE(
      throws_with([&] { ReturnsGiven::apply(on_cpu1, 0).sum().backward(); },
                  "ReturnsGiven: backward returned a gradient on cpu:0 at position 0 "
                  "but argument 0 of forward is on cpu:1"));
  // As in LibTorch: a shape the input broadcasts to is summed down to it,
  // another floating dtype is converted.
  returned = full({4, 2, 3}, 1.0, kFloat64);
  run();
  EXPECT_EQ(x.grad().dtype(), kFloat32);
  EXPECT_TRUE(all_close(x.grad(), full({2, 3}, 4.0)));
  returned = Tensor();
}

struct GradientForTheInt : Function<GradientForTheInt> {
  static Tensor forward(AutogradContext*, int64_t, const Tensor& x) { return x.clone(); }
  static variable_list backward(AutogradContext*, variable_list grads) {
    return {grads[0], grads[0]};
  }
};

TEST(CustomFunction, AGradientForANonTensorArgumentIsRefused) {
  const Tensor x = randn({3}, f64_grad());
  EXPECT_TRUE(throws_with([&] { GradientForTheInt::apply(7, x).sum().backward(); },
                          "GradientForTheInt: backward returned a defined gradient at "
                          "position 0 but argument 0 of forward is not a tensor"));
}

struct SavesInput : Function<SavesInput> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x) {
    ctx->save_for_backward({x});
    return x * x;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {2 * grads[0] * ctx->get_saved_variables()[0]};
  }
};

TEST(CustomFunction, ASavedTensorChangedInPlaceIsRefusedByName) {
  const Tensor leaf = randn({3}, f64_grad());
  Tensor x = leaf * 1.0;
  const Tensor y = SavesInput::apply(x);
  x.add_(1.0);
  EXPECT_TRUE(throws_with([&] { y.sum().backward(); },
                          "SavesInput: a tensor saved for backward (shape [3], float64) "
                          "was modified by an in-place operation after it was saved"));
}

struct ScalesInPlace : Function<ScalesInPlace> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    x.mul_(3.0);
    ctx->mark_dirty({x});
    return x;
  }
  static variable_list backward(AutogradContext*, variable_list grads) {
    return {grads[0] * 3.0};
  }
};

struct MarksWithoutReturning : Function<MarksWithoutReturning> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x) {
    ctx->mark_dirty({x});
    return x * 2;
  }
  static variable_list backward(AutogradContext*, variable_list grads) {
    return {grads[0]};
  }
};

TEST(CustomFunction, MarkDirtyRebasesTheInputAndRefusesALeaf) {
  const Tensor leaf = tensor({1.0, 2.0}, f64_grad());
  Tensor x = leaf * 2.0;
  const auto before = x.grad_fn();
  const Tensor y = ScalesInPlace::apply(x);
  EXPECT_TRUE(y.is_same(x));
  EXPECT_NE(x.grad_fn(), before);
  EXPECT_TRUE(all_close(x.detach(), tensor({6.0, 12.0})));
  (x * x).sum().backward();  // d/dleaf (6 leaf)^2 = 72 leaf
  EXPECT_TRUE(all_close(leaf.grad(), tensor({72.0, 144.0})));

  EXPECT_TRUE(throws_with([&] { ScalesInPlace::apply(leaf); },
                          "ScalesInPlace: forward changed in place (mark_dirty) a leaf "
                          "tensor that requires grad (shape [2])"));
  EXPECT_TRUE(throws_with([&] { MarksWithoutReturning::apply(leaf * 1.0); },
                          "MarksWithoutReturning: a tensor given to mark_dirty was not "
                          "returned by forward"));
}

// ---- the context's other controls ----

// Two outputs, x + 1 and x * 2; records which gradients backward saw.
bool second_grad_defined = false;
struct TwoOutputs : Function<TwoOutputs> {
  static variable_list forward(AutogradContext* ctx, const Tensor& x, bool materialize) {
    ctx->set_materialize_grads(materialize);
    return {x + 1, x * 2};
  }
  static variable_list backward(AutogradContext*, variable_list grads) {
    second_grad_defined = grads[1].defined();
    Tensor g = grads[0];
    if (grads[1].defined()) g = g + 2 * grads[1];
    return {g, Tensor()};
  }
};

TEST(CustomFunction, WithoutMaterializedGradsAMissingGradientIsUndefined) {
  const Tensor x = randn({3}, f64_grad());
  TwoOutputs::apply(x, true)[0].sum().backward();
  EXPECT_TRUE(second_grad_defined);  // zeros
  TwoOutputs::apply(x, false)[0].sum().backward();
  EXPECT_FALSE(second_grad_defined);
  const variable_list both = TwoOutputs::apply(x, false);
  (both[0] + both[1]).sum().backward();
  EXPECT_TRUE(second_grad_defined);
  EXPECT_TRUE(all_close(x.grad(), full({3}, 1.0 + 1.0 + 3.0, kFloat64)));
}

struct FirstOutputUndefined : Function<FirstOutputUndefined> {
  static variable_list forward(AutogradContext*, const Tensor& x) {
    return {Tensor(), x * 3};
  }
  static variable_list backward(AutogradContext*, variable_list grads) {
    EXPECT_FALSE(grads[0].defined());
    return {grads[1] * 3};
  }
};

TEST(CustomFunction, AnUndefinedOutputGetsAnUndefinedGradient) {
  const Tensor x =
      randn({2}, TensorOptions(kFloat64).device(Device("cpu:1")).requires_grad(true));
  const variable_list out = FirstOutputUndefined::apply(x);
  EXPECT_FALSE(out[0].defined());
  // The node's device is its first output's: here a stand-in on x's device.
  EXPECT_EQ(out[1].grad_fn()->device(), Device("cpu:1"));
  out[1].sum().backward();
  EXPECT_TRUE(all_close(x.grad(),
                        full({2}, 3.0, TensorOptions(kFloat64).device(Device("cpu:1")))));
}

// Records needs_input_grad for (x, w) in forward and in backward.
std::vector<bool> needs_in_forward, needs_in_backward;
struct RecordsNeeds : Function<RecordsNeeds> {
  static Tensor forward(AutogradContext* ctx,
                        double c,
                        const Tensor& x,
                        const Tensor& w) {
    needs_in_forward = {ctx->needs_input_grad(0), ctx->needs_input_grad(1)};
    return x * w * c;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    needs_in_backward = {ctx->needs_input_grad(0), ctx->needs_input_grad(1)};
    return {Tensor(), grads[0], grads[0]};
  }
};

TEST(CustomFunction, NeedsInputGradCountsTensorInputsAndFollowsAutogradGrad) {
  const Tensor x = randn({3}, f64_grad());
  Tensor w = randn({3}, kFloat64);
  RecordsNeeds::apply(2.0, x, w).sum().backward();
  EXPECT_EQ(needs_in_forward, (std::vector<bool>{true, false}));
  EXPECT_EQ(needs_in_backward, (std::vector<bool>{true, false}));

  w.requires_grad_();
  autograd::grad({RecordsNeeds::apply(2.0, x, w).sum()}, {w});
  EXPECT_EQ(needs_in_forward, (std::vector<bool>{true, true}));
  EXPECT_EQ(needs_in_backward, (std::vector<bool>{false, true}));
}

struct Identity : Function<Identity> {
  static Tensor forward(AutogradContext*, const Tensor& x) { return x; }
  static variable_list backward(AutogradContext*, variable_list grads) { return grads; }
};

TEST(CustomFunction, AnInputReturnedAsItIsComesBackAsAnAlias) {
  const Tensor x = randn({3}, f64_grad());
  const Tensor y = Identity::apply(x);
  EXPECT_FALSE(y.is_same(x));
  EXPECT_TRUE(x.is_leaf());
  EXPECT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.data_ptr(), x.data_ptr());
  {
    NoGradGuard no_grad;
    const Tensor z = Identity::apply(x);
    EXPECT_FALSE(z.is_same(x));
    EXPECT_FALSE(z.requires_grad());
  }
}

// ---- lifetime ----

// Saves an intermediate only the context holds, and lets the test watch
// its memory.
std::weak_ptr<StorageImpl> saved_memory;
struct SavesATemporary : Function<SavesATemporary> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x) {
    Tensor twice = x * 2;
    saved_memory = twice.unsafe_impl()->storage();
    ctx->save_for_backward({twice});
    ctx->saved_data["also"] = twice;
    return x * twice;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {grads[0] * 2 * ctx->get_saved_variables()[0]};
  }
};

TEST(CustomFunction, TheContextGoesWithTheGraph) {
  Tensor x = randn({4}, f64_grad());
  {
    Tensor y = SavesATemporary::apply(x);
    const std::weak_ptr<autograd::Node> node = y.grad_fn();
    EXPECT_FALSE(saved_memory.expired());
    y = Tensor();
    EXPECT_TRUE(node.expired());
    EXPECT_TRUE(saved_memory.expired());
  }
  {  // backward without retain_graph frees it while the output lives on
    const Tensor y = SavesATemporary::apply(x);
    y.sum().backward();
    EXPECT_TRUE(saved_memory.expired());
    EXPECT_TRUE(all_close(x.grad(), 4 * x.detach()));
    EXPECT_TRUE(throws_with([&] { y.sum().backward(); }, "graph a second time"));
  }
  {  // with retain_graph it stays for the next backward
    x.set_grad(Tensor());
    const Tensor y = SavesATemporary::apply(x);
    y.sum().backward({}, /*retain_graph=*/true);
    EXPECT_FALSE(saved_memory.expired());
    y.sum().backward();
    EXPECT_TRUE(all_close(x.grad(), 8 * x.detach()));
  }
  {  // a saved output does not keep its own graph alive
    Tensor y = ScaledExp::apply(x, 2.0);
    const std::weak_ptr<autograd::Node> node = y.grad_fn();
    y = Tensor();
    EXPECT_TRUE(node.expired());
  }
  {  // nothing recorded: the context goes at once
    NoGradGuard no_grad;
    const Tensor y = SavesATemporary::apply(x);
    EXPECT_FALSE(y.requires_grad());
    EXPECT_TRUE(saved_memory.expired());
  }
}

// ---- DataParallel ----

// The devices CustomLayer's forward ran on (replicas run at once).
std::mutex seen_mutex;
std::set<Device> devices_seen;

// A layer whose forward is two custom functions.
struct CustomLayerImpl : nn::Cloneable<CustomLayerImpl> {
  CustomLayerImpl() { reset(); }
  void reset() override {
    weight = register_parameter("weight", randn({3, 5}, kFloat64));
    bias = register_parameter("bias", randn({3}, kFloat64));
  }
  Tensor forward(const Tensor& x) {
    {
      const std::lock_guard<std::mutex> lock(seen_mutex);
      devices_seen.insert(x.device());
    }
    return ScaledExp::apply(Affine::apply(x, weight, bias) * 0.1, 1.5);
  }
  Tensor weight, bias;
};
TANDEM_MODULE(CustomLayer);

TEST(CustomFunction, DataParallelGivesTheGradientsOfOneDevice) {
  manual_seed(3);
  CustomLayer layer;
  auto reference = std::dynamic_pointer_cast<CustomLayerImpl>(layer->clone());
  const Tensor x = randn({10, 5}, kFloat64);
  reference->forward(x).sum().backward();

  nn::DataParallel dp(
      layer, nn::DataParallelOptions().device_ids({Device("cpu:0"), Device("cpu:1")}));
  devices_seen.clear();
  const Tensor y = dp(x);
  EXPECT_EQ(devices_seen, (std::set<Device>{Device("cpu:0"), Device("cpu:1")}));
  EXPECT_TRUE(all_close(y, reference->forward(x), 1e-12, 1e-12));
  y.sum().backward();
  EXPECT_TRUE(all_close(layer->weight.grad(), reference->weight.grad(), 1e-12, 1e-12));
  EXPECT_TRUE(all_close(layer->bias.grad(), reference->bias.grad(), 1e-12, 1e-12));
}

}  // namespace
}  // namespace tandem
