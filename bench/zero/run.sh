#!/usr/bin/env bash
# Per-rank model states of ZeRO steps beside the ZeRO paper's formulas, and
# the per-rank peak with activations, in one run: for each model and rank
# count, the training step (global batch = one sample per rank) goes through
# --mw-zero at stages 0-3 and --mw-memory-report=format=json (model states),
# then through --mw-remat=strategy=auto and --mw-train-pipeline (the planned
# per-rank peak: arena plus persistent buffers); bench/zero/table.py prints
# the table. With --fit the same run then finds the largest GPT that fits
# per rank in 80 GB and 141 GB at 64 ranks, each stage (bench/zero/fit.sh,
# which also runs alone; the stage-3 cells compile hundreds of layers, an
# hour or more on 2 cores).
# Usage: bench/zero/run.sh [--models a,b] [--ranks "1 8 64 1024"] [--out DIR]
#                          [--no-peak] [--fit]
#   --models  a comma-separated subset of: gpt2-xl, llama-7b-shaped,
#             gpt3-175b, or any mw-models preset (default: the three)
#   --ranks   the rank counts (default 1 8 64 1024)
#   --out     where the reports (zero-*.json) and table.md go (default
#             $MW_BUILD_DIR/bench-zero)
# MW_BUILD_DIR (default build) names the build directory; MW_OPT and
# MW_MODELS override the binaries (default $MW_BUILD_DIR/bin/mw-opt, ...).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build_dir=${MW_BUILD_DIR:-$root/build}
models=gpt2-xl,llama-7b-shaped,gpt3-175b
ranks="1 8 64 1024"
out=$build_dir/bench-zero
peak=1
fit=0
while [ $# -gt 0 ]; do
  case "$1" in
    --fit) fit=1; shift ;;
    --models) models=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-peak) peak=0; shift ;;
    *) echo "bench/zero/run.sh: unknown argument '$1' (see the header)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
opt=${MW_OPT:-$build_dir/bin/mw-opt}
gen=${MW_MODELS:-$build_dir/bin/mw-models}
for m in ${models//,/ }; do
  family=${m%%-*}
  [ "$family" = gpt2 ] || [ "$family" = gpt3 ] && family=gpt
  for n in $ranks; do
    step=$out/$m-n$n.mlir
    "$gen" "$family" --preset "$m" --batch "$n" --train --emit-locations=false -o "$step"
    # The largest parameter, for DeepSpeed's stage-3 estimator.
    largest=$(python3 "$here/largest_param.py" "$step")
    for s in 0 1 2 3; do
      start=$(date +%s.%N)
      "$opt" "$step" --mw-zero="stage=$s ranks=$n" \
        --mw-memory-report="format=json output=$out/zero-$m-n$n-s$s.json" -o /dev/null
      end=$(date +%s.%N)
      python3 -c "import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['compile_s']=float(sys.argv[2]); d['model']=sys.argv[3]; d['largest_param']=int(sys.argv[4]); json.dump(d, open(p,'w'))" \
        "$out/zero-$m-n$n-s$s.json" "$(echo "$end - $start" | bc)" "$m" "$largest"
      if [ "$peak" = 1 ]; then
        start=$(date +%s.%N)
        "$opt" "$step" --mw-zero="stage=$s ranks=$n" --mw-remat=strategy=auto \
          --mw-train-pipeline \
          --mw-memory-report="format=json output=$out/peak-$m-n$n-s$s.json" \
          -o /dev/null 2>/dev/null
        end=$(date +%s.%N)
        python3 "$here/table.py" --merge-peak "$out/zero-$m-n$n-s$s.json" \
          "$out/peak-$m-n$n-s$s.json" "$(echo "$end - $start" | bc)"
        rm -f "$out/peak-$m-n$n-s$s.json"
      fi
    done
    rm -f "$step"
  done
done
venv_python=$build_dir/bench-venv/bin/python
if "$venv_python" -c "import deepspeed" 2>/dev/null; then
  "$venv_python" "$here/deepspeed_estimate.py" "$out"/zero-*.json 2>/dev/null
else
  echo "bench/zero: DeepSpeed is not installed (bench/zero/setup-peers.sh): no DeepSpeed column" >&2
fi
python3 "$here/table.py" "$out"/zero-*.json | tee "$out/table.md"
if [ "$fit" = 1 ]; then
  echo
  echo "The largest GPT (GPT-3 175B's width) whose step fits per rank at 64 ranks:"
  MW_BUILD_DIR=$build_dir "$here/fit.sh" --out "$out/fit" | tee "$out/fit.md"
fi
