#!/usr/bin/env python3
"""Budget sweeps of --mw-remat on one training step, checking what the issue
asks of checkpoint placement:
  - the planned peak fits every budget;
  - monotone: a smaller budget never gives a larger peak, a larger budget
    never gives more recompute (strategy=auto);
  - auto is never worse than every-k or sqrt: at each fixed strategy's own
    peak as the budget, auto's recompute time is no larger;
  - optional (--optimal): auto's recompute time is within --ratio of
    optimal's wherever CBC proves optimality, and optimal fits its budget.
Usage: sweep.py MW_OPT STEP.mlir PERCENT... [--optimal] [--ratio R]
Prints one line per run and 'OK' at the end; exits 1 on the first failure."""
import re
import subprocess
import sys


def run(mw_opt, step, options):
    proc = subprocess.run(
        [mw_opt, step, "--mw-remat=" + options + " verbose=true", "-o", "/dev/null"],
        capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("FAIL: mw-remat=%s exited %d:\n%s" % (options, proc.returncode, proc.stderr))
    m = re.search(r"remark: .*?mw-remat: (.*)", proc.stderr)
    if not m:
        sys.exit("FAIL: no remark for mw-remat=%s:\n%s" % (options, proc.stderr))
    fields = dict(kv.split("=", 1) for kv in re.findall(r'(\w+=(?:"[^"]*"|\S+))', m.group(1)))
    for key in ("budget", "peak", "save_all_peak", "recompute_flops"):
        fields[key] = int(fields[key])
    fields["recompute_seconds"] = float(fields["recompute_seconds"])
    return fields


def main():
    args = sys.argv[1:]
    check_optimal = "--optimal" in args
    ratio = 1.0
    if "--ratio" in args:
        i = args.index("--ratio")
        ratio = float(args[i + 1])
        del args[i:i + 2]
    args = [a for a in args if a != "--optimal"]
    mw_opt, step, percents = args[0], args[1], [float(p) for p in args[2:]]
    percents.sort(reverse=True)
    fail = lambda msg: sys.exit("FAIL: " + msg)

    runs = []
    for pct in percents:
        r = run(mw_opt, step, "budget=%g%%" % pct)
        print("auto %g%%: peak %d recompute %.4e s, %d FLOPs" %
              (pct, r["peak"], r["recompute_seconds"], r["recompute_flops"]))
        if r["peak"] > r["budget"]:
            fail("auto %g%%: peak %d over budget %d" % (pct, r["peak"], r["budget"]))
        runs.append(r)
    for bigger, smaller in zip(runs, runs[1:]):
        if smaller["peak"] > bigger["peak"]:
            fail("a smaller budget gave a larger peak: %d > %d" % (smaller["peak"], bigger["peak"]))
        if bigger["recompute_seconds"] > smaller["recompute_seconds"]:
            fail("a larger budget gave more recompute: %g > %g" %
                 (bigger["recompute_seconds"], smaller["recompute_seconds"]))

    for fixed in ("strategy=every-k k=1", "strategy=every-k k=2", "strategy=sqrt"):
        f = run(mw_opt, step, fixed)
        a = run(mw_opt, step, "budget=%d" % f["peak"])
        print("%s: peak %d recompute %.4e s; auto at that budget: peak %d recompute %.4e s" %
              (fixed, f["peak"], f["recompute_seconds"], a["peak"], a["recompute_seconds"]))
        if a["recompute_seconds"] > f["recompute_seconds"] * (1 + 1e-9):
            fail("auto recomputes more than %s at its peak" % fixed)

    if check_optimal:
        for pct, a in zip(percents, runs):
            o = run(mw_opt, step, "strategy=optimal budget=%g%% time-limit=60" % pct)
            print("optimal %g%%: peak %d recompute %.4e s (%s)" %
                  (pct, o["peak"], o["recompute_seconds"], o["optimality"]))
            if o["peak"] > o["budget"]:
                fail("optimal %g%%: peak over budget" % pct)
            if a["recompute_seconds"] < o["recompute_seconds"] * (1 - 1e-9):
                fail("optimal %g%%: %g s, more than auto's %g s" %
                     (pct, o["recompute_seconds"], a["recompute_seconds"]))
            if o["optimality"] == "proven" and \
                    a["recompute_seconds"] > ratio * o["recompute_seconds"] + 1e-15:
                fail("auto %g%%: %g s, over %g x optimal's %g s" %
                     (pct, a["recompute_seconds"], ratio, o["recompute_seconds"]))
    print("OK")


if __name__ == "__main__":
    main()
