"""Tensors between torch and safetensors files, for the Hugging Face parity
checks (opt_hf_check.py, llama_hf_check.py)."""

import json
import os
import struct
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "runtime", "test", "eval_parity"))
from generate import write_safetensors  # noqa: E402,F401


def f32(t):
    """A torch tensor as an F32 safetensors entry."""
    t = t.detach().to(torch.float32).contiguous()
    return ("F32", list(t.shape), struct.pack("<%df" % t.numel(), *t.flatten().tolist()))


def read_f32(path, name):
    """The shape and the values of one F32 tensor of a safetensors file."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        base = 8 + n
        info = header[name]
        start, end = info["data_offsets"]
        f.seek(base + start)
        data = f.read(end - start)
    return info["shape"], list(struct.unpack("<%df" % ((end - start) // 4), data))
