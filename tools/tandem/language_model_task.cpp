#include "language_model_task.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>

#include "commands.h"
#include "model_on_devices.h"
#include "tandem/core/generator.h"
#include "tandem/data/king_james_bible.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/nn/nn.h"
#include "tandem/nn/utils/clip_grad.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/loss.h"
#include "tandem/optim/adam.h"
#include "tandem/optim/sgd.h"
#include "tandem/parallel/data_parallel_module.h"

namespace tandem::cli {
namespace {

using parallel::TensorTree;

constexpr int64_t kHidden = 200;  // also the embedding's width: the decoder is tied
constexpr int64_t kLayers = 2;
constexpr double kDropout = 0.2;
constexpr int64_t kSegment = 35;  // tokens of backprop through time
constexpr double kClipNorm = 0.25;
constexpr int64_t kEvalColumns = 10;
constexpr double kPlateauFactor = 0.25;

// Checkpoint keys of the task's own: the LSTM state carried into the next
// segment (beside the weights), the plateau schedule's lr and best loss.
constexpr const char* kCarriedState = "carried_state.";
constexpr const char* kPlateauLr = "plateau_lr";
constexpr const char* kPlateauBest = "plateau_best_valid_loss";

// Embedding, LSTM, dropout, and a decoder sharing the embedding's weight
// (Press & Wolf 2017) with a bias of its own.
struct WordModelImpl : nn::Cloneable<WordModelImpl> {
  WordModelImpl(int64_t vocabulary) : vocabulary(vocabulary) { reset(); }

  void reset() override {
    encoder = register_module("encoder", nn::Embedding(vocabulary, kHidden));
    lstm = register_module(
        "lstm",
        nn::LSTM(
            nn::LSTMOptions(kHidden, kHidden).num_layers(kLayers).dropout(kDropout)));
    drop = register_module("drop", nn::Dropout(kDropout));
    decoder_bias = register_parameter("decoder_bias", zeros({vocabulary}));
    nn::init::uniform_(encoder->weight, -0.1, 0.1);
  }

  // {tokens [T, B], {h, c} [layers, B, hidden]} -> {logits [T, B, V], {h, c}}
  TensorTree forward(const TensorTree& in) {
    const Tensor embedded = drop->forward(encoder->forward(in[0].tensor()));
    auto [output, state] =
        lstm->forward(embedded, std::make_tuple(in[1][0].tensor(), in[1][1].tensor()));
    const Tensor logits = linear(drop->forward(output), encoder->weight, decoder_bias);
    return TensorTree{logits, {std::get<0>(state), std::get<1>(state)}};
  }

  int64_t vocabulary;
  nn::Embedding encoder{nullptr};
  nn::LSTM lstm{nullptr};
  nn::Dropout drop{nullptr};
  Tensor decoder_bias;
};
TANDEM_MODULE(WordModel);

// The token stream in `columns` contiguous columns: [rows, columns].
Tensor in_columns(const std::vector<int64_t>& ids, int64_t columns) {
  const int64_t rows = static_cast<int64_t>(ids.size()) / columns;
  TANDEM_CHECK(rows >= 2,
               "train: ",
               ids.size(),
               " tokens are too few for ",
               columns,
               " columns of at least 2");
  const Tensor flat =
      tensor(std::vector<int64_t>(ids.begin(), ids.begin() + rows * columns));
  return flat.view({columns, rows}).t().contiguous();
}

// Segments of kSegment rows over `rows` rows (the last may be shorter; each
// predicts the row after it).
int64_t segments(int64_t rows) { return (rows - 1 + kSegment - 1) / kSegment; }

std::string exact_text(double value) {
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, end);
}

double exact_value(const io::Checkpoint& checkpoint,
                   const std::string& key,
                   const std::string& path) {
  auto it = checkpoint.extra.find(key);
  double value = 0;
  if (it != checkpoint.extra.end()) {
    const std::string& text = it->second;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && end == text.data() + text.size()) return value;
  }
  throw Error("resume: " + path + " lacks a readable " + key +
              " (it was not written by tandem train --model lstm-lm, or is damaged)");
}

class LanguageModelTask final : public TrainingTask {
 public:
  explicit LanguageModelTask(const TrainConfig& config)
      : config_(config), corpus_(config.data_dir) {
    check_devices(config.devices, /*distributed=*/false);
    train_ = in_columns(corpus_.train(), config.batch_size);
    valid_ = in_columns(corpus_.valid(), kEvalColumns);
    test_ = in_columns(corpus_.test(), kEvalColumns);
    plateau_lr_ = config.lr;
  }

  void make_models() override {
    manual_seed(config_.seed);
    model_ = WordModel(corpus_.vocabulary_size());
    model_->to(config_.dtype);
    model_->to(device());
    parallel_ = nn::DataParallel(
        model_, nn::DataParallelOptions().device_ids(config_.devices).dim(1));
    if (config_.optimizer == "adam") {
      optimizer_ = std::make_unique<optim::Adam>(
          model_->parameters(),
          optim::AdamOptions(config_.lr).weight_decay(config_.weight_decay));
    } else {  // plain SGD, as the example
      optimizer_ = std::make_unique<optim::SGD>(
          model_->parameters(),
          optim::SGDOptions(config_.lr).weight_decay(config_.weight_decay));
    }
  }

  std::string description() const override {
    std::ostringstream out;
    const int64_t devices = static_cast<int64_t>(config_.devices.size());
    out << "lstm-lm (LSTM " << kLayers << "x" << kHidden << ", tied decoder, dropout "
        << kDropout << ")"
        << (config_.dtype == kFloat32 ? ""
                                      : " in " + std::string(dtype_name(config_.dtype)))
        << " on " << device_list() << ": " << corpus_.train().size() << " training and "
        << corpus_.valid().size() << " validation tokens of " << corpus_.source()
        << ", vocabulary " << corpus_.vocabulary_size() << "; batch "
        << config_.batch_size << " columns of " << kSegment << " tokens";
    if (devices > 1) {
      out << " (" << (config_.batch_size + devices - 1) / devices << " per device)";
    }
    out << ", " << optimizer_description(config_) << ", gradients clipped to norm "
        << kClipNorm;
    return out.str();
  }

  int64_t batches_per_epoch() const override { return segments(train_.size(0)); }

  void begin_epoch(int64_t epoch, int64_t first_batch) override {
    const double lr =
        config_.lr_schedule == "plateau" ? plateau_lr_ : epoch_lr(config_, epoch);
    for (auto& group : optimizer_->param_groups()) group.options().set_lr(lr);
    // A resumed run goes on from the state its checkpoint carried.
    if (first_batch == 0 || !carried_) carried_ = zero_state(config_.batch_size);
    next_ = first_batch;
  }

  StepOutcome step(const InterruptScope& /*interrupt*/) override {
    optimizer_->zero_grad();
    const int64_t row = next_ * kSegment;
    auto [loss, state] = segment(train_, row, *carried_);
    loss.backward();
    StepOutcome outcome;
    outcome.batch = next_++;
    outcome.loss = loss.item<double>();
    outcome.samples = segment_length(train_, row) * train_.size(1);
    if (std::isfinite(outcome.loss)) {
      nn::utils::clip_grad_norm_(model_->parameters(), kClipNorm);
      optimizer_->step();
    }
    carried_ = std::move(state);
    return outcome;
  }

  Scores evaluate(int64_t /*epochs_done*/) override {
    const double loss = mean_loss(valid_);
    return {{"valid_loss", loss}, {"valid_ppl", std::exp(loss)}};
  }

  // The plateau schedule: a quarter of the lr once the validation loss
  // stops falling, as the example anneals.
  void end_epoch(const Scores& scores) override {
    const double loss = scores.front().second;
    if (loss < best_valid_loss_) {
      best_valid_loss_ = loss;
    } else {
      plateau_lr_ *= kPlateauFactor;
    }
  }

  Scores final_scores(int64_t /*epochs_done*/, const Scores* /*last*/) override {
    const double loss = mean_loss(test_);
    return {{"test_ppl", std::exp(loss)}, {"test_loss", loss}};
  }

  void save(io::Checkpoint& checkpoint) override {
    checkpoint.model = model_->state_dict();
    if (carried_) {
      checkpoint.model.insert(std::string(kCarriedState) + "h", (*carried_)[0].tensor());
      checkpoint.model.insert(std::string(kCarriedState) + "c", (*carried_)[1].tensor());
    }
    checkpoint.optimizer = optimizer_->state_dict();
    checkpoint.extra[kPlateauLr] = exact_text(plateau_lr_);
    checkpoint.extra[kPlateauBest] = exact_text(best_valid_loss_);
  }

  void restore(const io::Checkpoint& checkpoint) override {
    OrderedDict<std::string, Tensor> weights;
    std::optional<Tensor> h, c;
    for (const auto& item : checkpoint.model) {
      if (item.key() == std::string(kCarriedState) + "h") {
        h = item.value();
      } else if (item.key() == std::string(kCarriedState) + "c") {
        c = item.value();
      } else {
        weights.insert(item.key(), item.value());
      }
    }
    model_->load_state_dict(weights);
    optimizer_->load_state_dict(checkpoint.optimizer);
    if (h && c) carried_ = TensorTree{h->to(device()), c->to(device())};
    plateau_lr_ = exact_value(checkpoint, kPlateauLr, config_.resume_path);
    best_valid_loss_ = exact_value(checkpoint, kPlateauBest, config_.resume_path);
  }

  std::string device_list() const override { return cli::device_list(config_.devices); }

  std::vector<double> shares() const override {
    // DataParallel's chunk rule over the columns.
    const auto devices = static_cast<int64_t>(config_.devices.size());
    const int64_t chunk = (config_.batch_size + devices - 1) / devices;
    std::vector<double> fractions;
    for (int64_t left = config_.batch_size; left > 0; left -= chunk) {
      fractions.push_back(static_cast<double>(std::min(chunk, left)) /
                          static_cast<double>(config_.batch_size));
    }
    return fractions;
  }

 private:
  Device device() const { return config_.devices.front(); }

  TensorTree zero_state(int64_t columns) const {
    const Tensor h = zeros({kLayers, columns, kHidden},
                           TensorOptions().dtype(config_.dtype).device(device()));
    return TensorTree{h, h.clone()};
  }

  static int64_t segment_length(const Tensor& data, int64_t row) {
    return std::min(kSegment, data.size(0) - 1 - row);
  }

  // The segment of `data` from `row`: its mean loss per token, and the
  // final state, detached (backprop stops at the segment's start).
  std::pair<Tensor, TensorTree> segment(const Tensor& data,
                                        int64_t row,
                                        const TensorTree& state) {
    const int64_t length = segment_length(data, row);
    const Tensor input = data.narrow(0, row, length).to(device());
    const Tensor target = data.narrow(0, row + 1, length).to(device());
    const TensorTree out = parallel_->forward(TensorTree{input, state});
    const Tensor logits = out[0].tensor();
    Tensor loss =
        cross_entropy(logits.reshape({-1, logits.size(2)}), target.reshape({-1}));
    return {loss, out[1].map([](const Tensor& t) { return t.detach(); })};
  }

  // Mean loss per token over `data`, in eval mode.
  double mean_loss(const Tensor& data) {
    NoGradGuard no_grad;
    model_->eval();
    TensorTree state = zero_state(data.size(1));
    double total = 0;
    int64_t count = 0;
    for (int64_t row = 0; row + 1 < data.size(0); row += kSegment) {
      auto [loss, next] = segment(data, row, state);
      const int64_t tokens = segment_length(data, row) * data.size(1);
      total += loss.item<double>() * static_cast<double>(tokens);
      count += tokens;
      state = std::move(next);
    }
    model_->train();
    return total / static_cast<double>(count);
  }

  const TrainConfig& config_;
  data::datasets::KingJamesBible corpus_;
  Tensor train_, valid_, test_;  // token ids in columns
  WordModel model_{nullptr};
  nn::DataParallel parallel_{nullptr};
  std::unique_ptr<optim::Optimizer> optimizer_;
  double plateau_lr_ = 0;
  double best_valid_loss_ = std::numeric_limits<double>::infinity();
  std::optional<TensorTree> carried_;  // the LSTM state into the next segment
  int64_t next_ = 0;                   // the epoch's next segment
};

}  // namespace

std::unique_ptr<TrainingTask> make_language_model_task(const TrainConfig& config) {
  return std::make_unique<LanguageModelTask>(config);
}

}  // namespace tandem::cli
