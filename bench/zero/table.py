#!/usr/bin/env python3
"""Prints bench/zero's table from --mw-memory-report JSON files: per-rank
model-state bytes beside the ZeRO paper's formula (as a ratio), padding,
communication per rank against the paper's 2Ψ / 3Ψ, the planned per-rank
peak with activations (when run.sh measured it), DeepSpeed's own estimate
(when deepspeed_estimate.py could run), and compile times.

usage: table.py ZERO.json ...
       table.py --merge-peak ZERO.json PEAK.json SECONDS
         (adds the planned peak of PEAK.json, a --mw-train-pipeline report
         of the same step, to ZERO.json)"""
import json
import sys


def rows(paths):
    for path in paths:
        d = json.load(open(path))
        for f in d["functions"]:
            z = f.get("zero")
            if not z:
                continue
            yield (d.get("model", path), d.get("compile_s", 0.0), z,
                   d.get("peak"), d.get("deepspeed"))


def gb(b):
    return f"{b / 1e9:.3f}"


def merge_peak(zero_path, peak_path, seconds):
    d = json.load(open(zero_path))
    try:
        p = json.load(open(peak_path))
        f = [f for f in p["functions"] if f.get("zero")][0]
        d["peak"] = {"arena_bytes": f["arena_bytes"],
                     "persistent_bytes": f["persistent_bytes"],
                     "bytes": f["arena_bytes"] + f["persistent_bytes"],
                     "compile_s": seconds}
    except (OSError, ValueError, KeyError, IndexError):
        d["peak"] = {"bytes": None, "compile_s": seconds}
    json.dump(d, open(zero_path, "w"))


def main():
    if sys.argv[1:2] == ["--merge-peak"]:
        merge_peak(sys.argv[2], sys.argv[3], float(sys.argv[4]))
        return
    out = []
    out.append("| model | ranks | stage | Ψ | model states / rank (GB) | "
               "formula | formula (GB) | ratio | padding (B) | "
               "sent / rank, ring (GB) | vs paper | peak / rank with "
               "activations (GB) | DeepSpeed estimate (GB) | DeepSpeed / "
               "paper, mixed | peak / DeepSpeed | compile (s) |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    data = sorted(rows(sys.argv[1:]),
                  key=lambda r: (r[0], r[2]["ranks"], r[2]["stage"]))
    for model, secs, z, peak, ds in data:
        pr, fm, cm = z["per_rank"], z["formula"], z["communication"]
        peak_gb = gb(peak["bytes"]) if peak and peak.get("bytes") else "-"
        if peak:
            secs = f"{secs:.2f} + {peak['compile_s']:.1f}"
        else:
            secs = f"{secs:.2f}"
        ds_gb = gb(ds) if ds else "-"
        mixed = z.get("paper_mixed_precision") or fm
        vs_paper = f"{ds / mixed['bytes']:.3f}" if ds else "-"
        ratio = (f"{peak['bytes'] / ds:.2f}"
                 if ds and peak and peak.get("bytes") else "-")
        out.append(
            f"| {model} | {z['ranks']} | {z['stage']} | {z['psi']:,} | "
            f"{gb(pr['model_state_bytes'])} | {fm['expression']} | "
            f"{gb(fm['bytes'])} | {fm['ratio']:.4f} | "
            f"{pr['model_state_padding_bytes']:.0f} | "
            f"{gb(cm['total']['ring_bytes_per_rank'])} | "
            f"{cm.get('paper_ratio', 0):.3f} | {peak_gb} | {ds_gb} | "
            f"{vs_paper} | {ratio} | {secs} |")
    print("\n".join(out))


if __name__ == "__main__":
    main()
