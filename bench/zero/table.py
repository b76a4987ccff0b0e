#!/usr/bin/env python3
"""Prints bench/zero's table from --mw-memory-report JSON files: per-rank
model-state bytes beside the ZeRO paper's formula (as a ratio), padding,
communication per rank against the paper's 2Ψ / 3Ψ, and compile time."""
import json
import sys


def rows(paths):
    for path in paths:
        d = json.load(open(path))
        for f in d["functions"]:
            z = f.get("zero")
            if not z:
                continue
            yield d.get("model", path), d.get("compile_s", 0.0), z


def gb(b):
    return f"{b / 1e9:.3f}"


def main():
    out = []
    out.append("| model | ranks | stage | Ψ | model states / rank (GB) | "
               "formula | formula (GB) | ratio | padding (B) | "
               "sent / rank, ring (GB) | vs paper | compile (s) |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    data = sorted(rows(sys.argv[1:]),
                  key=lambda r: (r[0], r[2]["ranks"], r[2]["stage"]))
    for model, secs, z in data:
        pr, fm, cm = z["per_rank"], z["formula"], z["communication"]
        out.append(
            f"| {model} | {z['ranks']} | {z['stage']} | {z['psi']:,} | "
            f"{gb(pr['model_state_bytes'])} | {fm['expression']} | "
            f"{gb(fm['bytes'])} | {fm['ratio']:.4f} | "
            f"{pr['model_state_padding_bytes']:.0f} | "
            f"{gb(cm['total']['ring_bytes_per_rank'])} | "
            f"{cm.get('paper_ratio', 0):.3f} | {secs:.2f} |")
    print("\n".join(out))


if __name__ == "__main__":
    main()
