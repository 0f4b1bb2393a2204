"""Transposed convolutions in PyTorch.

Single-op cases (conv_transpose1d / conv_transpose2d with stride and
output_padding, padding, dilation, groups, no bias, unbatched) are added to
ops.py's cases by add_op_cases, so they land in ops_<dtype>.txt under the
names and layout described there.

conv_transpose_<dtype>.txt holds a DCGAN-generator-shaped stack
  ConvTranspose2d(8, 16, 4, 1, 0) -> ReLU -> ConvTranspose2d(16, 8, 4, 2, 1)
  -> ReLU -> ConvTranspose2d(8, 1, 4, 2, 1, bias=False) -> Tanh
on z [3, 8, 1, 1] (output [3, 1, 16, 16]), with names
  gen.z, gen.grad_out            the input and the upstream gradient
  gen.<key>                      every state_dict entry (keys "0.weight", ...)
  gen.out                        the output
  gen.grad.z, gen.grad.<key>     the gradients of the input and parameters
"""

import zlib

import torch
import torch.nn.functional as F

from golden import GoldenFile


def randn(name, *shape, scale=1.0):
    gen = torch.Generator().manual_seed(zlib.crc32(name.encode()))
    return torch.randn(tuple(shape), dtype=torch.float64, generator=gen) * scale


def add_op_cases(case):
    """Adds the single-op cases through ops.py's case(name, fn, inputs, grads)."""

    def convt(name, fn, x_shape, w_shape, groups=1, bias=True, **kwargs):
        inputs = {"input": randn(name + ".x", *x_shape),
                  "weight": randn(name + ".w", *w_shape, scale=0.5)}
        if bias:
            inputs["bias"] = randn(name + ".b", w_shape[1] * groups)
        case(name, lambda **t: fn(**t, groups=groups, **kwargs), inputs, list(inputs))

    t2 = F.conv_transpose2d
    convt("conv_transpose2d", t2, (2, 3, 4, 3), (3, 4, 3, 3))
    convt("conv_transpose2d_stride2_output_padding", t2, (2, 3, 4, 4), (3, 2, 3, 3),
          stride=2, padding=1, output_padding=1)
    convt("conv_transpose2d_padding_nonsquare", t2, (2, 2, 5, 4), (2, 3, 3, 2),
          stride=(2, 1), padding=(1, 0), output_padding=(1, 0))
    convt("conv_transpose2d_dilation", t2, (1, 2, 4, 4), (2, 2, 3, 3), padding=1,
          dilation=(2, 3))
    convt("conv_transpose2d_output_padding_over_stride", t2, (1, 2, 3, 3), (2, 2, 2, 2),
          output_padding=1, dilation=2)
    convt("conv_transpose2d_groups_nobias", t2, (2, 4, 3, 3), (4, 3, 3, 3), groups=2,
          bias=False, stride=2, padding=1)
    convt("conv_transpose2d_dcgan_first", t2, (2, 8, 1, 1), (8, 6, 4, 4))
    convt("conv_transpose2d_unbatched", t2, (3, 3, 3), (3, 2, 2, 2), stride=2)
    t1 = F.conv_transpose1d
    convt("conv_transpose1d", t1, (2, 3, 5), (3, 2, 3), stride=2, padding=1,
          output_padding=1)
    convt("conv_transpose1d_groups_dilation_nobias", t1, (2, 4, 6), (4, 3, 3), groups=2,
          bias=False, padding=2, dilation=2)
    convt("conv_transpose1d_unbatched", t1, (3, 5), (3, 2, 4), stride=3)


def generator():
    return torch.nn.Sequential(
        torch.nn.ConvTranspose2d(8, 16, 4, 1, 0), torch.nn.ReLU(),
        torch.nn.ConvTranspose2d(16, 8, 4, 2, 1), torch.nn.ReLU(),
        torch.nn.ConvTranspose2d(8, 1, 4, 2, 1, bias=False), torch.nn.Tanh())


def write_all(outdir, dtype, dtype_name):
    g = GoldenFile()
    torch.manual_seed(0)
    gen = generator().to(dtype)
    for key, value in gen.state_dict().items():
        g.add(f"gen.{key}", value)
    z = randn("gen.z", 3, 8, 1, 1).to(dtype).requires_grad_()
    out = gen(z)
    grad_out = randn("gen.grad_out", *out.shape).to(dtype)
    out.backward(grad_out)
    g.add("gen.z", z)
    g.add("gen.grad_out", grad_out)
    g.add("gen.out", out)
    g.add("gen.grad.z", z.grad)
    for key, param in gen.named_parameters():
        g.add(f"gen.grad.{key}", param.grad)
    g.write(outdir, f"conv_transpose_{dtype_name}.txt")
