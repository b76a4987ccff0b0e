#!/usr/bin/env python3
"""The table of bench/fusion/run.sh from the files it wrote into OUT."""
import argparse
import json
import os
import re
import statistics

MODELS = [
    ("gpt2-small-unfused", "gpt2-small, unfused attention, f32, 1 x 1024"),
    ("gpt2-small-fused-attention", "gpt2-small, mw.attention, f32, 1 x 1024"),
    ("llama-7b-shaped-4l-bf16", "llama-7b-shaped, 4 layers, bf16, 1 x 2048"),
]
# Issue 16, section 4: TorchInductor (torch 2.15, CPU) on the gpt2-small
# step with unfused attention and AdamW compiled.
QUOTED = {"kernels": 139, "extern_kernels": 219, "bytes": 22.3e9,
          "peak": 2.985e9}


def figures(out, model, fuse):
    base = os.path.join(out, f"{model}.fuse-{fuse}")
    report = json.load(open(base + ".report.json"))
    fn = next(f for f in report["functions"] if f["name"] == "train_step")
    plan = json.load(open(base + ".plan.json"))
    kernels = plan["kernels"]

    def has_matmul(k):
        if k["op"] == "mw.matmul":
            return True
        prog = k.get("program") or {}
        return any(i["op"] == "mw.matmul" for i in prog.get("instructions", []))

    return {
        "kernels": len(kernels),
        "matmul_kernels": sum(has_matmul(k) for k in kernels),
        "bytes": fn["bytes_read"] + fn["bytes_written"],
        "arena": fn["arena_bytes"],
        "peak": fn["arena_bytes"] + fn["persistent_bytes"],
    }


def gb(x):
    return f"{x / 1e9:.3f} GB"


def median_s(ms):
    return statistics.median(ms) / 1000


def met(ok):
    return "**met**" if ok else "**not met**"


def xla_table(a, records, times, p):
    """XLA beside Memwall's gpt2-small step with unfused attention: fusions
    and kernels, bytes accessed, temp bytes against the arena, step time."""
    p("\n## XLA (jax), the same step\n")
    path = os.path.join(a.out, "xla.json")
    if a.jax != "measured" or not os.path.exists(path):
        p(f"XLA (jax): {a.jax if a.jax != 'measured' else 'skipped: no xla.json'}.")
        return
    x = json.load(open(path))
    tpath = os.path.join(a.out, "xla-times.txt")
    xla_ms = [float(t) for t in open(tpath).read().split()] if os.path.exists(tpath) else []
    records["xla"] = x
    forms = x["forms"]
    b = records["gpt2-small-unfused"]["before"]
    g = records["gpt2-small-unfused"]["after"]
    p(f"jax {x['jax']} (jaxlib {x['jaxlib']}, {x['backend']} backend, "
      f"{x['cpus']} CPUs, XLA_FLAGS {x['xla_flags'] or 'unset'}), "
      f"bench/peers/jax_gpt2.py: {x['layers']} layers, batch {x['batch']}, "
      f"seq {x['seq']}, f32, unfused attention, tied lm_head, "
      f"{next(iter(forms.values()))['optimizer']}; the whole step one "
      "jax.jit, parameters and optimizer state donated. Fusions: the "
      "optimized HLO's fusion instructions (XLA:CPU wraps even a single op "
      "in one: `single`); kernels: fusions plus what runs outside them "
      "(dots, copies, ...); bytes: `cost_analysis()['bytes accessed']`; "
      "temp: `memory_analysis().temp_size_in_bytes`.\n")
    p("| program | fusions (single op, with a dot) | kernels per step | "
      "bytes accessed | temp / arena | GFLOP |")
    p("|---|---|---|---|---|---|")
    for name, r in forms.items():
        outside = ", ".join(f"{n} {k}" for k, n in r["unfused_by_op"].items())
        what = "no jax.checkpoint" if not r["policy"] else (
            ("lax.scan, " if r.get("scan") else "") + f"jax.checkpoint per block, {r['policy']}")
        # cost_analysis() counts a while loop's body once; the kernel counts
        # here count it its trip count's times.
        once = " (loop body once)" if r.get("scan") else ""
        p(f"| XLA `{name}` ({what}) | {r['fusions']} ({r['fusions_single_op']}, "
          f"{r['fusions_with_dot']}) | {r['kernels']} ({r['fusions']} + {outside}) | "
          f"{gb(r['bytes_accessed'])}{once} | {gb(r['temp_bytes'])} | "
          f"{r['flops'] / 1e9:.1f}{once} |")
    for label, m in (("unfused", b), ("`--mw-fuse`", g)):
        p(f"| Memwall, {label} | | {m['kernels']} ({m['matmul_kernels']} with a matmul) | "
          f"{gb(m['bytes'])} | {gb(m['arena'])} (arena) | |")
    plain = forms.get("plain")
    if plain:
        p(f"| Memwall `--mw-fuse` / XLA `plain` | kernels / fusions "
          f"x{g['kernels'] / plain['fusions']:.3f} | x{g['kernels'] / plain['kernels']:.3f} | "
          f"x{g['bytes'] / plain['bytes_accessed']:.3f} | "
          f"x{g['arena'] / plain['temp_bytes']:.3f} | |")
    p("")
    p("Arena / XLA temp (issue 19's target: at most 0.6 for both the plain "
      "form and one written to save less):\n")
    p("| XLA form | temp | Memwall unfused arena / temp | `--mw-fuse` arena / temp |")
    p("|---|---|---|---|")
    for name, r in forms.items():
        p(f"| `{name}` | {gb(r['temp_bytes'])} | x{b['arena'] / r['temp_bytes']:.3f} | "
          f"x{g['arena'] / r['temp_bytes']:.3f} |")
    remat = {}
    for name, r in forms.items():
        rpath = os.path.join(a.out, f"remat-{name}.report.json")
        if not os.path.exists(rpath):
            continue
        fn = next(f for f in json.load(open(rpath))["functions"] if f["name"] == "train_step")
        log = open(os.path.join(a.out, f"remat-{name}.log")).read()
        got = dict(re.findall(r"\b(saved_activation_bytes|recompute_flops)=(\d+)", log))
        remat[name] = {"budget": r["block_saved_bytes"], "arena": fn["arena_bytes"],
                       "saved": int(got.get("saved_activation_bytes", 0)),
                       "recompute_flops": int(got.get("recompute_flops", 0))}
    if remat:
        records["remat_at_xla_saved"] = remat
        p("\nMemwall with `--mw-remat=\"strategy=auto saved-budget=B cost=flops\"` "
          "(then `--mw-train-pipeline=fuse=true`), B = what jax keeps of the blocks "
          "in that form (`saved_residuals`, before XLA):\n")
        p("| XLA form | B | Memwall keeps | recomputes (cost model) | arena | arena / temp |")
        p("|---|---|---|---|---|---|")
        for name, m in remat.items():
            p(f"| `{name}` | {gb(m['budget'])} | {gb(m['saved'])} | "
              f"{m['recompute_flops'] / 1e9:.1f} GFLOP | {gb(m['arena'])} | "
              f"x{m['arena'] / forms[name]['temp_bytes']:.3f} |")
    if xla_ms:
        xs = median_s(xla_ms)
        records["xla_time_ms"] = xla_ms
        p(f"\nXLA CPU step (`plain`, seq {a.seq}, {x['layers']} layers): "
          f"median {xs:.2f} s of {len(xla_ms)} runs of one step after a warm-up, "
          f"in turn with mw-run's ({', '.join(f'{v / 1000:.2f}' for v in xla_ms)} s).")
        for fuse, label in (("fuse=false", "unfused"), ("fuse=true", "`--mw-fuse`")):
            if times.get(fuse):
                ms = median_s(times[fuse])
                p(f"mw-run CPU step, {label}: {ms:.2f} s, x{ms / xs:.3f} XLA's.")
    else:
        xs = None
        p("\nXLA CPU step: not timed in this run (--no-time).")
    p("\nTargets (issue 16 section 5, issue 19 section 3), XLA rows:\n")
    if plain:
        p(f"- fewer fusions than XLA: Memwall `--mw-fuse` {g['kernels']} kernels vs "
          f"XLA's {plain['fusions']} fusions ({plain['fusions'] - plain['fusions_single_op']} "
          f"of more than one op; {plain['kernels']} kernels): "
          f"{met(g['kernels'] < plain['fusions'])}")
    if xs is not None and times.get("fuse=true"):
        ms = median_s(times["fuse=true"])
        p(f"- mw-run CPU step (`--mw-fuse`) at most XLA's in the same run: "
          f"{ms:.2f} s vs {xs:.2f} s: {met(ms <= xs)}")
    for name, m in remat.items():
        t = forms[name]["temp_bytes"]
        p(f"- arena <= 0.6 x XLA temp, `{name}`, Memwall with `--mw-remat` at its block "
          f"bytes: x{m['arena'] / t:.3f} {met(m['arena'] <= 0.6 * t)}")
    for name, r in forms.items():
        p(f"- arena <= 0.6 x XLA temp, `{name}`: x{b['arena'] / r['temp_bytes']:.3f} "
          f"unfused {met(b['arena'] <= 0.6 * r['temp_bytes'])}, "
          f"x{g['arena'] / r['temp_bytes']:.3f} fused {met(g['arena'] <= 0.6 * r['temp_bytes'])}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--commit", default="?")
    ap.add_argument("--seq", default="1024")
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--jax", default="skipped")
    ap.add_argument("--peers", default="")
    a = ap.parse_args()
    p = print
    records = {}
    p(f"# bench/fusion at {a.commit}\n")
    p("Cost-model figures of the planned step (`--mw-train-pipeline`, "
      "`fuse=false` / `fuse=true`); kernels from `mw-translate --mw-plan-json`.\n")
    p("| step | kernels (with a matmul) | bytes read + written | arena | "
      "planned save-all peak |")
    p("|---|---|---|---|---|")
    for model, title in MODELS:
        if a.layers != 12 and model.startswith("gpt2-small"):
            title = title.replace("gpt2-small", f"gpt2-small ({a.layers} layers)")
        b = figures(a.out, model, "false")
        f = figures(a.out, model, "true")
        records[model] = {"before": b, "after": f}
        p(f"| {title}: before | {b['kernels']} ({b['matmul_kernels']}) | "
          f"{gb(b['bytes'])} | {gb(b['arena'])} | {gb(b['peak'])} |")
        p(f"| {title}: after `--mw-fuse` | {f['kernels']} ({f['matmul_kernels']}) | "
          f"{gb(f['bytes'])} | {gb(f['arena'])} | {gb(f['peak'])} |")
        p(f"| after / before | x{f['kernels'] / b['kernels']:.3f} | "
          f"x{f['bytes'] / b['bytes']:.3f} | x{f['arena'] / b['arena']:.3f} | "
          f"x{f['peak'] / b['peak']:.3f} |")

    times, failed = {}, {}
    tpath = os.path.join(a.out, "times.txt")
    if os.path.exists(tpath):
        for line in open(tpath):
            fuse, _, ms = line.strip().partition(" ")
            if ms.startswith("failed: "):
                failed[fuse] = ms[len("failed: "):]
            elif ms:
                times.setdefault(fuse, []).append(float(ms))
    mpath = os.path.join(a.out, "matmul.txt")
    if times and os.path.exists(mpath) and open(mpath).read().strip():
        p(f"\nmw-run's matmul: {open(mpath).read().strip()}.")
    for fuse, ms in sorted(times.items()):
        p(f"\nmw-run CPU step, gpt2-small unfused attention, {fuse}, seq {a.seq}: "
          f"median {statistics.median(ms) / 1000:.2f} s of {len(ms)} runs of one step "
          f"({', '.join(f'{x / 1000:.2f}' for x in ms)} s).")
    for fuse, why in sorted(failed.items()):
        p(f"\nmw-run CPU step, {fuse}: not measured, mw-run failed: {why}")
    if times.get("fuse=false") and times.get("fuse=true"):
        before = statistics.median(times["fuse=false"])
        after = statistics.median(times["fuse=true"])
        records["time_ms"] = {"before": times["fuse=false"],
                              "after": times["fuse=true"]}
        p(f"\nmw-run CPU step, gpt2-small unfused attention, seq {a.seq}, "
          f"median of {len(times['fuse=true'])} runs of one step: "
          f"before {before / 1000:.2f} s, after {after / 1000:.2f} s "
          f"(x{after / before:.3f}).")
    elif not times and not failed:
        p("\nmw-run CPU step: not measured in this run (--no-time).")

    p("\n## Peers (gpt2-small, unfused attention)\n")
    ind = None
    if a.peers and os.path.exists(a.peers):
        ind = json.load(open(a.peers))
    g = records["gpt2-small-unfused"]["after"]
    if ind:
        src = f"measured by bench/peers ({a.peers}; fw+bw, no optimizer)"
        k, ek, by = ind["kernels"], ind["extern_kernels"], ind["bytes"]
        peak = None
    else:
        src = "quoted from issue 16, not measured in this run (fw+bw+AdamW)"
        k, ek, by, peak = (QUOTED["kernels"], QUOTED["extern_kernels"],
                           QUOTED["bytes"], QUOTED["peak"])
    p("| | kernels + matmul calls | bytes | peak |")
    p("|---|---|---|---|")
    p(f"| TorchInductor (CPU), {src} | {k} + {ek} = {k + ek} | {gb(by)} | "
      f"{gb(peak) if peak else 'n/a'} |")
    p(f"| Memwall `--mw-fuse` | {g['kernels']} | {gb(g['bytes'])} | "
      f"{gb(g['peak'])} (planned) |")
    p(f"| Memwall / Inductor | x{g['kernels'] / (k + ek):.3f} | "
      f"x{g['bytes'] / by:.3f} | "
      f"{'x%.3f' % (g['peak'] / peak) if peak else 'n/a'} |")
    xla_table(a, records, times, p)
    json.dump(records, open(os.path.join(a.out, "records.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
