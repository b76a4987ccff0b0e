"""GPT-2 small's training step in plain jax: XLA's side of bench/peers and
bench/fusion.

The model is `mw-models gpt --preset gpt2-small --attention=unfused --batch 1
--seq 1024 --train` written in jax (lib/Models/Models.cpp, buildGpt):

  - wte [V, D] and wpe [S, D] (learned positions, one per position of the
    step), 12 blocks of pre-norm LayerNorm (eps 1e-5, weight and bias) ->
    Conv1D c_attn [D, 3D] + bias -> q, k, v -> unfused causal attention
    (q k^T, times 1/sqrt(Dh), plus an additive 0/-inf [S, S] mask, softmax,
    times v) -> c_proj [D, D] + bias -> residual; LayerNorm -> c_fc [D, 4D]
    + bias -> tanh GELU -> c_proj [4D, D] + bias -> residual; ln_f; logits =
    x wte^T (the tied lm_head); mean cross-entropy over the tokens whose
    label is not -100;
  - AdamW as `--mw-autodiff`'s default (lr 1e-3, betas 0.9 / 0.999, eps
    1e-8, weight decay 0.01 on every parameter, bias-corrected): optax.adamw
    when optax imports, else the same update written here;
  - the whole step (loss, gradients, update) is one jax.jit with the
    parameters and optimizer state donated, so XLA may update them in place
    (memory_analysis's alias bytes).

Where it differs from Memwall's step: jax's softmax and log-softmax are its
own (max-subtracted, as mw.softmax and mw.cross_entropy are); LayerNorm is
written out (mean, variance, rsqrt) and differentiated by jax, where Memwall's
mw.layer_norm has a hand-written gradient that saves mean and rstd; the
embedding's gradient is XLA's scatter-add; the parameters are held as a
pytree of arrays (Memwall binds them by name); the values are random (the
step's memory and cost do not depend on them).

Forms (issue 19, section 3: "the plain jax form and one written to save
less"):
  plain          what jax.grad saves (XLA then fuses and schedules);
  remat-dots     each block under jax.checkpoint with
                 jax.checkpoint_policies.dots_with_no_batch_dims_saveable
                 (keep the weight matmuls' outputs, recompute the rest);
  remat-nothing  each block under jax.checkpoint with nothing_saveable
                 (keep only the blocks' inputs).

For each form: compiled.memory_analysis() (temp, argument, output, alias,
generated code bytes), compiled.cost_analysis() (flops, bytes accessed),
the optimized HLO's kernels (fusion instructions of the entry computation,
and what runs outside fusions: dots, custom-calls, scatters, copies, ...),
and the CPU step time (median of --runs steps after one warm-up step).
One JSON object on stdout (or --json FILE), a summary on stderr.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import sys
import time

#: Issue 19's "written to save less" forms: (the jax.checkpoint policy of
#: each block, whether the blocks are one lax.scan over stacked parameters).
FORMS = {
    "plain": (None, False),
    "remat-dots": ("dots_with_no_batch_dims_saveable", False),
    "remat-nothing": ("nothing_saveable", False),
    "scan-remat-dots": ("dots_with_no_batch_dims_saveable", True),
    "scan-remat-nothing": ("nothing_saveable", True),
}

#: --mw-autodiff's AdamW defaults (include/memwall/Dialect/MW/Transforms/Passes.td).
LR, BETA1, BETA2, EPS, WEIGHT_DECAY = 1e-3, 0.9, 0.999, 1e-8, 0.01
LN_EPS = 1e-5  # kGptEpsilon in lib/Models/Models.cpp

#: HLO instructions that are no kernel: they move no data at run time (views,
#: tuples, parameters, scheduling barriers).
FREE_OPS = {"parameter", "constant", "get-tuple-element", "tuple", "bitcast",
            "opt-barrier", "after-all", "partition-id", "replica-id",
            "add-dependency"}


def config(layers=12, seq=1024, batch=1, d=768, heads=12, vocab=50257):
    return {"layers": layers, "seq": seq, "batch": batch, "d": d,
            "heads": heads, "ffn": 4 * d, "vocab": vocab}


def param_shapes(c):
    """mw-models' parameters (declareGptParams), by their names."""
    d, f = c["d"], c["ffn"]
    shapes = {"wte": (c["vocab"], d), "wpe": (c["seq"], d)}
    for i in range(c["layers"]):
        h = f"h.{i}."
        shapes.update({
            h + "ln_1.weight": (d,), h + "ln_1.bias": (d,),
            h + "attn.c_attn.weight": (d, 3 * d), h + "attn.c_attn.bias": (3 * d,),
            h + "attn.c_proj.weight": (d, d), h + "attn.c_proj.bias": (d,),
            h + "ln_2.weight": (d,), h + "ln_2.bias": (d,),
            h + "mlp.c_fc.weight": (d, f), h + "mlp.c_fc.bias": (f,),
            h + "mlp.c_proj.weight": (f, d), h + "mlp.c_proj.bias": (d,)})
    shapes["ln_f.weight"] = (d,)
    shapes["ln_f.bias"] = (d,)
    return shapes


def init_params(c, seed=0):
    import jax
    import jax.numpy as jnp
    keys = iter(jax.random.split(jax.random.PRNGKey(seed), 4 * c["layers"] + 4))
    out = {}
    for name, shape in param_shapes(c).items():
        if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or \
                name == "ln_f.weight":
            out[name] = jnp.ones(shape, jnp.float32)
        elif len(shape) == 1:
            out[name] = jnp.zeros(shape, jnp.float32)
        else:
            out[name] = 0.02 * jax.random.normal(next(keys), shape, jnp.float32)
    return out


def stack_layers(c, params):
    """The scan forms' parameters: the blocks' as one [L, ...] array each
    under "h" (the same bytes)."""
    import jax.numpy as jnp
    out = {k: v for k, v in params.items() if not k.startswith("h.")}
    names = [k[len("h.0."):] for k in params if k.startswith("h.0.")]
    out["h"] = {n: jnp.stack([params[f"h.{i}.{n}"] for i in range(c["layers"])])
                for n in names}
    return out


def layer_norm(x, g, b):
    import jax
    mean = x.mean(-1, keepdims=True)
    xc = x - mean
    var = (xc * xc).mean(-1, keepdims=True)
    return xc * jax.lax.rsqrt(var + LN_EPS) * g + b


def causal_mask(s):
    """The additive [S, S] mask, 0 where key j <= query i, -inf above: iota
    and compare in the graph, which XLA fuses into the scores' add (Memwall
    holds it as one [S, S] constant)."""
    import jax.numpy as jnp
    row = jnp.arange(s)[:, None]
    col = jnp.arange(s)[None, :]
    return jnp.where(col <= row, jnp.float32(0), jnp.float32(-jnp.inf))


def block(c, x, p):
    """One GPT-2 block; `p` the block's parameters without the h.i. prefix."""
    import jax
    import jax.numpy as jnp
    b, s, d, nh = c["batch"], c["seq"], c["d"], c["heads"]
    dh = d // nh
    mask = causal_mask(s)

    def heads(t):  # [B, S, D] -> [B, H, S, Dh]
        return t.reshape(b, s, nh, dh).transpose(0, 2, 1, 3)

    h = layer_norm(x, p["ln_1.weight"], p["ln_1.bias"])
    qkv = h @ p["attn.c_attn.weight"] + p["attn.c_attn.bias"]
    q, k, v = (heads(qkv[..., j * d:(j + 1) * d]) for j in range(3))
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) * jnp.float32(1.0 / math.sqrt(dh))
    probs = jax.nn.softmax(scores + mask, axis=-1)
    a = jnp.einsum("bhqk,bhkd->bhqd", probs, v)
    a = a.transpose(0, 2, 1, 3).reshape(b, s, d)
    x = x + (a @ p["attn.c_proj.weight"] + p["attn.c_proj.bias"])
    h = layer_norm(x, p["ln_2.weight"], p["ln_2.bias"])
    m = jax.nn.gelu(h @ p["mlp.c_fc.weight"] + p["mlp.c_fc.bias"], approximate=True)
    return x + (m @ p["mlp.c_proj.weight"] + p["mlp.c_proj.bias"])


def loss_fn(c, form, params, tokens, labels):
    import jax
    import jax.numpy as jnp
    policy, scan = FORMS[form]
    fn = lambda x, p: block(c, x, p)  # noqa: E731
    if policy is not None:
        fn = jax.checkpoint(fn, policy=getattr(jax.checkpoint_policies, policy))
    x = jnp.take(params["wte"], tokens, axis=0) + params["wpe"]
    if scan:
        x, _ = jax.lax.scan(lambda x, p: (fn(x, p), None), x, params["h"])
    else:
        for i in range(c["layers"]):
            pre = f"h.{i}."
            x = fn(x, {k[len(pre):]: v for k, v in params.items() if k.startswith(pre)})
    x = layer_norm(x, params["ln_f.weight"], params["ln_f.bias"])
    logits = (x @ params["wte"].T).reshape(-1, c["vocab"])
    labels = labels.reshape(-1)
    valid = labels != -100
    logp = jax.nn.log_softmax(logits, axis=-1)
    picked = jnp.take_along_axis(logp, jnp.where(valid, labels, 0)[:, None], axis=-1)[:, 0]
    return -jnp.sum(jnp.where(valid, picked, 0.0)) / jnp.maximum(jnp.sum(valid), 1)


def optimizer():
    """(init, update, name): optax.adamw when it imports, else the same
    update written out (torch.optim.AdamW's, as mw.adamw)."""
    import jax
    import jax.numpy as jnp
    try:
        import optax
        opt = optax.adamw(LR, b1=BETA1, b2=BETA2, eps=EPS, weight_decay=WEIGHT_DECAY)

        def update(grads, state, params):
            updates, state = opt.update(grads, state, params)
            return optax.apply_updates(params, updates), state
        return opt.init, update, f"optax {optax.__version__} adamw"
    except ImportError:
        pass

    def init(params):
        zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
        return (jnp.zeros((), jnp.int32), zeros,
                jax.tree_util.tree_map(jnp.zeros_like, params))

    def update(grads, state, params):
        t, m, v = state
        t = t + 1
        m = jax.tree_util.tree_map(lambda m, g: BETA1 * m + (1 - BETA1) * g, m, grads)
        v = jax.tree_util.tree_map(lambda v, g: BETA2 * v + (1 - BETA2) * g * g, v, grads)
        c1 = 1 - BETA1 ** t.astype(jnp.float32)
        c2 = 1 - BETA2 ** t.astype(jnp.float32)
        params = jax.tree_util.tree_map(
            lambda p, m, v: p * (1 - LR * WEIGHT_DECAY)
            - LR * (m / c1) / (jnp.sqrt(v / c2) + EPS), params, m, v)
        return params, (t, m, v)
    return init, update, "AdamW written in jax (optax not installed)"


# ------------------------------------------------------------ the HLO's kernels

def _opcode(line):
    """The opcode of one HLO instruction line, or None."""
    line = line.strip()
    if line.startswith("ROOT "):
        line = line[5:]
    if " = " not in line:
        return None
    rhs = line.split(" = ", 1)[1]
    if rhs.startswith("("):  # a tuple type: skip to its closing parenthesis
        depth = 0
        for i, ch in enumerate(rhs):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                rhs = rhs[i + 1:]
                break
    else:
        rhs = rhs.split(" ", 1)[1] if " " in rhs else ""
    m = re.match(r"\s*([a-z][\w-]*)\(", rhs)
    return m.group(1) if m else None


def computations(hlo):
    """{name: [instruction lines]} and the entry computation's name."""
    comps, entry, name, body = {}, None, None, None
    for line in hlo.splitlines():
        m = re.match(r"^(ENTRY )?%?([\w.\-]+)\s.*\{\s*$", line)
        if m and not line.startswith(" "):
            name, body = m.group(2), []
            if m.group(1):
                entry = name
            continue
        if line.startswith("}") and name is not None:
            comps[name] = body
            name = None
            continue
        if name is not None:
            body.append(line)
    return comps, entry


def hlo_kernels(hlo):
    """The kernels one execution of the optimized HLO runs: each fusion
    instruction of the entry computation (and of the computations it calls
    through call / while / conditional) is one kernel; so is every other
    instruction that computes or moves data (dot, custom-call, scatter, copy,
    ...); parameters, tuples, bitcasts and barriers are none. Also how many of
    the fusions hold a dot (a matmul with its prologue or epilogue), how many
    wrap a single op (XLA:CPU emits every op as a fusion: "wrapped_*"), and
    the fusions by kind (kLoop, kInput, kCustom/__ynn_fusion: YNNPACK's dots
    and reductions in jaxlib 0.10)."""
    comps, entry = computations(hlo)
    by_op, kinds, fusions, fusion_dots, single, seen = {}, {}, 0, 0, 0, set()

    def called(line, key):
        m = re.search(key + r"=%?([\w.\-]+)", line)
        return m.group(1) if m else None

    def walk(name, times):
        nonlocal fusions, fusion_dots, single
        if name in seen or name not in comps:
            return
        seen.add(name)
        for line in comps[name]:
            op = _opcode(line)
            if op is None or op in FREE_OPS:
                continue
            if op == "fusion":
                fusions += times
                body = [o for o in map(_opcode, comps.get(called(line, "calls") or "", []))
                        if o is not None and o not in FREE_OPS]
                fusion_dots += times * any(o in ("dot", "convolution") for o in body)
                single += times * (len(body) == 1)
                kind = re.search(r"kind=(k\w+)", line)
                kind = kind.group(1) if kind else "?"
                if '"kind":"' in line:  # kCustom's own kind (__ynn_fusion, ...)
                    kind += "/" + line.split('"kind":"', 1)[1].split('"', 1)[0]
                kinds[kind] = kinds.get(kind, 0) + times
            elif op in ("call", "while", "conditional", "async-start"):
                # A while loop's body runs its trip count's times (lax.scan:
                # known_trip_count); its condition is no kernel of ours.
                n = re.search(r'"known_trip_count":\{"n":"(\d+)"', line)
                n = int(n.group(1)) if n else 1
                loops.append(n) if op == "while" else None
                for key in ("to_apply", "body", "calls", "branch_computations"):
                    sub = called(line, key)
                    if sub:
                        walk(sub, times * n)
                continue
            by_op[op] = by_op.get(op, 0) + times
    loops = []
    walk(entry, 1)
    outside = {k: v for k, v in sorted(by_op.items()) if k != "fusion"}
    return {"fusions": fusions, "fusions_with_dot": fusion_dots,
            "fusions_single_op": single, "fusion_kinds": dict(sorted(kinds.items())),
            "unfused": sum(outside.values()), "unfused_by_op": outside,
            "kernels": fusions + sum(outside.values()), "while_trip_counts": loops}


def block_saved_bytes(c, form):
    """What jax's autodiff keeps of the blocks for the backward, before XLA
    (jax's saved_residuals on one block, times the layers; the block's
    parameters are arguments, not counted; its input is). None where this
    jax has no saved_residuals (a private API)."""
    import jax
    import jax.numpy as jnp
    try:
        from jax._src.ad_checkpoint import saved_residuals
    except ImportError:
        return None
    policy, _ = FORMS[form]
    fn = lambda x, p: block(c, x, p)  # noqa: E731
    if policy is not None:
        fn = jax.checkpoint(fn, policy=getattr(jax.checkpoint_policies, policy))
    shapes = param_shapes(config(layers=1, seq=c["seq"], batch=c["batch"], d=c["d"],
                                 heads=c["heads"], vocab=c["vocab"]))
    p = {k[len("h.0."):]: jax.ShapeDtypeStruct(v, jnp.float32)
         for k, v in shapes.items() if k.startswith("h.0.")}
    x = jax.ShapeDtypeStruct((c["batch"], c["seq"], c["d"]), jnp.float32)
    total = 0
    for aval, why in saved_residuals(fn, x, p):
        if not why.startswith("from the argument p"):
            n = aval.dtype.itemsize
            for dim in aval.shape:
                n *= dim
            total += n
    return total * c["layers"]


# ------------------------------------------------------------------- a form

def measure(c, form, runs, timed, dump=None):
    import jax
    import jax.numpy as jnp
    policy, scan = FORMS[form]
    opt_init, opt_update, opt_name = optimizer()
    init = (lambda: stack_layers(c, init_params(c))) if scan else (lambda: init_params(c))

    def step(params, opt_state, tokens, labels):
        loss, grads = jax.value_and_grad(
            lambda p: loss_fn(c, form, p, tokens, labels))(params)
        params, opt_state = opt_update(grads, opt_state, params)
        return params, opt_state, loss

    jstep = jax.jit(step, donate_argnums=(0, 1))
    shape = (c["batch"], c["seq"])
    if timed:
        params = init()
        opt_state = opt_init(params)
        tokens = jax.random.randint(jax.random.PRNGKey(1), shape, 0, c["vocab"], jnp.int32)
        labels = jnp.roll(tokens, -1, axis=1)
        args = (params, opt_state, tokens, labels)
    else:  # shapes only: nothing is allocated
        params = jax.eval_shape(init)
        args = (params, jax.eval_shape(opt_init, params),
                jax.ShapeDtypeStruct(shape, jnp.int32), jax.ShapeDtypeStruct(shape, jnp.int32))
    t0 = time.time()
    compiled = jstep.lower(*args).compile()
    compile_s = time.time() - t0
    mem = compiled.memory_analysis()
    cost = compiled.cost_analysis()
    if isinstance(cost, (list, tuple)):  # older jax: one dict per device
        cost = cost[0] if cost else {}
    hlo = compiled.as_text()
    if dump:
        with open(dump, "w") as f:
            f.write(hlo)
    rec = {
        "form": form, "policy": policy, "scan": scan, "optimizer": opt_name,
        "compile_s": round(compile_s, 1),
        "temp_bytes": int(mem.temp_size_in_bytes),
        "argument_bytes": int(mem.argument_size_in_bytes),
        "output_bytes": int(mem.output_size_in_bytes),
        "alias_bytes": int(mem.alias_size_in_bytes),
        "generated_code_bytes": int(mem.generated_code_size_in_bytes),
        "flops": float(cost.get("flops", 0.0)),
        "bytes_accessed": float(cost.get("bytes accessed", 0.0)),
        "transcendentals": float(cost.get("transcendentals", 0.0)),
        **hlo_kernels(hlo),
        "block_saved_bytes": block_saved_bytes(c, form),
    }
    if timed:
        times = []
        for i in range(runs + 1):  # the first is the warm-up
            t0 = time.perf_counter()
            params, opt_state, loss = compiled(params, opt_state, tokens, labels)
            loss.block_until_ready()
            jax.block_until_ready(params)
            if i:
                times.append((time.perf_counter() - t0) * 1000.0)
        rec["step_ms"] = [round(t, 1) for t in times]
        rec["step_ms_median"] = round(statistics.median(times), 1)
        rec["loss"] = float(loss)
    return rec


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--forms", default=",".join(FORMS),
                    help=f"comma-separated, of {', '.join(FORMS)}")
    ap.add_argument("--time", default="plain",
                    help="forms to time (comma-separated; 'none' or '' for none)")
    ap.add_argument("--runs", type=int, default=3, help="timed steps after one warm-up")
    ap.add_argument("--dump-hlo", default=None,
                    help="directory for each form's optimized HLO text")
    ap.add_argument("--cache", default=None,
                    help="jax's persistent compilation cache directory (a rerun "
                         "of the same form then skips most of the compile)")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    forms = [f for f in a.forms.split(",") if f]
    for f in forms:
        if f not in FORMS:
            ap.error(f"unknown form '{f}' (forms: {', '.join(FORMS)})")
    timed = {f for f in a.time.split(",") if f and f != "none"}
    import jax
    import jaxlib
    if a.cache:
        jax.config.update("jax_compilation_cache_dir", a.cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    c = config(layers=a.layers, seq=a.seq)
    threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    out = {"kind": "xla", "jax": jax.__version__, "jaxlib": jaxlib.__version__,
           "backend": jax.default_backend(), "layers": a.layers, "seq": a.seq,
           "batch": c["batch"], "cpus": threads,
           "xla_flags": os.environ.get("XLA_FLAGS", ""), "forms": {}}
    for f in forms:
        t0 = time.time()
        dump = os.path.join(a.dump_hlo, f"{f}.hlo.txt") if a.dump_hlo else None
        if dump:
            os.makedirs(a.dump_hlo, exist_ok=True)
        r = measure(c, f, a.runs, f in timed, dump)
        out["forms"][f] = r
        print(f"  xla {f}: temp {r['temp_bytes'] / 1e9:.3f} GB, {r['fusions']} fusions + "
              f"{r['unfused']} unfused = {r['kernels']} kernels, "
              f"{r['bytes_accessed'] / 1e9:.2f} GB accessed, {r['flops'] / 1e9:.1f} GFLOP"
              + (f", step {r['step_ms_median'] / 1000:.2f} s" if "step_ms_median" in r else "")
              + f" ({time.time() - t0:.0f} s)", file=sys.stderr)
    text = json.dumps(out, indent=1)
    if a.json:
        with open(a.json, "w") as fh:
            fh.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
