#!/usr/bin/env python3
"""Generate a GPT-2 forward pass (returning the scalar loss) in the mw dialect.

This is a stop-gap until the C++ `mw-models` tool exists; it will then be
replaced by `mw-models gpt2 ...`. It uses only the Python standard library.

The model follows HuggingFace's GPT2LMHeadModel: learned token (`wte`) and
position (`wpe`) embeddings, pre-LayerNorm blocks
    x = x + attn(ln_1(x));  x = x + mlp(ln_2(x))
with causal multi-head attention and a tanh-GELU MLP, a final `ln_f`, logits
tied to `wte`, and mean cross-entropy against the labels. Parameters carry the
HuggingFace names (`h.0.attn.c_attn.weight`, ...) in `mw.name`; Conv1D weights
are stored [in, out] as in HuggingFace, so every projection is `x @ W + b`.

The defaults are the tiny configuration checked in as
examples/gpt2-tiny.mlir:

    python3 examples/gen_gpt2.py -o examples/gpt2-tiny.mlir

GPT-2 small (124,439,808 parameters):

    python3 examples/gen_gpt2.py --layers 12 --hidden 768 --heads 12 \\
        --ffn 3072 --seq 1024 --batch 1 --vocab 50257
"""

import argparse
import sys

ELEMENT_TYPE = "f32"
LAYER_NORM_EPSILON = "1.0e-05"


def tensor(shape, elem=ELEMENT_TYPE):
    """The builtin tensor type of a static shape; [] is a rank-0 tensor."""
    if not shape:
        return "tensor<%s>" % elem
    return "tensor<%sx%s>" % ("x".join(str(d) for d in shape), elem)


def ints(values):
    return "[%s]" % ", ".join(str(v) for v in values)


class Builder:
    """Accumulates the body of @forward, one op per line."""

    def __init__(self):
        self.lines = []

    def op(self, text):
        self.lines.append("    " + text)

    def comment(self, text):
        self.lines.append("    // " + text)

    def blank(self):
        self.lines.append("")

    # Each helper emits one op and returns the SSA name of its (first) result.

    def binary(self, opname, res, lhs, lhs_shape, rhs, rhs_shape, res_shape):
        self.op("%s = mw.%s %s, %s : (%s, %s) -> %s" % (
            res, opname, lhs, rhs, tensor(lhs_shape), tensor(rhs_shape),
            tensor(res_shape)))
        return res

    def matmul(self, res, lhs, lhs_shape, rhs, rhs_shape, res_shape,
               transpose_rhs=False):
        attrs = " {transpose_rhs}" if transpose_rhs else ""
        self.op("%s = mw.matmul %s, %s%s : (%s, %s) -> %s" % (
            res, lhs, rhs, attrs, tensor(lhs_shape), tensor(rhs_shape),
            tensor(res_shape)))
        return res

    def layer_norm(self, res, x, shape, gamma, beta):
        d = shape[-1]
        stats = shape[:-1]
        self.op("%s, %s_mean, %s_rstd = mw.layer_norm %s, %s, %s "
                "{epsilon = %s : f64} : (%s, %s, %s) -> (%s, %s, %s)" % (
                    res, res, res, x, gamma, beta, LAYER_NORM_EPSILON,
                    tensor(shape), tensor([d]), tensor([d]), tensor(shape),
                    tensor(stats, "f32"), tensor(stats, "f32")))
        return res

    def slice(self, res, x, shape, offsets, sizes):
        self.op("%s = mw.slice %s offsets = %s sizes = %s : %s -> %s" % (
            res, x, ints(offsets), ints(sizes), tensor(shape), tensor(sizes)))
        return res

    def reshape(self, res, x, shape, new_shape, elem=ELEMENT_TYPE):
        self.op("%s = mw.reshape %s : %s -> %s" % (
            res, x, tensor(shape, elem), tensor(new_shape, elem)))
        return res

    def transpose(self, res, x, shape, perm):
        new_shape = [shape[p] for p in perm]
        self.op("%s = mw.transpose %s permutation = %s : %s -> %s" % (
            res, x, ints(perm), tensor(shape), tensor(new_shape)))
        return res


def parameters(cfg):
    """(SSA name, HuggingFace name, shape) of every parameter, in order."""
    d, f = cfg.hidden, cfg.ffn
    params = [
        ("wte", "wte", [cfg.vocab, d]),
        ("wpe", "wpe", [cfg.seq, d]),
    ]
    for i in range(cfg.layers):
        for hf, shape in [
            ("ln_1.weight", [d]),
            ("ln_1.bias", [d]),
            ("attn.c_attn.weight", [d, 3 * d]),
            ("attn.c_attn.bias", [3 * d]),
            ("attn.c_proj.weight", [d, d]),
            ("attn.c_proj.bias", [d]),
            ("ln_2.weight", [d]),
            ("ln_2.bias", [d]),
            ("mlp.c_fc.weight", [d, f]),
            ("mlp.c_fc.bias", [f]),
            ("mlp.c_proj.weight", [f, d]),
            ("mlp.c_proj.bias", [d]),
        ]:
            name = "h.%d.%s" % (i, hf)
            params.append(("h%d_%s" % (i, hf.replace(".", "_")), name, shape))
    params.append(("ln_f_weight", "ln_f.weight", [d]))
    params.append(("ln_f_bias", "ln_f.bias", [d]))
    return params


def param_count(cfg):
    total = 0
    for _, _, shape in parameters(cfg):
        n = 1
        for dim in shape:
            n *= dim
        total += n
    return total


def generate(cfg):
    B, S, D, H, F, V = (cfg.batch, cfg.seq, cfg.hidden, cfg.heads, cfg.ffn,
                        cfg.vocab)
    Dh = D // H
    x_shape = [B, S, D]
    heads_shape = [B, H, S, Dh]

    out = []
    out.append("// GPT-2 forward pass returning the mean cross-entropy loss.")
    out.append("// Generated by examples/gen_gpt2.py; do not edit, regenerate:")
    out.append("//   python3 examples/gen_gpt2.py %s" % cfg.flags())
    out.append("// layers=%d hidden=%d heads=%d head_dim=%d ffn=%d seq=%d "
               "batch=%d vocab=%d, %s, tied embeddings" % (
                   cfg.layers, D, H, Dh, F, S, B, V, ELEMENT_TYPE))
    out.append("// parameters: %d" % param_count(cfg))
    out.append("module {")

    args = []
    for ssa, name, shape in parameters(cfg):
        args.append("%%%s: %s {mw.role = #mw.role<param>, mw.name = \"%s\"}"
                    % (ssa, tensor(shape), name))
    args.append("%%tokens: %s {mw.role = #mw.role<input>, mw.name = \"tokens\"}"
                % tensor([B, S], "i32"))
    args.append("%%labels: %s {mw.role = #mw.role<label>, mw.name = \"labels\"}"
                % tensor([B, S], "i32"))
    out.append("  func.func @forward(")
    for i, a in enumerate(args):
        out.append("      " + a + ("," if i + 1 < len(args) else ""))
    out.append("  ) -> (tensor<f32> {mw.role = #mw.role<output>, "
               "mw.name = \"loss\"}) {")

    b = Builder()
    b.comment("Token and learned position embeddings.")
    b.op("%%tok_emb = mw.embedding %%wte, %%tokens : (%s, %s) -> %s" % (
        tensor([V, D]), tensor([B, S], "i32"), tensor(x_shape)))
    x = b.binary("add", "%x_0", "%tok_emb", x_shape, "%wpe", [S, D], x_shape)

    for i in range(cfg.layers):
        p = "%%h%d_" % i
        b.blank()
        b.comment("Block %d: x = x + attn(ln_1(x))" % i)
        ln1 = b.layer_norm(p + "ln_1", x, x_shape, p + "ln_1_weight",
                           p + "ln_1_bias")
        qkv = b.matmul(p + "qkv_mm", ln1, x_shape, p + "attn_c_attn_weight",
                       [D, 3 * D], [B, S, 3 * D])
        qkv = b.binary("add", p + "qkv", qkv, [B, S, 3 * D],
                       p + "attn_c_attn_bias", [3 * D], [B, S, 3 * D])
        heads = []
        for j, which in enumerate("qkv"):
            t = b.slice(p + which, qkv, [B, S, 3 * D], [0, 0, j * D],
                        [B, S, D])
            t = b.reshape(p + which + "_split", t, x_shape, [B, S, H, Dh])
            t = b.transpose(p + which + "_heads", t, [B, S, H, Dh],
                            [0, 2, 1, 3])
            heads.append(t)
        q, k, v = heads
        b.op("%sattn, %sattn_lse = mw.attention %s, %s, %s {causal} "
             ": (%s, %s, %s) -> (%s, %s)" % (
                 p, p, q, k, v, tensor(heads_shape), tensor(heads_shape),
                 tensor(heads_shape), tensor(heads_shape),
                 tensor([B, H, S], "f32")))
        a = b.transpose(p + "attn_merge", p + "attn", heads_shape,
                        [0, 2, 1, 3])
        a = b.reshape(p + "attn_out", a, [B, S, H, Dh], x_shape)
        a = b.matmul(p + "attn_proj_mm", a, x_shape, p + "attn_c_proj_weight",
                     [D, D], x_shape)
        a = b.binary("add", p + "attn_proj", a, x_shape,
                     p + "attn_c_proj_bias", [D], x_shape)
        x = b.binary("add", p + "x_attn", x, x_shape, a, x_shape, x_shape)

        b.comment("Block %d: x = x + mlp(ln_2(x))" % i)
        ln2 = b.layer_norm(p + "ln_2", x, x_shape, p + "ln_2_weight",
                           p + "ln_2_bias")
        h = b.matmul(p + "fc_mm", ln2, x_shape, p + "mlp_c_fc_weight", [D, F],
                     [B, S, F])
        h = b.binary("add", p + "fc", h, [B, S, F], p + "mlp_c_fc_bias", [F],
                     [B, S, F])
        b.op("%sgelu = mw.gelu %s {approximate = #mw.gelu_approximation<tanh>}"
             " : %s" % (p, h, tensor([B, S, F])))
        h = b.matmul(p + "mlp_proj_mm", p + "gelu", [B, S, F],
                     p + "mlp_c_proj_weight", [F, D], x_shape)
        h = b.binary("add", p + "mlp_proj", h, x_shape, p + "mlp_c_proj_bias",
                     [D], x_shape)
        x = b.binary("add", "%%x_%d" % (i + 1), x, x_shape, h, x_shape,
                     x_shape)

    b.blank()
    b.comment("Final LayerNorm, logits tied to wte, mean cross-entropy.")
    xf = b.layer_norm("%ln_f", x, x_shape, "%ln_f_weight", "%ln_f_bias")
    logits = b.matmul("%logits", xf, x_shape, "%wte", [V, D], [B, S, V],
                      transpose_rhs=True)
    logits = b.reshape("%logits_flat", logits, [B, S, V], [B * S, V])
    labels = b.reshape("%labels_flat", "%labels", [B, S], [B * S], "i32")
    b.op("%%loss = mw.cross_entropy %s, %s : (%s, %s) -> tensor<f32>" % (
        logits, labels, tensor([B * S, V]), tensor([B * S], "i32")))
    b.op("return %loss : tensor<f32>")

    out.extend(b.lines)
    out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"


DEFAULTS = dict(layers=2, hidden=64, heads=4, ffn=256, seq=32, batch=2,
                vocab=256)


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description="Generate a GPT-2 forward pass (loss) in the mw dialect. "
        "The defaults give examples/gpt2-tiny.mlir.")
    for key, default in DEFAULTS.items():
        ap.add_argument("--" + key, type=int, default=default,
                        help="default: %d" % default)
    ap.add_argument("-o", "--output", default="-",
                    help="output file (default: stdout)")
    cfg = ap.parse_args(argv)
    for key in DEFAULTS:
        if getattr(cfg, key) <= 0:
            ap.error("--%s must be positive" % key)
    if cfg.hidden % cfg.heads != 0:
        ap.error("--hidden (%d) must be a multiple of --heads (%d)"
                 % (cfg.hidden, cfg.heads))

    def flags():
        return " ".join("--%s %d" % (k, getattr(cfg, k)) for k in DEFAULTS)

    cfg.flags = flags
    return cfg


def main(argv=None):
    cfg = parse_args(sys.argv[1:] if argv is None else argv)
    text = generate(cfg)
    if cfg.output == "-":
        sys.stdout.write(text)
    else:
        with open(cfg.output, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
