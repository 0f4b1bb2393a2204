"""Reference safetensors reader and writer, for tests/io/safetensors_reference_test.cpp.

    /usr/bin/python3 tests/reference/safetensors_check.py FROM_TANDEM.safetensors OUT.safetensors

1. Reads FROM_TANDEM (written by tandem) with the reference reader's checks,
   in the reference order (huggingface/safetensors, safetensors/src/tensor.rs),
   and checks that it holds exactly the RECIPE tensors and metadata.
2. Writes the RECIPE to OUT following the reference writer's rules (dtype
   descending, then name; __metadata__ first; padded to 8 with spaces), for
   tandem to read back.

Exit status: 0 when FROM_TANDEM matched, 1 when not (the reason on stderr),
77 when numpy is missing (the test then skips). Needs only the standard
library and numpy (the `safetensors` package is not on Debian).
"""

import json
import struct
import sys

try:
    import numpy as np
except ImportError:
    sys.exit(77)

MAX_HEADER_SIZE = 100_000_000
# name -> (position in the reference's Dtype enum, numpy dtype)
DTYPES = {
    "BOOL": (0, np.dtype(np.bool_)),
    "U8": (4, np.dtype("<u1")),
    "I64": (20, np.dtype("<i8")),
    "F32": (17, np.dtype("<f4")),
    "F64": (19, np.dtype("<f8")),
}
CHECKSUM_KEY = "tandem.crc32"  # tandem's own; reference readers ignore it

# Mirrored by make_recipe() in tests/io/safetensors_reference_test.cpp.
RECIPE = {
    "weight": ("F32", [3, 4], np.arange(12, dtype="<f4") * np.float32(0.5) - np.float32(1)),
    "bias": ("F64", [5], np.arange(5, dtype="<f8") / 3),
    "steps": ("I64", [2, 2], np.array([-1, 2**40, 7, -(2**62)], dtype="<i8")),
    "mask": ("BOOL", [4], np.array([True, False, False, True])),
    "pixels": ("U8", [2, 3], np.array([0, 1, 127, 128, 254, 255], dtype="<u1")),
    "empty": ("F32", [0, 3], np.zeros(0, dtype="<f4")),
    "scalar": ("F64", [], np.array([2.5], dtype="<f8")),
    "a.z": ("I64", [1], np.array([42], dtype="<i8")),
    "na\u00efve": ("F32", [3], np.array([np.inf, -0.0, np.nan], dtype="<f4")),
}
RECIPE_METADATA = {"framework": "tandem-test", "note": '\u00fc "q"\n'}


class Invalid(Exception):
    pass


def reject_duplicates(pairs):
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise Invalid("InvalidHeaderDeserialization: duplicate key")
    return dict(pairs)


def reject_constant(name):
    raise Invalid(f"InvalidHeaderDeserialization: {name} is not JSON")


def read(data):
    """The reference reader: returns (tensors, metadata) or raises Invalid."""
    if len(data) < 8:
        raise Invalid("HeaderTooSmall")
    (n,) = struct.unpack("<Q", data[:8])
    if n > MAX_HEADER_SIZE:
        raise Invalid("HeaderTooLarge")
    if 8 + n > len(data):
        raise Invalid("InvalidHeaderLength")
    try:
        text = data[8 : 8 + n].decode("utf-8")
    except UnicodeDecodeError:
        raise Invalid("InvalidHeader")
    if not text.startswith("{"):
        raise Invalid("InvalidHeaderStart")
    try:
        header = json.loads(text, object_pairs_hook=reject_duplicates, parse_constant=reject_constant)
    except ValueError as e:
        raise Invalid(f"InvalidHeaderDeserialization: {e}")
    metadata = header.pop("__metadata__", {})
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise Invalid("InvalidHeaderDeserialization: __metadata__ must map strings to strings")
    for name, info in header.items():
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise Invalid(f"InvalidHeaderDeserialization: tensor {name!r}")
        if info["dtype"] not in DTYPES:
            raise Invalid(f"InvalidHeaderDeserialization: dtype {info['dtype']!r}")
        numbers = info["shape"] + info["data_offsets"]
        if len(info["data_offsets"]) != 2 or not all(type(x) is int and x >= 0 for x in numbers):
            raise Invalid(f"InvalidHeaderDeserialization: tensor {name!r}")
    start = 0
    for name, info in sorted(header.items(), key=lambda item: item[1]["data_offsets"]):
        begin, end = info["data_offsets"]
        if begin != start or end < begin:
            raise Invalid(f"InvalidOffset({name})")
        count = 1
        for dim in info["shape"]:
            count *= dim
        nbytes = count * DTYPES[info["dtype"]][1].itemsize
        if nbytes >= 2**64:
            raise Invalid("ValidationOverflow")
        if end - begin != nbytes:
            raise Invalid("TensorInvalidInfo")
        start = end
    if start + 8 + n != len(data):
        raise Invalid("MetadataIncompleteBuffer")
    payload = data[8 + n :]
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        values = np.frombuffer(payload[begin:end], dtype=DTYPES[info["dtype"]][1])
        tensors[name] = (info["dtype"], info["shape"], values)
    return tensors, metadata


def write(tensors, metadata):
    """The reference writer's layout."""
    order = sorted(tensors.items(), key=lambda item: (-DTYPES[item[1][0]][0], item[0]))
    header = {}
    if metadata:
        header["__metadata__"] = dict(sorted(metadata.items()))
    chunks = []
    offset = 0
    for name, (dtype, shape, values) in order:
        data = np.ascontiguousarray(values, dtype=DTYPES[dtype][1]).tobytes()
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        chunks.append(data)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def differences(tensors, metadata):
    found = []
    metadata = {k: v for k, v in metadata.items() if k != CHECKSUM_KEY}
    if metadata != RECIPE_METADATA:
        found.append(f"metadata {metadata!r} != {RECIPE_METADATA!r}")
    if set(tensors) != set(RECIPE):
        found.append(f"tensor names {sorted(tensors)} != {sorted(RECIPE)}")
    for name in set(tensors) & set(RECIPE):
        dtype, shape, values = tensors[name]
        want_dtype, want_shape, want_values = RECIPE[name]
        want_bytes = np.ascontiguousarray(want_values, dtype=DTYPES[want_dtype][1]).tobytes()
        if (dtype, shape) != (want_dtype, want_shape) or values.tobytes() != want_bytes:
            found.append(f"tensor {name!r}: {dtype} {shape} {values!r} != "
                         f"{want_dtype} {want_shape} {want_values!r}")
    return found


def main():
    from_tandem, out = sys.argv[1], sys.argv[2]
    with open(from_tandem, "rb") as f:
        data = f.read()
    try:
        found = differences(*read(data))
    except Invalid as e:
        found = [f"the reference reader rejects it: {e}"]
    with open(out, "wb") as f:
        f.write(write(RECIPE, RECIPE_METADATA))
    for line in found:
        print(f"{from_tandem}: {line}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
