// A small transformer encoder classifier under nn::DataParallel over 1, 2,
// 3 and 4 CPU devices equals the same model on one device: batch-first
// input [B, T, F] and its key padding mask [B, T] scattered along dim 0
// (an uneven batch of 7), the logits gathered; logits and the gradients of
// the input and of every parameter (attention, feed-forward, layer norms).
// The same for a batch-first Transformer (encoder and decoder, causal
// target mask). Dropout is 0: each replica would draw its own masks.
#include "parallel/parallel_testing.h"

namespace {

namespace nn = tandem::nn;
using tandem::Tensor;
using tandem::parallel::TensorTree;
using tandem::testing::all_close;
using tandem::testing::cpu_devices;

// Linear embedding -> 2 encoder layers (+ final norm) -> masked mean over
// time -> Linear classifier. forward({x, padding}) = {logits}.
struct EncoderClassifierImpl : nn::Cloneable<EncoderClassifierImpl> {
  EncoderClassifierImpl() { reset(); }
  void reset() override {
    embed = register_module("embed", nn::Linear(5, 8));
    nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(8, 2)
                                          .dim_feedforward(16)
                                          .dropout(0.0)
                                          .activation(tandem::kGELU)
                                          .batch_first(true));
    encoder = register_module(
        "encoder",
        nn::TransformerEncoder(nn::TransformerEncoderOptions(layer, 2).norm(
            nn::AnyModule(nn::LayerNorm(nn::LayerNormOptions({8}))))));
    classifier = register_module("classifier", nn::Linear(8, 3));
  }
  TensorTree forward(const TensorTree& in) {
    const Tensor& x = in[0].tensor();
    const Tensor& padding = in[1].tensor();
    Tensor h = encoder->forward(embed->forward(x), {}, padding);
    // Mean over the positions that are not padding.
    Tensor keep =
        tandem::where(
            padding, tandem::zeros({}, x.options()), tandem::ones({}, x.options()))
            .unsqueeze(-1);
    Tensor pooled = (h * keep).sum(1) / keep.sum(1);
    return TensorTree{classifier->forward(pooled)};
  }
  nn::Linear embed{nullptr};
  nn::TransformerEncoder encoder{nullptr};
  nn::Linear classifier{nullptr};
};
TANDEM_MODULE(EncoderClassifier);

struct StepResult {
  Tensor logits;
  std::vector<Tensor> grads;  // x, then every parameter
};

StepResult run(EncoderClassifier& model,
               const Tensor& x,
               const Tensor& padding,
               const Tensor& g,
               const std::vector<tandem::Device>& devices) {
  model->zero_grad();
  Tensor leaf = x.clone().requires_grad_();
  const TensorTree input{leaf, padding};
  TensorTree out;
  if (devices.empty()) {
    out = model->forward(input);
  } else {
    nn::DataParallel dp(model, nn::DataParallelOptions().device_ids(devices).dim(0));
    out = dp->forward(input);
  }
  StepResult r;
  r.logits = out[0].tensor();
  (r.logits * g).sum().backward();
  r.grads.push_back(leaf.grad());
  for (const Tensor& p : model->parameters()) r.grads.push_back(p.grad().clone());
  return r;
}

TEST(TransformerDataParallel, EncoderClassifierEqualsOneDevice) {
  tandem::manual_seed(5);
  EncoderClassifier model;
  const int64_t batch = 7, time = 6;
  const Tensor x = tandem::randn({batch, time, 5});
  // Real positions per sequence; the rest is padding.
  const Tensor lengths = tandem::tensor<int64_t>({6, 5, 4, 6, 3, 5, 6});
  const Tensor padding =
      tandem::ge(tandem::arange(time).unsqueeze(0), lengths.unsqueeze(1));
  const Tensor g = tandem::randn({batch, 3});
  const StepResult want = run(model, x, padding, g, {});
  EXPECT_EQ(want.grads.size(), 1 + model->parameters().size());
  for (int n = 1; n <= 4; ++n) {
    SCOPED_TRACE(n);
    const StepResult got = run(model, x, padding, g, cpu_devices(n));
    EXPECT_EQ(got.logits.device(), tandem::Device("cpu:0"));
    EXPECT_TRUE(all_close(got.logits, want.logits, 1e-5, 1e-6));
    ASSERT_EQ(got.grads.size(), want.grads.size());
    for (size_t k = 0; k < want.grads.size(); ++k) {
      ASSERT_TRUE(got.grads[k].defined()) << "gradient " << k;
      EXPECT_TRUE(all_close(got.grads[k], want.grads[k], 1e-4, 1e-6))
          << "gradient " << k << " over " << n << " devices";
    }
  }
}

// A batch-first Transformer (encoder and decoder) with a causal target
// mask made on each replica's device: src and tgt scattered along dim 0.
struct Seq2SeqImpl : nn::Cloneable<Seq2SeqImpl> {
  Seq2SeqImpl() { reset(); }
  void reset() override {
    model = register_module("model",
                            nn::Transformer(nn::TransformerOptions(8, 2, 1, 2)
                                                .dim_feedforward(16)
                                                .dropout(0.0)
                                                .batch_first(true)));
  }
  TensorTree forward(const TensorTree& in) {
    const Tensor& tgt = in[1].tensor();
    const Tensor causal =
        nn::TransformerImpl::generate_square_subsequent_mask(tgt.size(1), tgt.options());
    return TensorTree{model->forward(in[0].tensor(), tgt, {}, causal)};
  }
  nn::Transformer model{nullptr};
};
TANDEM_MODULE(Seq2Seq);

TEST(TransformerDataParallel, BatchFirstSeq2SeqEqualsOneDevice) {
  tandem::manual_seed(6);
  Seq2Seq model;
  const Tensor src = tandem::randn({5, 4, 8}), tgt = tandem::randn({5, 3, 8});
  const Tensor g = tandem::randn({5, 3, 8});
  auto step = [&](const std::vector<tandem::Device>& devices) {
    model->zero_grad();
    Tensor s = src.clone().requires_grad_(), t = tgt.clone().requires_grad_();
    TensorTree out;
    if (devices.empty()) {
      out = model->forward(TensorTree{s, t});
    } else {
      nn::DataParallel dp(model, nn::DataParallelOptions().device_ids(devices).dim(0));
      out = dp->forward(TensorTree{s, t});
    }
    (out[0].tensor() * g).sum().backward();
    std::vector<Tensor> r{out[0].tensor(), s.grad(), t.grad()};
    for (const Tensor& p : model->parameters()) r.push_back(p.grad().clone());
    return r;
  };
  const std::vector<Tensor> want = step({});
  for (int n = 2; n <= 4; ++n) {
    SCOPED_TRACE(n);
    const std::vector<Tensor> got = step(cpu_devices(n));
    ASSERT_EQ(got.size(), want.size());
    EXPECT_TRUE(all_close(got[0], want[0], 1e-5, 1e-6));
    for (size_t k = 1; k < want.size(); ++k) {
      EXPECT_TRUE(all_close(got[k], want[k], 1e-4, 1e-6)) << "gradient " << k;
    }
  }
}

}  // namespace
