#!/usr/bin/env python3
"""Helpers of the multi-rank tests (test/Runtime/multi-rank).

usage:
  zero_ranks.py batch OUT.safetensors NAME:D0xD1:HIGH ...
      i32 tensors of the given shapes, values in [0, HIGH) from a fixed
      linear congruential sequence (the same bytes on every machine).
  zero_ranks.py split IN.safetensors N OUT_PATTERN
      rank r's rows of every tensor (dimension 0 cut into N equal parts),
      to OUT_PATTERN with %r replaced by r: what a rank of a --mw-zero step
      takes of the global batch.
  zero_ranks.py comm RUN.json REPORT.json
      checks mw-run --report json of a multi-rank run against the memory
      report of its step (--mw-memory-report=format=json): per collective
      kind the count, elements and bytes of every rank equal the report's
      (all_reduce with the loss's "outputs" and the overflow flag's
      "control" rows), and the bytes sent equal
      the ring volume the report gives; prints one line per kind.
  zero_ranks.py peak RUN.json
      checks that every rank's measured peak equals its planned peak.
  zero_ranks.py losses REF.json RUN.json RTOL
      checks that the losses of two mw-run --report json runs agree within
      RTOL (relative).
"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_safetensors import load  # noqa: E402
from pack_zero_weights import save  # noqa: E402


def batch(out, specs):
    tensors, state = {}, 12345
    for spec in specs:
        name, shape, high = spec.split(":")
        dims = [int(d) for d in shape.split("x")]
        count = 1
        for d in dims:
            count *= d
        values = []
        for _ in range(count):
            state = (state * 1103515245 + 12345) % (1 << 31)
            values.append(state % int(high))
        tensors[name] = ("I32", dims, struct.pack(f"<{count}i", *values))
    save(out, tensors)


def split(src, n, pattern):
    tensors = load(src)
    for r in range(n):
        part = {}
        for name, (dtype, shape, data) in tensors.items():
            if not shape or shape[0] % n:
                sys.exit(f"{name}: dimension 0 of {shape} does not split "
                         f"into {n}")
            rows = len(data) // n
            part[name] = (dtype, [shape[0] // n] + shape[1:],
                          data[r * rows:(r + 1) * rows])
        save(pattern.replace("%r", str(r)), part)


def comm(run_path, report_path):
    run = json.load(open(run_path))
    report = json.load(open(report_path))
    # The report: one function's, per rank.
    zero = None
    for fn in report.get("functions", [report]):
        zero = fn.get("zero") or zero
    if zero is None:
        sys.exit(f"{report_path}: no ZeRO section")
    planned = zero["communication"]
    n = run["ranks"]
    bad = 0
    for kind in ("all_reduce", "reduce_scatter", "all_gather", "all_slice"):
        before = bad
        p = dict(planned[kind])
        if kind == "all_reduce":
            # The loss's ("outputs") and the overflow flag's ("control")
            # all_reduce, one scalar each: pieces of ceil(e/N), sent twice to
            # N-1 ranks.
            for extra in ("outputs", "control"):
                o = planned.get(extra)
                if not o or not o["count"]:
                    continue
                for key in ("count", "elements", "bytes"):
                    p[key] += o[key]
                esz = o["bytes"] // o["elements"]
                per = (o["elements"] // o["count"] + n - 1) // n
                p["ring_bytes_per_rank"] += 2 * (n - 1) * per * esz * o["count"]
        for rank in run["per_rank"]:
            m = rank["communication"][kind]
            steps = run["steps"]
            want = {"count": p["count"] * steps,
                    "elements": p["elements"] * steps,
                    "bytes": p["bytes"] * steps,
                    "sent_bytes": p["ring_bytes_per_rank"] * steps}
            got = {k: m[k] for k in want}
            if kind == "all_slice":
                want["sent_bytes"] = 0
            if got != want:
                print(f"rank {rank['rank']} {kind}: measured {got}, "
                      f"planned {want}")
                bad += 1
        print(f"{kind}: {p['count']} per step, {p['bytes']} B, "
              f"{0 if kind == 'all_slice' else p['ring_bytes_per_rank']} B "
              f"sent per rank: measured equal on {n} ranks"
              if bad == before else f"{kind}: MISMATCH")
    sys.exit(1 if bad else 0)


def peak(run_path):
    run = json.load(open(run_path))
    bad = 0
    for rank in run["per_rank"]:
        m = rank["memory"]
        if m["planned_peak_bytes"] != m["measured_peak_bytes"]:
            print(f"rank {rank['rank']}: planned {m['planned_peak_bytes']} B, "
                  f"measured {m['measured_peak_bytes']} B")
            bad += 1
    if not bad:
        print(f"peak equal on {len(run['per_rank'])} ranks: "
              f"{run['per_rank'][0]['memory']['planned_peak_bytes']} B")
    sys.exit(1 if bad else 0)


def losses(ref_path, run_path, rtol):
    ref = json.load(open(ref_path))["losses"]
    run = json.load(open(run_path))["losses"]
    worst = max(abs(a - b) / max(abs(a), 1e-30) for a, b in zip(ref, run))
    if len(ref) != len(run) or worst > rtol:
        print(f"losses differ: {ref} vs {run} (worst relative {worst:.3g})")
        sys.exit(1)
    print(f"losses equal the one-rank step's within {rtol} "
          f"(worst {worst:.2g})")


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "batch":
        batch(args[0], args[1:])
    elif cmd == "split":
        split(args[0], int(args[1]), args[2])
    elif cmd == "comm":
        comm(args[0], args[1])
    elif cmd == "peak":
        peak(args[0])
    elif cmd == "losses":
        losses(args[0], args[1], float(args[2]))
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
