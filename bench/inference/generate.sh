#!/usr/bin/env bash
# CPU tokens/s of mw-run --generate (docs/inference.md, "Serving"): for each
# model, mw-models --inference (f32 cache), --mw-train-pipeline, one plan per
# step (mw-translate --mw-plan-function=prefill / =decode), then
# mw-run --generate --synthetic N (prompt lengths log-uniform in
# [1, max-seq / 2], seeded) with default seeded weights, greedy, --report json;
# prints one line per model and layout: tokens/s, median TTFT, KV
# utilization, preemptions.
# Usage: bench/inference/generate.sh [--models gpt2-tiny,gpt2-small] [--out DIR]
# MW_BUILD_DIR (default build) names the build directory.
# Per model: max batch, max-seq, prompt length, block, requests, new tokens.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build_dir=${MW_BUILD_DIR:-$root/build}
bin=$build_dir/bin
models=gpt2-tiny,gpt2-small
out=$build_dir/bench-inference
while [ $# -gt 0 ]; do
  case "$1" in
    --models) models=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "generate.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
shape() {
  case "$1" in
    gpt2-tiny) echo "4 32 16 4 16 16" ;;
    gpt2-small) echo "4 64 32 16 4 8" ;;
    *) echo "4 128 64 16 8 16" ;;
  esac
}
for m in ${models//,/ }; do
  read -r batch seq prompt block n new <<<"$(shape "$m")"
  d=$out/$m
  mkdir -p "$d"
  "$bin/mw-models" gpt --preset "$m" --inference --max-batch "$batch" \
    --max-seq "$seq" --prompt-len "$prompt" --block "$block" -o "$d/inf.mlir"
  "$bin/mw-opt" "$d/inf.mlir" --mw-train-pipeline -o "$d/planned.mlir"
  for f in prefill decode; do
    "$bin/mw-translate" --mw-to-plan "$d/planned.mlir" \
      --mw-plan-function=$f -o "$d/$f.mwplan"
  done
  for layout in paged contiguous; do
    "$bin/mw-run" "$d/decode.mwplan" --generate --prefill "$d/prefill.mwplan" \
      --synthetic "$n" --max-new-tokens "$new" --greedy --seed 1 \
      --kv-layout $layout --report json > "$d/$layout.json"
    python3 - "$m" "$layout" "$d/$layout.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[3]))
print("%-11s %-10s batch %d  %3d requests  %4d tokens  %8.1f tokens/s  TTFT %9.2f ms  "
      "KV utilization %.3f  preemptions %d" % (
          sys.argv[1], sys.argv[2], r["max_batch"], r["requests"],
          r["generated_tokens"], r["tokens_per_s"], r["ttft_ms"],
          r["kv_utilization"], r["preemptions"]))
PY
  done
done
