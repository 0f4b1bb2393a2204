// A word-level LSTM language model on the King James Bible, trained with
// DataParallel: the C++ of PyTorch's word_language_model example
// (embedding, 2-layer LSTM, tied decoder, dropout, truncated backprop
// through time, gradient clipping, the learning rate divided by 4 when the
// validation loss stops falling), written as a LibTorch user writes it.
//
// The text comes from Debian's bible-kjv package (`bible -f
// Gen1:1-Rev22:21` prints it, one verse a line), or from --text FILE in
// that format, read by tandem::data::datasets::KingJamesBible: split by
// book into about 804k training, 60k validation and 81k test tokens, with a
// vocabulary of about 8.1k words (king_james_bible.h says how).
//
//   ./lstm_lm_bible                          # 4 epochs on cpu:0,cpu:1
//   ./lstm_lm_bible --epochs 6 --hidden 650 --dropout 0.5   # the "medium" model
//   ./lstm_lm_bible --max-steps 3            # a smoke run (CI runs this)
//
// The batch is time-major, [bptt, batch]; DataParallel cuts the input and
// the LSTM state along dim 1, as the example's nn.DataParallel(dim=1) would.
#include <tandem/data/king_james_bible.h>
#include <tandem/tandem.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "flags.h"

using namespace tandem;
using parallel::TensorTree;

struct Settings {
  std::string text;  // a file of verses, or "" for the bible command
  int64_t epochs = 4;
  int64_t max_steps = std::numeric_limits<int64_t>::max();
  int64_t hidden = 200;  // also the embedding size: the decoder is tied
  int64_t layers = 2;
  double dropout = 0.2;
  int64_t batch = 32;
  int64_t bptt = 35;
  double lr = 20;
  double clip = 0.25;
  std::vector<Device> devices = {"cpu:0", "cpu:1"};
};

Settings parse(int argc, char** argv) {
  Settings s;
  ExampleFlags flags(argc, argv);
  flags.read("--text", s.text);
  flags.read("--epochs", s.epochs);
  flags.read("--max-steps", s.max_steps);
  flags.read("--hidden", s.hidden);
  flags.read("--layers", s.layers);
  flags.read("--dropout", s.dropout);
  flags.read("--batch", s.batch);
  flags.read("--bptt", s.bptt);
  flags.read("--lr", s.lr);
  flags.read("--devices", s.devices);
  flags.finish();
  return s;
}

// ---- The corpus ----

// The token stream cut into `columns` contiguous columns: [rows, columns].
Tensor batchify(const std::vector<int64_t>& ids, int64_t columns) {
  const int64_t rows = static_cast<int64_t>(ids.size()) / columns;
  Tensor flat = tensor(std::vector<int64_t>(ids.begin(), ids.begin() + rows * columns));
  return flat.view({columns, rows}).t().contiguous();
}

// ---- The model ----

struct LanguageModelImpl : nn::Cloneable<LanguageModelImpl> {
  LanguageModelImpl(int64_t tokens, const Settings& s)
      : tokens(tokens), hidden(s.hidden), layers(s.layers), dropout_p(s.dropout) {
    reset();
  }

  void reset() override {
    encoder = register_module("encoder", nn::Embedding(tokens, hidden));
    lstm = register_module(
        "lstm",
        nn::LSTM(nn::LSTMOptions(hidden, hidden).num_layers(layers).dropout(dropout_p)));
    drop = register_module("drop", nn::Dropout(dropout_p));
    // The decoder shares the encoder's weight (weight tying, Press & Wolf
    // 2017); only its bias is its own.
    decoder_bias = register_parameter("decoder_bias", zeros({tokens}));
    nn::init::uniform_(encoder->weight, -0.1, 0.1);
  }

  // {tokens [T, B], {h, c} [layers, B, hidden]} -> {logits [T, B, tokens], {h, c}}
  TensorTree forward(const TensorTree& in) {
    Tensor embedded = drop->forward(encoder->forward(in[0].tensor()));
    auto [output, state] =
        lstm->forward(embedded, std::make_tuple(in[1][0].tensor(), in[1][1].tensor()));
    Tensor logits = linear(drop->forward(output), encoder->weight, decoder_bias);
    return TensorTree{logits, {std::get<0>(state), std::get<1>(state)}};
  }

  int64_t tokens, hidden, layers;
  double dropout_p;
  nn::Embedding encoder{nullptr};
  nn::LSTM lstm{nullptr};
  nn::Dropout drop{nullptr};
  Tensor decoder_bias;
};
TANDEM_MODULE(LanguageModel);

// ---- Training ----

struct Runner {
  LanguageModel model;
  nn::DataParallel parallel;
  Settings settings;

  TensorTree zero_state(int64_t batch) const {
    Tensor h = zeros({settings.layers, batch, settings.hidden}, settings.devices.front());
    return TensorTree{h, h.clone()};
  }

  // The steps of the segment of `data` that starts at `row`.
  int64_t segment_length(const Tensor& data, int64_t row) const {
    return std::min(settings.bptt, data.size(0) - 1 - row);
  }

  // One segment of `data` from `row`: {loss, the final state, detached}.
  std::pair<Tensor, TensorTree> segment(const Tensor& data,
                                        int64_t row,
                                        const TensorTree& state) {
    const int64_t length = segment_length(data, row);
    Tensor input = data.narrow(0, row, length).to(settings.devices.front());
    Tensor target = data.narrow(0, row + 1, length).to(settings.devices.front());
    TensorTree out = parallel->forward(TensorTree{input, state});
    Tensor logits = out[0].tensor();
    Tensor loss = cross_entropy(logits.view({-1, logits.size(2)}), target.reshape({-1}));
    // Truncated backprop through time: the next segment starts from the
    // state's values, not its history.
    TensorTree next = out[1].map([](const Tensor& t) { return t.detach(); });
    return {loss, next};
  }

  double evaluate(const Tensor& data) {
    NoGradGuard no_grad;
    model->eval();
    TensorTree state = zero_state(data.size(1));
    double total = 0;
    int64_t count = 0, steps = 0;
    for (int64_t row = 0; row + 1 < data.size(0) && steps < settings.max_steps;
         row += settings.bptt, ++steps) {
      auto [loss, next] = segment(data, row, state);
      const int64_t length = segment_length(data, row);
      total += loss.item<double>() * static_cast<double>(length);
      count += length;
      state = next;
    }
    return total / static_cast<double>(count);
  }
};

int main(int argc, char** argv) try {
  const Settings settings = parse(argc, argv);
  manual_seed(1111);
  const auto load_start = std::chrono::steady_clock::now();
  const data::datasets::KingJamesBible corpus(settings.text);
  const Tensor train = batchify(corpus.train(), settings.batch);
  const Tensor valid = batchify(corpus.valid(), 10);
  const Tensor test = batchify(corpus.test(), 10);
  std::cout << "King James Bible: " << corpus.train().size() << " training, "
            << corpus.valid().size() << " validation, " << corpus.test().size()
            << " test tokens; vocabulary " << corpus.vocabulary_size() << " ("
            << std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                             load_start)
                   .count()
            << " s)\n";

  LanguageModel model(corpus.vocabulary_size(), settings);
  model->to(settings.devices.front());
  Runner runner{model,
                nn::DataParallel(
                    model, nn::DataParallelOptions().device_ids(settings.devices).dim(1)),
                settings};
  optim::SGD optimizer(model->parameters(), optim::SGDOptions(settings.lr));
  double lr = settings.lr;
  double best_valid = std::numeric_limits<double>::infinity();
  std::cout << "LSTM " << settings.layers << "x" << settings.hidden << ", batch "
            << settings.batch << ", bptt " << settings.bptt << ", DataParallel over "
            << settings.devices.size() << " devices (dim 1)\n";

  for (int64_t epoch = 1; epoch <= settings.epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    model->train();
    TensorTree state = runner.zero_state(settings.batch);
    double total = 0;
    int64_t steps = 0;
    for (int64_t row = 0; row + 1 < train.size(0) && steps < settings.max_steps;
         row += settings.bptt, ++steps) {
      optimizer.zero_grad();
      auto [loss, next] = runner.segment(train, row, state);
      loss.backward();
      nn::utils::clip_grad_norm_(model->parameters(), settings.clip);
      optimizer.step();
      total += loss.item<double>();
      state = next;
    }
    const double valid_loss = runner.evaluate(valid);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << std::fixed << std::setprecision(2) << "epoch " << epoch << "/"
              << settings.epochs << "  lr " << lr << "  train_ppl "
              << std::exp(total / static_cast<double>(steps)) << "  valid_ppl "
              << std::exp(valid_loss) << "  " << std::setprecision(1) << seconds << " s"
              << std::endl;
    if (valid_loss < best_valid) {
      best_valid = valid_loss;
    } else {
      lr /= 4;  // as the example: anneal when validation stops improving
      for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
    }
  }
  std::cout << std::fixed << std::setprecision(2) << "test_ppl "
            << std::exp(runner.evaluate(test)) << std::endl;
  return 0;
} catch (const std::exception& error) {
  std::cerr << "error: " << error.what() << "\n";
  return 1;
}
