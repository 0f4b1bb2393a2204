"""BatchNorm modules trained two steps in PyTorch: the state_dict (names and
values) after each step, the outputs and gradients, and an eval forward.

Names in batch_norm_<dtype>.txt, for a configuration "c" (bn2d: BatchNorm2d(3);
bn1d_cumulative: BatchNorm1d(4, momentum=None)):
  c.weight, c.bias               the affine parameters the module starts from
  c.x1, c.x2, c.x3               inputs of the two training steps and the eval step
  c.grad_out1, c.grad_out2       upstream gradients of the training steps
  c.step<k>.out                  the training output of step k
  c.step<k>.grad.<name>          gradients of input, weight and bias at step k
  c.step<k>.state.<key>          every state_dict entry after step k (so the
                                 keys are PyTorch's)
  c.eval.out                     the eval-mode output on x3 after both steps
"""

import zlib

import torch

from golden import GoldenFile


def randn(name, *shape):
    gen = torch.Generator().manual_seed(zlib.crc32(name.encode()))
    return torch.randn(tuple(shape), dtype=torch.float64, generator=gen)


CONFIGS = {
    "bn2d": (lambda: torch.nn.BatchNorm2d(3), (4, 3, 5, 5)),
    "bn1d_cumulative": (lambda: torch.nn.BatchNorm1d(4, momentum=None), (6, 4)),
}


def write_config(g, name, make, shape, dtype):
    bn = make().to(dtype)
    channels = shape[1]
    with torch.no_grad():
        bn.weight.copy_(randn(name + ".weight", channels))
        bn.bias.copy_(randn(name + ".bias", channels))
    g.add(name + ".weight", bn.weight)
    g.add(name + ".bias", bn.bias)
    bn.train()
    for step in (1, 2):
        x = (randn(f"{name}.x{step}", *shape) * 2 + step).to(dtype).requires_grad_()
        grad_out = randn(f"{name}.grad_out{step}", *shape).to(dtype)
        out = bn(x)
        out.backward(grad_out)
        g.add(f"{name}.x{step}", x)
        g.add(f"{name}.grad_out{step}", grad_out)
        g.add(f"{name}.step{step}.out", out)
        g.add(f"{name}.step{step}.grad.input", x.grad)
        g.add(f"{name}.step{step}.grad.weight", bn.weight.grad)
        g.add(f"{name}.step{step}.grad.bias", bn.bias.grad)
        bn.zero_grad()
        for key, value in bn.state_dict().items():
            g.add(f"{name}.step{step}.state.{key}", value)
    bn.eval()
    x3 = randn(name + ".x3", *shape).to(dtype)
    g.add(name + ".x3", x3)
    g.add(name + ".eval.out", bn(x3))


def write_all(outdir, dtype, dtype_name):
    g = GoldenFile()
    for name, (make, shape) in CONFIGS.items():
        write_config(g, name, make, shape, dtype)
    g.write(outdir, f"batch_norm_{dtype_name}.txt")
