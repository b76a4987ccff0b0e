#!/usr/bin/env python3
"""strategy=optimal against the plans it must never lose to, on one step with
cost=flops:
  - at each budget, optimal's recompute FLOPs are at most auto's, its peak
    fits, and its remark reports gap and bound with bound <= its recompute;
  - the bound is a lower bound on every plan that fits: at each fixed
    strategy's own peak as the budget, the bound is at most that strategy's
    recompute FLOPs, and at most auto's;
  - optimality=proven exactly where the gap is 0;
  - the bound is the largest of the covering MILP's, the peak bound's and
    the staged MILP's (cover_bound, peak_bound, staged_bound where it ran),
    and each is a lower bound on its own.
Usage: optimal.py MW_OPT STEP.mlir PERCENT...
Prints one line per check and 'OK' at the end; exits 1 on the first failure."""
import re
import subprocess
import sys


def run(mw_opt, step, options):
    proc = subprocess.run(
        [mw_opt, step, "--mw-remat=" + options + " cost=flops verbose=true",
         "-o", "/dev/null"], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("FAIL: mw-remat=%s exited %d:\n%s" % (options, proc.returncode, proc.stderr))
    m = re.search(r"remark: .*?mw-remat: (.*)", proc.stderr)
    if not m:
        sys.exit("FAIL: no remark for mw-remat=%s:\n%s" % (options, proc.stderr))
    return dict(kv.split("=", 1) for kv in re.findall(r'(\w+=(?:"[^"]*"|\S+))', m.group(1)))


def fail(msg):
    sys.exit("FAIL: " + msg)


def optimal(mw_opt, step, budget, others):
    """Runs optimal at `budget`; checks it against `others` [(name, FLOPs)]."""
    o = run(mw_opt, step, "strategy=optimal budget=%s time-limit=60" % budget)
    flops, bound = int(o["recompute_flops"]), float(o["bound"])
    gap = float(o["gap"].rstrip("%"))
    cover, peak = float(o["cover_bound"]), float(o["peak_bound"])
    staged = float(o.get("staged_bound", 0.0))
    print("optimal %s: %d FLOPs, bound %.6e (%s; cover %.6e, peak %.6e, staged %.6e), gap %.2f%%, %s" %
          (budget, flops, bound, o["bound_source"], cover, peak, staged, gap, o["optimality"]))
    if abs(bound - max(cover, peak, staged)) > 1e-5 * bound + 1:
        fail("optimal %s: bound %g is not the largest of %g, %g and %g" % (budget, bound, cover, peak, staged))
    source = "staged" if staged > max(cover, peak) else ("peak" if peak > cover else "cover")
    if o["bound_source"] != source:
        fail("optimal %s: bound_source=%s with cover %g, peak %g, staged %g" % (budget, o["bound_source"], cover, peak, staged))
    if int(o["peak"]) > int(o["budget"]):
        fail("optimal %s: peak over budget" % budget)
    if bound > flops * (1 + 1e-6) + 1:
        fail("optimal %s: bound %g above its own %d FLOPs" % (budget, bound, flops))
    if (o["optimality"] == "proven") != (gap == 0.0):
        fail("optimal %s: optimality=%s with gap %g%%" % (budget, o["optimality"], gap))
    for name, theirs in others:
        if bound > theirs * (1 + 1e-6) + 1:
            fail("optimal %s: bound %g above %s's %d FLOPs" % (budget, bound, name, theirs))
        if name == "auto" and flops > theirs:
            fail("optimal %s: %d FLOPs, more than auto's %d" % (budget, flops, theirs))
    print("  <= " + ", ".join("%s %d" % (n, f) for n, f in others))


def main():
    mw_opt, step, percents = sys.argv[1], sys.argv[2], sys.argv[3:]
    for pct in percents:
        a = run(mw_opt, step, "budget=%s%%" % pct)
        optimal(mw_opt, step, "%s%%" % pct, [("auto", int(a["recompute_flops"]))])
    for fixed in ("strategy=every-k k=1", "strategy=sqrt", "strategy=selective",
                  "strategy=all"):
        f = run(mw_opt, step, fixed)
        a = run(mw_opt, step, "budget=%s" % f["peak"])
        optimal(mw_opt, step, f["peak"],
                [(fixed, int(f["recompute_flops"])), ("auto", int(a["recompute_flops"]))])
    print("OK")


if __name__ == "__main__":
    main()
