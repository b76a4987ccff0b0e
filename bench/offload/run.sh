#!/usr/bin/env bash
# Offloaded weights on the CPU (issue 18, section 4; not a test): decode
# tokens/s of gpt2-medium (and a 4-layer slice of OPT-30B-shaped, when
# mw-models has the opt family) with its weights resident, and offloaded
# (--mw-offload, every layer streamed: pinned-layers 0) without prefetch and
# with prefetch depths 1 and 2, from host memory (weights=cpu) and from a
# file read with O_DIRECT (weights=nvme, the --weights file), beside the
# time each step waited for weights, as ratios to the resident run; and the
# planner's predicted table for OPT-30B on a V100 next to DeepSpeed's
# published 43 and 18 tokens/s. On the
# CPU the "device" is host memory, so a fetch is a memcpy on the copy thread
# (and a pread on the reader thread): what prefetch buys is the overlap of
# that traffic with the kernels. One mw-run per cell (decode steps at
# batch --max-batch, the median step); docs/offload.md ("runtime") records
# a run. Each cell loads --weights without drawing the defaults of what it
# gives (docs/offload.md, "Loading the weights"); only the one run that
# writes the weights file draws them.
#
# Usage: bench/offload/run.sh [--max-batch B] [--max-seq S] [--steps N]
#          [--models gpt2-medium,opt-30b-slice] [--out DIR]
# MW_BUILD_DIR (default build) names the build directory.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build_dir=${MW_BUILD_DIR:-$root/build}
bin=$build_dir/bin
max_batch=1
max_seq=128
steps=5
only=gpt2-medium,opt-30b-slice
out=$build_dir/bench-offload
while [ $# -gt 0 ]; do
  case "$1" in
    --max-batch) max_batch=$2; shift 2 ;;
    --max-seq) max_seq=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --models) only=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
for tool in mw-models mw-opt mw-translate mw-run; do
  [ -x "$bin/$tool" ] || { echo "run.sh: $bin/$tool is not built (ninja -C $build_dir $tool)" >&2; exit 1; }
done
mkdir -p "$out"
records=$out/records.jsonl
: > "$records"

# name, mw-models arguments
models=("gpt2-medium|gpt --preset gpt2-medium")
if "$bin/mw-models" --list-presets 2>/dev/null | grep -q '^opt-30b-shaped'; then
  # f16: the slice's 2.85e9 parameters are 5.7 GB (11.4 GB in f32, which a
  # resident session and the file's page cache would hold twice over).
  models+=("opt-30b-slice|opt --preset opt-30b-shaped --layers 4 --dtype f16")
else
  echo "run.sh: mw-models has no opt family in this build: gpt2-medium only" >&2
fi

for m in "${models[@]}"; do
  IFS='|' read -r name args <<< "$m"
  case ",$only," in *",$name,"*) ;; *) continue ;; esac
  dir=$out/$name
  mkdir -p "$dir"
  # shellcheck disable=SC2086
  "$bin/mw-models" $args --inference --max-batch "$max_batch" \
    --max-seq "$max_seq" --prompt-len 1 --emit-locations=false \
    -o "$dir/inf.mlir"
  cell() { # cell LABEL WEIGHTS PREFETCH [mw-opt flags]
    label=$1 weights=$2 prefetch=$3
    shift 3
    "$bin/mw-opt" "$dir/inf.mlir" "$@" --mw-train-pipeline -o "$dir/$label.mlir"
    "$bin/mw-translate" --mw-to-plan "$dir/$label.mlir" \
      --mw-plan-function=decode -o "$dir/$label.mwplan"
    "$bin/mw-run" "$dir/$label.mwplan" --steps "$steps" --report json \
      --weights "$dir/weights.safetensors" > "$dir/$label.json"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps({"model":sys.argv[2],"weights":sys.argv[3],"prefetch":int(sys.argv[4]),"batch":int(sys.argv[5]),"median_step_ms":d["median_step_ms"],"offload":d["offload"],"peak":d["memory"]["measured_peak_bytes"]}))' \
      "$dir/$label.json" "$name" "$weights" "$prefetch" "$max_batch" >> "$records"
  }
  # The weights, once (the resident run's defaults): every cell reads them.
  "$bin/mw-opt" "$dir/inf.mlir" --mw-train-pipeline -o "$dir/resident.mlir"
  "$bin/mw-translate" --mw-to-plan "$dir/resident.mlir" \
    --mw-plan-function=decode -o "$dir/resident.mwplan"
  [ -f "$dir/weights.safetensors" ] ||
    "$bin/mw-run" "$dir/resident.mwplan" --steps 0 \
      --save-weights "$dir/weights.safetensors" > /dev/null
  cell resident resident 0
  for w in cpu nvme; do
    for k in 0 1 2; do
      opt="weights=$w prefetch=$k pinned-layers=0"
      [ $w = nvme ] && opt="$opt path=$dir/nvme"
      cell "$w-k$k" "$w" "$k" --mw-offload="$opt"
    done
  done
done

# The planner's prediction for the whole OPT-30B on a V100-32GB (the
# "auto" section of docs/offload.md), beside DeepSpeed's published figures.
if [ -n "${models[1]:-}" ]; then
  "$bin/mw-models" opt --preset opt-30b-shaped --dtype f16 --inference \
    --emit-locations=false -o "$out/opt-30b.mlir"
  "$bin/mw-opt" "$out/opt-30b.mlir" -o /dev/null \
    --mw-offload="auto target=v100 function=decode" > "$out/planner.txt" 2>&1
fi

commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
python3 - "$records" "$commit" <<'PY' | tee "$out/table.md"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(f"commit {sys.argv[2]}; CPU decode steps, median of the run's steps\n")
print("| model | weights | prefetch | tokens/s | x resident | wait ms/step | "
      "wait / step | copy ms/step | read ms/step | streamed MB/step | "
      "device peak MB |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
base = {}
for r in rows:
    tps = r["batch"] / (r["median_step_ms"] / 1000)
    if r["weights"] == "resident":
        base[r["model"]] = tps
    o = r["offload"] or {}
    ms = lambda k: f'{1000 * o[k]:.1f}' if o else "-"
    ratio = f'{1000 * o["wait_s"] / r["median_step_ms"]:.2f}' if o else "-"
    src = {"resident": "resident", "cpu": "host memory",
           "nvme": "file, O_DIRECT" if o.get("direct_io") else "file, buffered"}[r["weights"]]
    print(f'| {r["model"]} | {src} | {r["prefetch"] if o else "-"} | '
          f'{tps:.2f} | {tps / base[r["model"]]:.2f} | {ms("wait_s")} | '
          f'{ratio} | {ms("copy_s")} | {ms("read_s")} | '
          f'{(o["bytes_streamed"] / 1e6 if o else 0):.1f} | '
          f'{r["peak"] / 1e6:.1f} |')
PY
if [ -f "$out/planner.txt" ]; then
  {
    echo
    echo "Planner, OPT-30B-shaped @decode on v100 (--mw-offload=auto), the best"
    echo "candidate per pinned-layer count; published (DeepSpeed ZeRO-Inference,"
    echo "V100-32GB): full offload 43 tokens/s, 12B parameters pinned 18 tokens/s."
    echo
    sed -n '1,3p' "$out/planner.txt"
    awk '$4 == "yes" {
           if (!seen || $1 != p) { if (seen) print best; seen = 1; p = $1; bt = -1 }
           if ($8 + 0 > bt) { bt = $8 + 0; best = $0 }
         }
         END { if (seen) print best }' "$out/planner.txt"
    grep 'chosen:' "$out/planner.txt"
  } | tee -a "$out/table.md"
fi
