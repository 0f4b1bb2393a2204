// The recurrent ops (tandem/ops/rnn.h): gradcheck in float64 of every cell
// and of layers in each configuration (layers, directions, batch_first,
// given or zero states, no biases, unbatched, only h_n used), the refusal
// of double backward, the fused forward against a step-by-step formula in
// plain ops, and argument errors with their messages. Values against
// PyTorch are in tests/parity/rnn_test.cpp.
#include <gtest/gtest.h>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using autograd::gradcheck;
using autograd::tensor_list;
using testing::all_close;
using testing::throws_with;

Tensor leaf(const IntList& shape) {
  return (rand(shape, kFloat64) * 2 - 1).requires_grad_(true);
}

// Flat parameters of a layer stack: per layer and direction w_ih, w_hh,
// b_ih, b_hh (the last two without `biases`).
tensor_list params_for(int64_t gates,
                       int64_t input,
                       int64_t hidden,
                       int64_t layers,
                       int64_t dirs,
                       bool biases) {
  tensor_list p;
  for (int64_t l = 0; l < layers; ++l) {
    for (int64_t d = 0; d < dirs; ++d) {
      p.push_back(leaf({gates * hidden, l == 0 ? input : dirs * hidden}));
      p.push_back(leaf({gates * hidden, hidden}));
      if (biases) {
        p.push_back(leaf({gates * hidden}));
        p.push_back(leaf({gates * hidden}));
      }
    }
  }
  return p;
}

Tensor flat(const std::vector<Tensor>& parts) {
  std::vector<Tensor> f;
  for (const Tensor& t : parts) f.push_back(t.reshape({-1}));
  return cat(f, 0);
}

tensor_list join(tensor_list a, const tensor_list& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(RnnCells, GradcheckLstmCell) {
  const tensor_list in{leaf({3, 4}),
                       leaf({3, 5}),
                       leaf({3, 5}),
                       leaf({20, 4}),
                       leaf({20, 5}),
                       leaf({20}),
                       leaf({20})};
  auto check = gradcheck(
      [](const tensor_list& x) {
        auto [h, c] = lstm_cell(x[0], {x[1], x[2]}, x[3], x[4], x[5], x[6]);
        return flat({h, c});
      },
      in);
  EXPECT_TRUE(check) << check.message;
}

TEST(RnnCells, GradcheckGruCell) {
  const tensor_list in{
      leaf({3, 4}), leaf({3, 5}), leaf({15, 4}), leaf({15, 5}), leaf({15}), leaf({15})};
  auto check = gradcheck(
      [](const tensor_list& x) { return gru_cell(x[0], x[1], x[2], x[3], x[4], x[5]); },
      in);
  EXPECT_TRUE(check) << check.message;
}

TEST(RnnCells, GradcheckRnnCellsWithoutBiasesAndUnbatched) {
  const tensor_list in{leaf({3, 4}), leaf({3, 5}), leaf({5, 4}), leaf({5, 5})};
  auto tanh_check = gradcheck(
      [](const tensor_list& x) { return rnn_tanh_cell(x[0], x[1], x[2], x[3]); }, in);
  EXPECT_TRUE(tanh_check) << tanh_check.message;
  auto relu_check = gradcheck(
      [](const tensor_list& x) { return rnn_relu_cell(x[0], x[1], x[2], x[3]); }, in);
  EXPECT_TRUE(relu_check) << relu_check.message;
  const tensor_list one{leaf({4}), leaf({5}), leaf({5}), leaf({20, 4}), leaf({20, 5})};
  auto lstm_check = gradcheck(
      [](const tensor_list& x) {
        auto [h, c] = lstm_cell(x[0], {x[1], x[2]}, x[3], x[4]);
        return flat({h, c});
      },
      one);
  EXPECT_TRUE(lstm_check) << lstm_check.message;
}

TEST(RnnLayers, GradcheckLstmTwoLayersBidirectionalWithStates) {
  const tensor_list p = params_for(4, 3, 4, 2, 2, true);
  const tensor_list in = join({leaf({5, 2, 3}), leaf({4, 2, 4}), leaf({4, 2, 4})}, p);
  auto check = gradcheck(
      [](const tensor_list& x) {
        const tensor_list params(x.begin() + 3, x.end());
        auto [out, h, c] =
            lstm(x[0], {x[1], x[2]}, params, true, 2, 0.0, true, true, false);
        return flat({out, h, c});
      },
      in);
  EXPECT_TRUE(check) << check.message;
}

TEST(RnnLayers, GradcheckGruBatchFirstBidirectional) {
  const tensor_list p = params_for(3, 3, 4, 1, 2, true);
  const tensor_list in = join({leaf({2, 5, 3}), leaf({2, 2, 4})}, p);
  auto check = gradcheck(
      [](const tensor_list& x) {
        const tensor_list params(x.begin() + 2, x.end());
        auto [out, h] = gru(x[0], x[1], params, true, 1, 0.0, true, true, true);
        return flat({out, h});
      },
      in);
  EXPECT_TRUE(check) << check.message;
}

TEST(RnnLayers, GradcheckRnnReluWithoutBiasesAndTanhUnbatched) {
  const tensor_list p = params_for(1, 3, 4, 2, 1, false);
  const tensor_list in = join({leaf({4, 2, 3})}, p);
  auto relu = gradcheck(
      [](const tensor_list& x) {
        const tensor_list params(x.begin() + 1, x.end());
        auto [out, h] = rnn_relu(x[0], {}, params, false, 2, 0.0, true, false, false);
        return flat({out, h});
      },
      in);
  EXPECT_TRUE(relu) << relu.message;
  const tensor_list q = params_for(1, 3, 4, 1, 2, true);
  const tensor_list unbatched = join({leaf({4, 3}), leaf({2, 4})}, q);
  auto tanh = gradcheck(
      [](const tensor_list& x) {
        const tensor_list params(x.begin() + 2, x.end());
        auto [out, h] = rnn_tanh(x[0], x[1], params, true, 1, 0.0, true, true, false);
        return flat({out, h});
      },
      unbatched);
  EXPECT_TRUE(tanh) << tanh.message;
}

// Only h_n reaches the loss: the output's gradient never arrives.
TEST(RnnLayers, GradcheckLstmOnlyLastState) {
  const tensor_list p = params_for(4, 3, 4, 1, 1, true);
  const tensor_list in = join({leaf({6, 2, 3})}, p);
  auto check = gradcheck(
      [](const tensor_list& x) {
        const tensor_list params(x.begin() + 1, x.end());
        return std::get<1>(lstm(x[0], {}, params, true, 1, 0.0, true, false, false));
      },
      in);
  EXPECT_TRUE(check) << check.message;
}

// The fused LSTM layer against the textbook step in plain ops.
TEST(RnnLayers, LstmMatchesStepByStepFormula) {
  NoGradGuard no_grad;
  const tensor_list p = params_for(4, 3, 5, 1, 1, true);
  const Tensor x = rand({4, 2, 3}, kFloat64), h0 = rand({1, 2, 5}, kFloat64);
  const Tensor c0 = rand({1, 2, 5}, kFloat64);
  auto [out, h_n, c_n] = lstm(x, {h0, c0}, p, true, 1, 0.0, false, false, false);
  Tensor h = h0[0], c = c0[0];
  for (int64_t t = 0; t < 4; ++t) {
    const Tensor gates = linear(x[t], p[0], p[2]) + linear(h, p[1], p[3]);
    const auto g = chunk(gates, 4, 1);
    c = sigmoid(g[1]) * c + sigmoid(g[0]) * tanh(g[2]);
    h = sigmoid(g[3]) * tanh(c);
    EXPECT_TRUE(all_close(out[t], h, 1e-12, 1e-12)) << "step " << t;
  }
  EXPECT_TRUE(all_close(h_n[0], h, 1e-12, 1e-12));
  EXPECT_TRUE(all_close(c_n[0], c, 1e-12, 1e-12));
}

TEST(RnnLayers, DoubleBackwardIsRefused) {
  const tensor_list p = params_for(3, 3, 4, 1, 1, true);
  const Tensor x = leaf({2, 2, 3});
  const Tensor loss = std::get<0>(gru(x, {}, p, true, 1, 0.0, true, false, false)).sum();
  EXPECT_TRUE(
      throws_with([&] { autograd::grad({loss}, {x}, {}, true, true); },
                  "GruBackward: the fused recurrent layers have no double backward"));
}

TEST(RnnLayers, DropoutActsBetweenLayersOnlyInTraining) {
  const tensor_list p = params_for(4, 3, 4, 2, 1, true);
  const Tensor x = rand({3, 2, 3}, kFloat64);
  auto eval1 = std::get<0>(lstm(x, {}, p, true, 2, 0.9, false, false, false));
  auto eval2 = std::get<0>(lstm(x, {}, p, true, 2, 0.0, false, false, false));
  EXPECT_TRUE(all_close(eval1, eval2, 0, 0));
  auto train = std::get<0>(lstm(x, {}, p, true, 2, 0.9, true, false, false));
  EXPECT_FALSE(all_close(train, eval2, 1e-6, 1e-6));
}

TEST(RnnErrors, NameTheOpShapesAndArgument) {
  const tensor_list p = params_for(4, 3, 4, 1, 1, true);
  const Tensor x = rand({5, 2, 3}, kFloat64);
  auto run = [&](const Tensor& input,
                 const std::vector<Tensor>& hx,
                 const tensor_list& params,
                 int64_t layers = 1) {
    return lstm(input, hx, params, true, layers, 0.0, true, false, false);
  };
  EXPECT_TRUE(throws_with(
      [&] { run(rand({5}, kFloat64), {}, p); },
      "lstm: expected input of 2 (unbatched) or 3 dimensions, got shape [5]"));
  EXPECT_TRUE(throws_with(
      [&] {
        run(rand({5, 2, 7}, kFloat64), {}, p);
      },
      "lstm: expected input with 3 features (last dim) for weight_ih_l0 of "
      "shape [16, 3], got input of shape [5, 2, 7]"));
  const Tensor h_bad = zeros({2, 2, 4}, kFloat64), c = zeros({1, 2, 4}, kFloat64);
  EXPECT_TRUE(throws_with(
      [&] {
        run(x, {h_bad, c}, p);
      },
      "lstm: expected h0 of shape [1, 2, 4] for input of shape [5, 2, 3], "
      "got [2, 2, 4]"));
  EXPECT_TRUE(
      throws_with([&] { run(x, {h_bad}, p); },
                  "lstm: expected hx to hold two tensors (h and c) or none, got 1"));
  EXPECT_TRUE(throws_with([&] { run(x, {}, p, 2); },
                          "lstm: expected 8 parameter tensors for 2 layer(s)"));
  tensor_list wrong = p;
  wrong[1] = rand({16, 5}, kFloat64);
  EXPECT_TRUE(
      throws_with([&] { run(x, {}, wrong); },
                  "lstm: expected weight_hh_l0 of shape [4 * hidden_size, hidden_size], "
                  "got [16, 5]"));
  wrong = p;
  wrong[3] = rand({12}, kFloat64);
  EXPECT_TRUE(throws_with([&] { run(x, {}, wrong); },
                          "lstm: expected bias_hh_l0 of shape [16], got [12]"));
  EXPECT_TRUE(throws_with([&] { run(x.to("cpu:1"), {}, p); },
                          "lstm: expected all tensors on the same device"));
  EXPECT_TRUE(throws_with([&] { run(x.to(kFloat32), {}, p); },
                          "lstm: expected every parameter and state of dtype float32"));
  EXPECT_TRUE(throws_with(
      [&] {
        run(rand({0, 2, 3}, kFloat64), {}, p);
      },
      "lstm: expected a sequence of at least one step"));
  EXPECT_TRUE(throws_with(
      [&] {
        gru_cell(rand({2, 3}, kFloat64),
                 rand({3, 4}, kFloat64),
                 rand({12, 3}, kFloat64),
                 rand({12, 4}, kFloat64));
      },
      "gru_cell: expected hx of shape [2, 4] for input of shape [2, 3], got [3, 4]"));
  EXPECT_TRUE(throws_with(
      [&] {
        rnn_tanh_cell(rand({2, 2, 3}, kFloat64),
                      {},
                      rand({4, 3}, kFloat64),
                      rand({4, 4}, kFloat64));
      },
      "rnn_tanh_cell: expected input of 1 (unbatched) or 2 dimensions, got shape [2, 2, "
      "3]"));
}

}  // namespace
}  // namespace tandem
