// One recurrent layer in one direction, forward and backward, as a single
// autograd node over fused kernels.
//
// Note [Fused recurrent layers]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A layer of T steps runs as one node instead of a dozen small recorded
// ops per step (PyTorch's CPU path records linear, add, chunk, three
// sigmoids, two tanhs, three muls and an add at every step):
//   forward:  one GEMM projects the whole input, [T * B, I] x W_ih^T plus
//             the biases, into gate buffers [T, B, G * H]. Each step then
//             adds h_{t-1} W_hh^T into its own slice (one GEMM with beta 1;
//             GRU keeps it apart, for r * (W_hn h + b_hn)) and runs one
//             fused cell kernel (lstm_cell, gru_cell, or tanh / relu in
//             place), which overwrites the slice with the activated gates.
//             h and c of every step land in [T + 1, B, H] buffers whose
//             first (or, reversed, last) slot is the initial state.
//   backward: the saved activated gates, states and inputs are all it
//             reads. Walking the steps back, the cell's backward kernel
//             writes the gate gradients of step t into a [T, B, G * H]
//             buffer and one GEMM with W_hh carries dh to step t - 1.
//             Then the weight gradients are ONE GEMM each over all steps
//             (dW_hh = dgates^T [h_0 .. h_{T-1}], dW_ih = dgates^T x) and
//             dx one GEMM, instead of T rank-B updates summed one by one.
// The cells (lstm_cell, ...) are this layer with T = 1. The node has no
// double backward (as PyTorch's fused cuDNN RNN): under create_graph it
// throws, naming the node.
#include "ops/rnn_layer.h"

#include <utility>

#include "ops/op_utils.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/graph/node.h"

namespace tandem::detail {
namespace {

using autograd::SavedVariable;
using autograd::tensor_list;
using backend::BinaryOp;

// Slot `index` of a buffer along dim 0, as a kernel operand.
Tensor slot(const Tensor& buffer, int64_t index) {
  IntList sizes(buffer.sizes().begin() + 1, buffer.sizes().end());
  IntList strides(buffer.strides().begin() + 1, buffer.strides().end());
  return raw_view(buffer,
                  std::move(sizes),
                  std::move(strides),
                  buffer.storage_offset() + index * buffer.strides()[0]);
}

// Slots [begin, begin + count) of a contiguous [S, B, W] buffer as a
// [count * B, W] matrix.
Tensor rows(const Tensor& buffer, int64_t begin, int64_t count) {
  const int64_t b = buffer.size(1), w = buffer.size(2);
  return raw_view(
      buffer, {count * b, w}, {w, 1}, buffer.storage_offset() + begin * b * w);
}

// Slots [begin, begin + count) of a contiguous buffer, keeping its shape.
Tensor slots(const Tensor& buffer, int64_t begin, int64_t count) {
  IntList sizes = buffer.sizes();
  sizes[0] = count;
  return raw_view(buffer,
                  std::move(sizes),
                  buffer.strides(),
                  buffer.storage_offset() + begin * buffer.strides()[0]);
}

Tensor empty_like_rows(const Tensor& like, IntList sizes) {
  return make_empty(sizes, like.dtype(), like.device());
}

// The time order of a layer and where its states live in the [T + 1, B, H]
// buffers: step s handles time t(s), reads slot prev(t), writes slot out(t).
struct Order {
  int64_t steps;
  bool reverse;
  int64_t time(int64_t s) const { return reverse ? steps - 1 - s : s; }
  int64_t prev(int64_t t) const { return reverse ? t + 1 : t; }
  int64_t out(int64_t t) const { return reverse ? t : t + 1; }
  int64_t initial() const { return reverse ? steps : 0; }
  int64_t last() const { return reverse ? 0 : steps; }
  int64_t first_output() const { return reverse ? 0 : 1; }
  int64_t first_prev() const { return reverse ? 1 : 0; }
};

// The bias summed into the input projection (GRU keeps b_hh for the hidden
// gates); undefined without biases.
Tensor input_bias(RnnMode mode, const RnnLayerWeights& w) {
  const Tensor b_ih = w.b_ih.defined() ? w.b_ih.detach() : Tensor();
  if (mode == RnnMode::Gru || !w.b_hh.defined()) return b_ih;
  const Tensor b_hh = w.b_hh.detach();
  if (!b_ih.defined()) return b_hh;
  Tensor sum = empty_like_rows(b_ih, b_ih.sizes());
  kernels_for(sum).binary(BinaryOp::Add, sum, b_ih, b_hh, 1);
  return sum;
}

// out = bias (broadcast over rows, when defined) + a @ b.
void affine(const backend::Kernels& k,
            const Tensor& out,
            const Tensor& a,
            const Tensor& b,
            const Tensor& bias) {
  if (bias.defined()) k.copy(out, broadcast_to_raw(bias, out.sizes()));
  k.gemm(out, a, b, 1.0, bias.defined() ? 1.0 : 0.0);
}

// What the backward reads, all plain tensors of this layer's own.
struct Saved {
  RnnMode mode = RnnMode::Tanh;
  Order order{0, false};
  Tensor x;       // [T * B, I], contiguous
  Tensor w_ih;    // [G * H, I]
  Tensor w_hh;    // [G * H, H]
  Tensor gates;   // [T, B, G * H]: activated gates (unused by tanh / relu)
  Tensor hidden;  // GRU: [T, B, 3 * H], h_{t-1} W_hh^T + b_hh
  Tensor hs;      // [T + 1, B, H]
  Tensor cs;      // LSTM: [T + 1, B, H]
};

// Which inputs of {input, h0, c0, w_ih, w_hh, b_ih, b_hh} need a gradient.
struct Needs {
  bool input, h0, c0, w_ih, w_hh, b_ih, b_hh;
};

// One step back: writes the gate gradients of time t (input side into
// grad_gates, hidden side into grad_hidden, which is grad_gates itself but
// for GRU) and the states' gradients of the step before into dh_prev and
// dc_prev.
void step_backward(const backend::Kernels& k,
                   const Saved& s,
                   int64_t t,
                   const Tensor& grad_gates,
                   const Tensor& grad_hidden,
                   const Tensor& dh,
                   const Tensor& dc,
                   const Tensor& dh_prev,
                   const Tensor& dc_prev) {
  const Tensor gt = slot(grad_gates, t), h_out = slot(s.hs, s.order.out(t));
  const Tensor h_prev = slot(s.hs, s.order.prev(t));
  switch (s.mode) {
    case RnnMode::Tanh:
      k.binary(BinaryOp::TanhBackwardFromResult, gt, dh, h_out, 0);
      break;
    case RnnMode::Relu:
      k.binary(BinaryOp::ReluBackward, gt, dh, h_out, 0);
      break;
    case RnnMode::Lstm:
      k.lstm_cell_backward(gt,
                           dc_prev,
                           dh,
                           dc,
                           slot(s.gates, t),
                           slot(s.cs, s.order.prev(t)),
                           slot(s.cs, s.order.out(t)));
      break;
    case RnnMode::Gru:
      k.gru_cell_backward(gt,
                          slot(grad_hidden, t),
                          dh_prev,
                          dh,
                          slot(s.gates, t),
                          slot(s.hidden, t),
                          h_prev);
      break;
  }
  k.gemm(dh_prev, slot(grad_hidden, t), s.w_hh, 1.0, 1.0);
}

// Sum over rows of a [R, W] matrix into a new [W] tensor.
Tensor column_sums(const Tensor& m) {
  Tensor out = empty_like_rows(m, {m.size(1)});
  kernels_for(m).reduce_dim(backend::ReduceOp::Sum, out, Tensor(), m, 0);
  return out;
}

tensor_list layer_backward(const Saved& s, const Needs& needs, const tensor_list& g) {
  const backend::Kernels& k = kernels_for(s.x);
  const int64_t steps = s.order.steps, batch = s.hs.size(1), h = s.hs.size(2);
  const Tensor& grad_output = g[0];
  Tensor dh = empty_like_rows(s.hs, {batch, h}),
         dh_prev = empty_like_rows(dh, {batch, h});
  auto init = [&](const Tensor& state, const Tensor& grad) {
    if (grad.defined()) {
      k.copy(state, grad);
    } else {
      k.fill(state, 0);
    }
  };
  init(dh, g.size() > 1 ? g[1] : Tensor());
  Tensor dc, dc_prev;
  if (s.mode == RnnMode::Lstm) {
    dc = empty_like_rows(dh, {batch, h});
    dc_prev = empty_like_rows(dh, {batch, h});
    init(dc, g[2]);
  }
  const int64_t width = s.w_hh.size(0);
  const Tensor grad_gates = empty_like_rows(dh, {steps, batch, width});
  const Tensor grad_hidden =
      s.mode == RnnMode::Gru ? empty_like_rows(dh, {steps, batch, width}) : grad_gates;
  for (int64_t step = steps - 1; step >= 0; --step) {
    const int64_t t = s.order.time(step);
    if (grad_output.defined()) k.binary(BinaryOp::Add, dh, dh, slot(grad_output, t), 1);
    // dh_prev starts from zero: the GRU kernel adds its direct share, the
    // GEMM adds W_hh's.
    k.fill(dh_prev, 0);
    step_backward(k, s, t, grad_gates, grad_hidden, dh, dc, dh_prev, dc_prev);
    std::swap(dh, dh_prev);
    std::swap(dc, dc_prev);
  }
  const Tensor dgates = rows(grad_gates, 0, steps);
  const Tensor dhidden = rows(grad_hidden, 0, steps);
  tensor_list grads(7);
  if (needs.input) {
    grads[0] = empty_like_rows(dh, {steps, batch, s.x.size(1)});
    k.gemm(rows(grads[0], 0, steps), dgates, s.w_ih, 1.0, 0.0);
  }
  if (needs.h0) grads[1] = dh;
  if (needs.c0) grads[2] = dc;
  if (needs.w_ih) {
    grads[3] = empty_like_rows(dh, s.w_ih.sizes());
    k.gemm(grads[3], dgates.t(), s.x, 1.0, 0.0);
  }
  if (needs.w_hh) {
    grads[4] = empty_like_rows(dh, s.w_hh.sizes());
    k.gemm(grads[4], dhidden.t(), rows(s.hs, s.order.first_prev(), steps), 1.0, 0.0);
  }
  if (needs.b_ih) grads[5] = column_sums(dgates);
  if (needs.b_hh) grads[6] = column_sums(dhidden);
  return grads;
}

const char* node_name(RnnMode mode) {
  switch (mode) {
    case RnnMode::Tanh:
      return "RnnTanhBackward";
    case RnnMode::Relu:
      return "RnnReluBackward";
    case RnnMode::Lstm:
      return "LstmBackward";
    case RnnMode::Gru:
      return "GruBackward";
  }
  TANDEM_INTERNAL_ASSERT(false, "unknown recurrent mode");
}

// One step forward at time t.
void step_forward(const backend::Kernels& k,
                  const Saved& s,
                  int64_t t,
                  const Tensor& b_hh) {
  const Tensor gt = slot(s.gates, t), h_prev = slot(s.hs, s.order.prev(t));
  const Tensor h_out = slot(s.hs, s.order.out(t));
  if (s.mode == RnnMode::Gru) {
    const Tensor ht = slot(s.hidden, t);
    affine(k, ht, h_prev, s.w_hh.t(), b_hh);
    k.gru_cell(gt, ht, h_prev, h_out);
    return;
  }
  k.gemm(gt, h_prev, s.w_hh.t(), 1.0, 1.0);
  if (s.mode == RnnMode::Lstm) {
    k.lstm_cell(gt, slot(s.cs, s.order.prev(t)), h_out, slot(s.cs, s.order.out(t)));
    return;
  }
  const auto op =
      s.mode == RnnMode::Tanh ? backend::UnaryOp::Tanh : backend::UnaryOp::Relu;
  k.unary(op, h_out, gt, 0, 0);
}

Tensor copy_of(const Tensor& t) {
  Tensor out = empty_like_rows(t, t.sizes());
  kernels_for(t).copy(out, t);
  return out;
}

}  // namespace

int64_t gate_count(RnnMode mode) {
  switch (mode) {
    case RnnMode::Lstm:
      return 4;
    case RnnMode::Gru:
      return 3;
    default:
      return 1;
  }
}

const char* mode_name(RnnMode mode) {
  switch (mode) {
    case RnnMode::Tanh:
      return "rnn_tanh";
    case RnnMode::Relu:
      return "rnn_relu";
    case RnnMode::Lstm:
      return "lstm";
    case RnnMode::Gru:
      return "gru";
  }
  TANDEM_INTERNAL_ASSERT(false, "unknown recurrent mode");
}

RnnLayerResult rnn_layer(RnnMode mode,
                         const Tensor& input,
                         const Tensor& h0,
                         const Tensor& c0,
                         const RnnLayerWeights& w,
                         bool reverse) {
  const int64_t steps = input.size(0), batch = input.size(1);
  const int64_t h = w.w_hh.size(1), width = w.w_hh.size(0);
  const backend::Kernels& k = kernels_for(input);
  Saved s;
  s.mode = mode;
  s.order = Order{steps, reverse};
  s.x = input.detach().contiguous().view({steps * batch, input.size(2)});
  s.w_ih = w.w_ih.detach().contiguous();
  s.w_hh = w.w_hh.detach().contiguous();
  s.gates = empty_like_rows(input, {steps, batch, width});
  affine(k, rows(s.gates, 0, steps), s.x, s.w_ih.t(), input_bias(mode, w));
  s.hs = empty_like_rows(input, {steps + 1, batch, h});
  k.copy(slot(s.hs, s.order.initial()), h0.detach());
  if (mode == RnnMode::Lstm) {
    s.cs = empty_like_rows(input, {steps + 1, batch, h});
    k.copy(slot(s.cs, s.order.initial()), c0.detach());
  }
  if (mode == RnnMode::Gru) s.hidden = empty_like_rows(input, {steps, batch, width});
  const Tensor b_hh = w.b_hh.defined() ? w.b_hh.detach() : Tensor();
  for (int64_t step = 0; step < steps; ++step)
    step_forward(k, s, s.order.time(step), b_hh);

  RnnLayerResult result;
  result.output = slots(s.hs, s.order.first_output(), steps);
  result.h_n = copy_of(slot(s.hs, s.order.last()));
  if (mode == RnnMode::Lstm) result.c_n = copy_of(slot(s.cs, s.order.last()));
  const std::vector<Tensor> inputs{input, h0, c0, w.w_ih, w.w_hh, w.b_ih, w.b_hh};
  if (!autograd::any_requires_grad(inputs)) return result;
  auto wants = [](const Tensor& t) { return t.defined() && t.requires_grad(); };
  const Needs needs{wants(input),
                    wants(h0),
                    wants(c0),
                    wants(w.w_ih),
                    wants(w.w_hh),
                    wants(w.b_ih),
                    wants(w.b_hh)};
  // The caller's tensors, for unpack's check that no in-place op changed
  // them (the kernels read s's own copies or views of them).
  std::vector<SavedVariable> guards{SavedVariable(input),
                                    SavedVariable(w.w_ih),
                                    SavedVariable(w.w_hh),
                                    SavedVariable(result.output, true, 0)};
  std::vector<Tensor*> outputs{&result.output, &result.h_n};
  if (mode == RnnMode::Lstm) outputs.push_back(&result.c_n);
  const char* name = node_name(mode);
  autograd::record_function(
      name,
      inputs,
      outputs,
      [s = std::move(s), needs, guards = std::move(guards), name](const tensor_list& g) {
        for (const SavedVariable& v : guards) v.unpack(name);
        TANDEM_CHECK(!GradMode::is_enabled(),
                     name,
                     ": the fused recurrent layers have no double backward ",
                     "(create_graph=true), as PyTorch's cuDNN RNN");
        return layer_backward(s, needs, g);
      });
  return result;
}

}  // namespace tandem::detail
