#!/usr/bin/env python3
"""Writes a safetensors file without the tensors whose names end in SUFFIX.

usage: drop_tensors.py IN.safetensors SUFFIX OUT.safetensors

Prints how many tensors it kept and dropped.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_safetensors import load  # noqa: E402  (the same directory)
from pack_zero_weights import save  # noqa: E402


def main():
    src, suffix, dst = sys.argv[1:]
    tensors = load(src)
    kept = {k: v for k, v in tensors.items() if not k.endswith(suffix)}
    save(dst, kept)
    print(f"kept {len(kept)} tensors, dropped {len(tensors) - len(kept)}")


if __name__ == "__main__":
    main()
