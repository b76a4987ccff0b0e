#!/usr/bin/env bash
# Builds bench-planner and runs it on the shared benchmark data: every packer
# strategy on MiniMalloc's A-K, idealloc's real graphs and the training steps
# of gpt2-small, gpt2-medium, llama-7b-shaped (bf16) and bert-large (exported
# by --mw-plan-export after --mw-bufferize --mw-static-arena), then the
# synthetic sweep of `best`. MW_BENCH_NO_MODELS=1 skips the training steps.
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
  while read -r name args; do
    "$build_dir/bin/mw-models" $args --train -o "$out/$name.mlir"
    "$build_dir/bin/mw-opt" "$out/$name.mlir" --mw-bufferize --mw-static-arena \
      --mw-verify-plan --mw-plan-export="file=$out/$name.csv function=train_step" \
      -o /dev/null 2>/dev/null
    models+=(--extra "$out/$name.csv")
  done <<'MODELS'
gpt2-small-train gpt --preset gpt2-small
gpt2-medium-train gpt --preset gpt2-medium
llama-7b-bf16-train llama --preset llama-7b-shaped --precision bf16
bert-large-train bert --preset bert-large
MODELS
fi
echo "measured on $(git -C "$root" rev-parse --short HEAD)$([ -n "$(git -C "$root" status --porcelain 2>/dev/null)" ] && echo " + working tree")"
exec "$build_dir/bin/bench-planner" "$data_dir" "${models[@]}" "$@"
