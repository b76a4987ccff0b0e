"""A second, independent safetensors implementation for the mw-eval lit tests.

It writes files for mw-eval to read, reads the files mw-eval writes, computes
the FNV-1a checksum `mw-eval --print` reports, and makes broken files:

  safetensors_tool.py dump FILE                 one line per tensor, by name
  safetensors_tool.py checksum FILE             'NAME: checksum=0x...' lines
  safetensors_tool.py write FILE NAME:DTYPE:SHAPE:VALUES...
        e.g. x:F32:2x2:1,2,3,4  (SHAPE '-' for rank 0)
  safetensors_tool.py truncate IN OUT           drop the last 4 data bytes
  safetensors_tool.py bad-header OUT            a length prefix then junk
  safetensors_tool.py huge-header OUT           a header length past the end
"""

import json
import struct
import sys

FORMATS = {"F32": "f", "F16": "e", "I32": "i", "I64": "q", "F64": "d"}
SIZES = {"F32": 4, "F16": 2, "BF16": 2, "I32": 4, "I64": 8, "F64": 8}


def read(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    body = data[8 + n :]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        tensors[name] = (info["dtype"], info["shape"], body[begin:end])
    return tensors


def decode(dtype, raw):
    if dtype == "BF16":
        halves = struct.unpack("<" + "H" * (len(raw) // 2), raw)
        return [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in halves]
    fmt = FORMATS[dtype]
    return list(struct.unpack("<" + fmt * (len(raw) // SIZES[dtype]), raw))


def encode(dtype, values):
    if dtype == "BF16":
        out = b""
        for v in values:
            (bits,) = struct.unpack("<I", struct.pack("<f", v))
            assert bits & 0xFFFF == 0, "value not exact in bf16"
            out += struct.pack("<H", bits >> 16)
        return out
    fmt = FORMATS[dtype]
    if fmt in "iq":
        values = [int(v) for v in values]
    return struct.pack("<" + fmt * len(values), *values)


def fnv1a(raw):
    h = 1469598103934665603
    for b in raw:
        h ^= b
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def write(path, specs):
    header, body = {}, b""
    for spec in specs:
        name, dtype, shape, values = spec.split(":")
        shape = [] if shape == "-" else [int(d) for d in shape.split("x")]
        raw = encode(dtype, [float(v) for v in values.split(",")] if values else [])
        header[name] = {
            "dtype": dtype,
            "shape": shape,
            "data_offsets": [len(body), len(body) + len(raw)],
        }
        body += raw
    text = json.dumps(header).encode()
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + body)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "dump":
        for name, (dtype, shape, raw) in sorted(read(args[0]).items()):
            values = ", ".join("{:.9g}".format(v) for v in decode(dtype, raw))
            print("{} {} {} [{}]".format(name, dtype, shape, values))
    elif cmd == "checksum":
        for name, (dtype, shape, raw) in sorted(read(args[0]).items()):
            print("{}: checksum=0x{:016x}".format(name, fnv1a(raw)))
    elif cmd == "write":
        write(args[0], args[1:])
    elif cmd == "truncate":
        data = open(args[0], "rb").read()
        open(args[1], "wb").write(data[:-4])
    elif cmd == "bad-header":
        junk = b"{this is not json"
        open(args[0], "wb").write(struct.pack("<Q", len(junk)) + junk)
    elif cmd == "huge-header":
        open(args[0], "wb").write(struct.pack("<Q", 1 << 40) + b"{}")
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
