"""torch.nn.utils.clip_grad_norm_ on three gradients for several norm types
and max norms: the returned total norm and every gradient afterwards.

Per dtype, clip_grad_<dtype>.txt holds "grad.<i>" (the gradients before
clipping) and per case "<case>.max_norm", "<case>.norm_type" (or, for the
infinity norm, which the golden format cannot write, "<case>.inf_norm"),
"<case>.total_norm" and "<case>.grad.<i>".
"""

import math

import torch

from golden import GoldenFile

SHAPES = [(3, 4), (5,), (2, 2)]
CASES = {
    "l2_clipped": (0.5, 2.0),
    "l2_unclipped": (100.0, 2.0),
    "l1": (1.0, 1.0),
    "inf": (0.3, math.inf),
    "p3_5": (0.7, 3.5),
}


def write_all(outdir, dtype, dtype_name):
    gen = torch.Generator().manual_seed(99)
    grads = [torch.randn(s, dtype=torch.float64, generator=gen).to(dtype) for s in SHAPES]
    g = GoldenFile()
    for i, grad in enumerate(grads):
        g.add(f"grad.{i}", grad)
    for name, (max_norm, norm_type) in CASES.items():
        params = [torch.zeros_like(grad, requires_grad=True) for grad in grads]
        for p, grad in zip(params, grads):
            p.grad = grad.clone()
        total = torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type)
        g.add(f"{name}.max_norm", torch.tensor(max_norm, dtype=torch.float64))
        if math.isinf(norm_type):
            g.add(f"{name}.inf_norm", torch.tensor(1.0, dtype=torch.float64))
        else:
            g.add(f"{name}.norm_type", torch.tensor(norm_type, dtype=torch.float64))
        g.add(f"{name}.total_norm", total.to(torch.float64))
        for i, p in enumerate(params):
            g.add(f"{name}.grad.{i}", p.grad)
    g.write(outdir, f"clip_grad_{dtype_name}.txt")
