#!/usr/bin/env python3
"""Tables of bench/remat/run.sh's records (JSON lines, one mw-opt run each).

Each record holds the run's model, kind (fixed, budget, frontier, match, saved,
scaling),
label, --mw-remat options, exit status, wall time and stderr; stderr carries
either the one-line `remark: mw-remat: key=value ...` of verbose=true or the
error of an unreachable budget. Prints, per model, one markdown table (rows:
fixed strategies, then budgets; auto and optimal side by side) and, with saved
cells, one of auto under saved-activation budgets beside PyTorch's, then a
summary of ratios against the baselines. Usage: table.py RECORDS.jsonl
"""

import json
import math
import re
import sys

# The location between "remark:" and "mw-remat:" may hold colons and spaces.
REMARK = re.compile(r"remark: .*?\bmw-remat: (.*)$", re.M)
# key=value, the value bare or "quoted" (chosen="path 4").
FIELD = re.compile(r'([A-Za-z_][\w.-]*)=("[^"]*"|\S+)')
UNREACHABLE = re.compile(
    r"budget (-?\d+) B.*? is unreachable.*?the smallest planned peak found is "
    r"(\d+) B(?:.*?save-all peak (\d+) B)?")
BELOW_PERSISTENT = re.compile(
    r"budget (-?\d+) B.*? is below the persistent state of @\S+, (\d+) B")
FIXED = ["none", "selective", "every-k-k1", "every-k-k2", "sqrt", "all"]
FIXED_NAMES = {"every-k-k1": "every-k k=1", "every-k-k2": "every-k k=2"}
# PyTorch 2.15's min-cut partitioner (AOTAutograd, activation_memory_budget)
# on GPT-2 small's step, recompute FLOPs counted as Memwall's cost model
# counts them, per fraction of the saved activations (issue 21).
PYTORCH_SAVED = {"gpt2-small-unfused": {0.3: 82.5e9, 0.2: 136.4e9,
                                        0.1: 190.8e9, 0.0: 293.5e9}}


def number(text):
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def parse(rec):
    """Adds `remark` (dict or None), `status` and the error figures."""
    err = rec.get("stderr", "")
    remarks = REMARK.findall(err)
    rec["remark"] = None
    if remarks:
        fields = {}
        for key, value in FIELD.findall(remarks[-1]):
            if value.startswith('"'):
                fields[key] = value[1:-1]
            else:
                fields[key] = number(value)
        rec["remark"] = fields
    opts = dict(t.split("=", 1) for t in rec.get("options", "").split() if "=" in t)
    rec["strategy"] = opts.get("strategy", "auto")
    rec["budget_opt"] = opts.get("budget")
    flat = " ".join(err.split())
    if rec["rc"] == 0 and rec["remark"] is not None:
        rec["status"] = "ok"
    elif rec["rc"] in (124, 137):
        rec["status"] = "timeout"
    elif m := UNREACHABLE.search(flat):
        rec["status"] = "unreachable"
        rec["budget_bytes"] = int(m.group(1))
        rec["min_peak"] = int(m.group(2))
        if m.group(3):
            rec["err_save_all"] = int(m.group(3))
    elif m := BELOW_PERSISTENT.search(flat):
        rec["status"] = "below-persistent"
        rec["budget_bytes"] = int(m.group(1))
        rec["persistent_err"] = int(m.group(2))
    elif rec["rc"] == 0:
        rec["status"] = "no-remark"
    else:
        rec["status"] = "error"
    # The first error, else the last line (a crash, a missing binary).
    lines = [l for l in err.splitlines() if l.strip()]
    first_error = next((l for l in lines if "error:" in l), lines[-1] if lines else "")
    rec["error_line"] = first_error.split("error:", 1)[-1].strip()
    return rec


def field(rec, key):
    if rec is None or rec.get("remark") is None:
        return None
    value = rec["remark"].get(key)
    return value if isinstance(value, (int, float)) else None


class Model:
    """The records of one model and its reference figures."""

    def __init__(self, name, recs):
        self.name = name
        self.recs = recs
        self.fixed = {r["label"]: r for r in recs if r["kind"] == "fixed"}
        self.auto = {}
        self.optimal = {}
        self.match = [r for r in recs if r["kind"] == "match"]
        self.frontier = [r for r in recs if r["kind"] == "frontier"]
        self.saved = [r for r in recs if r["kind"] == "saved"
                      and r["strategy"] != "optimal"]
        # strategy=optimal's exact saved-bytes optimum, by saved-budget.
        self.saved_optimal = {str(r.get("saved_budget")): r for r in recs
                              if r["kind"] == "saved" and r["strategy"] == "optimal"}
        self.budgets = []
        for r in recs:
            if r["kind"] != "budget":
                continue
            b = r.get("budget", r["budget_opt"])
            if b not in self.budgets:
                self.budgets.append(b)
            (self.optimal if r["strategy"] == "optimal" else self.auto)[b] = r
        self.save_all = self._first(
            [field(r, "save_all_peak") for r in recs]
            + [field(self.fixed.get("none"), "peak")]
            + [r.get("err_save_all") for r in recs])
        self.step_flops = self._first([field(r, "step_flops") for r in recs])
        self.persistent = self._first(
            [field(r, "persistent") for r in recs]
            + [r.get("persistent_err") for r in recs])
        self.ops = self._first([field(r, "ops") for r in recs])

    @staticmethod
    def _first(values):
        return next((v for v in values if v is not None and v > 0), None)

    def peak_pct(self, bytes_):
        if bytes_ is None or not self.save_all:
            return None
        return 100.0 * bytes_ / self.save_all

    def extra_pct(self, rec):
        flops = field(rec, "recompute_flops")
        step = field(rec, "step_flops") or self.step_flops
        if flops is None or not step:
            return None
        return 100.0 * flops / step


def pct(value):
    if value is None:
        return "?"
    if 0 < abs(value) < 1:
        return f"{value:.2f}%"
    return f"{value:.1f}%"


def num(value, digits=1):
    return "?" if value is None else f"{value:.{digits}f}"


def mib(bytes_):
    return "?" if bytes_ is None else f"{bytes_ / 1048576:.1f} MiB"


def group_bytes(n):
    return "?" if n is None else f"{n:,} B"


def outcome(model, rec):
    """The peak cell: reached peak %, or why there is none."""
    if rec is None:
        return "-"
    status = rec["status"]
    if status == "ok":
        peak = field(rec, "peak")
        text = pct(model.peak_pct(peak))
        budget = field(rec, "budget")
        if peak is not None and budget is not None and budget >= 0 and peak > budget:
            text += " OVER BUDGET"
        return text
    if status == "unreachable":
        return f"unreachable (min {pct(model.peak_pct(rec['min_peak']))})"
    if status == "below-persistent":
        return f"below persistent ({pct(model.peak_pct(rec['persistent_err']))})"
    if status == "timeout":
        return f"timed out ({rec['wall_s']:.0f} s)"
    if status == "no-remark":
        return "no remark"
    return "error: " + (rec["error_line"][:60] or f"exit {rec['rc']}")


def cells(model, rec, saved=True):
    """peak, extra FLOPs, [saved activations,] solve ms, wall s."""
    if rec is None:
        return ["-"] * (5 if saved else 4)
    head = outcome(model, rec)
    wall = f"{rec['wall_s']:.1f}"
    if rec["status"] != "ok":
        return [head] + [""] * (3 if saved else 2) + [wall]
    return ([head, pct(model.extra_pct(rec))]
            + ([mib(field(rec, "saved_activation_bytes"))] if saved else [])
            + [num(field(rec, "solve_ms")), wall])


def optimality(rec):
    """"proven" or "bounded" (the gap to optimal's lower bound, since
    remat-optimal); older records: CBC's status on Checkmate's MILP."""
    remark = rec["remark"]
    if "optimality" in remark:
        return str(remark["optimality"])
    return str(remark.get("milp_status", "?"))


def gap_percent(rec):
    """optimal's gap in %, None where unknown (older records: CBC's gap on
    Checkmate's MILP, when proven optimal 0)."""
    remark = rec["remark"]
    if "gap" in remark:
        try:
            return float(str(remark["gap"]).rstrip("%"))
        except ValueError:
            return None
    return 0.0 if remark.get("milp_status") == "optimal" else None


def milp_cells(rec):
    """optimality, gap and the lower bound (% of the step with cost=flops)."""
    if rec is None or rec.get("remark") is None:
        return ["", "", ""]
    remark = rec["remark"]
    if "gap" in remark:
        gap = str(remark["gap"])
        bound = field(rec, "bound")
        step = field(rec, "step_flops")
        if bound is None:
            shown = "?"
        elif remark.get("bound_unit") == "flops" and step:
            shown = f"{100.0 * bound / step:.2f}%"
        else:
            shown = f"{bound:.3e} s"
        return [optimality(rec), gap, shown]
    gap = field(rec, "milp_gap")
    return [optimality(rec), "?" if gap is None else f"{100 * gap:.2f}%", ""]


def ratio(a, b):
    """a / b with 0/0 = 1; None for x/0, x > 0 (a failure)."""
    if b == 0:
        return 1.0 if a == 0 else None
    return a / b


def fmt_ratio(r):
    return "FAIL (x/0)" if r is None else f"{r:.3f}"


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def row(cols):
    return "| " + " | ".join(cols) + " |"


def model_table(model):
    print(f"## {model.name}")
    print()
    facts = [f"save-all peak {group_bytes(model.save_all)}"]
    if model.persistent and model.save_all:
        facts.append(f"persistent {group_bytes(model.persistent)} "
                     f"({pct(model.peak_pct(model.persistent))})")
    if model.step_flops:
        facts.append(f"step {model.step_flops / 1e9:.1f} GFLOP")
    if model.ops:
        facts.append(f"{model.ops} ops")
    print("; ".join(facts))
    print()
    print(row(["row", "peak", "extra FLOPs", "saved act.", "solve ms", "wall s",
               "optimal peak", "opt. extra FLOPs", "opt. solve ms",
               "opt. wall s", "optimality", "gap", "bound", "auto/opt FLOPs"]))
    print(row(["---"] + ["---:"] * 13))
    for label in FIXED + [l for l in model.fixed if l not in FIXED]:
        if label in model.fixed:
            print(row([FIXED_NAMES.get(label, label)]
                      + cells(model, model.fixed[label]) + [""] * 8))
    for b in model.budgets:
        auto, opt = model.auto.get(b), model.optimal.get(b)
        r = ""
        fa, fo = field(auto, "recompute_flops"), field(opt, "recompute_flops")
        if fa is not None and fo is not None:
            r = fmt_ratio(ratio(fa, fo))
        print(row([f"budget {b}"] + cells(model, auto) + cells(model, opt, False)
                  + milp_cells(opt) + [r]))
    for rec in model.frontier:
        print(row([f"auto {rec.get('budget', '?')} (frontier)"] + cells(model, rec)
                  + [""] * 8))
    print()


def saved_fraction(text):
    """0.3 for "30%", 0.0 for 0; None for bytes."""
    text = str(text).strip()
    if text in ("0", "0B", "0%"):
        return 0.0
    if text.endswith("%"):
        try:
            return float(text[:-1]) / 100.0
        except ValueError:
            return None
    return None


def saved_table(model):
    if not model.saved:
        return
    base = field(model.fixed.get("none"), "saved_activation_bytes")
    ref = PYTORCH_SAVED.get(model.name, {})
    opt_cols = bool(model.saved_optimal)
    print(f"### {model.name}: auto under saved-budget (peak free)"
          + (", beside optimal's exact optimum" if opt_cols else ""))
    print()
    if base:
        print(f"save-all saved activations {group_bytes(base)}")
        print()
    extra = (["optimal GFLOP", "optimality", "optimal solve ms",
              "optimal/PyTorch"] if opt_cols else [])
    print(row(["saved-budget", "kept", "kept/save-all", "peak", "extra FLOPs",
               "recompute GFLOP", "PyTorch GFLOP", "auto/PyTorch"] + extra))
    print(row(["---"] + ["---:"] * (7 + len(extra))))
    for rec in model.saved:
        sb = rec.get("saved_budget", "?")
        frac = saved_fraction(sb)
        theirs = ref.get(round(frac, 4)) if frac is not None else None
        opt_cells = []
        if opt_cols:
            opt = model.saved_optimal.get(str(sb))
            if opt is None or opt["status"] != "ok":
                opt_cells = [outcome(model, opt), "", "", ""]
            else:
                oflops = field(opt, "recompute_flops")
                gap = field(opt, "gap")
                opt_cells = [num(oflops / 1e9 if oflops is not None else None),
                             opt["remark"].get("optimality", "?")
                             + (f" ({gap:.3f}%)" if gap else ""),
                             num(field(opt, "solve_ms")),
                             fmt_ratio(ratio(oflops, theirs)) if theirs else ""]
        if rec["status"] != "ok":
            print(row([str(sb), outcome(model, rec)] + [""] * 6 + opt_cells))
            continue
        kept = field(rec, "saved_activation_bytes")
        flops = field(rec, "recompute_flops")
        print(row([str(sb), mib(kept),
                   pct(100.0 * kept / base) if base and kept is not None else "?",
                   outcome(model, rec), pct(model.extra_pct(rec)),
                   num(flops / 1e9 if flops is not None else None),
                   num(theirs / 1e9 if theirs else None) if theirs else "",
                   fmt_ratio(ratio(flops, theirs)) if theirs else ""]
                  + opt_cells))
    print()


def summary_auto_vs_optimal(models):
    print("### auto vs optimal: recompute FLOPs auto/optimal "
          "(budgets where optimal is proven, or within 1% of its lower bound; "
          "target geomean <= 1.05, worst <= 1.15)")
    print()
    print(row(["model", "budget", "auto FLOPs", "optimal FLOPs", "auto/optimal",
               "gap", "auto chose"]))
    print(row(["---", "---:", "---:", "---:", "---:", "---:", "---"]))
    ratios, failures, skipped = [], 0, []
    for m in models:
        for b in m.budgets:
            auto, opt = m.auto.get(b), m.optimal.get(b)
            if opt is None or auto is None:
                continue
            if opt["status"] != "ok":
                if auto["status"] == "ok":
                    skipped.append(f"{m.name} {b} (optimal: {outcome(m, opt)})")
                continue
            gap = gap_percent(opt)
            if gap is None or gap > 1.0:
                skipped.append(f"{m.name} {b} ({optimality(opt)})")
                continue
            fa, fo = field(auto, "recompute_flops"), field(opt, "recompute_flops")
            if fa is None or fo is None:
                skipped.append(f"{m.name} {b} (auto: {outcome(m, auto)})")
                continue
            r = ratio(fa, fo)
            if r is None:
                failures += 1
            else:
                ratios.append(r)
            chose = auto["remark"].get("chosen", "")
            print(row([m.name, str(b), f"{fa:.4g}", f"{fo:.4g}", fmt_ratio(r),
                       f"{gap:.3f}%", str(chose)]))
    print()
    g = geomean(ratios)
    worst = "inf (x/0)" if failures else (f"{max(ratios):.3f}" if ratios else "-")
    print(f"geomean {num(g, 3) if g else '-'} (target <= 1.05), worst {worst} "
          f"(target <= 1.15), {len(ratios) + failures} budgets, "
          f"{failures} failure(s) (auto recomputes, optimal does not)")
    if skipped:
        print("not compared: " + ", ".join(skipped))
    print()


def summary_auto_vs_fixed(models):
    print("### auto vs the fixed strategies at the same peak: extra FLOPs "
          "(auto must be <= the fixed strategy's)")
    print()
    print(row(["model", "strategy", "peak", "extra FLOPs",
               "auto at sweep budget", "extra FLOPs", "auto/fixed",
               "auto at its peak", "extra FLOPs", "auto/fixed", "verdict"]))
    print(row(["---", "---"] + ["---:"] * 8 + ["---"]))
    worse = 0
    for m in models:
        for label in FIXED:
            fixed = m.fixed.get(label)
            if fixed is None or fixed["status"] != "ok":
                continue
            peak = field(fixed, "peak")
            ff = field(fixed, "recompute_flops")
            # The smallest sweep budget at or above the fixed peak.
            sweep, sweep_budget = None, None
            for b in m.budgets:
                bb = field(m.auto.get(b), "budget")
                if bb is None and isinstance(b, str) and b.endswith("%") and m.save_all:
                    bb = math.floor(m.save_all * float(b[:-1]) / 100.0)
                if bb is not None and peak is not None and bb >= peak:
                    if sweep_budget is None or bb < sweep_budget:
                        sweep, sweep_budget = m.auto.get(b), bb
            exact = next((r for r in m.match if r.get("budget") == peak
                          or field(r, "budget") == peak), None)
            cols = [m.name, FIXED_NAMES.get(label, label),
                    pct(m.peak_pct(peak)), pct(m.extra_pct(fixed))]
            verdicts = []
            for rec, what in ((sweep, "sweep"), (exact, "exact")):
                if rec is None:
                    cols += ["-", "", ""]
                    continue
                name = rec.get("budget", rec["budget_opt"])
                if isinstance(name, int):
                    name = f"{name:,} B"
                if rec["status"] != "ok":
                    cols += [str(name), outcome(m, rec), ""]
                    verdicts.append(f"{what}: {rec['status']}")
                    continue
                fa = field(rec, "recompute_flops")
                r = ratio(fa, ff) if fa is not None and ff is not None else None
                cols += [str(name), pct(m.extra_pct(rec)),
                         fmt_ratio(r) if fa is not None and ff is not None else "?"]
                if fa is not None and ff is not None and fa > ff:
                    verdicts.append(f"{what}: WORSE")
            if exact is not None and exact["status"] == "ok":
                fa = field(exact, "recompute_flops")
                if fa is not None and ff is not None and fa > ff:
                    worse += 1
            cols.append("; ".join(verdicts) or "ok")
            print(row(cols))
    print()
    print(f"auto at the fixed strategy's own peak recomputes more in {worse} case(s)")
    print()


def summary_activations(models):
    m = next((m for m in models if m.name == "gpt2-small-unfused"), None)
    print("### activation target (gpt2-small-unfused): cut activation memory by "
          ">= 70% for <= 4% extra FLOPs")
    print()
    none = m.fixed.get("none") if m else None
    base = field(none, "saved_activation_bytes")
    base_blocks = field(none, "block_activation_bytes")
    if m is None or not base:
        print("no save-all (strategy=none) record of gpt2-small-unfused")
        print()
        return
    print("blocks: the saved activations of the transformer blocks, Megatron-LM's "
          "activation memory (Korthikanti et al. 2022 leave the embeddings, the "
          "head and the loss out); all: every saved activation, the logits "
          "included.")
    print()
    print(f"save-all saved activations: blocks {mib(base_blocks)}, all {mib(base)}")
    print()
    print(row(["run", "blocks kept", "blocks cut", "all kept", "all cut",
               "extra FLOPs", "peak"]))
    print(row(["---"] + ["---:"] * 6))
    best, best_auto = None, None
    runs = [(FIXED_NAMES.get(l, l), m.fixed[l]) for l in FIXED if l in m.fixed]
    runs += [(f"auto {b}", m.auto[b]) for b in m.budgets if b in m.auto]
    runs += [(f"auto {r.get('budget', '?')}", r) for r in m.frontier]
    runs += [(f"optimal {b}", m.optimal[b]) for b in m.budgets if b in m.optimal]
    for name, rec in runs:
        saved = field(rec, "saved_activation_bytes")
        blocks = field(rec, "block_activation_bytes")
        if rec["status"] != "ok" or saved is None:
            continue
        cut = 100.0 * (1 - saved / base)
        cut_blocks = (100.0 * (1 - blocks / base_blocks)
                      if blocks is not None and base_blocks else None)
        extra = m.extra_pct(rec)
        print(row([name, mib(blocks), pct(cut_blocks), mib(saved), pct(cut),
                   pct(extra), pct(m.peak_pct(field(rec, "peak")))]))
        if cut_blocks is not None and cut_blocks >= 70 and extra is not None:
            if best is None or extra < best[1]:
                best = (name, extra, cut_blocks)
            if name.startswith("auto") and (best_auto is None or extra < best_auto[1]):
                best_auto = (name, extra, cut_blocks)
    print()
    for what, b in (("auto", best_auto), ("any strategy", best)):
        if b:
            print(f"smallest extra FLOPs with a >= 70% cut of the blocks' activations, "
                  f"{what}: {pct(b[1])} ({b[0]}, cut {pct(b[2])}; target <= 4%)")
        else:
            print(f"smallest extra FLOPs with a >= 70% cut of the blocks' activations, "
                  f"{what}: none reaches it")
    print()


def summary_scaling(recs):
    print("### auto solve time against step size "
          "(targets: <= 50 ms at ~500 ops, <= 1000 ms at ~5000 ops)")
    print()
    print(row(["step", "ops", "solve ms", "target ms", "verify ms", "wall s", "outcome"]))
    print(row(["---", "---:", "---:", "---:", "---:", "---:", "---"]))
    for r in recs:
        target = r.get("target_ops")
        limit = {500: "50", 5000: "1000"}.get(target, "-")
        ops = field(r, "ops")
        ops_text = str(ops) if ops is not None else f"~{r.get('counted_ops', '?')} (counted)"
        scratch = Model("scaling", [r])
        print(row([r["label"], ops_text, num(field(r, "solve_ms")), limit,
                   num(field(r, "verify_ms")), f"{r['wall_s']:.1f}",
                   outcome(scratch, r)]))
    print()


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    recs = []
    with open(argv[1]) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                recs.append(parse(json.loads(line)))
            except (json.JSONDecodeError, KeyError) as e:
                print(f"{argv[1]}:{n}: skipped: {e}", file=sys.stderr)
    names = []
    for r in recs:
        if r["kind"] != "scaling" and r["model"] not in names:
            names.append(r["model"])
    models = [Model(n, [r for r in recs if r["model"] == n and r["kind"] != "scaling"])
              for n in names]
    print("# mw-remat benchmark")
    print()
    print("peak: reached peak as % of the save-all peak; extra FLOPs: recompute "
          "FLOPs as % of the step's; saved act.: saved activations kept; "
          "optimality: proven (no plan recomputes less) or bounded; gap: "
          "(optimal's recompute - bound) / optimal's recompute, the bound "
          "a lower bound on every plan's recompute (docs/remat.md; records "
          "before it: CBC's status and gap on Checkmate's MILP); "
          "wall s: the whole mw-opt run.")
    print()
    for m in models:
        model_table(m)
        saved_table(m)
    print("# summary")
    print()
    if models:
        summary_auto_vs_optimal(models)
        summary_auto_vs_fixed(models)
        summary_activations(models)
    scaling = [r for r in recs if r["kind"] == "scaling"]
    if scaling:
        summary_scaling(scaling)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
