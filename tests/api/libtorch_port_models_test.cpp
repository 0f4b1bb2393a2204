// Three LibTorch programs ported by renaming (`torch::` -> `tandem::`,
// <torch/torch.h> -> "tandem/tandem.h"), checked for the numbers they
// compute against the same programs in PyTorch (tests/reference/
// libtorch_ports.py): pytorch/examples' MNIST Net with Dropout2d and SGD
// with momentum, the word language model's LSTM RNNModel with gradient
// clipping, and a transformer encoder classifier with a causal mask and
// SGD with momentum. Each starts from PyTorch's initial parameters and runs three steps
// in eval mode (its dropout layers off: two frameworks' masks cannot
// agree); the outputs, losses, gradients and final parameters must match.
#include <string>
#include <tuple>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace {

using Golden = std::map<std::string, tandem::Tensor>;

// ---- pytorch/examples cpp/mnist: the Net, as written there ----

struct Net : tandem::nn::Module {
  Net()
      : conv1(tandem::nn::Conv2dOptions(1, 10, /*kernel_size=*/5)),
        conv2(tandem::nn::Conv2dOptions(10, 20, /*kernel_size=*/5)),
        fc1(320, 50),
        fc2(50, 10) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("conv2_drop", conv2_drop);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }

  tandem::Tensor forward(tandem::Tensor x) {
    x = tandem::relu(tandem::max_pool2d(conv1->forward(x), 2));
    x = tandem::relu(tandem::max_pool2d(conv2_drop->forward(conv2->forward(x)), 2));
    x = x.view({-1, 320});
    x = tandem::relu(fc1->forward(x));
    x = tandem::dropout(x, /*p=*/0.5, /*training=*/is_training());
    x = fc2->forward(x);
    return tandem::log_softmax(x, /*dim=*/1);
  }

  tandem::nn::Conv2d conv1;
  tandem::nn::Conv2d conv2;
  tandem::nn::Dropout2d conv2_drop;
  tandem::nn::Linear fc1;
  tandem::nn::Linear fc2;
};

// ---- word_language_model's RNNModel, as a LibTorch user writes it ----

struct RNNModelImpl : tandem::nn::Module {
  RNNModelImpl(
      int64_t ntoken, int64_t ninp, int64_t nhid, int64_t nlayers, double dropout)
      : drop(dropout),
        encoder(ntoken, ninp),
        rnn(tandem::nn::LSTMOptions(ninp, nhid).num_layers(nlayers).dropout(dropout)),
        decoder(nhid, ntoken) {
    register_module("drop", drop);
    register_module("encoder", encoder);
    register_module("rnn", rnn);
    register_module("decoder", decoder);
  }

  std::tuple<tandem::Tensor, std::tuple<tandem::Tensor, tandem::Tensor>> forward(
      tandem::Tensor input, std::tuple<tandem::Tensor, tandem::Tensor> hidden) {
    auto emb = drop->forward(encoder->forward(input));
    auto [output, state] = rnn->forward(emb, hidden);
    return {decoder->forward(drop->forward(output)), state};
  }

  tandem::nn::Dropout drop;
  tandem::nn::Embedding encoder;
  tandem::nn::LSTM rnn;
  tandem::nn::Linear decoder;
};
TANDEM_MODULE(RNNModel);

// ---- A transformer encoder classifier ----

struct EncoderClassifierImpl : tandem::nn::Module {
  EncoderClassifierImpl()
      : embed(register_module("embed", tandem::nn::Linear(6, 16))),
        encoder(register_module(
            "encoder",
            tandem::nn::TransformerEncoder(tandem::nn::TransformerEncoderOptions(
                tandem::nn::TransformerEncoderLayerOptions(16, 4)
                    .dim_feedforward(32)
                    .dropout(0.1),
                2)))),
        head(register_module("head", tandem::nn::Linear(16, 3))) {}

  tandem::Tensor forward(tandem::Tensor x, tandem::Tensor mask) {
    auto h = encoder->forward(embed->forward(x), mask);
    return head->forward(h.mean(0));
  }

  tandem::nn::Linear embed;
  tandem::nn::TransformerEncoder encoder;
  tandem::nn::Linear head;
};
TANDEM_MODULE(EncoderClassifier);

// ---- The checks: PyTorch's parameters in, its numbers out ----

const Golden& golden() {
  static const Golden g = tandem::testing::load_golden("libtorch_ports.txt");
  return g;
}

const tandem::Tensor& at(const std::string& name) {
  auto found = golden().find(name);
  if (found == golden().end()) throw std::runtime_error("no golden " + name);
  return found->second;
}

void load_parameters(tandem::nn::Module& model, const std::string& program) {
  tandem::NoGradGuard no_grad;
  for (auto& item : model.named_parameters()) {
    item.value().copy_(at(program + ".param." + item.key()));
  }
}

void expect_close(const tandem::Tensor& got, const std::string& name) {
  EXPECT_TRUE(tandem::testing::all_close(got, at(name), 2e-4, 2e-5)) << name;
}

void expect_parameters(tandem::nn::Module& model,
                       const std::string& program,
                       const std::string& what) {
  for (auto& item : model.named_parameters()) {
    const tandem::Tensor& value = what == "grad" ? item.value().grad() : item.value();
    expect_close(value, program + "." + what + "." + item.key());
  }
}

TEST(LibTorchPortNumbers, MnistNetWithDropout2dMatchesPyTorch) {
  Net model;
  load_parameters(model, "mnist");
  model.eval();
  tandem::optim::SGD optimizer(model.parameters(),
                               tandem::optim::SGDOptions(0.01).momentum(0.5));
  const auto data = at("mnist.in.data"), target = at("mnist.in.target");
  for (int step = 1; step <= 3; ++step) {
    optimizer.zero_grad();
    auto output = model.forward(data);
    auto loss = tandem::nll_loss(output, target);
    loss.backward();
    if (step == 1) {
      expect_close(output, "mnist.out.output");
      expect_parameters(model, "mnist", "grad");
    }
    expect_close(loss, "mnist.loss." + std::to_string(step));
    optimizer.step();
  }
  expect_parameters(model, "mnist", "final");
}

TEST(LibTorchPortNumbers, WordLanguageModelWithClippingMatchesPyTorch) {
  RNNModel model(/*ntoken=*/50, /*ninp=*/12, /*nhid=*/16, /*nlayers=*/2, /*dropout=*/0.2);
  load_parameters(*model, "word_lm");
  model->eval();
  tandem::optim::SGD optimizer(model->parameters(), tandem::optim::SGDOptions(20));
  const auto tokens = at("word_lm.in.tokens"), target = at("word_lm.in.target");
  const auto hidden = std::make_tuple(at("word_lm.in.h0"), at("word_lm.in.c0"));
  for (int step = 1; step <= 3; ++step) {
    optimizer.zero_grad();
    auto [output, state] = model->forward(tokens, hidden);
    auto loss = tandem::cross_entropy(output.view({-1, 50}), target);
    loss.backward();
    if (step == 1) {
      expect_close(output, "word_lm.out.output");
      expect_close(std::get<0>(state), "word_lm.out.h_n");
      expect_close(std::get<1>(state), "word_lm.out.c_n");
      expect_parameters(*model, "word_lm", "grad");
    }
    expect_close(loss, "word_lm.loss." + std::to_string(step));
    tandem::nn::utils::clip_grad_norm_(model->parameters(), 0.25);
    optimizer.step();
  }
  expect_parameters(*model, "word_lm", "final");
}

TEST(LibTorchPortNumbers, TransformerEncoderClassifierMatchesPyTorch) {
  EncoderClassifier model;
  load_parameters(*model, "encoder");
  model->eval();
  // SGD, not Adam: see tests/reference/libtorch_ports.py.
  tandem::optim::SGD optimizer(model->parameters(),
                               tandem::optim::SGDOptions(0.05).momentum(0.9));
  const auto x = at("encoder.in.x"), target = at("encoder.in.target");
  const auto mask = tandem::nn::TransformerImpl::generate_square_subsequent_mask(5);
  for (int step = 1; step <= 3; ++step) {
    optimizer.zero_grad();
    auto logits = model->forward(x, mask);
    auto loss = tandem::cross_entropy(logits, target);
    loss.backward();
    if (step == 1) {
      expect_close(logits, "encoder.out.logits");
      expect_parameters(*model, "encoder", "grad");
    }
    expect_close(loss, "encoder.loss." + std::to_string(step));
    optimizer.step();
  }
  expect_parameters(*model, "encoder", "final");
}

}  // namespace
