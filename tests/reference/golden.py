"""Writes named tensors in the golden text format that the C++ tests read
with tandem::testing::load_golden (tests/support/tensor_testing.cpp).

Per tensor: one header line "name dtype ndim d0 d1 ..." and one line of
values in row-major order, floats with 17 significant digits so that float64
values round-trip exactly (and float32 values too, via their exact doubles).
"""

import os

import torch

_DTYPES = {torch.float32: "float32", torch.float64: "float64", torch.int64: "int64"}


class GoldenFile:
    """Collects tensors under unique names, then writes them to one file."""

    def __init__(self):
        self._tensors = {}

    def add(self, name, tensor):
        if " " in name or name in self._tensors:
            raise ValueError(f"bad or repeated golden name {name!r}")
        # A copy: parameters go on changing in place after they are added.
        tensor = tensor.detach().clone()
        if tensor.dtype not in _DTYPES:
            raise ValueError(f"{name}: unsupported dtype {tensor.dtype}")
        self._tensors[name] = tensor.cpu().contiguous()

    def write(self, directory, file_name):
        lines = []
        for name, t in self._tensors.items():
            dtype = _DTYPES[t.dtype]
            header = [name, dtype, str(t.dim())] + [str(s) for s in t.shape]
            lines.append(" ".join(header))
            values = t.reshape(-1).tolist()
            if dtype == "int64":
                lines.append(" ".join(str(v) for v in values))
            else:
                lines.append(" ".join(f"{v:.17g}" for v in values))
        path = os.path.join(directory, file_name)
        tmp = path + ".tmp"
        with open(tmp, "w") as out:
            out.write("\n".join(lines) + "\n")
        os.replace(tmp, path)
