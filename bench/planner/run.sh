#!/usr/bin/env bash
# Builds bench-planner and runs it on the shared benchmark data: every packer
# strategy on MiniMalloc's A-K, idealloc's real graphs and the training steps
# listed below (exported by --mw-plan-export after --mw-bufferize
# --mw-static-arena: gpt2-small/medium, llama-7b-shaped bf16 alone and with
# 8 and 32 micro-batches (14k and 55k buffers), bert-large at batch 1 and 64,
# gpt3-175b alone and as a ZeRO-3 step on 8 ranks, remat'd gpt2-xl and
# gpt2-small), then the structured traces and the synthetic sweep of `best`.
# MW_BENCH_NO_MODELS=1 skips the training steps (exporting them takes about
# a minute).
# Usage: bench/planner/run.sh [DATA_DIR] [bench-planner flags]
# DATA_DIR defaults to ../shared/bench-data relative to the repository root;
# MW_BUILD_DIR (default build) names the build directory. Every flag goes to
# bench-planner as given; `--extra PATH` (repeatable) adds a CSV, or every
# *.csv of a directory, to the real graphs, e.g. --mw-plan-export files:
#   bench/planner/run.sh --extra step.csv --extra more-graphs/
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build_dir=${MW_BUILD_DIR:-$root/build}
data_dir=$root/../shared/bench-data
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  data_dir=$1
  shift
fi
if [ ! -f "$build_dir/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
ninja -C "$build_dir" bench-planner >/dev/null
models=()
if [ -z "${MW_BENCH_NO_MODELS:-}" ]; then
  ninja -C "$build_dir" mw-models mw-opt >/dev/null
  out=$build_dir/bench-models
  mkdir -p "$out"
  # name | passes before bufferization (shell words) | mw-models arguments
  while IFS='|' read -r name passes args; do
    eval "before=($passes)"
    "$build_dir/bin/mw-models" $args --train -o "$out/$name.mlir"
    "$build_dir/bin/mw-opt" "$out/$name.mlir" "${before[@]}" --mw-bufferize \
      --mw-static-arena --mw-verify-plan \
      --mw-plan-export="file=$out/$name.csv function=train_step" \
      -o /dev/null 2>/dev/null
    models+=(--extra "$out/$name.csv")
  done <<'MODELS'
gpt2-small-train||gpt --preset gpt2-small
gpt2-medium-train||gpt --preset gpt2-medium
llama-7b-bf16-train||llama --preset llama-7b-shaped --precision bf16
bert-large-train||bert --preset bert-large
bert-large-b64||bert --preset bert-large --batch 64
gpt3-175b||gpt --preset gpt3-175b
gpt3-175b-zero3|--mw-zero="stage=3 ranks=8"|gpt --preset gpt3-175b --batch 8
llama-7b-ga8||llama --preset llama-7b-shaped --precision bf16 --grad-accum 8 --batch 8
llama-7b-ga32||llama --preset llama-7b-shaped --precision bf16 --grad-accum 32 --batch 32
gpt2-xl-remat|--mw-remat=strategy=selective|gpt --preset gpt2-xl --attention=unfused
gpt2-small-b8-remat|--mw-remat=strategy=every-k|gpt --preset gpt2-small --attention=unfused --batch 8 --grad-accum 4
MODELS
fi
echo "measured on $(git -C "$root" rev-parse --short HEAD)$([ -n "$(git -C "$root" status --porcelain 2>/dev/null)" ] && echo " + working tree")"
exec "$build_dir/bin/bench-planner" "$data_dir" "${models[@]}" "$@"
