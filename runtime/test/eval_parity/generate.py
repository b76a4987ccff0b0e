#!/usr/bin/env python3
"""Regenerates the evaluator-parity goldens of the CPU kernels.

Each case below is a few mw ops on small tensors, described once: this script
prints them as MLIR functions (cases.mlir, for reading), draws inputs from a
seeded generator, has the reference evaluator (mw-eval) compute the outputs,
and writes every case's inputs and outputs into golden.safetensors
("<case>/arg0", "<case>/result0", ...) plus manifest.json, which replays the
same ops as kernel calls. EvalParityTest.cpp runs the manifest through
mwrt::runCpuKernel and requires the outputs to match byte for byte.

    runtime/test/eval_parity/generate.py --mw-eval build/bin/mw-eval

With --check it writes into a temporary directory instead and fails when any
checked-in file differs from the fresh one (the ctest eval-parity-goldens-current),
so the goldens cannot go stale when the evaluator or a case changes.

Needs only Python 3 and mw-eval; the output is deterministic.
"""

import argparse
import filecmp
import json
import math
import os
import random
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------------------
# Element encodings
# ---------------------------------------------------------------------------

SIZES = {"f32": 4, "f16": 2, "bf16": 2, "i32": 4, "i64": 8, "i8": 1, "f8E4M3FN": 1}
ST_NAMES = {"f32": "F32", "f16": "F16", "bf16": "BF16", "i32": "I32", "i64": "I64",
            "i8": "I8", "f8E4M3FN": "F8_E4M3"}


def bf16_bits(x):
    """The evaluator's floatToBFloatBits on the f32 nearest to x."""
    (u,) = struct.unpack("<I", struct.pack("<f", x))
    if (u & 0x7FFFFFFF) > 0x7F800000:
        return (u >> 16) | 0x40
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFFFFFF
    return u >> 16


def f8e4m3_bits(x):
    """mwrt/formulas.h's floatToF8E4M3Bits on the f32 nearest to x."""
    (u,) = struct.unpack("<I", struct.pack("<f", x))
    sign, a = (u >> 24) & 0x80, u & 0x7FFFFFFF
    if a > 0x7F800000:
        return sign | 0x7F
    if a >= 0x43E00000:
        return sign | 0x7E
    if a >= 0x3C800000:
        return sign | (((a + 0x7FFFF + ((a >> 20) & 1)) - (120 << 23)) >> 20)
    if a <= 0x3A800000:
        return sign
    shift = 141 - (a >> 23)
    mant = (a & 0x7FFFFF) | 0x800000
    q, rem, half = mant >> shift, mant & ((1 << shift) - 1), 1 << (shift - 1)
    if rem > half or (rem == half and q & 1):
        q += 1
    return sign | q


def encode(dtype, values):
    if dtype == "i8":
        return struct.pack("<%db" % len(values), *values)
    if dtype == "f8E4M3FN":
        return bytes(f8e4m3_bits(v) for v in values)
    if dtype == "f32":
        return struct.pack("<%df" % len(values), *values)
    if dtype == "f16":
        # Through f32 first, as the kernels' inputs are f32-derived too.
        return b"".join(struct.pack("<e", struct.unpack("<f", struct.pack("<f", v))[0])
                        for v in values)
    if dtype == "bf16":
        return b"".join(struct.pack("<H", bf16_bits(v)) for v in values)
    if dtype == "i32":
        return struct.pack("<%di" % len(values), *values)
    return struct.pack("<%dq" % len(values), *values)


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def tensor_type(dtype, shape):
    return "tensor<" + "".join("%dx" % d for d in shape) + dtype + ">"


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------


class Case:
    """A function: typed arguments with input generators, ops, results."""

    def __init__(self, name):
        self.name = name
        self.types = {}  # value name -> (dtype, shape)
        self.args = []  # (name, generator)
        self.steps = []  # dicts: op, attrs, ins, outs
        self.results = []

    def arg(self, dtype, shape, gen):
        name = "arg%d" % len(self.args)
        self.types[name] = (dtype, list(shape))
        self.args.append((name, gen))
        return name

    def op(self, op, ins, outs, attrs=None, **extra):
        """Adds op `op` on value names `ins`; `outs` are (dtype, shape)."""
        names = []
        for dtype, shape in outs:
            name = "v%d" % len(self.types)
            self.types[name] = (dtype, list(shape))
            names.append(name)
        step = {"op": op, "attrs": attrs or {}, "ins": ins, "outs": names}
        step.update(extra)
        self.steps.append(step)
        return names[0] if len(names) == 1 else names

    def ret(self, *names):
        self.results = list(names)


# Attribute values, typed as KernelAttrs takes them.
def I(v):
    return {"int": v}


def F(v):
    return {"float": v}


def B():
    return {"bool": True}


def S(v):
    return {"string": v}


def INTS(v):
    return {"ints": v}


def FLOATS(v):
    return {"floats": v}


def U(lo=-2.0, hi=2.0):
    return ("uniform", lo, hi)


def N(sd=1.0):
    return ("normal", sd)


def RI(lo, hi):
    return ("int", lo, hi)


def VALS(*v):
    return ("values", list(v))


CASES = []


def case(name):
    c = Case(name)
    CASES.append(c)
    return c


def build_cases():
    f32, f16, bf16, i32, i64 = "f32", "f16", "bf16", "i32", "i64"

    # constant, splat
    c = case("constant_splat")
    x = c.op("mw.constant", [], [(bf16, [3])], {"value": FLOATS([1.0, -0.5, 3.140625])})
    y = c.op("mw.constant", [], [(i64, [2])], {"value": INTS([-7, 1 << 40])})
    z = c.op("mw.splat", [], [(f16, [2, 2])], {"value": F(0.1)})
    w = c.op("mw.splat", [], [(bf16, [2])], {"value": F(1.0 + 2.0**-8 + 2.0**-30)})
    v = c.op("mw.splat", [], [(i32, [3])], {"value": F(-3.0)})
    c.ret(x, y, z, w, v)

    # binary ops, float types, broadcasting
    for dt in (f32, f16, bf16):
        c = case("binary_" + dt)
        a = c.arg(dt, [2, 3, 4], U())
        b = c.arg(dt, [3, 1], U(0.5, 2.0))
        outs = [c.op("mw." + op, [a, b], [(dt, [2, 3, 4])])
                for op in ("add", "sub", "mul", "div", "maximum")]
        c.ret(*outs)
    c = case("binary_int")
    a = c.arg(i32, [2, 3], RI(-50, 50))
    b = c.arg(i32, [3], VALS(7, -1, 3))
    outs = [c.op("mw." + op, [a, b], [(i32, [2, 3])])
            for op in ("add", "sub", "mul", "div", "maximum")]
    p = c.arg(i64, [4], VALS(-(1 << 63), 9, -9, 1 << 62))
    q = c.arg(i64, [4], VALS(-1, 2, 2, 4))
    outs += [c.op("mw." + op, [p, q], [(i64, [4])]) for op in ("mul", "div", "add")]
    c.ret(*outs)

    # unary ops
    for dt in (f32, f16, bf16):
        c = case("unary_" + dt)
        x = c.arg(dt, [5, 4], U(-4.0, 4.0))
        pos = c.arg(dt, [5, 4], U(0.01, 5.0))
        outs = []
        for op in ("neg", "exp", "tanh", "relu", "sigmoid", "silu"):
            outs.append(c.op("mw." + op, [x], [(dt, [5, 4])]))
        for op in ("log", "sqrt", "rsqrt", "reciprocal"):
            outs.append(c.op("mw." + op, [pos], [(dt, [5, 4])]))
        outs.append(c.op("mw.sqrt", [x], [(dt, [5, 4])]))  # NaNs for x < 0
        outs.append(c.op("mw.gelu", [x], [(dt, [5, 4])]))
        outs.append(c.op("mw.gelu", [x], [(dt, [5, 4])], {"approximate": S("tanh")}))
        c.ret(*outs)
    c = case("neg_int")
    a = c.arg(i32, [3], VALS(-(1 << 31), 5, 0))
    c.ret(c.op("mw.neg", [a], [(i32, [3])]))

    # cast
    c = case("cast")
    x = c.arg(f32, [8], VALS(1 / 3, 70000.0, -1e-8, 2.5, -2.7, 65519.0, 1e-30, -0.0))
    h = c.arg(f16, [4], VALS(0.333, -2.0, 60000.0, 1e-7))
    n = c.arg(i64, [4], VALS((1 << 25) + (1 << 17) + 1, 65520, -(1 << 63), (1 << 32) + 5))
    outs = [c.op("mw.cast", [x], [(t, [8])]) for t in (f16, bf16, i32, i64)]
    outs += [c.op("mw.cast", [h], [(t, [4])]) for t in (f32, bf16, i32)]
    outs += [c.op("mw.cast", [n], [(t, [4])]) for t in (f32, f16, bf16, i32)]
    c.ret(*outs)

    # matmul (the reference path, which must be bit-exact)
    ref = {"reference_matmul": True}
    for dt in (f32, bf16):
        c = case("matmul_" + dt)
        a = c.arg(dt, [2, 3, 5], U())
        b = c.arg(dt, [5, 4], U())
        at = c.arg(dt, [2, 1, 5, 3], U())
        bt = c.arg(dt, [3, 4, 5], U())
        outs = [c.op("mw.matmul", [a, b], [(dt, [2, 3, 4])], **ref),
                c.op("mw.matmul", [at, bt], [(dt, [2, 3, 3, 4])],
                     {"transpose_lhs": B(), "transpose_rhs": B()}, **ref)]
        c.ret(*outs)

    # reductions
    for dt in (f32, bf16):
        c = case("reduce_" + dt)
        x = c.arg(dt, [3, 4, 5], U())
        outs = [
            c.op("mw.reduce_sum", [x], [(dt, [3, 5])], {"axes": INTS([1])}),
            c.op("mw.reduce_sum", [x], [(dt, [])], {"axes": INTS([0, 1, 2])}),
            c.op("mw.reduce_max", [x], [(dt, [3, 1, 1])], {"axes": INTS([1, 2]), "keepdims": B()}),
            c.op("mw.reduce_mean", [x], [(dt, [4])], {"axes": INTS([0, 2])}),
        ]
        c.ret(*outs)
    c = case("reduce_int")
    x = c.arg(i32, [3, 4], RI(-1 << 30, 1 << 30))
    c.ret(c.op("mw.reduce_sum", [x], [(i32, [4])], {"axes": INTS([0])}),
          c.op("mw.reduce_max", [x], [(i32, [3])], {"axes": INTS([1])}))
    c = case("reduce_max_grad")
    x = c.arg(f32, [4, 6], RI(0, 3))  # small integers: many ties
    dm = c.arg(f32, [4], U())
    m = c.op("mw.reduce_max", [x], [(f32, [4])], {"axes": INTS([1])})
    c.ret(c.op("mw.reduce_max_grad", [x, m, dm], [(f32, [4, 6])], {"axes": INTS([1])}))

    # softmax family
    for dt in (f32, f16, bf16):
        c = case("softmax_" + dt)
        x = c.arg(dt, [3, 7], U(-5, 5))
        dy = c.arg(dt, [3, 7], U())
        y = c.op("mw.softmax", [x], [(dt, [3, 7])], {"axis": I(1)})
        ly = c.op("mw.log_softmax", [x], [(dt, [3, 7])], {"axis": I(0)})
        dx = c.op("mw.softmax_grad", [y, dy], [(dt, [3, 7])], {"axis": I(1)})
        ldx = c.op("mw.log_softmax_grad", [ly, dy], [(dt, [3, 7])], {"axis": I(0)})
        c.ret(y, ly, dx, ldx)

    # norms and their gradients
    for dt in (f32, bf16):
        c = case("layer_norm_" + dt)
        x = c.arg(dt, [3, 8], U(-3, 3))
        g = c.arg(dt, [8], U(0.5, 1.5))
        b = c.arg(dt, [8], U())
        dy = c.arg(dt, [3, 8], U())
        y, mean, rstd = c.op("mw.layer_norm", [x, g, b],
                             [(dt, [3, 8]), (f32, [3]), (f32, [3])], {"epsilon": F(1e-3)})
        dx, dg, db = c.op("mw.layer_norm_grad", [x, g, mean, rstd, dy],
                          [(dt, [3, 8]), (dt, [8]), (dt, [8])])
        c.ret(y, mean, rstd, dx, dg, db)
        c = case("rms_norm_" + dt)
        x = c.arg(dt, [2, 3, 8], U(-3, 3))
        g = c.arg(dt, [8], U(0.5, 1.5))
        dy = c.arg(dt, [2, 3, 8], U())
        y, rstd = c.op("mw.rms_norm", [x, g], [(dt, [2, 3, 8]), (f32, [2, 3])])
        dx, dg = c.op("mw.rms_norm_grad", [x, g, rstd, dy], [(dt, [2, 3, 8]), (dt, [8])])
        c.ret(y, rstd, dx, dg)

    # embedding and cross-entropy
    for dt in (f32, bf16):
        c = case("embedding_" + dt)
        table = c.arg(dt, [5, 3], U())
        idx = c.arg(i32, [2, 4], RI(0, 5))
        dy = c.arg(dt, [2, 4, 3], U())
        c.ret(c.op("mw.embedding", [table, idx], [(dt, [2, 4, 3])]),
              c.op("mw.embedding_grad", [idx, dy], [(dt, [5, 3])]))
        c = case("cross_entropy_" + dt)
        logits = c.arg(dt, [2, 3, 6], U(-4, 4))
        labels = c.arg(i64, [2, 3], VALS(0, 5, -100, 2, 2, 1))
        dl = c.arg(f32, [], VALS(0.75))
        other = c.arg(i32, [2, 3], VALS(0, 5, 3, 2, 2, 1))
        c.ret(c.op("mw.cross_entropy", [logits, labels], [(f32, [])]),
              c.op("mw.cross_entropy_grad", [logits, labels, dl], [(dt, [2, 3, 6])]),
              c.op("mw.cross_entropy", [logits, other], [(f32, [])],
                   {"ignore_index": I(2)}),
              c.op("mw.cross_entropy_grad", [logits, other, dl], [(dt, [2, 3, 6])],
                   {"ignore_index": I(2)}))
        # a chunk (--mw-chunk-loss): rows 3 and 4 of a batch of 6 labels, one
        # ignored outside the chunk, so the mean divides by 5
        c = case("cross_entropy_chunk_" + dt)
        logits = c.arg(dt, [2, 6], U(-4, 4))
        labels = c.arg(i32, [6], VALS(0, -100, 3, 5, 2, 1))
        dl = c.arg(f32, [], VALS(0.75))
        c.ret(c.op("mw.cross_entropy", [logits, labels], [(f32, [])],
                   {"label_offset": I(3)}),
              c.op("mw.cross_entropy_grad", [logits, labels, dl], [(dt, [2, 6])],
                   {"label_offset": I(3)}))

    # attention and its gradient (the reference path: the blocked one sums
    # through sgemm in other orders)
    for dt, causal in ((f32, False), (f32, True), (bf16, True)):
        c = case("attention_%s%s" % (dt, "_causal" if causal else ""))
        q = c.arg(dt, [2, 2, 4, 3], U())
        k = c.arg(dt, [2, 2, 5, 3], U())
        v = c.arg(dt, [2, 2, 5, 2], U())
        do = c.arg(dt, [2, 2, 4, 2], U())
        attrs = {"causal": B()} if causal else {"scale": F(0.7)}
        o, lse = c.op("mw.attention", [q, k, v], [(dt, [2, 2, 4, 2]), (f32, [2, 2, 4])], attrs,
                      **ref)
        dq, dk, dv = c.op("mw.attention_grad", [q, k, v, o, lse, do],
                          [(dt, [2, 2, 4, 3]), (dt, [2, 2, 5, 3]), (dt, [2, 2, 5, 2])], attrs,
                          **ref)
        c.ret(o, lse, dq, dk, dv)

    # the paged KV cache: writes (quantized for i8 and f8E4M3FN) into a cache
    # of 5 blocks of 2 slots, then attention of T = 2 new tokens per
    # sequence (sequence 1 shorter than T: its query 0 is padding) through
    # scattered block tables, grouped-query (4 query heads, 2 cache heads)
    i8, f8 = "i8", "f8E4M3FN"
    for dt, scales in ((f32, None), (bf16, None), (i8, [0.02, 0.03]), (f8, [0.5])):
        c = case("paged_attention_" + dt)
        init = RI(-100, 100) if dt == i8 else U(-1, 1)
        kc = c.arg(dt, [5, 2, 2, 3], init)
        vc = c.arg(dt, [5, 2, 2, 3], init)
        new_k = c.arg(f32, [5, 2, 3], U())
        new_v = c.arg(f32, [5, 2, 3], U())
        # Sequence 0 is tokens 0-2 in blocks [4, 1] (slots 8, 9, 2), sequence
        # 1 token 0 in block 0 (slot 0); the fifth token is padding (-1).
        slots = c.arg(i32, [5], VALS(8, 9, 2, 0, -1))
        q = c.arg(f32, [2, 4, 2, 3], U())
        tables = c.arg(i32, [2, 3], VALS(4, 1, -1, 0, -1, -1))
        lens = c.arg(i32, [2], VALS(3, 1))
        wattrs = {"scale": FLOATS(scales)} if scales else {}
        kc1 = c.op("mw.kv_cache_write", [kc, new_k, slots], [(dt, [5, 2, 2, 3])], wattrs)
        vc1 = c.op("mw.kv_cache_write", [vc, new_v, slots], [(dt, [5, 2, 2, 3])], wattrs)
        aattrs = {"k_scale": FLOATS(scales), "v_scale": FLOATS(scales)} if scales else {}
        o = c.op("mw.paged_attention", [q, kc1, vc1, tables, lens], [(f32, [2, 4, 2, 3])],
                 aattrs)
        o2 = c.op("mw.paged_attention", [q, kc1, vc1, tables, lens], [(f32, [2, 4, 2, 3])],
                  dict(aattrs, scale=F(0.9)))
        c.ret(kc1, vc1, o, o2)

    # shape ops
    c = case("shape_ops")
    x = c.arg(bf16, [2, 3, 4], U())
    n = c.arg(i64, [3, 1], RI(-9, 9))
    outs = [
        c.op("mw.reshape", [x], [(bf16, [6, 4])]),
        c.op("mw.transpose", [x], [(bf16, [4, 2, 3])], {"permutation": INTS([2, 0, 1])}),
        c.op("mw.broadcast_to", [n], [(i64, [2, 3, 4])]),
        c.op("mw.slice", [x], [(bf16, [1, 2, 2])],
             {"offsets": INTS([1, 0, 1]), "sizes": INTS([1, 2, 2]), "strides": INTS([1, 2, 2])}),
        c.op("mw.concat", [x, x], [(bf16, [2, 6, 4])], {"axis": I(1)}),
    ]
    c.ret(*outs)

    # activation gradients
    for dt in (f32, bf16):
        c = case("activation_grads_" + dt)
        x = c.arg(dt, [4, 5], U(-4, 4))
        dy = c.arg(dt, [4, 5], U())
        c.ret(c.op("mw.relu_grad", [x, dy], [(dt, [4, 5])]),
              c.op("mw.silu_grad", [x, dy], [(dt, [4, 5])]),
              c.op("mw.gelu_grad", [x, dy], [(dt, [4, 5])]),
              c.op("mw.gelu_grad", [x, dy], [(dt, [4, 5])], {"approximate": S("tanh")}))

    # optimizers, overflow checks, loss scaling
    c = case("adamw")
    p = c.arg(f32, [6], U())
    g = c.arg(bf16, [6], U())
    m = c.arg(f32, [6], U(-0.1, 0.1))
    v = c.arg(f32, [6], U(0, 0.01))
    t = c.arg(i64, [], VALS(3))
    c.ret(*c.op("mw.adamw", [p, g, m, v, t], [(f32, [6])] * 3,
                {"lr": F(3e-4), "beta1": F(0.8), "weight_decay": F(0.1)}))
    c = case("adamw_bf16")
    p = c.arg(bf16, [6], U())
    g = c.arg(bf16, [6], U())
    m = c.arg(bf16, [6], U(-0.1, 0.1))
    v = c.arg(bf16, [6], U(0, 0.01))
    t = c.arg(f32, [], VALS(1))
    c.ret(*c.op("mw.adamw", [p, g, m, v, t], [(bf16, [6])] * 3))
    c = case("sgd")
    p = c.arg(f32, [5], U())
    g = c.arg(f32, [5], U())
    b = c.arg(f32, [5], U())
    c.ret(c.op("mw.sgd", [p, g], [(f32, [5])], {"lr": F(0.1), "weight_decay": F(0.01)}),
          *c.op("mw.sgd", [p, g, b], [(f32, [5])] * 2,
                {"lr": F(0.1), "momentum": F(0.9), "dampening": F(0.25)}),
          *c.op("mw.sgd", [p, g, b], [(f32, [5])] * 2,
                {"lr": F(0.1), "momentum": F(0.9), "nesterov": B()}))
    c = case("found_inf_select")
    a = c.arg(f32, [3], U())
    h = c.arg(f16, [2], VALS(1.0, 65504.0))
    big = c.arg(f32, [2], VALS(1.0, 1e30))
    t = c.arg(i32, [2], VALS(1, 2))
    f = c.arg(i32, [2], VALS(3, 4))
    ok = c.op("mw.found_inf", [a, h], [(f32, [])])
    cast = c.op("mw.cast", [big], [(f16, [2])])  # 1e30 -> inf
    bad = c.op("mw.found_inf", [a, cast], [(f32, [])])
    c.ret(ok, bad, c.op("mw.select", [ok, t, f], [(i32, [2])]),
          c.op("mw.select", [bad, t, f], [(i32, [2])]))
    for name, flag, state in (("loss_scale_grow", 0.0, (65536.0, 9, -1, 2)),
                              ("loss_scale_overflow", 1.0, (65536.0, 4, 1, 1)),
                              ("loss_scale_hysteresis", 1.0, (3e38, 4, 1, 2))):
        c = case(name)
        ov = c.arg(f32, [], VALS(flag))
        s = c.arg(f32, [], VALS(state[0]))
        it = c.arg(i64, [], VALS(state[1]))
        la = c.arg(i64, [], VALS(state[2]))
        hy = c.arg(i64, [], VALS(state[3]))
        c.ret(*c.op("mw.loss_scale_update", [ov, s, it, la, hy],
                    [(f32, [])] + [(i64, [])] * 3, {"window": I(10)}))


# ---------------------------------------------------------------------------
# MLIR printing, one format per op family (MWOps.td's assembly formats)
# ---------------------------------------------------------------------------


def attr_text(name, value):
    kind, v = next(iter(value.items()))
    if kind == "bool":
        return name
    if kind == "int":
        return "%s = %d : i64" % (name, v)
    if kind == "float":
        return "%s = %s : f64" % (name, repr(float(v)))
    if kind == "string":
        return "%s = #mw.gelu_approximation<%s>" % (name, v)
    if kind == "floats":
        return "%s = array<f32: %s>" % (name, ", ".join(repr(float(x)) for x in v))
    raise ValueError(name)


def print_op(c, step):
    op, attrs, ins, outs = step["op"], dict(step["attrs"]), step["ins"], step["outs"]
    t = lambda n: tensor_type(*c.types[n])
    res = ", ".join("%" + o for o in outs)
    operands = ", ".join("%" + i for i in ins)
    mnemonic = op[len("mw."):]
    inline = ""  # attributes the format spells outside the dictionary

    def take(name):
        v = attrs.pop(name)
        return next(iter(v.values()))

    if mnemonic == "constant":
        vals = take("value")
        dtype = c.types[outs[0]][0]
        lit = ", ".join(repr(float(x)) if dtype in ("f32", "f16", "bf16") else str(x)
                        for x in vals)
        return "%%%s = mw.constant dense<[%s]> : %s" % (outs[0], lit, t(outs[0]))
    if mnemonic == "splat":
        return "%%%s = mw.splat %s : %s" % (outs[0], repr(take("value")), t(outs[0]))
    if mnemonic in ("reduce_sum", "reduce_max", "reduce_mean", "reduce_max_grad"):
        inline = " axes = [%s]" % ", ".join(map(str, take("axes")))
    elif mnemonic in ("softmax", "log_softmax", "softmax_grad", "log_softmax_grad", "concat"):
        inline = " axis = %d" % take("axis")
    elif mnemonic == "transpose":
        inline = " permutation = [%s]" % ", ".join(map(str, take("permutation")))
    elif mnemonic == "slice":
        inline = "".join(" %s = [%s]" % (k, ", ".join(map(str, take(k))))
                         for k in ("offsets", "sizes", "strides") if k in attrs)
    dictionary = ""
    if attrs:
        dictionary = " {" + ", ".join(attr_text(k, v) for k, v in attrs.items()) + "}"
    head = "%s = %s %s%s%s" % (res, op, operands, inline, dictionary)
    if mnemonic in ("neg", "exp", "log", "tanh", "sqrt", "rsqrt", "reciprocal", "relu",
                    "sigmoid", "silu", "gelu", "softmax", "log_softmax", "relu_grad",
                    "silu_grad", "gelu_grad", "softmax_grad", "log_softmax_grad"):
        return "%s : %s" % (head, t(ins[0]))
    if mnemonic == "cast":
        return "%s : %s to %s" % (head, t(ins[0]), t(outs[0]))
    if mnemonic in ("reduce_sum", "reduce_max", "reduce_mean", "reshape", "transpose",
                    "broadcast_to", "slice"):
        return "%s : %s -> %s" % (head, t(ins[0]), t(outs[0]))
    results = ", ".join(t(o) for o in outs)
    if len(outs) > 1:
        results = "(" + results + ")"
    return "%s : (%s) -> %s" % (head, ", ".join(t(i) for i in ins), results)


def print_case(c):
    args = ", ".join("%%%s: %s" % (n, tensor_type(*c.types[n])) for n, _ in c.args)
    rets = ", ".join(tensor_type(*c.types[r]) for r in c.results)
    lines = ["func.func @%s(%s) -> (%s) {" % (c.name, args, rets)]
    lines += ["  " + print_op(c, s) for s in c.steps]
    lines.append("  return %s : %s" % (", ".join("%" + r for r in c.results), rets))
    lines.append("}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Inputs, mw-eval, outputs
# ---------------------------------------------------------------------------


def draw(rng, dtype, shape, gen):
    n = numel(shape)
    kind = gen[0]
    if kind == "values":
        assert len(gen[1]) == n, gen
        return list(gen[1])
    if kind == "int":
        return [rng.randrange(gen[1], gen[2]) if dtype in ("i32", "i64", "i8")
                else float(rng.randrange(gen[1], gen[2])) for _ in range(n)]
    if kind == "uniform":
        return [rng.uniform(gen[1], gen[2]) for _ in range(n)]
    return [rng.gauss(0.0, gen[1]) for _ in range(n)]


def read_safetensors(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        out[name] = (info["dtype"], info["shape"], body[begin:end])
    return out


def write_safetensors(path, tensors):
    """Deterministic: tensors sorted by name, no gaps, header padded to 8."""
    header, chunks, offset = {}, [], 0
    for name in sorted(tensors):
        dtype, shape, data = tensors[name]
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    text += b" " * (-(8 + len(text)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))


OUTPUTS = ("cases.mlir", "golden.safetensors", "manifest.json")


def check(mw_eval):
    """Regenerates into a temporary directory and compares with HERE."""
    with tempfile.TemporaryDirectory() as tmp:
        generate(mw_eval, tmp)
        stale = [f for f in OUTPUTS
                 if not filecmp.cmp(os.path.join(tmp, f), os.path.join(HERE, f),
                                    shallow=False)]
    if stale:
        sys.exit("stale eval-parity goldens in %s: a fresh run differs in %s; "
                 "regenerate them with\n    %s --mw-eval %s"
                 % (HERE, ", ".join(stale), os.path.relpath(__file__), mw_eval))
    print("eval-parity goldens are current (%s)" % ", ".join(OUTPUTS))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mw-eval", required=True, help="path to mw-eval")
    parser.add_argument("--out-dir", default=HERE)
    parser.add_argument("--check", action="store_true",
                        help="compare a fresh run with the checked-in files "
                             "instead of writing them")
    args = parser.parse_args()
    if args.check:
        check(args.mw_eval)
    else:
        generate(args.mw_eval, args.out_dir)


def generate(mw_eval, out_dir):
    CASES.clear()
    build_cases()
    mlir = "// Generated by generate.py: the evaluator-parity cases.\n\n"
    mlir += "\n\n".join(print_case(c) for c in CASES) + "\n"
    mlir_path = os.path.join(out_dir, "cases.mlir")
    with open(mlir_path, "w") as f:
        f.write(mlir)

    rng = random.Random(20240607)
    golden, manifest = {}, {"cases": []}
    with tempfile.TemporaryDirectory() as tmp:
        for c in CASES:
            inputs = {}
            for name, gen in c.args:
                dtype, shape = c.types[name]
                inputs[name] = (ST_NAMES[dtype], shape, encode(dtype, draw(rng, dtype, shape, gen)))
            in_path, out_path = os.path.join(tmp, "in.st"), os.path.join(tmp, "out.st")
            write_safetensors(in_path, inputs)
            run = subprocess.run([mw_eval, mlir_path, "--entry", c.name,
                                  "--inputs", in_path, "--outputs", out_path],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit("mw-eval failed on %s:\n%s" % (c.name, run.stderr))
            outputs = read_safetensors(out_path)
            for name, t in inputs.items():
                golden["%s/%s" % (c.name, name)] = t
            for name, t in outputs.items():
                golden["%s/%s" % (c.name, name)] = t
            manifest["cases"].append({
                "name": c.name,
                "values": {n: {"dtype": ST_NAMES[d], "shape": s}
                           for n, (d, s) in sorted(c.types.items())},
                "steps": c.steps,
                "results": {"result%d" % i: r for i, r in enumerate(c.results)},
            })
    write_safetensors(os.path.join(out_dir, "golden.safetensors"), golden)
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    print("%d cases, %d tensors" % (len(CASES), len(golden)))


if __name__ == "__main__":
    main()
