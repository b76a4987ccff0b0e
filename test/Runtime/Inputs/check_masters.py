#!/usr/bin/env python3
"""Checks that every f32 master in a checkpoint equals its parameter.

usage: check_masters.py WEIGHTS.safetensors

A step of --mw-autodiff's master-weights=optimizer keeps `<param>.master`
(f32) beside each bf16/f16 parameter `<param>`; a fresh master is its
parameter widened to f32, and after every step the parameter is the master
rounded to the compute type. Prints how many masters it compared, and each
one whose parameter is not the master rounded (or widened) exactly.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_safetensors import floats, load  # noqa: E402


def rounded(dtype, values):
    """`values` (f32) rounded to `dtype` as the runtime rounds (to nearest
    even), and read back."""
    if dtype == "F16":
        return list(struct.unpack(f"<{len(values)}e",
                                  struct.pack(f"<{len(values)}e", *values)))
    out = []
    for v in values:
        (b,) = struct.unpack("<I", struct.pack("<f", v))
        b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
        out.append(struct.unpack("<f", struct.pack("<I", b << 16))[0])
    return out


def main():
    tensors = load(sys.argv[1])
    compared = bad = 0
    for name, (dtype, shape, data) in sorted(tensors.items()):
        if not name.endswith(".master") or name[:-7] not in tensors:
            continue
        pdtype, pshape, pdata = tensors[name[:-7]]
        compared += 1
        master = floats(dtype, data)
        if dtype != "F32" or pshape != shape or \
                floats(pdtype, pdata) != rounded(pdtype, master):
            print(f"{name}: its parameter is not the master rounded to {pdtype}")
            bad += 1
    print(f"compared {compared} masters, {bad} mismatches")
    sys.exit(1 if bad or not compared else 0)


if __name__ == "__main__":
    main()
