// tandem::save / tandem::load (LibTorch's torch::save / torch::load): exact
// round trips of modules (holders, shared_ptrs), optimizers, tensors and
// tensor lists; a model and its optimizer saved mid-training resume bitwise
// as the uninterrupted run; and every refused load (another shape, a
// missing or corrupt file, a file of another kind) names the file and the
// problem and leaves the target as it was.
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "io/io_testing.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

namespace nn = tandem::nn;
using io::testing::ScratchDir;
using testing::throws_with;

struct TwoLayerImpl : nn::Module {
  explicit TwoLayerImpl(int64_t hidden = 6) {
    fc1 = register_module("fc1", nn::Linear(3, hidden));
    fc2 = register_module("fc2", nn::Linear(hidden, 1));
  }
  Tensor forward(const Tensor& x) { return fc2(tandem::tanh(fc1(x))); }
  nn::Linear fc1{nullptr}, fc2{nullptr};
};
TANDEM_MODULE(TwoLayer);

bool same_parameters(nn::Module& a, nn::Module& b) {
  auto pa = a.parameters(), pb = b.parameters();
  if (pa.size() != pb.size()) return false;
  for (size_t i = 0; i < pa.size(); ++i) {
    if (!tandem::equal(pa[i], pb[i])) return false;
  }
  return true;
}

bool same_state(const optim::StateDict& a, const optim::StateDict& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [key, value] : a) {
    auto it = b.find(key);
    if (it == b.end() || !tandem::equal(value, it->second)) return false;
  }
  return true;
}

// One Adam step on a batch drawn from the step's own seed.
void train_step(TwoLayer& model, optim::Adam& optimizer, int64_t step) {
  tandem::manual_seed(100 + step);
  Tensor x = tandem::randn({8, 3});
  Tensor y = tandem::tanh(x.sum(1, /*keepdim=*/true));
  optimizer.zero_grad();
  tandem::mse_loss(model(x), y).backward();
  optimizer.step();
}

TEST(Serialize, ModelAndOptimizerResumeBitwise) {
  ScratchDir dir;
  tandem::manual_seed(1);
  TwoLayer straight;
  optim::Adam straight_opt(straight->parameters(), optim::AdamOptions(1e-2));
  for (int64_t step = 0; step < 12; ++step) train_step(straight, straight_opt, step);

  tandem::manual_seed(1);
  TwoLayer first;
  optim::Adam first_opt(first->parameters(), optim::AdamOptions(1e-2));
  for (int64_t step = 0; step < 6; ++step) train_step(first, first_opt, step);
  tandem::save(first, dir.path() / "model.pt");
  tandem::save(first_opt, dir.path() / "optimizer.pt");

  tandem::manual_seed(7);  // other initial weights, which the load replaces
  TwoLayer resumed;
  optim::Adam resumed_opt(resumed->parameters(), optim::AdamOptions(1e-2));
  ASSERT_FALSE(same_parameters(*resumed, *first));
  tandem::load(resumed, dir.path() / "model.pt");
  tandem::load(resumed_opt, dir.path() / "optimizer.pt");
  EXPECT_TRUE(same_parameters(*resumed, *first));
  EXPECT_TRUE(same_state(resumed_opt.state_dict(), first_opt.state_dict()));
  for (int64_t step = 6; step < 12; ++step) train_step(resumed, resumed_opt, step);
  EXPECT_TRUE(same_parameters(*resumed, *straight));
  EXPECT_TRUE(same_state(resumed_opt.state_dict(), straight_opt.state_dict()));
}

TEST(Serialize, SharedPtrAndPlainModules) {
  ScratchDir dir;
  auto a = std::make_shared<TwoLayerImpl>();
  auto b = std::make_shared<TwoLayerImpl>();
  tandem::save(a, dir.path() / "a.pt");
  tandem::load(b, dir.path() / "a.pt");
  EXPECT_TRUE(same_parameters(*a, *b));

  TwoLayerImpl c, d;
  tandem::save(c, dir.path() / "c.pt");
  tandem::load(d, dir.path() / "c.pt");
  EXPECT_TRUE(same_parameters(c, d));
}

TEST(Serialize, TensorsAndListsRoundTripWithTheirDevices) {
  ScratchDir dir;
  Tensor t = tandem::randn({2, 3}, kF64).to(Device("cpu:1"));
  tandem::save(t, dir.path() / "t.pt");
  Tensor back;
  tandem::load(back, dir.path() / "t.pt");
  EXPECT_TRUE(tandem::equal(back.to(kCPU), t.to(kCPU)));
  EXPECT_EQ(back.device(), Device("cpu:1"));
  EXPECT_EQ(back.dtype(), kF64);
  tandem::load(back, dir.path() / "t.pt", Device("cpu:0"));
  EXPECT_EQ(back.device(), Device("cpu:0"));

  std::vector<Tensor> list = {tandem::arange(5), tandem::ones({2, 2}, kBool), t.t()};
  tandem::save(list, dir.path() / "list.pt");
  std::vector<Tensor> loaded = {tandem::zeros({1})};
  tandem::load(loaded, dir.path() / "list.pt");
  ASSERT_EQ(loaded.size(), 3u);
  for (size_t i = 0; i < list.size(); ++i) {
    EXPECT_TRUE(tandem::equal(loaded[i].to(kCPU), list[i].to(kCPU))) << i;
    EXPECT_EQ(loaded[i].device(), list[i].device()) << i;
  }
}

TEST(Serialize, ModelOfAnotherShapeIsRefusedByParameterName) {
  ScratchDir dir;
  TwoLayer small(4), large(6);
  tandem::save(small, dir.path() / "small.pt");
  Tensor before = large->fc1->weight.clone();
  EXPECT_TRUE(
      throws_with([&] { tandem::load(large, dir.path() / "small.pt"); }, "fc1.weight"));
  EXPECT_TRUE(tandem::equal(large->fc1->weight, before));
}

TEST(Serialize, OptimizerOfAnotherShapeIsRefusedAndUnchanged) {
  ScratchDir dir;
  TwoLayer small(4), large(6);
  optim::Adam small_opt(small->parameters(), optim::AdamOptions(1e-2));
  optim::Adam large_opt(large->parameters(), optim::AdamOptions(1e-2));
  train_step(small, small_opt, 0);
  train_step(large, large_opt, 0);
  tandem::save(small_opt, dir.path() / "small_opt.pt");
  const optim::StateDict before = large_opt.state_dict();
  EXPECT_TRUE(throws_with([&] { tandem::load(large_opt, dir.path() / "small_opt.pt"); },
                          "small_opt.pt"));
  EXPECT_TRUE(same_state(large_opt.state_dict(), before));
}

TEST(Serialize, MissingCorruptAndMismatchedFilesLeaveTargetsUnchanged) {
  ScratchDir dir;
  TwoLayer model;
  Tensor weight = model->fc1->weight.clone();
  EXPECT_TRUE(
      throws_with([&] { tandem::load(model, dir.path() / "nope.pt"); }, "nope.pt"));

  tandem::save(model, dir.path() / "model.pt");
  std::string bytes = io::testing::read_file(dir.path() / "model.pt");
  bytes[bytes.size() - 3] ^= 0x5a;  // a flipped bit in the weights
  std::ofstream(dir.path() / "corrupt.pt", std::ios::binary) << bytes;
  TwoLayer other;
  Tensor other_weight = other->fc1->weight.clone();
  EXPECT_TRUE(
      throws_with([&] { tandem::load(other, dir.path() / "corrupt.pt"); }, "corrupt.pt"));
  EXPECT_TRUE(tandem::equal(other->fc1->weight, other_weight));

  Tensor t = tandem::ones({3});
  EXPECT_TRUE(throws_with([&] { tandem::load(t, dir.path() / "model.pt"); },
                          "was not written by tandem::save of a tensor"));
  tandem::save(std::vector<Tensor>{t, t}, dir.path() / "list.pt");
  EXPECT_TRUE(throws_with([&] { tandem::load(t, dir.path() / "list.pt"); },
                          "holds a list of tensors, not a tensor"));
  EXPECT_TRUE(tandem::equal(t, tandem::ones({3})));
  optim::SGD sgd(model->parameters(), optim::SGDOptions(0.1));
  EXPECT_TRUE(
      throws_with([&] { tandem::load(sgd, dir.path() / "model.pt"); }, "model.pt"));
  EXPECT_TRUE(tandem::equal(model->fc1->weight, weight));
}

}  // namespace
}  // namespace tandem
