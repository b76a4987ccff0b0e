#!/usr/bin/env python3
"""The table of bench/fusion/run.sh from the files it wrote into OUT."""
import argparse
import json
import os
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--commit", default="?")
    ap.add_argument("--seq", default="1024")
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
    p(f"\nXLA (jax): {a.jax}.")
    json.dump(records, open(os.path.join(a.out, "records.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
