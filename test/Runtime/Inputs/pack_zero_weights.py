#!/usr/bin/env python3
"""Packs unsharded weights into the buckets of a ZeRO step of one rank.

usage: pack_zero_weights.py STEP.mlir IN.safetensors OUT.safetensors

STEP.mlir is a step from --mw-zero with ranks=1; each argument named
zero.bucketN.<suffix> carries mw.shard = {members = [...], sizes = ...}: its
elements are the members' tensors (<member> for the parameter piece,
<member>.<suffix> for optimizer state), flattened and concatenated in order.
With one rank a bucket's piece is the whole bucket, so the packed file holds
exactly what the unsharded file does, under the ZeRO step's names. Tensors of
IN that no bucket takes are copied unchanged. A bucket's members share one
float type: F32, or BF16/F16 (the half-precision parameters of a step with
its f32 masters in the optimizer state).
"""
import json
import os
import re
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_safetensors import load  # noqa: E402  (the same directory)


SIZES = {"F32": 4, "BF16": 2, "F16": 2}


def save(path, tensors):
    header, body = {}, b""
    for name in sorted(tensors):
        dtype, shape, data = tensors[name]
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(body), len(body) + len(data)]}
        body += data
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + body)


def main():
    step, src, dst = sys.argv[1:4]
    text = open(step).read()
    tensors = load(src)
    out = dict(tensors)
    pattern = re.compile(r'mw\.name = "(zero\.bucket\d+)\.(\w+)"[^}]*?'
                         r'mw\.shard = \{members = \[([^\]]*)\], ranks = (\d+)')
    for bucket, suffix, members, ranks in pattern.findall(text):
        if int(ranks) != 1:
            sys.exit(f"{bucket}: packed for one rank only, not {ranks}")
        names = re.findall(r'"([^"]*)"', members)
        parts = [n if suffix == "param" else f"{n}.{suffix}" for n in names]
        if any(p not in tensors for p in parts):
            continue  # state the step starts fresh (zeros)
        dtypes = {tensors[p][0] for p in parts}
        if len(dtypes) != 1 or not dtypes <= set(SIZES):
            continue
        dtype = dtypes.pop()
        data = b"".join(tensors[p][2] for p in parts)
        for p in parts:
            out.pop(p, None)
        out[f"{bucket}.{suffix}"] = (dtype, [len(data) // SIZES[dtype]], data)
    save(dst, out)


if __name__ == "__main__":
    main()
