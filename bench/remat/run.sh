#!/usr/bin/env bash
# Benchmarks --mw-remat on real training steps: every fixed strategy, then a
# budget sweep of auto (the greedy) against optimal (the MILP), then auto at
# each fixed strategy's reached peak, then auto's solve time on gpt2 steps of
# about 500 and 5000 ops, and auto under saved-activation budgets
# (`saved-budget`, PyTorch's activation_memory_budget). One mw-opt run per
# cell, sequential, with `verbose=true`; each run's stderr (the one-line
# remark, or the error of an unreachable budget) and wall time go to RECORDS
# (JSON lines), which bench/remat/table.py turns into tables per model and a
# summary.
# Usage: bench/remat/run.sh [--models a,b] [--quick] [--time-limit SEC]
#          [--budgets 30%,50%] [--fixed none,sqrt] [--frontier 72%,74%]
#          [--saved 30%,0] [--out DIR]
#   --models      a comma-separated subset of: gpt2-small-unfused,
#                 gpt2-small-b8, gpt2-small-fused, gpt2-small-fused-b8,
#                 gpt2-medium, llama-7b-bf16, bert-large, scaling (default:
#                 all of them)
#   --quick       gpt2-small-unfused and scaling only (unless --models says
#                 otherwise), budgets 70%,90%,100%
#   --time-limit  seconds of the optimal strategy per cell (default 30)
#   --cost        what auto and optimal minimize: time (default) or flops
#   --budgets     the sweep (default 30%,40%,...,100% of the save-all peak)
#   --fixed       the fixed strategies to run, `none` always (default
#                 none,selective,every-k k=1,every-k k=2,sqrt,all)
#   --frontier    gpt2-small-unfused's fine auto sweep for the activation
#                 target (default 69%,70%,...,78%; --quick 72%,74%,76%)
#   --saved       auto's and optimal's saved-budget sweep, % of the save-all
#                 step's saved activations or 0 (default
#                 90%,80%,...,10%,0; --quick 30%,10%,0; `none` for no
#                 such cells)
#   --out         where the steps, RECORDS (records.jsonl) and the table
#                 (table.md) go (default $MW_BUILD_DIR/bench-remat)
# MW_BUILD_DIR (default build) names the build directory; MW_OPT and MW_MODELS
# override the binaries (default $MW_BUILD_DIR/bin/mw-opt, .../mw-models);
# MW_BENCH_CELL_TIMEOUT (default 3600) bounds one cell in seconds.
# The full run takes one to two hours on 2 cores (bench/remat/README.md).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build_dir=${MW_BUILD_DIR:-$root/build}
all_models=gpt2-small-unfused,gpt2-small-b8,gpt2-small-fused,gpt2-small-fused-b8,gpt2-medium,llama-7b-bf16,bert-large,scaling
models=
quick=
time_limit=30
budgets=
fixed_list=
frontier=
saved=
cost=time
out=
usage() { sed -n '11,32p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --models) models=${2:?--models needs a list}; shift 2 ;;
    --models=*) models=${1#*=}; shift ;;
    --quick) quick=1; shift ;;
    --time-limit) time_limit=${2:?--time-limit needs seconds}; shift 2 ;;
    --time-limit=*) time_limit=${1#*=}; shift ;;
    --cost) cost=${2:?--cost needs time or flops}; shift 2 ;;
    --cost=*) cost=${1#*=}; shift ;;
    --budgets) budgets=${2:?--budgets needs a list}; shift 2 ;;
    --budgets=*) budgets=${1#*=}; shift ;;
    --fixed) fixed_list=${2:?--fixed needs a list}; shift 2 ;;
    --fixed=*) fixed_list=${1#*=}; shift ;;
    --frontier) frontier=${2:?--frontier needs a list}; shift 2 ;;
    --frontier=*) frontier=${1#*=}; shift ;;
    --saved) saved=${2:?--saved needs a list}; shift 2 ;;
    --saved=*) saved=${1#*=}; shift ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --out=*) out=${1#*=}; shift ;;
    -h|--help) usage ;;
    *) echo "error: unknown argument '$1'" >&2; usage ;;
  esac
done
if [ -z "$models" ]; then
  if [ -n "$quick" ]; then models=gpt2-small-unfused,scaling; else models=$all_models; fi
fi
if [ -z "$budgets" ]; then
  if [ -n "$quick" ]; then budgets=70%,90%,100%; else budgets=30%,40%,50%,60%,70%,80%,90%,100%; fi
fi
IFS=, read -r -a model_list <<<"$models"
IFS=, read -r -a budget_list <<<"$budgets"
if [ -n "$quick" ]; then frontier=${frontier:-72%,74%,76%}; fi
IFS=, read -r -a frontier_list <<<"${frontier:-69%,70%,71%,72%,73%,74%,75%,76%,77%,78%}"
if [ -n "$quick" ]; then saved=${saved:-30%,10%,0}; fi
saved=${saved:-90%,80%,70%,60%,50%,40%,30%,20%,10%,0}
[ "$saved" = none ] && saved=
IFS=, read -r -a saved_list <<<"$saved"
for m in "${model_list[@]}"; do
  case ",$all_models," in
    *",$m,"*) ;;
    *) echo "error: unknown model '$m' (known: $all_models)" >&2; exit 2 ;;
  esac
done
if ! [[ $time_limit =~ ^[0-9]+([.][0-9]+)?$ ]]; then
  echo "error: --time-limit takes seconds, got '$time_limit'" >&2
  exit 2
fi
cell_timeout=${MW_BENCH_CELL_TIMEOUT:-3600}
out=${out:-$build_dir/bench-remat}

if [ -z "${MW_OPT:-}" ] || [ -z "${MW_MODELS:-}" ]; then
  if [ ! -f "$build_dir/build.ninja" ]; then
    cmake -G Ninja -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  ninja -C "$build_dir" mw-models mw-opt >/dev/null
fi
mw_opt=${MW_OPT:-$build_dir/bin/mw-opt}
mw_models=${MW_MODELS:-$build_dir/bin/mw-models}

# Every model but the gpt2-small-fused ones wants unfused attention: refuse up front
# rather than after an hour of cells.
needs_unfused=
for m in "${model_list[@]}"; do
  [[ $m = gpt2-small-fused* ]] || needs_unfused=1
done
# (The help is read whole first: `grep -q` closing the pipe early would make
# mw-models die of SIGPIPE and pipefail report a missing option.)
if [ -n "$needs_unfused" ] && ! [[ $("$mw_models" --help 2>&1) == *--attention* ]]; then
  echo "error: $mw_models has no --attention option (needed for --attention=unfused);" \
       "rebuild mw-models with it, or run --models gpt2-small-fused" >&2
  exit 1
fi

mkdir -p "$out/steps"
records=$out/records.jsonl
: >"$records"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The model's generator arguments.
model_args() {
  case $1 in
    gpt2-small-unfused) echo "gpt --preset gpt2-small --attention=unfused" ;;
    gpt2-small-b8) echo "gpt --preset gpt2-small --attention=unfused --batch 8" ;;
    gpt2-small-fused) echo "gpt --preset gpt2-small" ;;
    gpt2-small-fused-b8) echo "gpt --preset gpt2-small --batch 8" ;;
    gpt2-medium) echo "gpt --preset gpt2-medium --attention=unfused" ;;
    llama-7b-bf16) echo "llama --preset llama-7b-shaped --layers 4 --precision bf16 --attention=unfused --batch 4" ;;
    bert-large) echo "bert --preset bert-large --attention=unfused --batch 8" ;;
  esac
}

# Ops in @train_step's body, one per line as mw-models prints them.
count_ops() {
  awk '/func\.func @train_step\(/ { f = 1; next }
       f && /^  }/ { f = 0 }
       f && /^ +(%[^=]* = )?"?[a-z_]+\.[a-z_.]+/ { n++ }
       END { print n + 0 }' "$1"
}

# cell MODEL KIND LABEL STEP OPTIONS [KEY=VALUE...]: one mw-opt run, appended
# to RECORDS with its exit status, wall time and stderr.
cell() {
  local model=$1 kind=$2 label=$3 step=$4 options=$5
  shift 5
  local rc=0 t0 t1
  printf '%-20s %-8s %-28s ' "$model" "$kind" "$label" >&2
  t0=$EPOCHREALTIME
  timeout "$cell_timeout" "$mw_opt" "$step" --mw-remat="$options cost=$cost verbose=true" \
    -o /dev/null 2>"$scratch/stderr" || rc=$?
  t1=$EPOCHREALTIME
  python3 - "$scratch/stderr" "$model" "$kind" "$label" "$options" "$rc" \
    "$t0" "$t1" "$@" >>"$records" <<'PY'
import json, sys
err, model, kind, label, options, rc, t0, t1, *extra = sys.argv[1:]
rec = {"model": model, "kind": kind, "label": label, "options": options,
       "rc": int(rc), "wall_s": round(float(t1) - float(t0), 3)}
for kv in extra:
    k, v = kv.split("=", 1)
    rec[k] = int(v) if v.lstrip("-").isdigit() else v
with open(err, errors="replace") as f:
    rec["stderr"] = f.read()
print(json.dumps(rec))
PY
  awk -v a="$t0" -v b="$t1" -v rc="$rc" 'BEGIN { printf "%8.2f s%s\n", b - a, rc ? "  (exit " rc ")" : "" }' >&2
}

# The reached peak in bytes from the last cell's remark; empty without one.
last_peak() {
  sed -n 's/.*remark: .*mw-remat: .* peak=\([0-9][0-9]*\).*/\1/p' "$scratch/stderr" | tail -n 1
}

echo "measured on $(git -C "$root" rev-parse --short HEAD)$([ -n "$(git -C "$root" status --porcelain 2>/dev/null)" ] && echo " + working tree")"
echo "records: $records" >&2

IFS=, read -r -a wanted <<<"${fixed_list:-none,selective,every-k k=1,every-k k=2,sqrt,all}"
# `none` is every table's reference: always run, and first.
fixed=("none")
for s in "${wanted[@]}"; do [ "$s" = none ] || fixed+=("$s"); done
for m in "${model_list[@]}"; do
  [ "$m" = scaling ] && continue
  step=$out/steps/$m.mlir
  # shellcheck disable=SC2046 # model_args is a word list by design
  "$mw_models" $(model_args "$m") --train -o "$step"
  declare -A peaks_done=()
  matches=()
  for s in "${fixed[@]}"; do
    label=${s/ k=/-k}
    cell "$m" fixed "$label" "$step" "strategy=$s"
    p=$(last_peak)
    if [ "$s" = none ] && [ -z "$p" ]; then
      # strategy=none cannot fail: without its remark every cell is wasted.
      echo "error: '$mw_opt --mw-remat=\"strategy=none verbose=true\"' printed no remark with a peak:" >&2
      cat "$scratch/stderr" >&2
      exit 1
    fi
    if [ -n "$p" ]; then matches+=("$label:$p"); fi
  done
  for b in "${budget_list[@]}"; do
    cell "$m" budget "auto $b" "$step" "strategy=auto budget=$b" budget="$b"
    cell "$m" budget "optimal $b" "$step" \
      "strategy=optimal budget=$b time-limit=$time_limit" budget="$b"
  done
  # The activation frontier of GPT-2 small: auto on a fine sweep near its
  # smallest peak, where the saved activations fall fastest.
  if [ "$m" = gpt2-small-unfused ]; then
    for b in "${frontier_list[@]}"; do
      cell "$m" frontier "auto $b" "$step" "strategy=auto budget=$b" budget="$b"
    done
  fi
  # The saved-bytes axis: auto bounded by the saved activations it keeps,
  # the peak left free (PyTorch's activation_memory_budget), and optimal's
  # exact optimum at the same budget.
  for sb in "${saved_list[@]}"; do
    cell "$m" saved "auto saved $sb" "$step" "strategy=auto saved-budget=$sb" \
      saved_budget="$sb"
    cell "$m" saved "optimal saved $sb" "$step" \
      "strategy=optimal saved-budget=$sb time-limit=$time_limit" saved_budget="$sb"
  done
  # Auto at exactly the peak a fixed strategy reached: it must not recompute
  # more. Fixed strategies often share a peak; one run serves them all.
  for lp in "${matches[@]}"; do
    p=${lp#*:}
    if [ -n "${peaks_done[$p]:-}" ]; then continue; fi
    peaks_done[$p]=1
    cell "$m" match "auto $p B" "$step" "strategy=auto budget=$p" budget="$p"
  done
  unset peaks_done
done

# Solve time against step size: gpt2-tiny dimensions, layers chosen from the
# op count of a 1- and a 2-layer step so the step has about 500 and 5000 ops.
# The budget is 95%, not 50%: gpt2-tiny's persistent state is about 65% of
# its save-all peak and its smallest peak about 92%, so a lower budget fails
# before any solving and times nothing.
if [[ ",$models," == *",scaling,"* ]]; then
  tiny="gpt --preset gpt2-tiny --attention=unfused"
  # shellcheck disable=SC2086
  "$mw_models" $tiny --layers 1 --train -o "$scratch/l1.mlir"
  # shellcheck disable=SC2086
  "$mw_models" $tiny --layers 2 --train -o "$scratch/l2.mlir"
  o1=$(count_ops "$scratch/l1.mlir")
  o2=$(count_ops "$scratch/l2.mlir")
  per_layer=$((o2 - o1))
  [ "$per_layer" -gt 0 ] || { echo "error: cannot count the ops of a gpt2-tiny step" >&2; exit 1; }
  for target in 500 5000; do
    layers=$(( (target - (o1 - per_layer) + per_layer / 2) / per_layer ))
    [ "$layers" -ge 1 ] || layers=1
    step=$out/steps/scaling-$target.mlir
    # shellcheck disable=SC2086
    "$mw_models" $tiny --layers "$layers" --train -o "$step"
    cell scaling scaling "~$target ops, $layers layers" "$step" \
      "strategy=auto budget=95%" budget=95% target_ops="$target" layers="$layers" \
      counted_ops="$(count_ops "$step")"
  done
fi

python3 "$here/table.py" "$records" | tee "$out/table.md"
