// RNN, LSTM, GRU and their cells as modules: LibTorch's parameter names
// and shapes, PyTorch's initialisation bounds, options, printing, return
// shapes (batch_first, bidirectional, unbatched), forward equal to the ops,
// train/eval dropout, clone and state_dict.
#include <cmath>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace {

namespace nn = tandem::nn;
using tandem::IntList;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::throws_with;

std::vector<std::string> names(const nn::Module& m) {
  return m.named_parameters().keys();
}

TEST(RnnModules, LstmParameterNamesShapesAndInit) {
  nn::LSTM lstm(nn::LSTMOptions(3, 5).num_layers(2).bidirectional(true));
  EXPECT_EQ(names(*lstm),
            (std::vector<std::string>{"weight_ih_l0",
                                      "weight_hh_l0",
                                      "bias_ih_l0",
                                      "bias_hh_l0",
                                      "weight_ih_l0_reverse",
                                      "weight_hh_l0_reverse",
                                      "bias_ih_l0_reverse",
                                      "bias_hh_l0_reverse",
                                      "weight_ih_l1",
                                      "weight_hh_l1",
                                      "bias_ih_l1",
                                      "bias_hh_l1",
                                      "weight_ih_l1_reverse",
                                      "weight_hh_l1_reverse",
                                      "bias_ih_l1_reverse",
                                      "bias_hh_l1_reverse"}));
  const auto params = lstm->named_parameters();
  EXPECT_EQ(params["weight_ih_l0"].sizes(), (IntList{20, 3}));
  EXPECT_EQ(params["weight_ih_l1"].sizes(), (IntList{20, 10}));
  EXPECT_EQ(params["weight_hh_l1_reverse"].sizes(), (IntList{20, 5}));
  EXPECT_EQ(params["bias_hh_l1"].sizes(), (IntList{20}));
  const double bound = 1 / std::sqrt(5.0);
  for (const Tensor& p : lstm->parameters()) {
    EXPECT_LE(tandem::abs(p).max().item<float>(), bound);
    EXPECT_GT(tandem::abs(p).max().item<float>(), 0.5 * bound);
  }
  EXPECT_EQ(lstm->all_weights().size(), 4u);
  nn::GRU gru(nn::GRUOptions(3, 5).bias(false));
  EXPECT_EQ(names(*gru), (std::vector<std::string>{"weight_ih_l0", "weight_hh_l0"}));
  EXPECT_EQ(gru->flat_weights()[0].sizes(), (IntList{15, 3}));
  nn::LSTMCell cell(3, 5);
  EXPECT_EQ(names(*cell),
            (std::vector<std::string>{"weight_ih", "weight_hh", "bias_ih", "bias_hh"}));
  EXPECT_EQ(cell->weight_ih.sizes(), (IntList{20, 3}));
  nn::RNNCell plain(nn::RNNCellOptions(3, 5).bias(false));
  EXPECT_EQ(names(*plain), (std::vector<std::string>{"weight_ih", "weight_hh"}));
}

TEST(RnnModules, ReturnShapes) {
  nn::LSTM lstm(
      nn::LSTMOptions(3, 5).num_layers(2).bidirectional(true).batch_first(true));
  auto [out, state] = lstm->forward(tandem::randn({4, 7, 3}));
  EXPECT_EQ(out.sizes(), (IntList{4, 7, 10}));
  EXPECT_EQ(std::get<0>(state).sizes(), (IntList{4, 4, 5}));
  EXPECT_EQ(std::get<1>(state).sizes(), (IntList{4, 4, 5}));
  nn::GRU gru(3, 5);
  auto [gout, gh] = gru->forward(tandem::randn({7, 3}));  // unbatched
  EXPECT_EQ(gout.sizes(), (IntList{7, 5}));
  EXPECT_EQ(gh.sizes(), (IntList{1, 5}));
  nn::RNN rnn(nn::RNNOptions(3, 5).nonlinearity(tandem::kReLU).num_layers(3));
  auto [rout, rh] = rnn->forward(tandem::randn({7, 2, 3}), tandem::zeros({3, 2, 5}));
  EXPECT_EQ(rout.sizes(), (IntList{7, 2, 5}));
  EXPECT_GE(rout.min().item<float>(), 0.0f);  // relu
  EXPECT_EQ(rh.sizes(), (IntList{3, 2, 5}));
  nn::LSTMCell cell(3, 5);
  auto [h, c] = cell->forward(tandem::randn({2, 3}));
  EXPECT_EQ(h.sizes(), (IntList{2, 5}));
  auto [h2, c2] = cell->forward(tandem::randn({2, 3}), std::make_tuple(h, c));
  EXPECT_EQ(c2.sizes(), (IntList{2, 5}));
  nn::GRUCell gcell(3, 5);
  EXPECT_EQ(gcell->forward(tandem::randn({3})).sizes(), (IntList{5}));
}

TEST(RnnModules, ForwardIsTheOp) {
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2));
  lstm->eval();
  const Tensor x = tandem::randn({5, 2, 3});
  const Tensor h0 = tandem::randn({2, 2, 4}), c0 = tandem::randn({2, 2, 4});
  auto [out, state] = lstm->forward(x, std::make_tuple(h0, c0));
  auto [want, h_n, c_n] =
      tandem::lstm(x, {h0, c0}, lstm->flat_weights(), true, 2, 0.0, false, false, false);
  EXPECT_TRUE(all_close(out, want, 0, 0));
  EXPECT_TRUE(all_close(std::get<1>(state), c_n, 0, 0));
  nn::RNNCell cell(nn::RNNCellOptions(3, 4).nonlinearity(tandem::kReLU));
  const Tensor xt = tandem::randn({2, 3});
  EXPECT_TRUE(all_close(
      cell->forward(xt),
      tandem::rnn_relu_cell(
          xt, {}, cell->weight_ih, cell->weight_hh, cell->bias_ih, cell->bias_hh),
      0,
      0));
}

TEST(RnnModules, DropoutOnlyInTraining) {
  nn::GRU gru(nn::GRUOptions(3, 4).num_layers(2).dropout(0.8));
  const Tensor x = tandem::randn({5, 2, 3});
  gru->eval();
  const Tensor a = std::get<0>(gru->forward(x)), b = std::get<0>(gru->forward(x));
  EXPECT_TRUE(all_close(a, b, 0, 0));
  gru->train();
  EXPECT_FALSE(all_close(std::get<0>(gru->forward(x)), a, 1e-4, 1e-4));
}

TEST(RnnModules, Printing) {
  std::ostringstream s;
  s << nn::LSTM(nn::LSTMOptions(10, 20).num_layers(2).dropout(0.5).bidirectional(true));
  EXPECT_EQ(
      s.str(),
      "LSTM(input_size=10, hidden_size=20, num_layers=2, bias=true, batch_first=false, "
      "dropout=0.5, bidirectional=true)");
  std::ostringstream c;
  c << nn::LSTMCell(10, 20) << " " << nn::GRUCell(nn::GRUCellOptions(3, 4).bias(false))
    << " " << nn::RNNCell(nn::RNNCellOptions(3, 4).nonlinearity(tandem::kReLU));
  EXPECT_EQ(
      c.str(),
      "LSTMCell(10, 20) GRUCell(3, 4, bias=false) RNNCell(3, 4, nonlinearity=kReLU)");
}

TEST(RnnModules, CloneAndStateDict) {
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2));
  auto copy = std::dynamic_pointer_cast<nn::LSTMImpl>(lstm->clone());
  ASSERT_NE(copy, nullptr);
  const Tensor x = tandem::randn({5, 2, 3});
  EXPECT_TRUE(
      all_close(std::get<0>(copy->forward(x)), std::get<0>(lstm->forward(x)), 0, 0));
  // The clone's flat weights are its own parameters.
  EXPECT_NE(copy->flat_weights()[0].data_ptr<float>(),
            lstm->flat_weights()[0].data_ptr<float>());
  {
    tandem::NoGradGuard no_grad;
    Tensor w = copy->flat_weights()[0];
    w.fill_(0);
  }
  EXPECT_FALSE(all_close(std::get<0>(copy->forward(x)), std::get<0>(lstm->forward(x))));
  nn::LSTM other(nn::LSTMOptions(3, 4).num_layers(2));
  other->load_state_dict(lstm->state_dict());
  EXPECT_TRUE(
      all_close(std::get<0>(other->forward(x)), std::get<0>(lstm->forward(x)), 0, 0));
}

TEST(RnnModules, OptionErrors) {
  EXPECT_TRUE(
      throws_with([] { nn::LSTM(nn::LSTMOptions(3, 0)); },
                  "LSTM: input_size and hidden_size must be positive, got 3 and 0"));
  EXPECT_TRUE(throws_with([] { nn::GRU(nn::GRUOptions(3, 4).num_layers(0)); },
                          "GRU: num_layers must be positive, got 0"));
  EXPECT_TRUE(throws_with([] { nn::RNN(nn::RNNOptions(3, 4).dropout(1.5)); },
                          "RNN: dropout must be a probability in [0, 1], got 1.5"));
  EXPECT_TRUE(
      throws_with([] { nn::RNN(nn::RNNOptions(3, 4).nonlinearity(tandem::kSigmoid)); },
                  "RNN: nonlinearity must be kTanh or kReLU"));
}

}  // namespace
