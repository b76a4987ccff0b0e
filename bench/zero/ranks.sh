#!/usr/bin/env bash
# Multi-rank step time on CPU ranks (Open MPI), overlap on and off, in one
# run: for each model, the ZeRO-2 step of a fixed global batch runs on 1, 2
# and 4 ranks (mpirun, one process per rank) with --mw-zero overlap=on and
# overlap=off, its gradients in several reduce buckets (so that all but the
# last can be reduced while the backward pass goes on: 6 buckets for
# gpt2-tiny, 18 for gpt2-small-4l); bench/zero/ranks_table.py prints the median step time, the
# time each step spent waiting on collectives, and the ratios against one
# rank and against overlap=off.
# Usage: bench/zero/ranks.sh [--models gpt2-tiny,gpt2-small-4l] [--ranks "1 2 4"]
#                            [--steps N] [--out DIR]
#   gpt2-small-4l: GPT-2 small's width (768, 12 heads) with 4 layers, a
#   vocabulary of 8192 and 64 positions, so that a step takes about a second
#   on two cores.
# MW_BUILD_DIR (default build) names the build directory; MW_MPIRUN the
# launcher (default: mpirun --allow-run-as-root --oversubscribe). These
# machines are shared and noisy: read medians and ratios.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build_dir=${MW_BUILD_DIR:-$root/build}
bin=$build_dir/bin
models=gpt2-tiny,gpt2-small-4l
ranks="1 2 4"
steps=10
out=$build_dir/bench-zero-ranks
while [ $# -gt 0 ]; do
  case "$1" in
    --models) models=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "bench/zero/ranks.sh: unknown argument '$1' (see the header)" >&2; exit 2 ;;
  esac
done
read -r -a mpirun <<< "${MW_MPIRUN:-mpirun --allow-run-as-root --oversubscribe}"
mkdir -p "$out"
for m in ${models//,/ }; do
  case "$m" in
    gpt2-tiny) flags=(--preset gpt2-tiny --batch 8); bucket=20000 ;;
    gpt2-small-4l) flags=(--preset gpt2-small --layers 4 --vocab 8192 --seq 64 --batch 4); bucket=2000000 ;;
    *) echo "bench/zero/ranks.sh: unknown model '$m'" >&2; exit 2 ;;
  esac
  "$bin/mw-models" gpt "${flags[@]}" --train --emit-locations=false -o "$out/$m.mlir"
  for n in $ranks; do
    for overlap in on off; do
      tag=$m-n$n-$overlap
      "$bin/mw-opt" "$out/$m.mlir" --mw-zero="stage=2 ranks=$n overlap=$overlap reduce-bucket=$bucket" \
        --mw-train-pipeline 2>/dev/null | "$bin/mw-translate" --mw-to-plan -o "$out/$tag.mwplan"
      "${mpirun[@]}" -np "$n" "$bin/mw-run" "$out/$tag.mwplan" --steps "$steps" \
        --report json > "$out/$tag.json"
      python3 -c "import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['model']=sys.argv[2]; d['overlap']=sys.argv[3]; json.dump(d, open(p,'w'))" \
        "$out/$tag.json" "$m" "$overlap"
    done
  done
done
python3 "$here/ranks_table.py" "$out"/*-n*-o*.json | tee "$out/table.md"
