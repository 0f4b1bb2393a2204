// A word-level LSTM language model on the King James Bible, trained with
// DataParallel: the C++ of PyTorch's word_language_model example
// (embedding, 2-layer LSTM, tied decoder, dropout, truncated backprop
// through time, gradient clipping, the learning rate divided by 4 when the
// validation loss stops falling), written as a LibTorch user writes it.
//
// The text comes from Debian's bible-kjv package (`bible -f
// Gen1:1-Rev22:21` prints it, one verse a line), or from --text FILE in
// that format. It is split by book: of the 66 books (in order, from 0),
// those with index % 11 == 9 are the validation set (2 Samuel, Proverbs,
// Jonah, Luke, 2 Thessalonians, Jude), index % 11 == 10 the test set
// (1 Kings, Ecclesiastes, Micah, John, 1 Timothy, Revelation), the rest the
// training set: about 804k, 60k and 81k tokens. The tokenizer lowercases
// and cuts each verse into words (letters, with inner apostrophes) and
// single punctuation marks, and ends it with <eos>; the vocabulary is every
// token seen at least twice in the training set (about 8.1k), the others
// read as <unk>.
//
//   ./lstm_lm_bible                          # 4 epochs on cpu:0,cpu:1
//   ./lstm_lm_bible --epochs 6 --hidden 650 --dropout 0.5   # the "medium" model
//   ./lstm_lm_bible --max-steps 3            # a smoke run (CI runs this)
//
// The batch is time-major, [bptt, batch]; DataParallel cuts the input and
// the LSTM state along dim 1, as the example's nn.DataParallel(dim=1) would.
#include <tandem/tandem.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
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

std::vector<std::string> read_verses(const std::string& path) {
  std::vector<std::string> verses;
  std::string line;
  if (!path.empty()) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    while (std::getline(in, line)) verses.push_back(line);
    return verses;
  }
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(
      popen("bible -f Gen1:1-Rev22:21 2>/dev/null", "r"), pclose);
  if (!pipe) throw std::runtime_error("cannot run the bible command");
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe.get())) {
    line = buffer;
    if (!line.empty() && line.back() == '\n') line.pop_back();
    verses.push_back(line);
  }
  if (verses.size() < 1000) {
    throw std::runtime_error(
        "the bible command printed no text: install Debian's bible-kjv package "
        "(apt-get install bible-kjv) or give --text FILE");
  }
  return verses;
}

// "Ge1:1 In the beginning ..." -> the book "Ge" and the text.
std::pair<std::string, std::string> split_reference(const std::string& verse) {
  const size_t space = verse.find(' ');
  if (space == std::string::npos)
    throw std::runtime_error("not a verse: '" + verse + "'");
  std::string reference = verse.substr(0, space);
  size_t end = reference.find_last_not_of("0123456789:");
  return {reference.substr(0, end + 1), verse.substr(space + 1)};
}

std::vector<std::string> tokenize(const std::string& text) {
  std::vector<std::string> tokens;
  std::string word;
  const auto is_letter = [](char c) {
    return std::isalpha(static_cast<unsigned char>(c)) != 0;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (is_letter(c) ||
        (c == '\'' && !word.empty() && i + 1 < text.size() && is_letter(text[i + 1]))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      continue;
    }
    if (!word.empty()) tokens.push_back(std::move(word));
    word.clear();
    if (!std::isspace(static_cast<unsigned char>(c))) tokens.emplace_back(1, c);
  }
  if (!word.empty()) tokens.push_back(word);
  tokens.emplace_back("<eos>");
  return tokens;
}

struct Corpus {
  std::vector<std::string> words;  // id -> word; 0 is <unk>
  std::vector<int64_t> train, valid, test;
};

Corpus build_corpus(const std::vector<std::string>& verses) {
  std::vector<std::vector<std::string>> parts(3);  // train, valid, test
  std::string book;
  int64_t book_index = -1;
  for (const std::string& verse : verses) {
    auto [name, text] = split_reference(verse);
    if (name != book) {
      book = name;
      ++book_index;
    }
    const int64_t part = book_index % 11 == 9 ? 1 : book_index % 11 == 10 ? 2 : 0;
    for (std::string& token : tokenize(text)) parts[part].push_back(std::move(token));
  }
  std::map<std::string, int64_t> counts;  // ordered: ids do not depend on hashing
  for (const std::string& token : parts[0]) ++counts[token];
  Corpus corpus;
  corpus.words.push_back("<unk>");
  std::unordered_map<std::string, int64_t> ids;
  for (const auto& [word, count] : counts) {
    if (count < 2) continue;
    ids[word] = static_cast<int64_t>(corpus.words.size());
    corpus.words.push_back(word);
  }
  std::vector<int64_t>* outputs[] = {&corpus.train, &corpus.valid, &corpus.test};
  for (size_t p = 0; p < 3; ++p) {
    for (const std::string& token : parts[p]) {
      auto id = ids.find(token);
      outputs[p]->push_back(id == ids.end() ? 0 : id->second);
    }
  }
  return corpus;
}

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
  const Corpus corpus = build_corpus(read_verses(settings.text));
  const Tensor train = batchify(corpus.train, settings.batch);
  const Tensor valid = batchify(corpus.valid, 10);
  const Tensor test = batchify(corpus.test, 10);
  std::cout << "King James Bible: " << corpus.train.size() << " training, "
            << corpus.valid.size() << " validation, " << corpus.test.size()
            << " test tokens; vocabulary " << corpus.words.size() << " ("
            << std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                             load_start)
                   .count()
            << " s)\n";

  LanguageModel model(static_cast<int64_t>(corpus.words.size()), settings);
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
