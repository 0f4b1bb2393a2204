"""Recurrent layers and cells in PyTorch: outputs, final states and every
gradient for fixed parameters, inputs and upstream gradients.

Names in rnn_<dtype>.txt, for a case "c" of CASES:
  c.param.<name>      every parameter under PyTorch's name (weight_ih_l0, ...)
  c.input, c.h0, c.c0 the input and, where the case gives them, the states
                      (a cell's h and c are c.h0 and c.c0)
  c.gout.<k>          the upstream gradient of the module's k-th result
                      (output, h_n, c_n; a cell's h', c')
  c.out.<k>           the k-th result
  c.grad.<x>          the gradient of input, h0, c0 and param.<name>
"""

import zlib

import torch

from golden import GoldenFile


def randn(name, *shape):
    gen = torch.Generator().manual_seed(zlib.crc32(name.encode()))
    return torch.randn(tuple(shape), dtype=torch.float64, generator=gen)


nn = torch.nn
# name: (module, input shape, state shape or None, whether the state is (h, c))
CASES = {
    "lstm": (lambda: nn.LSTM(3, 4), (5, 2, 3), (1, 2, 4), True),
    "lstm_zero_state": (lambda: nn.LSTM(3, 4), (5, 2, 3), None, True),
    "lstm_two_layers_bidirectional_batch_first": (
        lambda: nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True),
        (2, 5, 3), (4, 2, 4), True),
    "lstm_no_bias": (lambda: nn.LSTM(3, 4, bias=False), (4, 3, 3), (1, 3, 4), True),
    "lstm_unbatched": (lambda: nn.LSTM(3, 4, num_layers=2), (5, 3), (2, 4), True),
    "gru": (lambda: nn.GRU(3, 4), (5, 2, 3), (1, 2, 4), False),
    "gru_two_layers_bidirectional": (
        lambda: nn.GRU(3, 4, num_layers=2, bidirectional=True), (5, 2, 3), (4, 2, 4), False),
    "gru_batch_first_no_bias": (
        lambda: nn.GRU(3, 4, batch_first=True, bias=False), (2, 5, 3), None, False),
    "rnn_tanh_two_layers": (lambda: nn.RNN(3, 4, num_layers=2), (5, 2, 3), (2, 2, 4), False),
    "rnn_relu_bidirectional": (
        lambda: nn.RNN(3, 4, nonlinearity="relu", bidirectional=True), (5, 2, 3), None, False),
    "lstm_cell": (lambda: nn.LSTMCell(3, 4), (2, 3), (2, 4), True),
    "lstm_cell_zero_state": (lambda: nn.LSTMCell(3, 4), (2, 3), None, True),
    "gru_cell": (lambda: nn.GRUCell(3, 4), (2, 3), (2, 4), False),
    "rnn_cell_tanh": (lambda: nn.RNNCell(3, 4), (2, 3), (2, 4), False),
    "rnn_cell_relu_no_bias": (
        lambda: nn.RNNCell(3, 4, bias=False, nonlinearity="relu"), (2, 3), (2, 4), False),
    "gru_cell_unbatched": (lambda: nn.GRUCell(3, 4), (3,), (4,), False),
}


def results(module, x, states, is_cell):
    if is_cell:
        out = module(x, states if len(states) != 1 else states[0]) if states else module(x)
        return list(out) if isinstance(out, tuple) else [out]
    hx = None
    if states:
        hx = tuple(states) if len(states) == 2 else states[0]
    out, h = module(x, hx)
    return [out] + (list(h) if isinstance(h, tuple) else [h])


def write_case(g, name, make, input_shape, state_shape, two_states, dtype):
    torch.manual_seed(0)
    module = make().to(dtype)
    with torch.no_grad():
        for pname, p in module.named_parameters():
            p.copy_(randn(f"{name}.param.{pname}", *p.shape) * 0.5)
            g.add(f"{name}.param.{pname}", p)
    x = randn(name + ".input", *input_shape).to(dtype).requires_grad_()
    g.add(name + ".input", x)
    states = []
    if state_shape is not None:
        for s in ("h0", "c0") if two_states else ("h0",):
            t = randn(f"{name}.{s}", *state_shape).to(dtype).requires_grad_()
            g.add(f"{name}.{s}", t)
            states.append(t)
    outs = results(module, x, states, isinstance(module, nn.RNNCellBase))
    loss = 0
    for k, out in enumerate(outs):
        gout = randn(f"{name}.gout.{k}", *out.shape).to(dtype)
        g.add(f"{name}.gout.{k}", gout)
        g.add(f"{name}.out.{k}", out)
        loss = loss + (out * gout).sum()
    loss.backward()
    g.add(name + ".grad.input", x.grad)
    for s, t in zip(("h0", "c0"), states):
        g.add(f"{name}.grad.{s}", t.grad)
    for pname, p in module.named_parameters():
        g.add(f"{name}.grad.param.{pname}", p.grad)


def write_all(outdir, dtype, dtype_name):
    g = GoldenFile()
    for name, (make, input_shape, state_shape, two_states) in CASES.items():
        write_case(g, name, make, input_shape, state_shape, two_states, dtype)
    g.write(outdir, f"rnn_{dtype_name}.txt")
