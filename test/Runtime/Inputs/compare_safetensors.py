#!/usr/bin/env python3
"""Compares the tensors two safetensors files share by name.

usage: compare_safetensors.py A B [--rtol R] [--names N1,N2,...] [--ignore N1,...]

Every tensor of A must be in B with the same dtype and shape. f32, f16 and
bf16 values must agree within relative tolerance R (default 0: bit for
bit), where the error of a tensor is max|a-b| / max(max|a|, 1e-30); other
dtypes must be byte-identical. Prints one line per mismatch and exits 1 if there is any.
"""
import json
import struct
import sys


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    body = data[8 + n:]
    return {k: (v["dtype"], v["shape"], body[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in header.items()}


def floats(dtype, raw):
    """The values of an F32, F16 or BF16 tensor's bytes."""
    if dtype == "F32":
        return struct.unpack(f"<{len(raw) // 4}f", raw)
    if dtype == "F16":
        return struct.unpack(f"<{len(raw) // 2}e", raw)
    bits = struct.unpack(f"<{len(raw) // 2}H", raw)
    return [struct.unpack("<f", struct.pack("<I", b << 16))[0] for b in bits]


def main():
    args = sys.argv[1:]
    rtol, names = 0.0, None
    if "--rtol" in args:
        i = args.index("--rtol")
        rtol = float(args[i + 1])
        del args[i:i + 2]
    if "--names" in args:
        i = args.index("--names")
        names = args[i + 1].split(",")
        del args[i:i + 2]
    ignore = set()
    if "--ignore" in args:
        i = args.index("--ignore")
        ignore = set(args[i + 1].split(","))
        del args[i:i + 2]
    a, b = load(args[0]), load(args[1])
    for name in ignore:
        a.pop(name, None)
    bad = 0
    for name in (names or sorted(a)):
        if name not in a or name not in b:
            print(f"{name}: missing in {'A' if name not in a else 'B'}")
            bad += 1
            continue
        (da, sa, xa), (db, sb, xb) = a[name], b[name]
        if da != db or sa != sb:
            print(f"{name}: {da} {sa} vs {db} {sb}")
            bad += 1
        elif xa == xb:
            continue
        elif da in ("F32", "F16", "BF16") and rtol > 0:
            va, vb = floats(da, xa), floats(da, xb)
            scale = max(max((abs(v) for v in va), default=0.0), 1e-30)
            err = max(abs(p - q) for p, q in zip(va, vb)) / scale
            if not err <= rtol:
                print(f"{name}: relative error {err:.3g} > {rtol:g}")
                bad += 1
        else:
            print(f"{name}: bytes differ")
            bad += 1
    print(f"compared {len(names or a)} tensors, {bad} mismatches")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
