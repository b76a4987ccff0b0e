#!/usr/bin/env bash
# KV cache sizing from the compile-time plan (issue 17, section 5; not a
# test): for gpt2-medium, llama-7b-shaped and an OPT-30B-shaped model, on
# 80 GB and 141 GB, per KV dtype (f16, int8, fp8e4m3), what --mw-kv-plan
# computes (bytes per token, blocks, max resident tokens, max concurrent
# sequences at --seq-len), and the KV memory a synthetic request-length
# distribution reserves under contiguous max-length preallocation versus
# 16-token paging (bench/inference/table.py). Only IR and planning, never
# weights: each cell is one mw-models and one mw-opt run (about a second for
# OPT-30B). docs/inference.md records a run.
#
# OPT-30B-shaped is `mw-models opt --preset opt-30b-shaped` (48 layers,
# hidden 7168, 56 heads, ffn 28672, vocab 50272, 2048 positions; OPT's block:
# ReLU MLP, biases, final LayerNorm, lm_head tied to embed_tokens).
#
# Usage: bench/inference/run.sh [--seq-len N] [--max-batch B]
#          [--prompt-len P] [--requests N] [--seed S] [--out DIR]
# MW_BUILD_DIR (default build) names the build directory.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build_dir=${MW_BUILD_DIR:-$root/build}
mw_opt=${MW_OPT:-$build_dir/bin/mw-opt}
mw_models=${MW_MODELS:-$build_dir/bin/mw-models}
seq_len=1024
max_batch=32
prompt_len=128
requests=10000
seed=17
out=$build_dir/bench-inference
while [ $# -gt 0 ]; do
  case "$1" in
    --seq-len) seq_len=$2; shift 2 ;;
    --max-batch) max_batch=$2; shift 2 ;;
    --prompt-len) prompt_len=$2; shift 2 ;;
    --requests) requests=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
for tool in "$mw_opt" "$mw_models"; do
  [ -x "$tool" ] || { echo "run.sh: $tool is not built (ninja -C $build_dir mw-opt mw-models)" >&2; exit 1; }
done
mkdir -p "$out"
records=$out/records.jsonl
: > "$records"

# name, max-seq, mw-models arguments (f16 weights and activations)
models=(
  "gpt2-medium|1024|gpt --preset gpt2-medium"
  "llama-7b-shaped|2048|llama --preset llama-7b-shaped --rotary"
  "opt-30b-shaped|2048|opt --preset opt-30b-shaped"
)
for m in "${models[@]}"; do
  IFS='|' read -r name max_seq args <<< "$m"
  for kv in f16 int8 fp8e4m3; do
    # shellcheck disable=SC2086
    "$mw_models" $args --dtype f16 --inference --max-batch "$max_batch" \
      --max-seq "$max_seq" --prompt-len "$prompt_len" --block 16 \
      --kv-dtype "$kv" --emit-locations=false -o "$out/$name-$kv.mlir"
    for mem in 80GB 141GB; do
      len=$(( seq_len < max_seq ? seq_len : max_seq ))
      "$mw_opt" "$out/$name-$kv.mlir" -o /dev/null \
        --mw-kv-plan="device-memory=$mem block=16 kv-dtype=$kv seq-len=$len format=json output=$out/plan.json"
      python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["model"]=sys.argv[2]; d["memory"]=sys.argv[3]; print(json.dumps(d))' \
        "$out/plan.json" "$name" "$mem" >> "$records"
    done
  done
done
python3 "$here/table.py" "$records" --requests "$requests" --seed "$seed" \
  --block 16 --max-batch "$max_batch" --prompt-len "$prompt_len" | tee "$out/table.md"
