#!/usr/bin/env bash
# Benchmarks --mw-fuse (issue 16, section 5) on real training steps: the
# gpt2-small step (batch 1 x 1024, f32, AdamW) with unfused and with fused
# attention, and a llama-7b-shaped step (4 layers, bf16). For each, before
# and after fusion (--mw-train-pipeline fuse=false / fuse=true): kernels per
# step (and how many contain a matmul), bytes read + written (the cost model,
# --mw-memory-report format=json), arena bytes and the planned save-all peak
# (arena + persistent), as ratios; mw-run's CPU step time (median of RUNS
# runs of --steps 1) before and after for gpt2-small with unfused attention;
# and the peers beside them: TorchInductor from bench/peers' records when
# present ($MW_BUILD_DIR/bench-peers/inductor.json), otherwise issue 16's
# quoted figures, marked so; XLA (jax: bench/peers/jax_gpt2.py, the same
# gpt2-small step, plain and rematerialized per block) where jax is installed
# (bench/peers/setup-jax.sh): its fusions, kernels, bytes accessed, temp
# bytes and CPU step time in this run. A benchmark, not a test: it asserts
# nothing and is not in ctest.
# Usage: bench/fusion/run.sh [--runs N] [--seq S] [--layers N] [--no-time]
#          [--no-xla] [--out DIR]
#   --runs     mw-run (and XLA) runs per step time (default 3; one step
#              each, in turn; XLA's after one warm-up step)
#   --seq      gpt2-small's sequence length for the timed steps only
#              (default 1024; a step takes about 17 s on 2 cores)
#   --layers   gpt2-small's blocks, for quick runs (default 12)
#   --no-time  skip mw-run and XLA's timed step
#   --no-xla   skip XLA even where jax is installed
#   --out      the steps, records.json and table.md (default
#              $MW_BUILD_DIR/bench-fusion)
# MW_BUILD_DIR (default build) names the build directory; MW_OPT, MW_MODELS,
# MW_TRANSLATE and MW_RUN override the binaries; MW_JAX_VENV the Python
# environment with jax (default $MW_BUILD_DIR/jax-venv, else MW_VENV's,
# default $MW_BUILD_DIR/venv).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build_dir=${MW_BUILD_DIR:-$root/build}
runs=3
seq=1024
timed=1
layers=12
xla=1
out=
usage() { sed -n '17,31p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=${2:?--runs needs N}; shift 2 ;;
    --seq) seq=${2:?--seq needs S}; shift 2 ;;
    --layers) layers=${2:?--layers needs N}; shift 2 ;;
    --no-time) timed=; shift ;;
    --no-xla) xla=; shift ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    -h|--help) usage ;;
    *) echo "error: unknown argument '$1'" >&2; usage ;;
  esac
done
out=${out:-$build_dir/bench-fusion}
if [ -z "${MW_OPT:-}" ] || [ -z "${MW_MODELS:-}" ] || [ -z "${MW_TRANSLATE:-}" ] || [ -z "${MW_RUN:-}" ]; then
  ninja -C "$build_dir" mw-models mw-opt mw-translate mw-run >/dev/null
fi
mw_opt=${MW_OPT:-$build_dir/bin/mw-opt}
mw_models=${MW_MODELS:-$build_dir/bin/mw-models}
mw_translate=${MW_TRANSLATE:-$build_dir/bin/mw-translate}
mw_run=${MW_RUN:-$build_dir/bin/mw-run}
py=${MW_VENV:-$build_dir/venv}/bin/python
[ -x "$py" ] || py=python3
mkdir -p "$out"
step() { echo "== $*" >&2; }
commit=$(git -C "$root" rev-parse --short HEAD)
[ -n "$(git -C "$root" status --porcelain 2>/dev/null)" ] && commit="$commit + working tree"
jax=$("$root/bench/peers/jax-python.sh" "$build_dir" "$py" "$xla")
jax_py=
case $jax in measured\ *) jax_py=${jax#measured }; jax=measured ;; esac
rm -f "$out/xla.json" "$out/xla-time.json" "$out/xla-times.txt" "$out"/remat-*

declare -A model_args=(
  [gpt2-small-unfused]="gpt --preset gpt2-small --attention=unfused --layers $layers --batch 1 --seq 1024"
  [gpt2-small-fused-attention]="gpt --preset gpt2-small --layers $layers --batch 1 --seq 1024"
  [llama-7b-shaped-4l-bf16]="llama --preset llama-7b-shaped --layers 4 --precision bf16"
)
models=(gpt2-small-unfused gpt2-small-fused-attention llama-7b-shaped-4l-bf16)
for m in "${models[@]}"; do
  step "$m: mw-models ${model_args[$m]} --train"
  # shellcheck disable=SC2086
  "$mw_models" ${model_args[$m]} --train -o "$out/$m.mlir"
  for f in false true; do
    "$mw_opt" "$out/$m.mlir" --mw-train-pipeline="fuse=$f" -o "$out/$m.fuse-$f.mlir" 2>/dev/null
    "$mw_opt" "$out/$m.fuse-$f.mlir" --mw-memory-report=format=json -o /dev/null \
      >"$out/$m.fuse-$f.report.json"
    "$mw_translate" --mw-plan-json "$out/$m.fuse-$f.mlir" -o "$out/$m.fuse-$f.plan.json"
  done
done

: >"$out/times.txt"
rm -f "$out/matmul.txt"
if [ -n "$timed" ]; then
  m=gpt2-small-unfused
  src=$out/$m.mlir
  if [ "$seq" != 1024 ]; then
    src=$out/$m.seq$seq.mlir
    "$mw_models" gpt --preset gpt2-small --attention=unfused --layers "$layers" --batch 1 \
      --seq "$seq" --train -o "$src"
  fi
  for f in false true; do
    "$mw_opt" "$src" --mw-train-pipeline="fuse=$f" 2>/dev/null |
      "$mw_translate" --mw-to-plan -o "$out/$m.fuse-$f.mwplan"
  done
  : >"$out/xla-times.txt"
  for r in $(seq 1 "$runs"); do
    for f in false true; do # in turn, so that a noisy minute hits all three
      step "mw-run $m fuse=$f (seq $seq), run $r of $runs"
      if log=$("$mw_run" "$out/$m.fuse-$f.mwplan" --steps 1 2>&1); then
        ms=$(sed -n 's/^step time: median \([0-9.]*\) ms.*/\1/p' <<<"$log")
        echo "fuse=$f $ms" >>"$out/times.txt"
        # Which matmul ran: the OpenBLAS kernels change the step time
        # severalfold (docs/runtime-kernels.md, "Which OpenBLAS kernels").
        sed -n '1s/^mw-run: .*, matmul \(.*\)$/\1/p' <<<"$log" >"$out/matmul.txt"
      else # recorded, and the table says why
        echo "fuse=$f failed: $(tail -n 1 <<<"$log")" >>"$out/times.txt"
      fi
    done
    if [ "$jax" = measured ]; then
      # One warm-up and one timed step a run; the compile comes from jax's
      # cache after the first.
      step "XLA (jax) plain (seq $seq), run $r of $runs"
      "$jax_py" "$root/bench/peers/jax_gpt2.py" --layers "$layers" --seq "$seq" \
        --forms plain --time plain --runs 1 --cache "$out/jax-cache" \
        --json "$out/xla-time.json"
      "$jax_py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["forms"]["plain"]["step_ms"][0])' \
        "$out/xla-time.json" >>"$out/xla-times.txt"
    fi
  done
fi

# XLA's analysis (compiled, not run) on the step the cost-model rows
# describe (seq 1024); its step time is in xla-times.txt, taken in turn with
# mw-run's above.
if [ "$jax" = measured ]; then
  step "XLA (jax): gpt2-small ($layers layers, seq 1024): plain and written to save less"
  "$jax_py" "$root/bench/peers/jax_gpt2.py" --layers "$layers" --seq 1024 \
    --time none --json "$out/xla.json"
  # Memwall with --mw-remat keeping about what each save-less scan form keeps
  # of the blocks (jax's saved residuals), beside that form's temp bytes.
  "$jax_py" -c 'import json, sys
for n, r in json.load(open(sys.argv[1]))["forms"].items():
    if r.get("scan") and r.get("block_saved_bytes"):
        print(n, r["block_saved_bytes"])' "$out/xla.json" |
  while read -r form budget; do
    step "Memwall --mw-remat at $form's block bytes ($budget B), --mw-fuse"
    "$mw_opt" "$out/gpt2-small-unfused.mlir" \
      --mw-remat="strategy=auto saved-budget=$budget cost=flops verbose=true" \
      --mw-train-pipeline=fuse=true -o "$out/remat-$form.mlir" 2>"$out/remat-$form.log"
    "$mw_opt" "$out/remat-$form.mlir" --mw-memory-report=format=json -o /dev/null \
      >"$out/remat-$form.report.json"
  done
fi

python3 "$here/table.py" "$out" --commit "$commit" --seq "$seq" --layers "$layers" \
  --jax "$jax" --peers "$build_dir/bench-peers/inductor.json" | tee "$out/table.md"
