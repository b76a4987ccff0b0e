#!/usr/bin/env python3
"""Writes a safetensors file without the tensors whose names end in SUFFIX.

usage: drop_tensors.py IN.safetensors SUFFIX OUT.safetensors

Prints how many tensors it kept and dropped.
"""
import json
import struct
import sys


def main():
    src, suffix, dst = sys.argv[1:]
    data = open(src, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    meta = header.pop("__metadata__", None)
    kept, out, dropped = {}, bytearray(), 0
    for name, t in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        if name.endswith(suffix):
            dropped += 1
            continue
        begin, end = t["data_offsets"]
        kept[name] = dict(t, data_offsets=[len(out), len(out) + end - begin])
        out += body[begin:end]
    if meta is not None:
        kept["__metadata__"] = meta
    text = json.dumps(kept, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(dst, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + bytes(out))
    print(f"kept {len(kept) - (meta is not None)} tensors, dropped {dropped}")


if __name__ == "__main__":
    main()
