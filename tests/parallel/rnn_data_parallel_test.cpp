// An LSTM language model under nn::DataParallel over 1, 2, 3 and 4 CPU
// devices equals the same model on one device: time-major input [T, B, I]
// and states (h, c) [layers, B, H] scattered along dim 1 and the outputs
// gathered along dim 1 (PyTorch's word_language_model), and batch-first
// input along dim 0; outputs, final states and the gradients of the input,
// the initial states and every parameter.
#include "parallel/parallel_testing.h"

namespace {

namespace nn = tandem::nn;
using tandem::Device;
using tandem::Tensor;
using tandem::parallel::TensorTree;
using tandem::testing::all_close;
using tandem::testing::cpu_devices;

// LSTM -> Linear decoder; forward({x, {h0, c0}}) = {logits, {h_n, c_n}}, or
// {logits} when batch_first: the states' batch is their dim 1, so gathering
// them along dim 0 would fail (as it does in PyTorch).
struct LanguageModelImpl : nn::Cloneable<LanguageModelImpl> {
  explicit LanguageModelImpl(bool batch_first = false) : batch_first(batch_first) {
    reset();
  }
  void reset() override {
    lstm = register_module(
        "lstm", nn::LSTM(nn::LSTMOptions(6, 8).num_layers(2).batch_first(batch_first)));
    decoder = register_module("decoder", nn::Linear(8, 5));
  }
  TensorTree forward(const TensorTree& in) {
    auto [out, state] = lstm->forward(
        in[0].tensor(), std::make_tuple(in[1][0].tensor(), in[1][1].tensor()));
    if (batch_first) return TensorTree{decoder->forward(out)};
    return TensorTree{decoder->forward(out), {std::get<0>(state), std::get<1>(state)}};
  }
  bool batch_first;
  nn::LSTM lstm{nullptr};
  nn::Linear decoder{nullptr};
};
TANDEM_MODULE(LanguageModel);

struct StepResult {
  std::vector<Tensor> results;  // logits, h_n, c_n
  std::vector<Tensor> grads;    // x, h0, c0, then every parameter
};

// One forward + backward of `model` (through DataParallel over `devices`
// unless it is empty) on copies of the same inputs.
StepResult run(LanguageModel& model,
               const std::vector<Tensor>& in,
               const std::vector<Tensor>& g,
               const std::vector<Device>& devices,
               int64_t dim) {
  model->zero_grad();
  std::vector<Tensor> leaves;
  for (const Tensor& t : in)
    leaves.push_back(t.defined() ? t.clone().requires_grad_() : t);
  const TensorTree input{leaves[0], {leaves[1], leaves[2]}};
  TensorTree out;
  if (devices.empty()) {
    out = model->forward(input);
  } else {
    nn::DataParallel dp(model, nn::DataParallelOptions().device_ids(devices).dim(dim));
    out = dp->forward(input);
  }
  StepResult r;
  r.results = out.tensors();
  Tensor loss = tandem::zeros({});
  // The results that `g` weighs (all, or only the logits).
  for (size_t k = 0; k < g.size(); ++k) loss = loss + (r.results[k] * g[k]).sum();
  loss.backward();
  for (const Tensor& t : leaves) r.grads.push_back(t.defined() ? t.grad() : t);
  for (const Tensor& p : model->parameters()) r.grads.push_back(p.grad().clone());
  return r;
}

void expect_equal_runs(const StepResult& got, const StepResult& want, int devices) {
  ASSERT_EQ(got.results.size(), want.results.size());
  for (size_t k = 0; k < want.results.size(); ++k) {
    EXPECT_EQ(got.results[k].device(), Device("cpu:0"));
    EXPECT_TRUE(all_close(got.results[k], want.results[k], 1e-5, 1e-6))
        << "result " << k << " over " << devices << " devices";
  }
  ASSERT_EQ(got.grads.size(), want.grads.size());
  for (size_t k = 0; k < want.grads.size(); ++k) {
    ASSERT_TRUE(got.grads[k].defined()) << "gradient " << k;
    EXPECT_TRUE(all_close(got.grads[k], want.grads[k], 1e-4, 1e-6))
        << "gradient " << k << " over " << devices << " devices";
  }
}

TEST(RnnDataParallel, TimeMajorLstmAlongDimOneEqualsOneDevice) {
  tandem::manual_seed(3);
  LanguageModel model;
  // T = 5, B = 8, I = 6; states [2, 8, 8]: the batch is dim 1 everywhere.
  const std::vector<Tensor> in{
      tandem::randn({5, 8, 6}), tandem::randn({2, 8, 8}), tandem::randn({2, 8, 8})};
  const std::vector<Tensor> g{
      tandem::randn({5, 8, 5}), tandem::randn({2, 8, 8}), tandem::randn({2, 8, 8})};
  const StepResult want = run(model, in, g, {}, 1);
  for (int n = 1; n <= 4; ++n) {
    SCOPED_TRACE(n);
    expect_equal_runs(run(model, in, g, cpu_devices(n), 1), want, n);
  }
}

// Batch-first input along dim 0, the states left to their zeros (the
// states' batch is dim 1, so one scatter dim cannot cut both).
TEST(RnnDataParallel, BatchFirstLstmAlongDimZeroEqualsOneDevice) {
  tandem::manual_seed(4);
  LanguageModel model(/*batch_first=*/true);
  const std::vector<Tensor> in{tandem::randn({7, 5, 6}), Tensor(), Tensor()};
  const std::vector<Tensor> g{tandem::randn({7, 5, 5})};
  const StepResult want = run(model, in, g, {}, 0);
  for (int n = 2; n <= 4; ++n) {
    SCOPED_TRACE(n);
    const StepResult got = run(model, in, g, cpu_devices(n), 0);
    EXPECT_TRUE(all_close(got.results[0], want.results[0], 1e-5, 1e-6));
    EXPECT_TRUE(all_close(got.grads[0], want.grads[0], 1e-4, 1e-6));
    for (size_t k = 3; k < want.grads.size(); ++k) {
      EXPECT_TRUE(all_close(got.grads[k], want.grads[k], 1e-4, 1e-6))
          << "parameter " << k;
    }
  }
}

}  // namespace
