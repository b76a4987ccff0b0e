#!/usr/bin/env python3
"""The table of bench/zero/ranks.sh: one row per model, ranks and overlap.

usage: ranks_table.py RUN.json ...   (mw-run --report json, with 'model' and
'overlap' added by ranks.sh)

Columns: the median step time of rank 0; its time waiting on collectives per
step (the sum over the run divided by the steps); the engine's time in
collectives per step; the step time against one rank with the same overlap
(speed-up = 1-rank time / N-rank time); and overlap=on against overlap=off
at the same rank count.
"""
import json
import statistics
import sys


def main():
    runs = {}
    for path in sys.argv[1:]:
        d = json.load(open(path))
        runs[(d["model"], d["ranks"], d["overlap"])] = d
    print("| model | ranks | overlap | median step ms | waiting ms/step | "
          "engine ms/step | speed-up vs 1 rank | on / off |")
    print("|---|---|---|---|---|---|---|---|")
    for (model, n, overlap) in sorted(runs, key=lambda k: (k[0], k[1], k[2] != "on")):
        d = runs[(model, n, overlap)]
        steps = max(d["steps"], 1)
        comm = d["communication"]
        med = statistics.median(d["step_times_ms"])
        one = runs.get((model, 1, overlap))
        speed = (statistics.median(one["step_times_ms"]) / med) if one else None
        other = runs.get((model, n, "off"))
        ratio = (med / statistics.median(other["step_times_ms"])
                 if overlap == "on" and other else None)
        print(f"| {model} | {n} | {overlap} | {med:.2f} | "
              f"{1000 * comm['wait_seconds'] / steps:.2f} | "
              f"{1000 * comm['engine_seconds'] / steps:.2f} | "
              f"{speed:.2f}x | " if speed else "| - | ",
              end="")
        print(f"{ratio:.3f} |" if ratio else "- |")


if __name__ == "__main__":
    main()
