"""PyTorch's side of bench/peers, and the table that puts it beside Memwall's.

run.sh calls one subcommand per measurement, each writing one JSON object:

  import    GPT-2 from transformers' config class with eager attention,
            imported through python/memwall (what `mw-import --hf gpt2
            --preset published --train` does, but with the eager attention
            path instead of sdpa, so the [B, H, S, S] scores and
            probabilities are activations as in PyTorch eager).
  remat     saved-activation bytes of eager autograd (saved_tensors_hooks,
            unique storages, parameters and inputs left out) and of
            AOTAutograd's min-cut partitioner at each
            activation_memory_budget, with FlopCounterMode's FLOPs of the
            forward and backward graphs. All of it on fake tensors: nothing
            is computed, so the full GPT-2 small at sequence 1024 takes
            seconds per budget.
  inductor  TorchInductor (CPU) on the loss and its backward, real tensors:
            torch._inductor.metrics.generated_kernel_count and
            num_bytes_accessed after one step.
  table     reads every record and prints the side-by-side table.

FLOPs: torch.utils.flop_counter counts matmuls (mm, bmm, addmm, baddbmm) as
2*M*N*K and nothing else; Memwall's cost model counts matmuls the same way
and also elementwise ops, softmax, norms (docs/cost-model.md). The table
compares the matmul part of both (Memwall's from the recompute clones in the
rewritten IR) and shows Memwall's whole cost-model figure beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))


#: GPT2Config's activation_function: gelu_new (the default) is the tanh GELU
#: written out in Python (NewGELUActivation), which eager autograd saves as
#: four tensors and the importer matches into one mw.gelu; gelu_pytorch_tanh
#: is the same function as one ATen op (F.gelu(approximate="tanh")), which
#: saves its input only, as mw.gelu does. The reference runs use the latter
#: so that both sides see one GELU op; `remat` reports eager with gelu_new too.
GELU = "gelu_pytorch_tanh"


def _hf_model(layers: int, seq: int, materialize: bool, gelu: str = GELU):
    import transformers
    transformers.logging.set_verbosity_error()
    from memwall import hf
    overrides = {"activation_function": gelu}
    if layers is not None:
        overrides["n_layer"] = layers
    if seq != 1024:
        # mw-models' --seq sets the learned positions too: keep the three
        # programs the same model.
        overrides["n_positions"] = seq
    model, config = hf.build_model("gpt2", "published", overrides, 0,
                                   materialize=materialize)
    # transformers reads the attention implementation at call time; eager is
    # matmul, scale, additive causal mask, softmax, matmul (hf.py picks sdpa,
    # which the importer maps onto the fused mw.attention).
    model.config._attn_implementation = "eager"
    wrapped = hf.wrap("gpt2", model, True)
    inputs = hf.example_inputs("gpt2", config, 1, seq, True, 0)
    return wrapped, config, inputs


def cmd_import(a):
    from memwall import api
    m, _, inputs = _hf_model(a.layers, a.seq, materialize=False)
    t0 = time.time()
    res = api.import_module(
        m, inputs, train=True, strip_prefix="m.",
        header=f"// bench/peers: transformers GPT2LMHeadModel (published "
               f"config, n_layer {a.layers or 12}), eager attention, batch 1, "
               f"seq {a.seq}, forward + loss\n")
    with open(a.output, "w") as f:
        f.write(res.mlir)
    json.dump({"kind": "import", "wall_s": round(time.time() - t0, 1)},
              open(a.json, "w"))


def _storage_key(t):
    from torch.multiprocessing.reductions import StorageWeakRef
    return StorageWeakRef(t.untyped_storage())


def cmd_remat(a):
    import torch
    import transformers.masking_utils as mu
    from functorch.compile import aot_function, min_cut_rematerialization_partition
    import torch._functorch.config as fconfig
    from torch.utils.flop_counter import FlopCounterMode

    # The causal-mask code asks data-dependent questions (is every position
    # attended?) unless it knows it is being traced; under aot_function's
    # functional tensors it does not see that, so tell it.
    mu.is_tracing = lambda *args, **kwargs: True
    m, _, inputs = _hf_model(a.layers, a.seq, materialize=False)
    fm = next(m.parameters()).fake_mode
    with fm:
        finp = tuple(fm.from_tensor(x) for x in inputs)
    rec = {"kind": "remat", "torch": torch.__version__,
           "transformers": __import__("transformers").__version__}

    # Eager autograd: what the graph holds for backward, one count per storage.
    def eager_saved(model, fake_mode, fake_inputs):
        outside = {_storage_key(p) for p in model.parameters()}
        outside |= {_storage_key(x) for x in fake_inputs}
        seen = {}

        def pack(t):
            k = _storage_key(t)
            if k not in outside and k not in seen:
                seen[k] = int(t.untyped_storage().nbytes())
            return t

        fc = FlopCounterMode(display=False)
        with fake_mode, torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), fc:
            loss = model(*fake_inputs)
        return sum(seen.values()), len(seen), int(fc.get_total_flops()), loss

    m_new, _, _ = _hf_model(a.layers, a.seq, materialize=False, gelu="gelu_new")
    fm_new = next(m_new.parameters()).fake_mode
    with fm_new:
        finp_new = tuple(fm_new.from_tensor(x) for x in inputs)
    rec["eager_gelu_new_saved_bytes"], rec["eager_gelu_new_saved_tensors"], _, _ = \
        eager_saved(m_new, fm_new, finp_new)
    del m_new
    t0 = time.time()
    rec["eager_saved_bytes"], rec["eager_saved_tensors"], fwf, loss = \
        eager_saved(m, fm, finp)
    rec["eager_forward_flops"] = fwf
    fc = FlopCounterMode(display=False)
    with fm, fc:
        loss.backward()
    rec["eager_backward_flops"] = int(fc.get_total_flops())
    rec["eager_s"] = round(time.time() - t0, 1)

    names = [n for n, _ in m.named_parameters()]
    params = [p.detach().requires_grad_(True) for _, p in m.named_parameters()]

    def f(*args):
        n = len(names)
        return torch.func.functional_call(m, dict(zip(names, args[:n])), tuple(args[n:]))

    rows = []
    for b in a.budgets:
        t0 = time.time()
        fconfig.activation_memory_budget = b
        graphs = {}

        def part(joint, joint_inputs, **kw):
            fw, bw = min_cut_rematerialization_partition(joint, joint_inputs, **kw)
            graphs["fw"], graphs["bw"] = fw, bw
            return fw, bw

        cf = aot_function(f, fw_compiler=lambda gm, _: gm, bw_compiler=lambda gm, _: gm,
                          partition_fn=part)
        with fm:
            cf(*params, *finp)
        fw, bw = graphs["fw"], graphs["bw"]
        with fm:
            fins = [n.meta["val"] for n in fw.graph.nodes if n.op == "placeholder"]
            fc = FlopCounterMode(display=False)
            with fc:
                outs = fw(*fins)
            fw_flops = int(fc.get_total_flops())
            # The backward graph's placeholders are the saved values, then the
            # tangents; the forward returns the loss, then the saved values.
            bph = [n for n in bw.graph.nodes if n.op == "placeholder"]
            n_saved = sum(1 for n in bph if not n.name.startswith("tangents"))
            saved = list(outs[len(outs) - n_saved:]) if n_saved else []
            ins = {_storage_key(x) for x in fins if isinstance(x, torch.Tensor)}
            uniq = {}
            for x in saved:
                if isinstance(x, torch.Tensor):
                    k = _storage_key(x)
                    if k not in ins:
                        uniq[k] = int(x.untyped_storage().nbytes())
            tangents = [torch.ones_like(n.meta["val"]) for n in bph
                        if n.name.startswith("tangents")]
            fc = FlopCounterMode(display=False)
            with fc:
                bw(*saved, *tangents)
            bw_flops = int(fc.get_total_flops())
        rows.append({"budget": b, "saved_bytes": sum(uniq.values()),
                     "saved_tensors": len(uniq), "fw_flops": fw_flops,
                     "bw_flops": bw_flops, "wall_s": round(time.time() - t0, 1)})
        print(f"  torch budget {b}: saved {sum(uniq.values())} B, "
              f"fw+bw {(fw_flops + bw_flops) / 1e9:.1f} GFLOP "
              f"({time.time() - t0:.1f} s)", file=sys.stderr)
    rec["aot"] = rows
    json.dump(rec, open(a.json, "w"))


def cmd_inductor(a):
    import logging
    import torch
    import torch._inductor.metrics as metrics
    # num_bytes_accessed is counted only while this artifact log is on.
    torch._logging.set_logs(inductor_metrics=True)
    logging.getLogger("torch._inductor").setLevel(logging.WARNING)
    for h in logging.getLogger("torch").handlers:
        h.setLevel(logging.WARNING)
    torch.manual_seed(0)
    m, _, inputs = _hf_model(a.layers, a.seq, materialize=True)
    m.train()  # dropout is 0; train() so that autograd is as in a step
    # Cold compiles: a cache hit restores the counters but not the per-node
    # list the extern kernels are counted from.
    torch._inductor.config.fx_graph_cache = False
    torch._functorch.config.enable_autograd_cache = False
    torch._dynamo.reset()
    metrics.reset()
    step = torch.compile(m, backend="inductor", fullgraph=False)
    t0 = time.time()
    loss = step(*inputs)
    loss.backward()
    # generated_kernel_count counts the kernels Inductor writes (C++ loops);
    # matmuls go to extern kernels (aten.mm, mkldnn), which Memwall's plan
    # counts as kernels too.
    kinds = [type(n).__name__ for n, _ in metrics.nodes_num_elem]
    rec = {"kind": "inductor", "kernels": metrics.generated_kernel_count,
           "extern_kernels": kinds.count("ExternKernelSchedulerNode"),
           "cpp_vec_kernels": metrics.generated_cpp_vec_kernel_count,
           "bytes": int(metrics.num_bytes_accessed),
           "wall_s": round(time.time() - t0, 1),
           "threads": torch.get_num_threads(), "layers": a.layers or 12,
           "seq": a.seq}
    json.dump(rec, open(a.json, "w"))


# ------------------------------------------------------------ Memwall's side

MATMUL = re.compile(r"= mw\.matmul [^{:]*(\{[^}]*\})?\s*:\s*\(tensor<([0-9x]+)x[a-z0-9]+>, "
                    r"tensor<[0-9x]+x[a-z0-9]+>\) -> tensor<([0-9x]+)x[a-z0-9]+>")


def matmul_flops(mlir: str, recompute_only: bool) -> int:
    """2*M*N*K summed over the matmuls of the text (the cost model's count)."""
    total = 0
    for m in MATMUL.finditer(mlir):
        attrs = m.group(1) or ""
        if recompute_only and "mw.recompute" not in attrs:
            continue
        lhs = [int(x) for x in m.group(2).split("x")]
        res = [int(x) for x in m.group(3).split("x")]
        k = lhs[-2] if "transpose_lhs" in attrs else lhs[-1]
        n = 1
        for x in res:
            n *= x
        total += 2 * n * k
    return total


def _mw_opt(mw_opt, step, options, out="/dev/null"):
    import subprocess
    t0 = time.time()
    r = subprocess.run([mw_opt, step, f"--mw-remat={options} verbose=true", "-o", out],
                       capture_output=True, text=True)
    return r.returncode, r.stderr, time.time() - t0


def plan_kernels(mw_opt, mw_translate, step, scratch, fuse=False):
    """Kernels and bytes of the planned step (with --mw-fuse when `fuse`),
    from mw-translate --mw-plan-json."""
    import subprocess
    planned = os.path.join(scratch, "planned-fused.mlir" if fuse else "planned.mlir")
    subprocess.run([mw_opt, step, f"--mw-train-pipeline=fuse={str(fuse).lower()}",
                    "-o", planned], check=True)
    plan = json.loads(subprocess.run([mw_translate, "--mw-plan-json", planned],
                                     check=True, capture_output=True, text=True).stdout)
    size = {"f32": 4, "i32": 4, "f16": 2, "bf16": 2, "i64": 8, "i1": 1, "i8": 1}

    def nbytes(v):
        n = size.get(v["dtype"], 4)
        for x in v["shape"]:
            n *= x
        return n

    out = {"kernels": 0, "bytes": 0, "fwbw_kernels": 0, "fwbw_bytes": 0,
           "arena_size": plan["arena_size"]}
    for k in plan["kernels"]:
        b = sum(nbytes(v) for v in k.get("ins", []) + k.get("outs", []))
        out["kernels"] += 1
        out["bytes"] += b
        ops = [i["op"] for i in (k.get("program") or {}).get("instructions", [])]
        if k["op"] not in ("mw.adamw", "mw.sgd") and not (
                ops and all(o in ("mw.adamw", "mw.sgd") for o in ops)):
            out["fwbw_kernels"] += 1
            out["fwbw_bytes"] += b
    return out


def cmd_memwall(a):
    torch_rec = json.load(open(a.torch))
    scratch = os.path.dirname(os.path.abspath(a.json))
    rec = {"kind": "memwall", "source": a.source, "cells": {}}
    rc, err, _ = _mw_opt(a.mw_opt, a.step, "strategy=none")
    r = remark(err)
    if rc or not r:
        sys.exit(f"error: --mw-remat=strategy=none on {a.step} failed:\n{err}")
    rec["save_all_saved_bytes"] = r["saved_activation_bytes"]
    rec["step_flops"] = r["step_flops"]
    text = open(a.step).read()
    at = text.find("func.func @train_step(")
    rec["step_matmul_flops"] = matmul_flops(text[at:] if at >= 0 else text, False)
    for row in torch_rec["aot"]:
        sb = row["saved_bytes"]
        out = os.path.join(scratch, f"remat-{a.source}.mlir")
        rc, err, wall = _mw_opt(a.mw_opt, a.step,
                                f"strategy=auto saved-budget={sb} cost=flops", out)
        r = remark(err)
        if rc or not r:
            first = next((l for l in err.splitlines() if "error" in l), err.strip()[:200])
            rec["cells"][str(sb)] = {"error": first.split("error: ")[-1][:120]}
        else:
            rec["cells"][str(sb)] = {
                "saved": r["saved_activation_bytes"],
                "recompute_flops": r["recompute_flops"],
                "matmul_flops": matmul_flops(open(out).read(), True),
                "peak": r.get("peak"), "wall_s": round(wall, 1)}
        c = rec["cells"][str(sb)]
        print(f"  mw {a.source} saved-budget={sb}: "
              + (c.get("error") or f"saved {c['saved']} B, matmul {c['matmul_flops'] / 1e9:.1f} "
                 f"GFLOP, all {c['recompute_flops'] / 1e9:.1f} GFLOP ({wall:.1f} s)"),
              file=sys.stderr)
    rec["kernels"] = plan_kernels(a.mw_opt, a.mw_translate, a.step, scratch)
    rec["fused_kernels"] = plan_kernels(a.mw_opt, a.mw_translate, a.step, scratch,
                                        fuse=True)
    json.dump(rec, open(a.json, "w"))


# ---------------------------------------------------------------- the table

REMARK = re.compile(r"remark: .*?\bmw-remat: (.*)$", re.M)
FIELD = re.compile(r'([A-Za-z_][\w.-]*)=("[^"]*"|\S+)')


def remark(text):
    found = REMARK.findall(text)
    if not found:
        return None
    out = {}
    for k, v in FIELD.findall(found[-1]):
        v = v.strip('"')
        try:
            out[k] = int(v)
        except ValueError:
            try:
                out[k] = float(v)
            except ValueError:
                out[k] = v
    return out


def gf(x):
    return "" if x is None else f"{x / 1e9:.1f}"


def ratio(a, b):
    if a is None or b is None:
        return ""
    if b == 0:
        return "=" if a == 0 else "inf"
    return f"{a / b:.3f}"


def monotone(values, decreasing):
    vals = [v for v in values if v is not None]
    pairs = list(zip(vals, vals[1:]))
    return all((x >= y) if decreasing else (x <= y) for x, y in pairs)


def cmd_table(a):
    d = a.dir
    load = lambda name: json.load(open(os.path.join(d, name)))  # noqa: E731
    torch_rec = load("torch-remat.json")
    mw = {src: load(f"mw-{src}.json") for src in ("import", "models")}
    ind = load("inductor.json") if os.path.exists(os.path.join(d, "inductor.json")) else None
    meta = load("meta.json")
    out = []
    p = out.append
    p(f"# bench/peers: GPT-2 small ({meta['layers']} layers), batch 1, seq {meta['seq']}, f32")
    p("")
    p(f"measured at {meta['commit']}; torch {torch_rec['torch']}, transformers "
      f"{torch_rec['transformers']}; {meta['machine']}")
    p("")
    size = "" if (meta["layers"], meta["seq"]) == (12, 1024) else \
        f" --layers {meta['layers']} --seq {meta['seq']}"
    p("Sources: `import` = transformers GPT2LMHeadModel (GPT2Config's published "
      "size, eager attention, activation_function=gelu_pytorch_tanh"
      + ("" if not size else f", n_layer {meta['layers']}, n_positions {meta['seq']}")
      + ") through python/memwall, `models` = `mw-models gpt --preset gpt2-small "
      f"--attention=unfused{size}`; both stepped by `--mw-autodiff` (AdamW). "
      "PyTorch runs the same transformers model on fake tensors.")
    p("")
    p("## Saved activations, save-all")
    p("")
    p("| program | saved bytes | / PyTorch eager |")
    p("| --- | ---: | ---: |")
    eager = torch_rec["eager_saved_bytes"]
    p(f"| PyTorch eager autograd (saved_tensors_hooks, unique storages; GELU as "
      f"F.gelu tanh) | {eager:,} | 1.000 |")
    new = torch_rec.get("eager_gelu_new_saved_bytes")
    if new is not None:
        p(f"| PyTorch eager, GPT2Config's default gelu_new (the tanh GELU written "
          f"out: four saved tensors) | {new:,} | {ratio(new, eager)} |")
    first = torch_rec["aot"][0]
    p(f"| AOTAutograd min-cut, budget {first['budget']:.1f} | {first['saved_bytes']:,} | "
      f"{ratio(first['saved_bytes'], eager)} |")
    for src in ("import", "models"):
        s_ = mw[src]["save_all_saved_bytes"]
        p(f"| Memwall `{src}`, strategy=none (mw.remat.saved_activation_bytes) | "
          f"{s_:,} | {ratio(s_, eager)} |")
        c = mw[src]["cells"].get(str(first["saved_bytes"]), {})
        if "saved" in c:
            p(f"| Memwall `{src}`, auto at budget {first['budget']:.1f}'s bytes "
              f"({gf(c['recompute_flops'])} GFLOP recomputed) | {c['saved']:,} | "
              f"{ratio(c['saved'], eager)} |")
    p("")
    p("Memwall's strategy=none counts a reshape of a saved value as a saved value "
      "of its own although it is a view after bufferization; the imported step "
      "reshapes the [H, S, S] probabilities before the second matmul "
      "(torch.matmul's bmm), so it counts them twice. auto drops such a value "
      "for 0 FLOPs (a reshape costs none), which the zero-recompute row shows.")
    p("")
    p("## Recompute at equal saved bytes")
    p("")
    p("PyTorch: AOTAutograd's min-cut partitioner at activation_memory_budget b; "
      "its recompute is fw+bw FLOPs minus those at b = 1.0. Memwall: "
      "`--mw-remat=\"strategy=auto saved-budget=<PyTorch's saved bytes> cost=flops\"`. "
      "FLOPs: matmuls only, 2*M*N*K, on both sides (FlopCounterMode counts "
      "nothing else; Memwall's from the `mw.recompute` matmul clones of the "
      "rewritten step); `mw all` is Memwall's cost model over every cloned op "
      "(elementwise, softmax, norms too: docs/cost-model.md).")
    p("")
    hdr = "| budget | PyTorch saved | PyTorch recompute GFLOP |"
    sep = "| ---: | ---: | ---: |"
    for src in ("import", "models"):
        hdr += f" mw {src} saved | mw {src} GFLOP | mw {src} all GFLOP | mw/PyTorch ({src}) |"
        sep += " ---: | ---: | ---: | ---: |"
    p(hdr)
    p(sep)
    aot = torch_rec["aot"]
    base = next((r for r in aot if r["budget"] == 1.0), aot[0])
    base_flops = base["fw_flops"] + base["bw_flops"]
    series = {"torch": [], "import": [], "models": []}
    for r in aot:
        rc = r["fw_flops"] + r["bw_flops"] - base_flops
        series["torch"].append(rc)
        line = f"| {r['budget']:.1f} | {r['saved_bytes']:,} | {gf(rc)} |"
        for src in ("import", "models"):
            cell = mw[src]["cells"].get(str(r["saved_bytes"]))
            if not cell or cell.get("error"):
                why = (cell or {}).get("error", "not run")
                line += f" {why} | | | |"
                series[src].append(None)
                continue
            series[src].append(cell["matmul_flops"])
            line += (f" {cell['saved']:,} | {gf(cell['matmul_flops'])} | "
                     f"{gf(cell['recompute_flops'])} | {ratio(cell['matmul_flops'], rc)} |")
        p(line)
    p("")
    p("Monotone (recompute never falls as the budget falls): "
      + ", ".join(f"{k} {'yes' if monotone(v, decreasing=False) else 'no'}"
                  for k, v in series.items())
      + "; PyTorch's saved bytes never rise as the budget falls: "
      + ("yes" if monotone([r["saved_bytes"] for r in aot], decreasing=True) else "no")
      + ".")
    wins = [(r["budget"], mw_v <= t_v) for r, t_v, mw_v in
            zip(aot, series["torch"], series["import"]) if mw_v is not None]
    p("Memwall (`import`) recomputes at most PyTorch's matmul FLOPs at "
      f"{sum(w for _, w in wins)} of {len(wins)} budgets"
      + (f" (not at {', '.join(f'{b:.1f}' for b, w in wins if not w)})"
         if any(not w for _, w in wins) else "") + ".")
    p("")
    p("## Kernels and bytes of the step")
    p("")
    p("| program | kernels | bytes accessed | kernels / Inductor | bytes / Inductor |")
    p("| --- | ---: | ---: | ---: | ---: |")
    ik = ib = None
    comparable = True
    if ind is None:
        p("| TorchInductor (CPU) | not run (--no-inductor) | | | |")
    else:
        ik, ib = ind["kernels"] + ind.get("extern_kernels", 0), ind["bytes"]
        comparable = (ind["layers"], ind["seq"]) == (meta["layers"], meta["seq"])
        p(f"| TorchInductor (CPU), fw+bw, fused: {ind['kernels']:,} generated + "
          f"{ind.get('extern_kernels', 0):,} extern (library calls: the matmuls); {ind['layers']} layers, "
          f"seq {ind['seq']} | {ik:,} | {ib:,} | 1.000 | 1.000 |")
    note = "" if comparable else " (other size than Inductor's: no ratio)"
    for src in ("import", "models"):
        for key, how, whole in (("kernels", "unfused", "whole step (+ AdamW)"),
                                ("fused_kernels", "`--mw-fuse`",
                                 "`--mw-fuse`, whole step (+ AdamW, one horizontal kernel)")):
            k = mw[src].get(key)
            if not k:
                continue  # records from before the fused rows
            kr = ratio(k["fwbw_kernels"], ik) if comparable else ""
            br = ratio(k["fwbw_bytes"], ib) if comparable else ""
            p(f"| Memwall `{src}` plan, fw+bw, {how}{note} | {k['fwbw_kernels']:,} | "
              f"{k['fwbw_bytes']:,} | {kr} | {br} |")
            p(f"| Memwall `{src}` plan, {whole} | {k['kernels']:,} | "
              f"{k['bytes']:,} | | |")
    p("")
    p("Unfused, every mw op of the plan is one kernel "
      "(reshapes are views, not kernels); `--mw-fuse` rows count a fused kernel "
      "once (docs/fusion.md). Its bytes are each kernel's operands "
      "and results at their element size (mw-translate --mw-plan-json); "
      "Inductor's are torch._inductor.metrics.num_bytes_accessed (GraphLowering."
      "count_bytes over its scheduled kernels, extern matmuls included). "
      "Inductor compiles the loss and its backward only, so the Memwall rows "
      "that compare leave out the AdamW kernels.")
    p("")
    xla_section(d, meta, mw, p)
    text = "\n".join(out) + "\n"
    sys.stdout.write(text)


def xla_section(d, meta, mw, p):
    """XLA's memory_analysis() of the same step (bench/peers/jax_gpt2.py)
    beside Memwall's arena: issue 19's target, arena <= 0.6 x XLA's temp
    bytes for the plain form and for the forms written to save less."""
    p("## XLA")
    p("")
    path = os.path.join(d, "xla.json")
    if meta.get("jax") != "measured" or not os.path.exists(path):
        p(meta.get("jax", "skipped: jax not installed")
          if meta.get("jax") != "measured" else "skipped: no xla.json")
        return
    x = json.load(open(path))
    forms = x["forms"]
    p(f"jax {x['jax']} (jaxlib {x['jaxlib']}, {x['backend']} backend), "
      f"bench/peers/jax_gpt2.py: mw-models' gpt2-small step in jax ({x['layers']} "
      f"layers, seq {x['seq']}, f32, unfused attention, tied lm_head, "
      f"{next(iter(forms.values()))['optimizer']}), one jax.jit with the parameters "
      "and optimizer state donated. temp = `compiled.memory_analysis()."
      "temp_size_in_bytes` (XLA's buffers besides the arguments and outputs: "
      "activations, gradients, workspace); Memwall's arena = the planned step's "
      "`arena_size` (mw-translate --mw-plan-json), which holds the same kinds of "
      "values (parameters and optimizer state are persistent, outside it).")
    p("")
    p("| XLA form | temp bytes | arguments | outputs (aliased) | GFLOP | "
      + " | ".join(f"mw `{src}` {how} arena / temp" for src in ("import", "models")
                   for how in ("unfused", "fused")) + " |")
    p("| --- | ---: | ---: | ---: | ---: |" + " ---: |" * 4)
    arenas = {}
    for src in ("import", "models"):
        for key, how in (("kernels", "unfused"), ("fused_kernels", "fused")):
            k = mw[src].get(key)
            if k:
                arenas[(src, how)] = k["arena_size"]
    worst = {}
    for name, r in forms.items():
        if r["policy"] is None:
            what = "no jax.checkpoint"
        else:
            what = (("lax.scan over the blocks, " if r.get("scan") else "")
                    + f"jax.checkpoint per block, {r['policy']}")
        gfl = f"{r['flops'] / 1e9:.1f}" + (" (loop body once)" if r.get("scan") else "")
        cells = []
        for src in ("import", "models"):
            for how in ("unfused", "fused"):
                a_ = arenas.get((src, how))
                cells.append(ratio(a_, r["temp_bytes"]))
                if a_ is not None:
                    worst[name] = max(worst.get(name, 0), a_ / r["temp_bytes"])
        p(f"| `{name}` ({what}) | {r['temp_bytes']:,} | {r['argument_bytes']:,} | "
          f"{r['output_bytes']:,} ({r['alias_bytes']:,}) | {gfl} | " + " | ".join(cells) + " |")
    p("")
    p("Memwall's arenas: " + ", ".join(f"`{s_}` {h} {v:,}" for (s_, h), v in arenas.items())
      + ".")
    ok = {n: w <= 0.6 for n, w in worst.items()}
    p("Target (arena <= 0.6 x XLA temp, every Memwall arena above): "
      + "; ".join(f"`{n}` {'met' if ok[n] else 'not met'} (at most x{worst[n]:.3f})"
                  for n in forms) + ".")
    p("XLA:CPU runs the recompute of an unrolled jax.checkpoint early: nothing "
      "ties it to the backward (jax's optimization barrier keeps it from CSE, "
      "not from being scheduled in the forward), so the `remat-*` forms' temp "
      "bytes are the plain form's. Under lax.scan the backward loop recomputes "
      "each block in its own iteration, which is where it saves memory; "
      "XLA's cost_analysis() counts a loop's body once, so those forms' FLOPs "
      "hold one block's forward and backward, not every block's.")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("import", "remat", "inductor"):
        s = sub.add_parser(name)
        s.add_argument("--layers", type=int, default=None)
        s.add_argument("--seq", type=int, default=1024)
        s.add_argument("--json", required=True)
        if name == "import":
            s.add_argument("-o", "--output", required=True)
        if name == "remat":
            s.add_argument("--budgets", type=lambda t: [float(x) for x in t.split(",")],
                           default=[1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1])
    w = sub.add_parser("memwall")
    w.add_argument("--source", required=True, choices=["import", "models"])
    w.add_argument("--step", required=True)
    w.add_argument("--torch", required=True, help="torch-remat.json")
    w.add_argument("--mw-opt", required=True)
    w.add_argument("--mw-translate", required=True)
    w.add_argument("--json", required=True)
    t = sub.add_parser("table")
    t.add_argument("dir")
    a = ap.parse_args(argv)
    {"import": cmd_import, "remat": cmd_remat, "inductor": cmd_inductor,
     "memwall": cmd_memwall, "table": cmd_table}[a.cmd](a)


if __name__ == "__main__":
    main()
