#!/usr/bin/env bash
# The largest GPT whose ZeRO step fits per rank, found by compiling it: at
# GPT-3 175B's width (12288, 96 heads, 2048 positions, vocabulary 50257) and
# N = 64 ranks (one sample each), for each stage 0-3 and each budget (80 GB,
# an H100/A100; 141 GB, an H200; GB = 10^9 bytes), the most layers L whose
# step, through --mw-zero, --mw-remat=strategy=auto budget=B and
# --mw-train-pipeline, compiles with a planned per-rank peak (arena plus
# persistent buffers) within B. Remat trades recomputation for memory as L
# grows (the peak stays just under B), so the peak is not linear in L: L is
# found by doubling, then bisection (about 2 log2 L compiles per cell).
# A compile that runs past MW_FIT_TIMEOUT seconds (default 600), or runs
# out of memory, counts as not fitting and is marked in the table (a lower
# bound): --mw-remat auto at a hundred layers of this width and more took
# that long, and near the budget more than 20 GB, until it left out the
# candidates that recompute more than 16 forward passes (since then about
# two minutes and 4.5 GB at 393 layers; docs/zero-bench.md).
# --max-recompute CAP passes --mw-remat's max-recompute (NN% of the step,
# or forward): the largest L whose step fits without recomputing more than
# that (auto alone, near the smallest peak, picks plans that recompute the
# step many times over; docs/zero-bench.md). Its peaks are cached apart.
# Usage: bench/zero/fit.sh [--ranks 64] [--stages "0 1 2 3"]
#          [--budgets "80 141"] [--max-recompute CAP] [--out DIR]
# Peaks are cached in DIR (default $MW_BUILD_DIR/bench-zero-fit) by stage,
# layers and budget, so a rerun compiles only what is new.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build_dir=${MW_BUILD_DIR:-$root/build}
bin=$build_dir/bin
ranks=64
stages="0 1 2 3"
budgets="80 141"
out=$build_dir/bench-zero-fit
cap=
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) ranks=$2; shift 2 ;;
    --stages) stages=$2; shift 2 ;;
    --budgets) budgets=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --max-recompute) cap=$2; shift 2 ;;
    *) echo "bench/zero/fit.sh: unknown argument '$1' (see the header)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
sfx=${cap:+-cap${cap//%/pct}}

# peak STAGE LAYERS BUDGET: the planned per-rank peak in bytes ("" when the
# step does not compile), cached in $out.
peak() {
  local s=$1 l=$2 b=$3 f="$out/peak-s$1-l$2-b$3$sfx"
  if [ ! -f "$f" ]; then
    "$bin/mw-models" gpt --preset gpt3-175b --layers "$l" --batch "$ranks" \
      --train --emit-locations=false -o "$out/step.mlir"
    local rc=0
    timeout "${MW_FIT_TIMEOUT:-600}" "$bin/mw-opt" "$out/step.mlir" --mw-zero="stage=$s ranks=$ranks" \
      --mw-remat="strategy=auto budget=${b}GB hoist-updates=true${cap:+ max-recompute=$cap}" --mw-train-pipeline \
      --mw-memory-report="format=json output=$out/report.json" \
      -o /dev/null 2>/dev/null || rc=$?
    if [ "$rc" -eq 0 ]; then
      python3 -c "import json,sys; f=[f for f in json.load(open(sys.argv[1]))['functions'] if f.get('zero')][0]; print(f['arena_bytes'] + f['persistent_bytes'])" \
        "$out/report.json" > "$f"
      # What the plan recomputes, as a share of the step's FLOPs.
      python3 -c "import json,sys; r=[f for f in json.load(open(sys.argv[1]))['functions'] if f.get('zero')][0].get('remat') or {}; print(f\"{100*r['recompute_flops']/r['step_flops']:.1f}%\" if r.get('step_flops') else '')" \
        "$out/report.json" > "$f.recompute"
    else
      echo "" > "$f"
      # Not an answer: a compile that timed out, or ran out of memory (LLVM's
      # abort, or the kernel's OOM killer), leaves L open; the table says so.
      case "$rc" in
        124) echo "$2" >> "$out/timed-out-s$1-b$3$sfx" ;;
        134|137) echo "$2" >> "$out/out-of-memory-s$1-b$3$sfx" ;;
      esac
    fi
  fi
  cat "$f"
}
fits() { local p; p=$(peak "$1" "$2" "$3"); [ -n "$p" ] && [ "$p" -le "$(( $3 * 1000000000 ))" ]; }

echo "| stage | budget (GB) | largest L that fits | its peak / rank (GB) | its recompute / step FLOPs | L + 1 | parameters (B) |"
echo "|---|---|---|---|---|---|---|"
for s in $stages; do
  for b in $budgets; do
    l=0
    if fits "$s" 1 "$b"; then
      lo=1; hi=2
      while [ "$hi" -le 4096 ] && fits "$s" "$hi" "$b"; do lo=$hi; hi=$(( hi * 2 )); done
      while [ $(( hi - lo )) -gt 1 ]; do
        mid=$(( (lo + hi) / 2 ))
        if fits "$s" "$mid" "$b"; then lo=$mid; else hi=$mid; fi
      done
      l=$lo
    fi
    note=""
    [ -f "$out/timed-out-s$s-b$b$sfx" ] && note=" (compiles timed out at L = $(paste -sd, "$out/timed-out-s$s-b$b$sfx"): a lower bound)"
    [ -f "$out/out-of-memory-s$s-b$b$sfx" ] && note="$note (compiles ran out of memory at L = $(paste -sd, "$out/out-of-memory-s$s-b$b$sfx"): a lower bound)"
    if [ "$l" -eq 0 ]; then
      echo "| $s | $b | 0 (not one layer)$note | | | | |"
      continue
    fi
    pl=$(peak "$s" "$l" "$b"); pn=$(peak "$s" $(( l + 1 )) "$b")
    next="does not fit"
    [ -n "$pn" ] && next="peak $(python3 -c "print(f'{$pn/1e9:.1f}')") GB"
    grep -qx "$(( l + 1 ))" "$out/timed-out-s$s-b$b$sfx" 2>/dev/null && next="timed out"
    grep -qx "$(( l + 1 ))" "$out/out-of-memory-s$s-b$b$sfx" 2>/dev/null && next="ran out of memory"
    params=$(python3 -c "print(f'{(12*12288*12288*$l + 50257*12288 + 2048*12288)/1e9:.1f}')")
    rc=$(cat "$out/peak-s$s-l$l-b$b$sfx.recompute" 2>/dev/null || true)
    echo "| $s | $b | $l$note | $(python3 -c "print(f'{$pl/1e9:.1f}')") | ${rc:-not recorded} | $next | $params |"
  done
done
