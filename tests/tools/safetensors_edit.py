"""Reads and rewrites tandem checkpoints (safetensors with tandem's CRC-32
over the header's contents and the data; src/io/checksum.h), so that tests
can make files tandem would not write: a changed or missing metadata entry
in an otherwise valid checkpoint."""
import json
import struct
import zlib

CHECKSUM_KEY = "tandem.crc32"


def read(path):
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    return header, data


def checksum(header, data):
    fields = []
    tensors = {k: v for k, v in header.items() if k != "__metadata__"}
    for name in sorted(tensors, key=lambda n: n.encode()):
        entry = tensors[name]
        fields += [name, entry["dtype"], *(str(d) for d in entry["shape"]), ""]
    metadata = header.get("__metadata__", {})
    for key in sorted(metadata, key=lambda k: k.encode()):
        if key != CHECKSUM_KEY:
            fields += [key, metadata[key]]
    crc = 0
    for field in fields:
        crc = zlib.crc32(field.encode() + b"\0", crc)
    for entry in sorted(tensors.values(), key=lambda e: e["data_offsets"][0]):
        begin, end = entry["data_offsets"]
        if end > begin:
            crc = zlib.crc32(data[begin:end], crc)
    return f"{crc:08x}"


def write(path, header, data):
    header["__metadata__"][CHECKSUM_KEY] = checksum(header, data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def with_metadata(source, target, changes):
    """Copies checkpoint `source` to `target` with metadata entries changed
    (a value of None removes the entry), checksummed as tandem would."""
    header, data = read(source)
    metadata = header["__metadata__"]
    for key, value in changes.items():
        if value is None:
            metadata.pop(key, None)
        else:
            metadata[key] = value
    write(target, header, data)
