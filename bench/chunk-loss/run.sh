#!/usr/bin/env bash
# Benchmarks --mw-chunk-loss (docs/training.md, "The LM head's loss in
# chunks"): for each model and chunk count, the planned arena of @forward
# (the loss alone) and of @train_step (--mw-train-pipeline fuse=true), every
# activation kept and, for gpt2-small, with --mw-remat keeping what jax's
# nothing_saveable keeps (the twelve block inputs, 37,748,736 B), beside the
# unchunked plan's as ratios; each chunk count again with
# defer-weight-grad=true where that changes the plan (a tied head: its
# weight gradient made at the embedding's, the logits made twice); and
# mw-run's CPU step time of gpt2-small's step unchunked, in 8 chunks and in
# 8 chunks deferred, run in turn (median of RUNS runs of --steps 3 each). A
# benchmark, not a test: it asserts nothing and is not in ctest.
# Usage: bench/chunk-loss/run.sh [--models M1,M2] [--chunks C1,C2]
#          [--runs N] [--no-time] [--out DIR]
#   --models   gpt2-small-unfused, llama-7b-shaped-4l-bf16, gpt2-tiny
#              (default: the first two)
#   --chunks   chunk counts besides none (default 4,8,16)
#   --runs     mw-run runs of each plan (default 3)
#   --no-time  skip mw-run
#   --out      the plans and table.md (default $MW_BUILD_DIR/bench-chunk-loss)
# MW_BUILD_DIR (default build) names the build directory; MW_OPT, MW_MODELS,
# MW_TRANSLATE and MW_RUN override the binaries.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build_dir=${MW_BUILD_DIR:-$root/build}
models=gpt2-small-unfused,llama-7b-shaped-4l-bf16
chunk_counts=4,8,16
runs=3
timed=1
out=
usage() { sed -n '11,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --models) models=${2:?--models needs a list}; shift 2 ;;
    --chunks) chunk_counts=${2:?--chunks needs a list}; shift 2 ;;
    --runs) runs=${2:?--runs needs N}; shift 2 ;;
    --no-time) timed=; shift ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    -h|--help) usage ;;
    *) echo "error: unknown argument '$1'" >&2; usage ;;
  esac
done
out=${out:-$build_dir/bench-chunk-loss}
if [ -z "${MW_OPT:-}" ] || [ -z "${MW_MODELS:-}" ] || [ -z "${MW_TRANSLATE:-}" ] || [ -z "${MW_RUN:-}" ]; then
  ninja -C "$build_dir" mw-models mw-opt mw-translate mw-run >/dev/null
fi
mw_opt=${MW_OPT:-$build_dir/bin/mw-opt}
mw_models=${MW_MODELS:-$build_dir/bin/mw-models}
mw_translate=${MW_TRANSLATE:-$build_dir/bin/mw-translate}
mw_run=${MW_RUN:-$build_dir/bin/mw-run}
mkdir -p "$out"
step() { echo "== $*" >&2; }
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$(git -C "$root" status --porcelain 2>/dev/null)" ] && commit="$commit + working tree"

declare -A model_args=(
  [gpt2-small-unfused]="gpt --preset gpt2-small --attention=unfused --batch 1 --seq 1024"
  [llama-7b-shaped-4l-bf16]="llama --preset llama-7b-shaped --layers 4 --precision bf16"
  [gpt2-tiny]="gpt --preset gpt2-tiny"
)
# What --mw-remat keeps in the save-less row (jax's nothing_saveable: the
# block inputs), per model; none: no such row.
declare -A remat_budget=([gpt2-small-unfused]=37748736 [gpt2-tiny]=16384)

# The planned arena of function $2 in $1 (its mw.arena_size).
arena() {
  sed -n "/func.func @$2(/s/.*mw.arena_size = \([0-9]*\) : i64.*/\1/p" "$1" | head -1
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "x%.3f", a / b; else print "" }'; }

table=$out/table.md
{
  echo "# --mw-chunk-loss at $commit"
  echo
  echo "| model | chunks | @forward arena (B) | | @train_step arena, all kept (B) | | @train_step arena, blocks recomputed (B) | |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
} >"$table"
IFS=, read -r -a model_list <<<"$models"
IFS=, read -r -a chunk_list <<<"$chunk_counts"
for m in "${model_list[@]}"; do
  [ -n "${model_args[$m]:-}" ] || { echo "error: unknown model '$m'" >&2; exit 2; }
  step "$m: mw-models ${model_args[$m]} --train"
  # shellcheck disable=SC2086
  "$mw_models" ${model_args[$m]} --train -o "$out/$m.mlir"
  base_fwd= base_step= base_remat=
  rm -f "$out/$m".c*.mlir
  for c in 0 "${chunk_list[@]}" "${chunk_list[@]/%/d}"; do
    n=${c%d} opts=
    [ "$c" != "$n" ] && opts=" defer-weight-grad=true"
    step "$m: chunk-loss=$n$opts"
    "$mw_opt" "$out/$m.mlir" --mw-train-pipeline="fuse=true chunk-loss=$n$opts" \
      -o "$out/$m.c$c.mlir" 2>/dev/null
    # A deferred row only where the option changes the plan.
    if [ -n "$opts" ] && cmp -s "$out/$m.c$c.mlir" "$out/$m.c$n.mlir"; then
      continue
    fi
    fwd=$(arena "$out/$m.c$c.mlir" forward)
    st=$(arena "$out/$m.c$c.mlir" train_step)
    rm=
    if [ -n "${remat_budget[$m]:-}" ]; then
      "$mw_opt" "$out/$m.mlir" \
        --mw-remat="strategy=auto saved-budget=${remat_budget[$m]} cost=flops" \
        --mw-train-pipeline="fuse=true chunk-loss=$n$opts" -o "$out/$m.remat.c$c.mlir" 2>/dev/null
      rm=$(arena "$out/$m.remat.c$c.mlir" train_step)
    fi
    if [ "$c" = 0 ]; then
      base_fwd=$fwd base_step=$st base_remat=$rm
      label=none
    else
      label=$n${opts:+, deferred}
    fi
    printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$m" "$label" \
      "$fwd" "$(ratio "$fwd" "$base_fwd")" "$st" "$(ratio "$st" "$base_step")" \
      "${rm:-}" "$(if [ -n "$rm" ]; then ratio "$rm" "$base_remat"; fi)" >>"$table"
  done
done

if [ -n "$timed" ]; then
  m=${model_list[0]}
  for c in 0 8 8d; do
    n=${c%d} opts=
    [ "$c" != "$n" ] && opts=" defer-weight-grad=true"
    [ -f "$out/$m.c$c.mlir" ] ||
      "$mw_opt" "$out/$m.mlir" --mw-train-pipeline="fuse=true chunk-loss=$n$opts" \
        -o "$out/$m.c$c.mlir" 2>/dev/null
    "$mw_translate" --mw-to-plan "$out/$m.c$c.mlir" -o "$out/$m.c$c.mwplan"
  done
  : >"$out/times.txt"
  for r in $(seq 1 "$runs"); do
    for c in 0 8 8d; do # in turn, so that a noisy minute hits all three
      step "mw-run $m chunk-loss=$c, run $r of $runs"
      log=$("$mw_run" "$out/$m.c$c.mwplan" --steps 3 2>&1)
      ms=$(sed -n 's/^step time: median \([0-9.]*\) ms.*/\1/p' <<<"$log")
      peak=$(sed -n 's/.*measured peak \([0-9]*\) B.*/\1/p' <<<"$log")
      echo "$c $ms $peak" >>"$out/times.txt"
    done
  done
  median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
  t0=$(awk '$1 == 0 { print $2 }' "$out/times.txt" | median)
  t8=$(awk '$1 == 8 { print $2 }' "$out/times.txt" | median)
  p0=$(awk '$1 == 0 { print $3 }' "$out/times.txt" | head -1)
  p8=$(awk '$1 == 8 { print $3 }' "$out/times.txt" | head -1)
  t8d=$(awk '$1 == "8d" { print $2 }' "$out/times.txt" | median)
  p8d=$(awk '$1 == "8d" { print $3 }' "$out/times.txt" | head -1)
  {
    echo
    echo "mw-run, $m, fuse=true, CPU, median of $runs runs of 3 steps (in turn):"
    echo
    echo "| chunks | step (ms) | | measured peak (B) | |"
    echo "| --- | ---: | ---: | ---: | ---: |"
    echo "| none | $t0 | | $p0 | |"
    echo "| 8 | $t8 | $(ratio "$t8" "$t0") | $p8 | $(ratio "$p8" "$p0") |"
    echo "| 8, deferred | $t8d | $(ratio "$t8d" "$t0") | $p8d | $(ratio "$p8d" "$p0") |"
  } >>"$table"
fi
cat "$table"
